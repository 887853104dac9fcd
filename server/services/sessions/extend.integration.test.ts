// Extending a session (issue #28) on the simulated cluster, on PGlite and Postgres: the added time is
// admitted against the class's and the allocation's walltime limits, reserved from the budget (GPU-hours
// and a company's credit line with its cap), and the cluster really runs the session longer; an extension
// the cluster does not apply is taken back; many extensions of one session at once pass no limit; and
// many sessions of one person on one allocation at once never overspend it.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobEvents, jobs, ledgerEntries } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { SchedulerRefusedError, SchedulerUnavailableError, type SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb, refusal } from '~/server/testing/harness';
import { ledgerSums } from '~/server/services/ledger/ledger';
import { reconcileOnce } from '~/server/services/jobs/reconciler';

const TODAY = '2026-12-01';
const HOUR = 3600;

/** The balance the allocation caches is the sum of its entries, with nothing held once every job is settled. */
async function balanced(db: Db, allocationId: string) {
  const [row] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
  const sums = await ledgerSums(db, allocationId);
  expect({ granted: row!.granted, charged: row!.charged, reserved: row!.reserved, expired: row!.expired, overrun: row!.overrun }).toEqual(sums);
  return sums;
}

/** A refusal with its code and field, whose message says what is left. */
function expectRefusal(answer: { code: string; message: string; field?: string }, expected: { code: string; field?: string }, says: string) {
  expect(answer).toMatchObject(expected);
  expect(answer.message).toContain(says);
}

