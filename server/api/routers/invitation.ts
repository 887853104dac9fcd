import { z } from 'zod';
import { authedProcedure, publicProcedure, router } from '~/server/api/trpc';
import { invitationTokenField } from '~/server/api/fields';
import { acceptInvitation, previewInvitation } from '~/server/services/invitations';

export const invitationRouter = router({
  preview: publicProcedure.input(z.object({ token: invitationTokenField })).query(({ ctx, input }) => previewInvitation(ctx.db, input.token)),

  accept: authedProcedure
    .input(z.object({ token: invitationTokenField }))
    .mutation(({ ctx, input }) => acceptInvitation(ctx.db, ctx.actor, input.token)),
});
