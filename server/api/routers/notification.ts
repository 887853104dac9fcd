import { z } from 'zod';
import { authedProcedure, router } from '~/server/api/trpc';
import { uuidField } from '~/server/api/fields';
import { isoDateOut, nothing } from '~/server/api/outputs';
import { translate, isMessageKey } from '~/server/i18n';
import { MAIL_KIND_NAMES } from '~/server/core/mail/kinds';
import { listNotifications, markRead, notificationPreferencesOf, setNotificationPreferences, unreadCount } from '~/server/services/mail/notifications';

const notificationOut = z.object({ id: z.string(), text: z.string(), link: z.string().nullable(), read: z.boolean(), createdAt: isoDateOut });

const preferencesOut = z.array(z.object({ kind: z.enum(MAIL_KIND_NAMES), email: z.boolean(), adjustable: z.boolean(), emailByDefault: z.boolean() }));

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

  /** Which kinds of notice also come by e-mail to the caller (their choices, else the defaults). */
  preferences: authedProcedure.output(preferencesOut).query(({ ctx }) => notificationPreferencesOf(ctx.db, ctx.actor)),

  setPreferences: authedProcedure
    .input(z.object({ choices: z.array(z.object({ kind: z.enum(MAIL_KIND_NAMES), email: z.boolean() })).max(MAIL_KIND_NAMES.length) }))
    .output(preferencesOut)
    .mutation(({ ctx, input }) => setNotificationPreferences(ctx.db, ctx.actor, input.choices, ctx.now())),
});
