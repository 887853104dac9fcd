// In-app notifications: a message key and parameters, rendered in the reader's language.
import { and, count, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { memberships, notifications } from '~/db/schema';
import type { MessageKey, MessageParams } from '~/server/i18n';
import { stampCreatedAt } from './replay-clock';

/** notify sends one notification to each of several people (duplicates removed); call it inside the changing transaction. */
export async function notify(db: DbOrTx, userIds: readonly string[], messageKey: MessageKey, params: MessageParams, link?: string): Promise<void> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return;
  await db.insert(notifications).values(unique.map((userId) => ({ userId, messageKey, params, link: link ?? null, ...stampCreatedAt() })));
}

/**
 * notifyMembers notifies those of several people who are members of a tenant (a project's PI who has
 * left the tenant hears nothing more of it); the database refuses a tenant's notice to anyone else.
 */
export async function notifyMembers(db: DbOrTx, orgId: string, userIds: readonly string[], messageKey: MessageKey, params: MessageParams, link?: string): Promise<void> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return;
  const members = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), inArray(memberships.userId, unique)));
  await notify(db, members.map((m) => m.userId), messageKey, params, link);
}

/** listNotifications returns a person's newest notifications. */
export async function listNotifications(db: DbOrTx, userId: string, limit = 50) {
  return db.select().from(notifications).where(eq(notifications.userId, userId)).orderBy(desc(notifications.createdAt)).limit(limit);
}

/** unreadCount counts a person's unread notifications. */
export async function unreadCount(db: DbOrTx, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(notifications).where(and(eq(notifications.userId, userId), isNull(notifications.readAt)));
  return row?.n ?? 0;
}

/** markRead marks some (or all) of a person's notifications read. */
export async function markRead(db: DbOrTx, userId: string, ids?: string[]): Promise<void> {
  const mine = and(eq(notifications.userId, userId), isNull(notifications.readAt));
  await db
    .update(notifications)
    .set({ readAt: new Date() })
    .where(ids ? and(mine, inArray(notifications.id, ids)) : mine);
}
