// Rate limits and sign-in lockouts in the database: counted across calls (and processes), a window
// that restarts, the 10th wrong password locking the account for 1, then 2, 4 … minutes, success
// forgetting the failures, staff lifting a lock, and every lockout and lift in the audit log.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { auditEvents } from '~/db/schema';
import { RATE_RULES } from '~/server/core/rate-limits';
import { AppError } from '~/server/errors';
import { callerFor, createStaff, dbTargets, openTestDb } from '~/server/testing/harness';
import { hit, limit, liftSignInLockout, recordSignInFailure, recordSignInSuccess, signInBlocked } from './rate-limits';

const at = (iso: string) => new Date(`2026-12-01T${iso}Z`);

describe.each(dbTargets())('rate limits on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  it('counts hits in a window and starts again when it has passed', async () => {
    const rule = { limit: 3, windowMs: 60_000 };
    const verdicts = [];
    for (const t of ['10:00:00', '10:00:10', '10:00:20', '10:00:30']) verdicts.push(await hit(handle.db, 'test:window', rule, at(t)));
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, true, false]);
    expect(verdicts[3]!.retryAfterSeconds).toBe(30);
    expect((await hit(handle.db, 'test:window', rule, at('10:01:00'))).allowed).toBe(true);
  });

  it('refuses a named rule beyond its limit with 429 and the wait', async () => {
    const now = at('11:00:00');
    for (let i = 0; i < RATE_RULES.signUpEmail.limit; i++) await limit(handle.db, 'signUpEmail', 'flood@example.org', now);
    const error = await limit(handle.db, 'signUpEmail', 'flood@example.org', now).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('TOO_MANY_REQUESTS');
    expect((error as AppError).params).toMatchObject({ minutes: 60, seconds: 3600 });
  });

  it('locks an account on the 10th wrong password in a minute, for 1 then 2 minutes, and writes it to the audit log', async () => {
    const keys = { account: 'Victim@Example.org', address: '203.0.113.9' };
    for (let i = 0; i < 9; i++) await recordSignInFailure(handle.db, keys, at('12:00:00'));
    expect((await signInBlocked(handle.db, keys, at('12:00:01'))).allowed).toBe(true);
    await recordSignInFailure(handle.db, keys, at('12:00:30'));
    expect(await signInBlocked(handle.db, keys, at('12:00:31'))).toEqual({ allowed: false, retryAfterSeconds: 59 });
    // Another spelling of the same address is the same account.
    expect((await signInBlocked(handle.db, { account: 'victim@example.org' }, at('12:00:31'))).allowed).toBe(false);
    expect((await signInBlocked(handle.db, keys, at('12:01:31'))).allowed).toBe(true);
    for (let i = 0; i < 10; i++) await recordSignInFailure(handle.db, keys, at('12:02:00'));
    expect(await signInBlocked(handle.db, keys, at('12:02:00'))).toEqual({ allowed: false, retryAfterSeconds: 120 });
    const audit = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'auth.locked_out'), eq(auditEvents.targetId, 'victim@example.org')));
    expect(audit.map((a) => a.data)).toEqual([
      { failures: 10, lockoutInARow: 1, until: '2026-12-01T12:01:30.000Z' },
      { failures: 10, lockoutInARow: 2, until: '2026-12-01T12:04:00.000Z' },
    ]);
    // The address has 20 failures of its 50: not locked.
    expect((await signInBlocked(handle.db, { account: 'someone-else@example.org', address: '203.0.113.9' }, at('12:02:00'))).allowed).toBe(true);
  });

  it('forgets an account’s failures after a right password', async () => {
    const keys = { account: 'forgetful@example.org' };
    for (let i = 0; i < 9; i++) await recordSignInFailure(handle.db, keys, at('13:00:00'));
    await recordSignInSuccess(handle.db, keys.account);
    await recordSignInFailure(handle.db, keys, at('13:00:10'));
    expect((await signInBlocked(handle.db, keys, at('13:00:11'))).allowed).toBe(true);
  });

  it('lets an admin lift a lock, with the reason in the audit log; others may not', async () => {
    const keys = { account: 'locked@example.org' };
    const now = new Date();
    for (let i = 0; i < 10; i++) await recordSignInFailure(handle.db, keys, now);
    expect((await signInBlocked(handle.db, keys, now)).allowed).toBe(false);
    const reviewer = await createStaff(handle.db, 'reviewer');
    const refused = await callerFor(handle.db, { userId: reviewer.userId }).staff.liftSignInLockout({ email: keys.account, reason: 'Called the help desk' }).catch((e: unknown) => e);
    expect((refused as { code?: string }).code).toBe('FORBIDDEN');
    const admin = await createStaff(handle.db, 'admin');
    expect(await callerFor(handle.db, { userId: admin.userId }).staff.liftSignInLockout({ email: keys.account, reason: 'Called the help desk' })).toEqual({ wasLocked: true });
    expect((await signInBlocked(handle.db, keys, now)).allowed).toBe(true);
    const [lifted] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'auth.lockout_lifted'), eq(auditEvents.targetId, keys.account)));
    expect(lifted).toMatchObject({ actorUserId: admin.userId, reason: 'Called the help desk', isStaffAction: true });
    expect(await liftSignInLockout(handle.db, { userId: admin.userId, email: 'a@b.c', name: 'A', staffRoles: ['admin'] }, keys.account, 'again')).toEqual({ wasLocked: false });
  });
});
