// A job array through the whole path: one request creates one job holding the whole array's reservation;
// its tasks appear as they start, each is settled once as it ends (charged, its share released), the
// allocation's figures in flight follow its tasks, and the array settles the rest when its last task
// ends. The ledger equals the sum of its tasks. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, jobTasks, ledgerEntries } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { summariseArray } from '~/server/core/scheduler/array-status';
import type { SchedulerTaskStatus } from '~/server/core/scheduler/port';
import { ledgerSums, openReservations } from '~/server/services/ledger/ledger';
import { createRestHandler } from '~/server/api/rest';
import { apiTokens } from '~/server/testing/api-tokens';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { reconcileOnce } from './reconciler';

describe.each(dbTargets())('a job array on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  async function setup(name: string) {
    const t0 = Date.UTC(2026, 11, 4, 9);
    const clock = { now: t0 };
    const now = () => new Date(clock.now);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `${name} ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: now().toISOString().slice(0, 10) });
    const slurm = scriptedScheduler();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: slurm.port });
    return { t0, clock, now, owner, allocationId, slurm, asOwner };
  }

  const task = (index: number, state: SchedulerTaskStatus['state'], gpuSeconds: number, t0: number): SchedulerTaskStatus => ({
    index,
    schedulerJobId: `100_${index}`,
    state,
    startedAt: new Date(t0 + (index + 1) * 1000),
    endedAt: state === 'RUNNING' ? null : new Date(t0 + (index + 1) * 1000 + gpuSeconds * 1000),
    exitCode: state === 'RUNNING' ? null : state === 'FAILED' ? 3 : 0,
    signal: null,
    nodeList: ['n1'],
    gpuSeconds,
    energyWh: 1,
  });

  it('reserves the whole array, settles task by task and the ledger equals the sum of its tasks', async () => {
    const { t0, clock, now, allocationId, slurm, asOwner } = await setup('Array Lab');
    const submitted = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'sweep', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'run $SLURM_ARRAY_TASK_ID', env: {}, idempotencyKey: randomUUID(), array: '0-5%2' });
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]!;
    const allocation = async () => (await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!;
    expect(await row()).toMatchObject({ arraySpec: '0-5%2', arrayTasks: 6, arrayThrottle: 2, reservedAmount: 6 * 600, state: 'PENDING' });
    // In flight: 6 tasks queued, 2 × 1 GPU may run at once.
    expect(await allocation()).toMatchObject({ reserved: 3600, queuedJobs: 6, activeGpus: 2 });
    const report = (tasks: SchedulerTaskStatus[], waiting: number) =>
      slurm.set(submitted.id, summariseArray({ portalJobId: submitted.id, schedulerJobId: '100', tasks, waiting, neverRan: 0, pendingReason: 'JobArrayTaskLimit', energyMeasured: false, siteId: 'de-jena' }));

    // Two tasks start: they appear, the array runs, 4 tasks wait.
    clock.now = t0 + 10_000;
    report([task(0, 'RUNNING', 5, t0), task(1, 'RUNNING', 4, t0)], 4);
    await reconcileOnce(db, slurm.port, now());
    expect(await row()).toMatchObject({ state: 'RUNNING', tasksRunning: 2, tasksEnded: 0, gpuSeconds: 9 });
    expect(await db.select().from(jobTasks).where(eq(jobTasks.jobId, submitted.id))).toHaveLength(2);
    expect(await allocation()).toMatchObject({ queuedJobs: 4, activeGpus: 2, reserved: 3600 });
    const page = await asOwner.job.get({ jobId: submitted.id });
    expect(page.array).toMatchObject({ text: '0-5%2', tasks: 6, throttle: 2, started: 2, counts: { RUNNING: 2, PENDING: 4 } });
    expect(page.array!.list.map((t) => t.index)).toEqual([0, 1]);

    // Task 0 ends: charged what it ran, its share (600) released; then a round reporting the same changes nothing.
    clock.now = t0 + 200_000;
    report([task(0, 'COMPLETED', 100, t0), task(1, 'RUNNING', 150, t0), task(2, 'RUNNING', 10, t0)], 3);
    await reconcileOnce(db, slurm.port, now());
    await reconcileOnce(db, slurm.port, now());
    expect(await row()).toMatchObject({ state: 'RUNNING', tasksRunning: 2, tasksEnded: 1 });
    expect(await allocation()).toMatchObject({ reserved: 3000, charged: 100, queuedJobs: 3, activeGpus: 2 });
    // What is still open of its reservation: the whole less what its own tasks released.
    expect((await openReservations(db, allocationId)).map((r) => [r.jobId, r.amount])).toEqual([[submitted.id, 3000]]);
    const entries = async () => db.select().from(ledgerEntries).where(eq(ledgerEntries.jobId, submitted.id));
    expect((await entries()).filter((e) => e.taskIndex === 0).map((e) => [e.kind, e.amount]).sort()).toEqual([
      ['charge', 100],
      ['release', 600],
    ]);
    const [list] = await asOwner.job.list({ status: 'all', limit: 10 });
    expect(list!.array).toEqual({ text: '0-5%2', tasks: 6, counts: { COMPLETED: 1, RUNNING: 2, PENDING: 3 } });

    // All end, one failed: the array ends FAILED, settled once; the ledger is the sum of its tasks.
    clock.now = t0 + 900_000;
    const last = [task(0, 'COMPLETED', 100, t0), task(1, 'COMPLETED', 300, t0), task(2, 'COMPLETED', 200, t0), task(3, 'COMPLETED', 50, t0), task(4, 'FAILED', 20, t0), task(5, 'COMPLETED', 70, t0)];
    report(last, 0);
    await reconcileOnce(db, slurm.port, now());
    await reconcileOnce(db, slurm.port, now());
    const settled = await row();
    const sum = last.reduce((s, t) => s + t.gpuSeconds, 0);
    expect(settled).toMatchObject({ state: 'FAILED', gpuSeconds: sum, chargedAmount: sum, tasksRunning: 0, tasksEnded: 6, exitCode: 3 });
    expect(settled.settledAt).not.toBeNull();
    const all = await entries();
    expect(all.filter((e) => e.kind === 'charge').reduce((s, e) => s + e.amount, 0)).toBe(sum);
    expect(all.filter((e) => e.kind === 'release').reduce((s, e) => s + e.amount, 0)).toBe(3600);
    expect(all.filter((e) => e.kind === 'charge')).toHaveLength(6);
    const tasks = await db.select().from(jobTasks).where(eq(jobTasks.jobId, submitted.id));
    expect(tasks.reduce((s, t) => s + (t.chargedAmount ?? 0), 0)).toBe(sum);
    const a = await allocation();
    expect(a).toMatchObject({ reserved: 0, charged: sum, queuedJobs: 0, activeGpus: 0 });
    expect(await ledgerSums(db, allocationId)).toMatchObject({ reserved: 0, charged: sum });
    expect(await openReservations(db, allocationId)).toEqual([]);
  });

  it('cancelled while tasks wait: the tasks that ran are charged, the rest of the reservation released', async () => {
    const { t0, clock, now, allocationId, slurm, asOwner } = await setup('Array Cancel');
    const submitted = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'sweep', kind: 'training', gpus: 2, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID(), array: '1-20:2%3' });
    expect((await db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]).toMatchObject({ arrayTasks: 10, reservedAmount: 10 * 1200 });
    clock.now = t0 + 60_000;
    slurm.set(submitted.id, summariseArray({ portalJobId: submitted.id, schedulerJobId: '200', tasks: [task(1, 'RUNNING', 40, t0)], waiting: 9, neverRan: 0, pendingReason: 'Priority', energyMeasured: false, siteId: 'de-jena' }));
    await reconcileOnce(db, slurm.port, now());
    await asOwner.job.cancel({ jobId: submitted.id });
    clock.now = t0 + 120_000;
    slurm.set(submitted.id, summariseArray({ portalJobId: submitted.id, schedulerJobId: '200', tasks: [task(1, 'CANCELLED', 80, t0)], waiting: 0, neverRan: 9, pendingReason: null, energyMeasured: false, siteId: 'de-jena' }));
    await reconcileOnce(db, slurm.port, now());
    const row = (await db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]!;
    expect(row).toMatchObject({ state: 'CANCELLED', chargedAmount: 80, gpuSeconds: 80 });
    const [a] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
    expect(a).toMatchObject({ reserved: 0, charged: 80, queuedJobs: 0, activeGpus: 0 });
    const page = await asOwner.job.get({ jobId: submitted.id });
    expect(page.array!.counts).toEqual({ CANCELLED: 10 });
    const releases = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, submitted.id), eq(ledgerEntries.kind, 'release')));
    expect(releases.reduce((s, e) => s + e.amount, 0)).toBe(12_000);
  });

  it('between its tasks an array waits for the reason its tasks wait, not "requeued"', async () => {
    const { t0, clock, now, allocationId, slurm, asOwner } = await setup('Array Between');
    const submitted = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'sweep', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID(), array: '0-3' });
    const report = (tasks: SchedulerTaskStatus[], waiting: number, pendingReason: string | null) =>
      slurm.set(submitted.id, summariseArray({ portalJobId: submitted.id, schedulerJobId: '300', tasks, waiting, neverRan: 0, pendingReason, energyMeasured: false, siteId: 'de-jena' }));
    clock.now = t0 + 10_000;
    report([task(0, 'RUNNING', 5, t0)], 3, 'Resources');
    await reconcileOnce(db, slurm.port, now());
    clock.now = t0 + 20_000;
    report([task(0, 'COMPLETED', 50, t0)], 3, 'Resources');
    await reconcileOnce(db, slurm.port, now());
    const row = (await db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]!;
    expect(row).toMatchObject({ state: 'PENDING', pendingReason: 'Resources', tasksRunning: 0, tasksEnded: 1 });
  });

  it('REST takes an array as the API does, lists it with its tasks by state, and refuses a bad one with the field and the fix', async () => {
    const { owner, allocationId, slurm } = await setup('Array REST');
    const tokens = apiTokens(db);
    const token = await tokens.mint(owner, ['read', 'jobs:write']);
    const rest = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 1000, scheduler: slurm.port, now: () => new Date(Date.UTC(2026, 11, 4, 9)) });
    const call = (path: string, body?: unknown) =>
      rest(new Request(`http://portal.test/api/v1${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) }));
    const body = { allocationId, resourceClassId: 'h100', name: 'rest sweep', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'run $SLURM_ARRAY_TASK_ID', env: {} };
    // Each task counts as a queued job, as Slurm counts array tasks against MaxSubmitJobs: the allocation's 50 by default.
    const tooMany = await call('/jobs', { ...body, array: '0-99%10' });
    expect(tooMany.status).toBe(412);
    expect(JSON.stringify(await tooMany.json())).toMatch(/allows 50 queued jobs at once and 0 are queued; the array's 100 tasks would exceed it/);
    const created = await call('/jobs', { ...body, array: '0-39%10' });
    expect(created.status, await created.clone().text()).toBe(200);
    const { id } = (await created.json()) as { id: string };
    expect((await db.select().from(jobs).where(eq(jobs.id, id)))[0]).toMatchObject({ arraySpec: '0-39%10', arrayTasks: 40, reservedAmount: 40 * 600 });
    const listed = (await (await call('/jobs')).json()) as { items: { id: string; array: unknown }[] };
    expect(listed.items.find((j) => j.id === id)!.array).toEqual({ text: '0-39%10', tasks: 40, counts: { PENDING: 40 } });
    const page = (await (await call(`/jobs/${id}`)).json()) as { array: { tasks: number; throttle: number; counts: Record<string, number> } };
    expect(page.array).toMatchObject({ tasks: 40, throttle: 10, counts: { PENDING: 40 } });
    const bad = await call('/jobs', { ...body, array: '0-9%' });
    expect(bad.status).toBe(400);
    const text = JSON.stringify(await bad.json());
    expect(text).toContain('array');
    expect(text).toContain('0-9999%64');
  });

  it('refuses a bad array with the field named, and an array over the allocation limits with the throttle that fits', async () => {
    const { allocationId, asOwner } = await setup('Array Limits');
    const base = { allocationId, resourceClassId: 'h100', name: 'sweep', kind: 'batch' as const, gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'run', env: {} };
    for (const [array, key] of [
      ['0-', 'job.arrayFormat'],
      ['5-9,0-3', 'job.arrayOverlap'],
      ['0-10000', 'job.arrayTooMany'],
      ['100000', 'job.arrayIndexTooHigh'],
      ['0-9%0', 'job.arrayThrottle'],
    ] as const) {
      await expect(asOwner.job.submit({ ...base, idempotencyKey: randomUUID(), array })).rejects.toMatchObject({ cause: { key, field: 'array' } });
    }
    await expect(asOwner.job.submit({ ...base, kind: 'inference', idempotencyKey: randomUUID(), array: '0-3' })).rejects.toMatchObject({ cause: { key: 'job.arrayNotForServices' } });
    await db.update(allocations).set({ maxGpusAtOnce: 8, maxQueuedJobs: 50 }).where(eq(allocations.id, allocationId));
    await expect(asOwner.job.submit({ ...base, gpus: 2, idempotencyKey: randomUUID(), array: '0-9' })).rejects.toMatchObject({ cause: { key: 'job.arrayGpusAtOnce', field: 'array', params: { throttle: 4 } } });
    await expect(asOwner.job.submit({ ...base, idempotencyKey: randomUUID(), array: '0-99%4' })).rejects.toMatchObject({ cause: { key: 'job.arrayQueuedJobs', field: 'array' } });
    // Nothing half-written: no job, no reservation.
    expect(await db.select().from(jobs).where(eq(jobs.allocationId, allocationId))).toEqual([]);
    const ok = await asOwner.job.submit({ ...base, gpus: 2, idempotencyKey: randomUUID(), array: '0-9%4' });
    expect(ok.state).toBe('PENDING');
  });
});

