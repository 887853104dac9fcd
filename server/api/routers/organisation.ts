import { z } from 'zod';
import { router, tenantProcedure } from '~/server/api/trpc';
import { env } from '~/server/env.js';
import { linkBase } from '~/server/portal-url';
import { countryField, emailField, memberRoleField, reasonField, textField, uuidField } from '~/server/api/fields';
import { billingProfileOut, createdInvitationOut, creditLineRequestOut, memberOut, nothing, openInvitationOut, organisationOut } from '~/server/api/outputs';
import { creditLinesOf, requestLargerCreditLine } from '~/server/services/credit-requests';
import { getBillingProfile, setBillingProfile, startPayAsYouGo } from '~/server/services/billing';
import { createInvitation, listOpenInvitations, revokeInvitation } from '~/server/services/invitations';
import { changeMemberRole, getOrganisation, listMembers } from '~/server/services/organisations';

const billingProfileInput = z.object({
  legalName: textField(2, 200),
  street: textField(2, 200),
  postcode: textField(2, 16),
  city: textField(1, 100),
  country: countryField,
  vatId: textField(0, 32).nullish(),
  billingEmail: emailField,
  purchaseOrder: textField(0, 64).nullish(),
});

export const organisationRouter = router({
  current: tenantProcedure('member').output(organisationOut).query(({ ctx }) => getOrganisation(ctx.db, ctx.tenant)),

  /** Who the tenant's invoices are made out to (null until it is filled in). */
  billingProfile: tenantProcedure('member').output(billingProfileOut.nullable()).query(({ ctx }) => getBillingProfile(ctx.db, ctx.tenant)),

  setBillingProfile: tenantProcedure('manager')
    .input(billingProfileInput)
    .output(billingProfileOut)
    .mutation(({ ctx, input }) => setBillingProfile(ctx.db, ctx.tenant, input, ctx.now())),

  /** The owner accepts the price list: the company's starting credit line on a project of its own, without staff. */
  startPayAsYouGo: tenantProcedure('owner')
    .output(z.object({ projectId: z.string(), allocationId: z.string(), creditCents: z.number().int() }))
    .mutation(({ ctx }) => startPayAsYouGo(ctx.db, ctx.tenant, ctx.now())),

  /** The company's active credit lines and its requests for larger ones. */
  creditLines: tenantProcedure('owner')
    .output(
      z.object({
        lines: z.array(z.object({ allocationId: z.string(), projectTitle: z.string(), grantedCents: z.number().int(), periodEnd: z.string() })),
        requests: z.array(creditLineRequestOut),
      }),
    )
    .query(({ ctx }) => creditLinesOf(ctx.db, ctx.tenant)),

  /** The owner asks staff for a larger credit line (the new line in euros, with a reason). */
  requestCreditLine: tenantProcedure('owner')
    .input(z.object({ allocationId: uuidField, amountEuros: z.number().int().min(1).max(100_000_000), reason: reasonField }))
    .output(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => requestLargerCreditLine(ctx.db, ctx.tenant, { allocationId: input.allocationId, requestedCents: input.amountEuros * 100, reason: input.reason }, ctx.now())),

  members: tenantProcedure('member').output(z.array(memberOut)).query(({ ctx }) => listMembers(ctx.db, ctx.tenant)),

  invitations: tenantProcedure('manager').output(z.array(openInvitationOut)).query(({ ctx }) => listOpenInvitations(ctx.db, ctx.tenant.org.id)),

  invite: tenantProcedure('manager')
    .input(z.object({ email: emailField, role: memberRoleField }))
    .output(createdInvitationOut)
    .mutation(async ({ ctx, input }) => {
      const invitation = await createInvitation(ctx.db, ctx.tenant, input, { locale: ctx.locale, baseUrl: linkBase() });
      return { id: invitation.id, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt, path: `/invitations/${invitation.token}`, mailed: Boolean(env().SMTP_URL) };
    }),

  revokeInvitation: tenantProcedure('manager')
    .input(z.object({ invitationId: uuidField }))
    .output(nothing)
    .mutation(({ ctx, input }) => revokeInvitation(ctx.db, ctx.tenant, input.invitationId)),

  changeRole: tenantProcedure('manager')
    .input(z.object({ userId: uuidField, role: memberRoleField }))
    .output(nothing)
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenant, input.userId, input.role)),

  removeMember: tenantProcedure('manager')
    .input(z.object({ userId: uuidField }))
    .output(nothing)
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenant, input.userId, null)),
});
