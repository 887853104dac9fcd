import { z } from 'zod';
import { authedProcedure, router } from '~/server/api/trpc';
import { uuidField } from '~/server/api/fields';
import { nothing, notificationOut } from '~/server/api/outputs';
import { translate, isMessageKey } from '~/server/i18n';
import { listNotifications, markRead, unreadCount } from '~/server/services/notifications';

export const notificationRouter = router({
  list: authedProcedure.output(z.array(notificationOut)).query(async ({ ctx }) => {
    const rows = await listNotifications(ctx.db, ctx.actor.userId);
    return rows.map((n) => ({ id: n.id, text: isMessageKey(n.messageKey) ? translate(ctx.locale, n.messageKey, n.params) : n.messageKey, link: n.link, read: n.readAt !== null, createdAt: n.createdAt }));
  }),

  unreadCount: authedProcedure.output(z.number()).query(({ ctx }) => unreadCount(ctx.db, ctx.actor.userId)),

  markRead: authedProcedure
    .input(z.object({ ids: z.array(uuidField).max(500).optional() }))
    .output(nothing)
    .mutation(({ ctx, input }) => markRead(ctx.db, ctx.actor.userId, input.ids)),
});
