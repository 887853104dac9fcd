import { z } from 'zod';
import { authedProcedure, publicProcedure, rateLimit, router } from '~/server/api/trpc';
import { invitationTokenField } from '~/server/api/fields';
import { isoDateOut, memberRoleOut } from '~/server/api/outputs';
import { acceptInvitation, previewInvitation } from '~/server/services/tenants/invitations';

const invitationPreviewOut = z.object({ orgName: z.string(), inviterName: z.string(), email: z.string(), role: memberRoleOut, expiresAt: isoDateOut });

export const invitationRouter = router({
  preview: publicProcedure.input(z.object({ token: invitationTokenField })).output(invitationPreviewOut).query(async ({ ctx, input }) => {
    await rateLimit(ctx, 'invitation', ctx.address ?? (ctx.userId ? `user:${ctx.userId}` : undefined));
    return previewInvitation(ctx.db, input.token);
  }),

  accept: authedProcedure.input(z.object({ token: invitationTokenField })).output(z.object({ orgId: z.string(), orgName: z.string() })).mutation(async ({ ctx, input }) => {
    await rateLimit(ctx, 'invitation', `user:${ctx.actor.userId}`);
    return acceptInvitation(ctx.db, ctx.actor, input.token);
  }),
});
