import { z } from 'zod';
import { router, tenantProcedure } from '~/server/api/trpc';
import { emailField, memberRoleField, uuidField } from '~/server/api/fields';
import { createInvitation, listOpenInvitations, revokeInvitation } from '~/server/services/invitations';
import { changeMemberRole, getOrganisation, listMembers } from '~/server/services/organisations';

export const organisationRouter = router({
  current: tenantProcedure('member').query(({ ctx }) => getOrganisation(ctx.db, ctx.tenant)),

  members: tenantProcedure('member').query(({ ctx }) => listMembers(ctx.db, ctx.tenant)),

  invitations: tenantProcedure('manager').query(({ ctx }) => listOpenInvitations(ctx.db, ctx.tenant.org.id)),

  invite: tenantProcedure('manager')
    .input(z.object({ email: emailField, role: memberRoleField }))
    .mutation(async ({ ctx, input }) => {
      const invitation = await createInvitation(ctx.db, ctx.tenant, input);
      return { id: invitation.id, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt, path: `/invitations/${invitation.token}` };
    }),

  revokeInvitation: tenantProcedure('manager')
    .input(z.object({ invitationId: uuidField }))
    .mutation(({ ctx, input }) => revokeInvitation(ctx.db, ctx.tenant, input.invitationId)),

  changeRole: tenantProcedure('manager')
    .input(z.object({ userId: uuidField, role: memberRoleField }))
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenant, input.userId, input.role)),

  removeMember: tenantProcedure('manager')
    .input(z.object({ userId: uuidField }))
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenant, input.userId, null)),
});
