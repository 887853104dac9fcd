// Sessions that end: a request names its session, and once that session is ended (sign-out, a
// password change, removal from the last tenant, staff) the same cookie is refused at once.
import { TRPCError } from '@trpc/server';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { auditEvents, sessions } from '~/db/schema';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';
import { endSession, startSession } from './sessions';

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => (e instanceof TRPCError ? e.code : String(e)),
  );
}

describe.each(dbTargets())('sessions on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  it('lets a request in only while its session is open', async () => {
    const a = await createTenant(handle.db);
    const sid = await startSession(handle.db, a.userId, { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0', address: '203.0.113.5' });
    const asA = callerFor(handle.db, { userId: a.userId, sessionId: sid });
    expect((await asA.account.me()).userId).toBe(a.userId);
    const listed = await asA.account.sessions();
    expect(listed).toEqual([expect.objectContaining({ id: sid, current: true, address: '203.0.113.5' })]);
    await endSession(handle.db, sid, 'signed_out');
    expect(await code(asA.account.me())).toBe('UNAUTHORIZED');
    expect(await code(asA.organisation.current())).toBe('UNAUTHORIZED');
    // Another person's session id is no key either.
    const b = await createTenant(handle.db);
    const sidB = await startSession(handle.db, b.userId, {});
    expect(await code(callerFor(handle.db, { userId: a.userId, sessionId: sidB }).account.me())).toBe('UNAUTHORIZED');
  });

  it('signs out elsewhere: one session, all others, and on a password change', async () => {
    const a = await createTenant(handle.db);
    const [here, laptop, phone, tablet] = await Promise.all([0, 1, 2, 3].map(() => startSession(handle.db, a.userId, {})));
    const asA = callerFor(handle.db, { userId: a.userId, sessionId: here });
    await asA.account.endSession({ sessionId: laptop! });
    expect(await code(callerFor(handle.db, { userId: a.userId, sessionId: laptop }).account.me())).toBe('UNAUTHORIZED');
    // Someone else's session cannot be ended from here.
    const b = await createTenant(handle.db);
    const sidB = await startSession(handle.db, b.userId, {});
    expect(await code(asA.account.endSession({ sessionId: sidB }))).toBe('NOT_FOUND');
    expect(await asA.account.endOtherSessions()).toEqual({ endedSessions: 2 });
    for (const sid of [phone, tablet]) expect(await code(callerFor(handle.db, { userId: a.userId, sessionId: sid }).account.me())).toBe('UNAUTHORIZED');
    expect((await asA.account.me()).userId).toBe(a.userId);

    const other = await startSession(handle.db, a.userId, {});
    expect(await code(asA.account.changePassword({ currentPassword: 'not-my-password', newPassword: 'a-brand-new-secret' }))).toBe('FORBIDDEN');
    expect(await asA.account.changePassword({ currentPassword: TEST_PASSWORD, newPassword: 'a-brand-new-secret' })).toEqual({ endedSessions: 1 });
    expect(await code(callerFor(handle.db, { userId: a.userId, sessionId: other }).account.me())).toBe('UNAUTHORIZED');
    expect((await asA.account.me()).userId).toBe(a.userId);
    const [changed] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'account.password_changed'), eq(auditEvents.targetId, a.userId)));
    expect(changed?.data).toEqual({ endedSessions: 1 });
  });

  it('ends the sessions of a person removed from their last tenant, not of one who still belongs somewhere', async () => {
    const a = await createTenant(handle.db);
    const member = await addMember(handle.db, a, 'member');
    const sid = await startSession(handle.db, member.userId, {});
    await callerFor(handle.db, { userId: a.userId }).organisation.removeMember({ userId: member.userId });
    expect(await code(callerFor(handle.db, { userId: member.userId, sessionId: sid }).account.me())).toBe('UNAUTHORIZED');
    const [row] = await handle.db.select({ endReason: sessions.endReason }).from(sessions).where(eq(sessions.id, sid));
    expect(row?.endReason).toBe('removed');
  });

  it('lets an admin end all sessions of a person, audited; nobody else', async () => {
    const a = await createTenant(handle.db);
    const sids = await Promise.all([0, 1].map(() => startSession(handle.db, a.userId, {})));
    const [person] = await handle.db.select().from(sessions).where(eq(sessions.id, sids[0]!));
    const reviewer = await createStaff(handle.db, 'reviewer');
    const email = (await callerFor(handle.db, { userId: a.userId }).account.me()).email;
    expect(await code(callerFor(handle.db, { userId: reviewer.userId }).staff.endSessions({ email, reason: 'Laptop stolen' }))).toBe('FORBIDDEN');
    const admin = await createStaff(handle.db, 'admin');
    expect(await callerFor(handle.db, { userId: admin.userId }).staff.endSessions({ email: email.toUpperCase(), reason: 'Laptop stolen' })).toEqual({ endedSessions: 2 });
    for (const sid of sids) expect(await code(callerFor(handle.db, { userId: a.userId, sessionId: sid }).account.me())).toBe('UNAUTHORIZED');
    const [audit] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'account.sessions_ended'), eq(auditEvents.targetId, person!.userId)));
    expect(audit).toMatchObject({ actorUserId: admin.userId, reason: 'Laptop stolen', isStaffAction: true, data: { endedSessions: 2 } });
    expect(await code(callerFor(handle.db, { userId: admin.userId }).staff.endSessions({ email: 'nobody@example.org', reason: 'Laptop stolen' }))).toBe('NOT_FOUND');
  });
});
