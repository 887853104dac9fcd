// The ledger under load and at its edges: concurrent reservations, exactly-once settlement,
// overruns, cancellation, expiry, notices and the monthly cap — on PGlite and on real Postgres.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { allocations, ledgerEntries, notifications } from '~/db/schema';
import { AppError } from '~/server/errors';
import { translate } from '~/server/i18n';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { balanceOfRow, expireDueAllocations, ledgerSums, releaseJobReservation, reserveBudget, settleJob } from './ledger';

const TODAY = '2026-12-01';
const H = 3600;

// A small seeded generator, so a failure can be replayed.
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(dbTargets())('ledger on %s', (target) => {
  let handle: DbHandle;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    owner = await createTenant(handle.db, { name: 'Ledger University' });
    reviewer = await createStaff(handle.db, 'admin');
  });
  afterAll(async () => handle?.close());

  async function allocationRow(id: string) {
    const [row] = await handle.db.select().from(allocations).where(eq(allocations.id, id));
    return row!;
  }

  function reserve(allocationId: string, amount: number, jobId = randomUUID()) {
    return handle.db.transaction((tx) => reserveBudget(tx, { allocationId, orgId: owner.orgId, jobId, amount, actorUserId: owner.userId, today: TODAY }));
  }

  it('never lets 200 concurrent reservations of random sizes exceed the budget', async () => {
    const { allocationId } = await activeAllocation(handle.db, owner, reviewer, { gpuHours: 1000, today: TODAY });
    const random = seeded(20261201);
    const sizes = Array.from({ length: 200 }, () => Math.floor(random() * 20 * H) + 1);
    const results = await Promise.allSettled(sizes.map((amount) => reserve(allocationId, amount)));
    const accepted = sizes.filter((_, i) => results[i]!.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(accepted.reduce((s, a) => s + a, 0)).toBeLessThanOrEqual(1000 * H);
    for (const { reason } of refused) {
      expect(reason).toBeInstanceOf(AppError);
      const error = reason as AppError;
      expect(error.code).toBe('PRECONDITION_FAILED');
      expect(translate('en', error.key, error.params)).toMatch(/needs [\d,.]+ GPU-h, [\d,.]+ GPU-h remain/);
    }
    const row = await allocationRow(allocationId);
    expect(row.reserved).toBe(accepted.reduce((s, a) => s + a, 0));
    expect(await ledgerSums(handle.db, allocationId)).toEqual(balanceOfRow(row));
  });

  it('settles a job exactly once, even when two settlements race', async () => {
    const { allocationId } = await activeAllocation(handle.db, owner, reviewer, { gpuHours: 100, today: TODAY });
    const jobId = randomUUID();
    await reserve(allocationId, 4 * 2 * H, jobId); // 4 GPUs × 2 h walltime
    const [first, second] = await Promise.all([settleJob(handle.db, { jobId, actualAmount: 4 * 5400 }), settleJob(handle.db, { jobId, actualAmount: 4 * 5400 })]);
    expect([first.settled, second.settled].sort()).toEqual([false, true]);
    const again = await settleJob(handle.db, { jobId, actualAmount: 4 * 7200 });
    expect(again).toEqual({ settled: false, charged: 0, released: 0, overrun: 0 });
    const row = await allocationRow(allocationId);
    expect(row).toMatchObject({ charged: 4 * 5400, reserved: 0, overrun: 0 });
    expect(await ledgerSums(handle.db, allocationId)).toEqual(balanceOfRow(row));
    const jobRows = await handle.db.select().from(ledgerEntries).where(eq(ledgerEntries.jobId, jobId));
    expect(jobRows.map((r) => r.kind).sort()).toEqual(['charge', 'release', 'reserve']);
  });

  it('charges an overrun in full and flags it', async () => {
    const { allocationId } = await activeAllocation(handle.db, owner, reviewer, { gpuHours: 10, today: TODAY });
    const jobId = randomUUID();
    await reserve(allocationId, H, jobId);
    expect(await settleJob(handle.db, { jobId, actualAmount: H + 400 })).toEqual({ settled: true, charged: H + 400, released: 0, overrun: 400 });
    const row = await allocationRow(allocationId);
    expect(row).toMatchObject({ charged: H + 400, overrun: 400, reserved: 0 });
    expect(await ledgerSums(handle.db, allocationId)).toEqual(balanceOfRow(row));
  });

  it('releases a reservation when a job is cancelled before it starts, once', async () => {
    const { allocationId } = await activeAllocation(handle.db, owner, reviewer, { gpuHours: 10, today: TODAY });
    const jobId = randomUUID();
    await reserve(allocationId, 3 * H, jobId);
    expect((await allocationRow(allocationId)).reserved).toBe(3 * H);
    expect(await releaseJobReservation(handle.db, { jobId, reason: 'cancelled by user' })).toEqual({ released: 3 * H });
    expect(await releaseJobReservation(handle.db, { jobId, reason: 'cancelled by user' })).toEqual({ released: 0 });
    expect((await settleJob(handle.db, { jobId, actualAmount: 0 })).settled).toBe(false);
    expect((await allocationRow(allocationId)).reserved).toBe(0);
    // A retried reservation of the same job returns the first one and writes nothing new.
    const retry = randomUUID();
    await reserve(allocationId, H, retry);
    await reserve(allocationId, H, retry);
    expect((await allocationRow(allocationId)).reserved).toBe(H);
  });

  it('sends the 80 % and 100 % notices once each to the PI', async () => {
    const { allocationId } = await activeAllocation(handle.db, owner, reviewer, { gpuHours: 10, today: TODAY });
    const before = (await handle.db.select().from(notifications).where(eq(notifications.userId, owner.userId))).length;
    for (const hours of [5, 3.5, 0.5, 1]) {
      const jobId = randomUUID();
      await reserve(allocationId, hours * H, jobId);
      await settleJob(handle.db, { jobId, actualAmount: hours * H });
    }
    const mine = await handle.db.select().from(notifications).where(eq(notifications.userId, owner.userId));
    const budgetNotices = mine.slice(before).map((n) => n.messageKey).filter((k) => k.startsWith('notice.budget'));
    expect(budgetNotices.sort()).toEqual(['notice.budget80', 'notice.budgetExhausted']);
    await expect(reserve(allocationId, 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
  });

  it('expires an allocation at period end: reservations released, the rest written off, PI told', async () => {
    const { allocationId } = await activeAllocation(handle.db, owner, reviewer, { gpuHours: 50, today: TODAY, periodEnd: '2026-12-20' });
    const queued = randomUUID();
    await reserve(allocationId, 10 * H, queued);
    const done = randomUUID();
    await reserve(allocationId, 5 * H, done);
    await settleJob(handle.db, { jobId: done, actualAmount: 4 * H });
    expect(await expireDueAllocations(handle.db, '2026-12-19')).not.toContain(allocationId);
    expect(await expireDueAllocations(handle.db, '2026-12-20')).toContain(allocationId);
    const row = await allocationRow(allocationId);
    expect(row).toMatchObject({ status: 'expired', reserved: 0, charged: 4 * H, expired: 46 * H });
    expect(await ledgerSums(handle.db, allocationId)).toEqual(balanceOfRow(row));
    const release = await handle.db.select().from(ledgerEntries).where(eq(ledgerEntries.jobId, queued));
    expect(release.find((r) => r.kind === 'release')?.reason).toMatch(/period ended on 2026-12-20/);
    const notes = await callerFor(handle.db, { userId: owner.userId }).notification.list();
    expect(notes.some((n) => /expired on 2026-12-20/.test(n.text))).toBe(true);
    await expect(reserve(allocationId, 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED', key: 'ledger.allocationNotActive' });
    expect(await expireDueAllocations(handle.db, '2026-12-21')).not.toContain(allocationId);
  });

  it('refuses reservations beyond a company monthly cap with the amounts', async () => {
    const company = await createTenant(handle.db, { kind: 'company', name: 'Capped GmbH' });
    const staff = callerFor(handle.db, { userId: reviewer.userId });
    await staff.staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'register checked' });
    const project = await callerFor(handle.db, { userId: company.userId }).project.create({ title: 'Vision model', abstract: 'Fine-tuning a vision model.', workloadKind: 'fine_tuning', members: [] });
    const credit = await staff.staff.grantCreditLine({ projectId: project.id, amountEuros: 5000, periodStart: TODAY, periodEnd: '2027-06-01', reason: 'Signed contract 2026-11' });
    await callerFor(handle.db, { userId: company.userId }).allocation.setMonthlyCap({ capEuros: 300, reason: 'budget control' });
    const reserveCents = (cents: number) =>
      handle.db.transaction((tx) => reserveBudget(tx, { allocationId: credit.id, orgId: company.orgId, jobId: randomUUID(), amount: cents, actorUserId: company.userId, today: TODAY }));
    await reserveCents(25_000);
    const refusal = await reserveCents(10_000).catch((e: unknown) => e as AppError);
    expect(refusal).toBeInstanceOf(AppError);
    expect(translate('en', (refusal as AppError).key, (refusal as AppError).params)).toBe('This would exceed your monthly spending cap of €300: it needs €100, €50 remain this month.');
  });
});