describe.each(dbTargets())('a job array on the simulated cluster, on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  const SPEED = 60;
  let now = new Date('2026-12-01T10:00:00Z');

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  it('a 20-task array with %4 runs at most 4 at once, a dependent job starts after it, and its ledger equals the sum of its tasks', { timeout: 120_000 }, async () => {
    const scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: SPEED, now: () => now, clusterId: `array-${randomUUID().slice(0, 8)}` });
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 1000, today: '2026-12-01' });
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });
    const base = { allocationId, resourceClassId: 'h100', kind: 'batch' as const, gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'python sweep.py --seed $SLURM_ARRAY_TASK_ID', env: {} };
    const sweep = await api.job.submit({ ...base, name: 'sweep', idempotencyKey: randomUUID(), array: '0-19%4' });
    const after = await api.job.submit({ ...base, name: 'collect', idempotencyKey: randomUUID(), dependency: { type: 'afterany', jobIds: [sweep.id] } });
    const row = async (id: string) => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!;
    let mostAtOnce = 0;
    for (let i = 0; i < 200 && (await row(after.id)).settledAt === null; i++) {
      await reconcileOnce(db, scheduler, now);
      const r = await row(sweep.id);
      mostAtOnce = Math.max(mostAtOnce, r.tasksRunning);
      expect(r.tasksRunning).toBeLessThanOrEqual(4);
      now = new Date(now.getTime() + (600 * 1000) / SPEED);
    }
    const [s, c] = [await row(sweep.id), await row(after.id)];
    expect(mostAtOnce).toBe(4);
    expect(s).toMatchObject({ tasksEnded: 20, tasksRunning: 0 });
    expect(s.settledAt).not.toBeNull();
    expect(c.startedAt!.getTime()).toBeGreaterThanOrEqual(s.endedAt!.getTime());
    const tasks = await db.select().from(jobTasks).where(eq(jobTasks.jobId, sweep.id));
    expect(tasks.map((t) => t.taskIndex).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const sum = tasks.reduce((n, t) => n + t.gpuSeconds, 0);
    expect(s.gpuSeconds).toBe(sum);
    expect(s.chargedAmount).toBe(sum);
    const charges = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, sweep.id), eq(ledgerEntries.kind, 'charge')));
    expect(charges.reduce((n, e) => n + e.amount, 0)).toBe(sum);
    // No two tasks of the four slots overlap beyond the throttle: at any task's start, at most 4 ran.
    for (const t of tasks) {
      const running = tasks.filter((o) => o.startedAt! <= t.startedAt! && o.endedAt! > t.startedAt!).length;
      expect(running).toBeLessThanOrEqual(4);
    }
    const [a] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
    expect(await ledgerSums(db, allocationId)).toMatchObject({ reserved: a!.reserved, charged: a!.charged });
    expect(a).toMatchObject({ reserved: 0, queuedJobs: 0, activeGpus: 0 });
  });
});