describe.each(dbTargets())('extending sessions on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: { userId: string };

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
  });
  afterAll(async () => handle?.close());

  /** A simulated cluster at 60× whose sessions are not launched (no Jupyter here: the reconciler writes no output). */
  async function cluster(clock: () => Date) {
    const sim = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now: clock, clusterId: `extend-${randomUUID().slice(0, 8)}` });
    const quiet: SchedulerPort = { ...sim, writeOutput: undefined };
    return quiet;
  }

  it('reserves the added time, runs the session past its old limit to the new one, and settles every hour it ran', { timeout: 60_000 }, async () => {
    const owner = await createTenant(db);
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: TODAY });
    let now = new Date(`${TODAY}T12:00:00Z`);
    const scheduler = await cluster(() => now);
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    const started = await api.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 2, walltimeMinutes: 60, idleTimeoutMinutes: 1440, idempotencyKey: randomUUID() });
    const step = async (wallSeconds: number) => {
      now = new Date(now.getTime() + wallSeconds * 1000);
      await reconcileOnce(db, scheduler, now);
    };
    await step(1);
    await step(1);
    expect((await api.session.get({ jobId: started.id })).state).toBe('RUNNING');
    const before = await balanced(db, allocationId);
    expect(before.reserved).toBe(2 * HOUR);

    const extended = await api.session.extend({ jobId: started.id, minutes: 90 });
    expect(extended).toEqual({ id: started.id, walltimeSeconds: 150 * 60, reserved: 2 * 90 * 60 });
    const listed = await api.session.get({ jobId: started.id });
    expect(listed).toMatchObject({ walltimeSeconds: 150 * 60, extendableSeconds: 48 * HOUR - 150 * 60 });
    expect((await balanced(db, allocationId)).reserved).toBe(2 * 150 * 60);
    const [job] = await db.select({ reservedAmount: jobs.reservedAmount }).from(jobs).where(eq(jobs.id, started.id));
    expect(job!.reservedAmount).toBe(2 * 150 * 60);
    const events = await db.select({ message: jobEvents.message, data: jobEvents.data }).from(jobEvents).where(eq(jobEvents.jobId, started.id));
    expect(events.find((e) => e.message === 'session.event.extended')?.data).toMatchObject({ hours: 1.5, total: 2.5 });

    // 70 cluster-minutes on (70 s of wall time at 60×): past the old limit of 60, the session still runs.
    for (let i = 0; i < 7; i++) await step(10);
    expect((await api.session.get({ jobId: started.id })).state).toBe('RUNNING');
    // At 150 cluster-minutes its new limit ends it (TIMEOUT) and it is charged the 150 minutes on 2 GPUs.
    for (let i = 0; i < 9; i++) await step(10);
    const [ended] = await db.select().from(jobs).where(eq(jobs.id, started.id));
    expect(ended).toMatchObject({ state: 'TIMEOUT', gpuSeconds: 2 * 150 * 60, chargedAmount: 2 * 150 * 60 });
    expect(ended!.settledAt).not.toBeNull();
    const after = await balanced(db, allocationId);
    expect(after).toMatchObject({ reserved: 0, charged: 2 * 150 * 60, overrun: 0 });
    // Its own release took back the reservation with the extension: one release, for the whole of it.
    const releases = await db.select({ amount: ledgerEntries.amount, extension: ledgerEntries.extension }).from(ledgerEntries).where(and(eq(ledgerEntries.jobId, started.id), eq(ledgerEntries.kind, 'release')));
    expect(releases).toEqual([{ amount: 2 * 150 * 60, extension: 0 }]);
    expect(await refusal(api.session.extend({ jobId: started.id, minutes: 30 }))).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'jobId' });
  });

  it('refuses time over the class\'s or the allocation\'s limit, or the budget, naming the field and writing nothing; another\'s session is not found', { timeout: 60_000 }, async () => {
    const owner = await createTenant(db);
    const member = await addMember(db, owner);
    const stranger = await createTenant(db);
    const { allocationId, projectId } = await activeAllocation(db, owner, admin, { gpuHours: 20, today: TODAY });
    let now = new Date(`${TODAY}T12:00:00Z`);
    const scheduler = await cluster(() => now);
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    await api.project.setMember({ projectId, userId: member.userId, role: 'member' });
    const started = await api.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 1, walltimeMinutes: 120, idleTimeoutMinutes: 1440, idempotencyKey: randomUUID() });
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    const entries = async () => db.select().from(ledgerEntries).where(eq(ledgerEntries.allocationId, allocationId));
    const written = (await entries()).length;

    // The class allows 48 h: 2 h + 47 h is over by 1 h.
    expectRefusal(await refusal(api.session.extend({ jobId: started.id, minutes: 47 * 60 })), { code: 'BAD_REQUEST', field: 'minutes' }, '46 h more');
    // The allocation allows 6 h per job: 4 h more at most.
    await callerFor(db, { userId: admin.userId }).staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 8, maxWalltimeHours: 6, maxQueuedJobs: 10, reason: 'Short jobs only' });
    expectRefusal(await refusal(api.session.extend({ jobId: started.id, minutes: 5 * 60 })), { code: 'PRECONDITION_FAILED', field: 'minutes' }, '4 h more');
    expect((await api.session.get({ jobId: started.id })).extendableSeconds).toBe(4 * HOUR);
    // 20 GPU-hours granted, 2 held: 4 h more fits the limits, and 18 h more would not fit the budget.
    await callerFor(db, { userId: admin.userId }).staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 8, maxWalltimeHours: 48, maxQueuedJobs: 10, reason: 'Long jobs again' });
    expect(await refusal(api.session.extend({ jobId: started.id, minutes: 19 * 60 }))).toMatchObject({ code: 'PRECONDITION_FAILED' });
    // Not the person's own session: a colleague, another tenant, a job that is no session.
    const asMember = callerFor(db, { userId: member.userId, orgId: owner.orgId, now: () => now, scheduler });
    expect(await refusal(asMember.session.extend({ jobId: started.id, minutes: 30 }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await refusal(callerFor(db, { userId: stranger.userId, orgId: stranger.orgId, now: () => now, scheduler }).session.extend({ jobId: started.id, minutes: 30 }))).toMatchObject({ code: 'NOT_FOUND' });
    const batch = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'train', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'pytorch', command: 'python train.py', env: {}, idempotencyKey: randomUUID() });
    expect(await refusal(api.session.extend({ jobId: batch.id, minutes: 30 }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await refusal(api.session.extend({ jobId: started.id, minutes: 0 }))).toMatchObject({ code: 'BAD_REQUEST' });
    // Nothing was written by the refusals but the batch job's own reservation.
    expect((await entries()).length).toBe(written + 1);
    expect((await api.session.get({ jobId: started.id })).walltimeSeconds).toBe(2 * HOUR);
    await balanced(db, allocationId);
  });

  it('takes the extension back when the cluster does not apply it (ended on the way, refused, down)', { timeout: 60_000 }, async () => {
    const owner = await createTenant(db);
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: TODAY });
    let now = new Date(`${TODAY}T12:00:00Z`);
    const sim = await cluster(() => now);
    let answer: 'ended' | 'down' | 'refused' | 'pass' = 'pass';
    const scheduler: SchedulerPort = {
      ...sim,
      extendTimeLimit: async (id, seconds) => {
        if (answer === 'ended') return false;
        if (answer === 'down') throw new SchedulerUnavailableError('connect ECONNREFUSED 127.0.0.1:6820');
        if (answer === 'refused') throw new SchedulerRefusedError('Requested time limit is invalid (missing or exceeds some limit)', 'limit', 2051);
        return sim.extendTimeLimit!(id, seconds);
      },
    };
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    const started = await api.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 1, walltimeMinutes: 60, idleTimeoutMinutes: 1440, idempotencyKey: randomUUID() });
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    const held = (await balanced(db, allocationId)).reserved;

    answer = 'ended';
    expect(await refusal(api.session.extend({ jobId: started.id, minutes: 60 }))).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'jobId' });
    answer = 'down';
    expect(await refusal(api.session.extend({ jobId: started.id, minutes: 60 }))).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    // A cluster whose partition allows less than the catalogue says refuses it itself.
    answer = 'refused';
    expectRefusal(await refusal(api.session.extend({ jobId: started.id, minutes: 60 })), { code: 'PRECONDITION_FAILED', field: 'minutes' }, 'exceeds some limit');
    answer = 'pass';
    expect((await balanced(db, allocationId)).reserved).toBe(held);
    const [job] = await db.select({ walltimeSeconds: jobs.walltimeSeconds, reservedAmount: jobs.reservedAmount }).from(jobs).where(eq(jobs.id, started.id));
    expect(job).toEqual({ walltimeSeconds: HOUR, reservedAmount: held });
    // Each extension taken back is a reserve and its release, with the extension's number.
    const rows = await db.select({ kind: ledgerEntries.kind, extension: ledgerEntries.extension, amount: ledgerEntries.amount }).from(ledgerEntries).where(eq(ledgerEntries.jobId, started.id));
    expect(rows.sort((a, b) => a.extension - b.extension || a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'reserve', extension: 0, amount: HOUR },
      { kind: 'release', extension: 1, amount: HOUR },
      { kind: 'reserve', extension: 1, amount: HOUR },
      { kind: 'release', extension: 2, amount: HOUR },
      { kind: 'reserve', extension: 2, amount: HOUR },
      { kind: 'release', extension: 3, amount: HOUR },
      { kind: 'reserve', extension: 3, amount: HOUR },
    ]);
    // Then one that passes, and the end: the session is settled on what it held, the ledger balanced.
    expect((await api.session.extend({ jobId: started.id, minutes: 60 })).walltimeSeconds).toBe(2 * HOUR);
    await api.session.end({ jobId: started.id });
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    const [ended] = await db.select().from(jobs).where(eq(jobs.id, started.id));
    expect(ended!.settledAt).not.toBeNull();
    expect(await balanced(db, allocationId)).toMatchObject({ reserved: 0, charged: ended!.gpuSeconds, overrun: 0 });
  });

  it('a company\'s extension must fit its monthly cap, and is charged in euros with the session', { timeout: 60_000 }, async () => {
    const owner = await createTenant(db, { kind: 'company', name: `Extend Robotics ${randomUUID().slice(0, 6)}` });
    const asAdmin = callerFor(db, { userId: admin.userId });
    await asAdmin.staff.changeTenantStatus({ orgId: owner.orgId, action: 'verify', reason: 'Commercial register checked' });
    let now = new Date(`${TODAY}T12:00:00Z`);
    const scheduler = await cluster(() => now);
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    const project = await api.project.create({ title: `Notebooks ${randomUUID().slice(0, 4)}`, abstract: 'Exploring data in notebooks.', workloadKind: 'fine_tuning', members: [] });
    const line = await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 1000, periodStart: TODAY, periodEnd: '2027-05-31', reason: 'Signed contract' });
    // A cap of €60 this month: a 4-GPU hour at €2.90 per GPU-hour is €11.60; 4 more hours (€46.40) would pass it.
    await asAdmin.staff.setMonthlyCap({ orgId: owner.orgId, capEuros: 60, reason: 'Starter cap' });
    const started = await api.session.start({ allocationId: line.id, resourceClassId: 'h100', app: 'jupyter', gpus: 4, walltimeMinutes: 60, idleTimeoutMinutes: 1440, idempotencyKey: randomUUID() });
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    expectRefusal(await refusal(api.session.extend({ jobId: started.id, minutes: 5 * 60 })), { code: 'PRECONDITION_FAILED' }, '60');
    expect(await api.session.extend({ jobId: started.id, minutes: 3 * 60 })).toMatchObject({ walltimeSeconds: 4 * HOUR, reserved: 3 * 1160 });
    expect((await balanced(db, line.id)).reserved).toBe(4 * 1160);
  });

  it('many extensions of one session at once pass neither the allocation\'s limit nor the budget', { timeout: 120_000 }, async () => {
    const owner = await createTenant(db);
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: TODAY });
    await callerFor(db, { userId: admin.userId }).staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 8, maxWalltimeHours: 5, maxQueuedJobs: 10, reason: 'Five hours per job' });
    let now = new Date(`${TODAY}T12:00:00Z`);
    const scheduler = await cluster(() => now);
    // The same person in several browser tabs: one caller each.
    const tabs = Array.from({ length: 12 }, () => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler }));
    const started = await tabs[0]!.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 4, walltimeMinutes: 60, idleTimeoutMinutes: 1440, idempotencyKey: randomUUID() });
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    // 12 × 30 minutes asked at once; the limit of 5 h leaves room for 4 h more: 8 pass, 4 are refused on the field.
    const outcomes = await Promise.allSettled(tabs.map((tab) => tab.session.extend({ jobId: started.id, minutes: 30 })));
    const passed = outcomes.filter((o) => o.status === 'fulfilled');
    expect(passed).toHaveLength(8);
    for (const o of outcomes) if (o.status === 'rejected') expect(await refusal(Promise.reject(o.reason as Error))).toMatchObject({ field: 'minutes' });
    const session = await tabs[0]!.session.get({ jobId: started.id });
    expect(session).toMatchObject({ walltimeSeconds: 5 * HOUR, extendableSeconds: 0 });
    expect((await balanced(db, allocationId)).reserved).toBe(4 * 5 * HOUR);
    // The cluster holds the same limit: the session still runs at 4 h 50 on its clock and has ended by 5 h.
    for (let t = 0; t < 290; t += 10) {
      now = new Date(now.getTime() + 10_000);
      await reconcileOnce(db, scheduler, now);
    }
    expect((await tabs[0]!.session.get({ jobId: started.id })).state).toBe('RUNNING');
    for (let t = 0; t < 3; t++) {
      now = new Date(now.getTime() + 10_000);
      await reconcileOnce(db, scheduler, now);
    }
    const [ended] = await db.select().from(jobs).where(eq(jobs.id, started.id));
    expect(ended).toMatchObject({ state: 'TIMEOUT', chargedAmount: 4 * 5 * HOUR });
    expect(await balanced(db, allocationId)).toMatchObject({ reserved: 0, charged: 4 * 5 * HOUR, overrun: 0 });
  });

  it('many sessions of one person on one allocation at once never overspend it; ending one while idle shutdown ends it settles it once', { timeout: 120_000 }, async () => {
    const owner = await createTenant(db);
    // 10 GPU-hours: room for exactly five 2-GPU sessions of one hour.
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: TODAY });
    let now = new Date(`${TODAY}T12:00:00Z`);
    const scheduler = await cluster(() => now);
    const tabs = Array.from({ length: 16 }, () => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler }));
    const outcomes = await Promise.allSettled(tabs.map((tab) => tab.session.start({ allocationId, resourceClassId: 'h100', app: 'jupyter', gpus: 2, walltimeMinutes: 60, idleTimeoutMinutes: 5, idempotencyKey: randomUUID() })));
    const started = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(started).toHaveLength(5);
    for (const o of outcomes) if (o.status === 'rejected') expect(await refusal(Promise.reject(o.reason as Error))).toMatchObject({ code: 'PRECONDITION_FAILED' });
    expect((await balanced(db, allocationId)).reserved).toBe(10 * HOUR);
    now = new Date(now.getTime() + 1000);
    await reconcileOnce(db, scheduler, now);
    // Idle for 6 cluster-minutes: the idle shutdown and the person's own End race for every session.
    now = new Date(now.getTime() + 6000);
    await Promise.all([reconcileOnce(db, scheduler, now), ...started.map((s, i) => tabs[i]!.session.end({ jobId: s.id }))]);
    for (let i = 0; i < 3; i++) {
      now = new Date(now.getTime() + 1000);
      await reconcileOnce(db, scheduler, now);
    }
    const rows = await db.select().from(jobs).where(eq(jobs.allocationId, allocationId));
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      expect(row.state).toBe('COMPLETED');
      expect(row.settledAt).toBeInstanceOf(Date);
    }
    const charges = await db.select({ jobId: ledgerEntries.jobId }).from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, allocationId), eq(ledgerEntries.kind, 'charge')));
    expect(new Set(charges.map((c) => c.jobId)).size).toBe(charges.length);
    const sums = await balanced(db, allocationId);
    expect(sums.reserved).toBe(0);
    expect(sums.charged).toBe(rows.reduce((s, r) => s + (r.gpuSeconds ?? 0), 0));
  });
});
