// Sign-in sessions that can be ended (issue #9). The session cookie is a next-auth JWT naming its
// row here (`sid`); loadActor (server/services/identity/accounts.ts) lets a request in only while that row is
// open, so signing out, changing the password, being removed from one's last tenant or staff ending
// a person's sessions cuts access on the next request, not when the cookie expires.
import { and, desc, eq, isNull, ne, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { sessions, users } from '~/db/schema';
import { hashPassword, verifyPassword } from '~/server/auth/password';
import { AppError } from '~/server/errors';
import type { Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';

export type SessionEndReason = 'signed_out' | 'password_changed' | 'password_reset' | 'ended_by_user' | 'ended_by_staff' | 'removed';

/** How often a session's "last seen" is written (at most once per this many ms). */
export const LAST_SEEN_EVERY_MS = 5 * 60_000;

/** startSession opens a session for a person who just proved who they are. */
export async function startSession(db: DbOrTx, userId: string, from: { userAgent?: string | null; address?: string | null }, now = new Date()): Promise<string> {
  const [row] = await db
    .insert(sessions)
    .values({ userId, createdAt: now, lastSeenAt: now, userAgent: from.userAgent?.slice(0, 300) ?? null, address: from.address ?? null })
    .returning({ id: sessions.id });
  return row!.id;
}

/** endSession ends one session (sign-out); ending an ended one changes nothing. */
export async function endSession(db: DbOrTx, sessionId: string, reason: SessionEndReason, now = new Date()): Promise<void> {
  await db.update(sessions).set({ endedAt: now, endReason: reason }).where(and(eq(sessions.id, sessionId), isNull(sessions.endedAt)));
}

/** endAllSessions ends every open session of a person, except `keep` (the one asking); returns how many. */
export async function endAllSessions(db: DbOrTx, userId: string, reason: SessionEndReason, keep?: string, now = new Date()): Promise<number> {
  const ended = await db
    .update(sessions)
    .set({ endedAt: now, endReason: reason })
    .where(and(eq(sessions.userId, userId), isNull(sessions.endedAt), keep ? ne(sessions.id, keep) : undefined))
    .returning({ id: sessions.id });
  return ended.length;
}

/** listSessions lists a person's open sessions, the most recently seen first. */
export async function listSessions(db: DbOrTx, userId: string) {
  return db
    .select({ id: sessions.id, createdAt: sessions.createdAt, lastSeenAt: sessions.lastSeenAt, userAgent: sessions.userAgent, address: sessions.address })
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.endedAt)))
    .orderBy(desc(sessions.lastSeenAt));
}

/** endOwnSession ends one of the caller's own sessions (the profile page's "sign out there"). */
export async function endOwnSession(db: DbOrTx, actor: Actor, sessionId: string): Promise<void> {
  const ended = await db
    .update(sessions)
    .set({ endedAt: new Date(), endReason: 'ended_by_user' })
    .where(and(eq(sessions.id, sessionId), eq(sessions.userId, actor.userId), isNull(sessions.endedAt)))
    .returning({ id: sessions.id });
  if (ended.length === 0) throw new AppError('NOT_FOUND', 'error.notFound');
}

/** touchSession records that a session was used, at most every LAST_SEEN_EVERY_MS. */
export async function touchSession(db: DbOrTx, sessionId: string, lastSeenAt: Date, now = new Date()): Promise<void> {
  if (now.getTime() - lastSeenAt.getTime() < LAST_SEEN_EVERY_MS) return;
  await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, sessionId));
}

/** changePassword checks the current password, stores the new one and ends every other session. */
export async function changePassword(db: Db, actor: Actor, input: { currentPassword: string; newPassword: string; sessionId?: string }): Promise<{ endedSessions: number }> {
  const [user] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, actor.userId));
  if (!user || !(await verifyPassword(input.currentPassword, user.passwordHash))) {
    throw new AppError('FORBIDDEN', 'profile.wrongPassword', {}, 'currentPassword');
  }
  const passwordHash = await hashPassword(input.newPassword);
  return db.transaction(async (tx) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, actor.userId));
    const endedSessions = await endAllSessions(tx, actor.userId, 'password_changed', input.sessionId);
    await recordAudit(tx, { actorUserId: actor.userId, orgId: null, action: 'account.password_changed', targetType: 'user', targetId: actor.userId, data: { endedSessions } });
    return { endedSessions };
  });
}

/**
 * endSessionsIfUnattached ends a person's sessions when they belong to no tenant and hold no staff
 * role any more (removed from their last tenant): nothing they could still open.
 */
export async function endSessionsIfUnattached(tx: DbOrTx, userId: string): Promise<number> {
  // A SQL function (drizzle/0018): it counts memberships in every tenant, also from inside a tenant's
  // transaction, whose role may neither see other tenants' memberships nor touch sessions.
  const [row] = await tx
    .select({ ended: sql<number>`portal_end_sessions_if_unattached(${users.id})` })
    .from(users)
    .where(eq(users.id, userId));
  return Number(row?.ended ?? 0);
}

/** endSessionsByStaff lets an admin sign a person out everywhere (a lost laptop, a leaver); audited. */
export async function endSessionsByStaff(db: Db, actor: Actor, email: string, reason: string): Promise<{ endedSessions: number }> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(sql`lower(${users.email})`, email.trim().toLowerCase()));
  if (!user) throw new AppError('NOT_FOUND', 'staff.sessions.unknownPerson', { email }, 'email');
  return db.transaction(async (tx) => {
    const endedSessions = await endAllSessions(tx, user.id, 'ended_by_staff');
    await recordAudit(tx, { actorUserId: actor.userId, orgId: null, action: 'account.sessions_ended', targetType: 'user', targetId: user.id, reason, data: { endedSessions }, isStaffAction: true });
    return { endedSessions };
  });
}
