// An allocation's jobs in flight (allocations.active_gpus, queued_jobs) are counters the triggers on jobs
// keep (drizzle/0042); admission reads them instead of counting the queue. After every kind of job
// change they equal the count of the jobs themselves, on PGlite and real Postgres; and many submissions
// of one person racing into one allocation (real Postgres) pass its limits not by one job.
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, ledgerEntries } from '~/db/schema';
import { summariseArray } from '~/server/core/scheduler/array-status';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { expireDueAllocations } from '~/server/services/ledger/ledger';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { reconcileOnce } from './reconciler';

/** Every allocation's counters beside the count of its jobs, as submission counted them before (unsettled SUBMITTING, PENDING, RUNNING). */
async function inFlightAgainstJobs(db: Db) {
  const rows = await db
    .select({
      id: allocations.id,
      activeGpus: allocations.activeGpus,
      queuedJobs: allocations.queuedJobs,
      // A job array counted from its task rows: the tasks that may run at once (not ended, at most the
      // throttle) × GPUs, and its tasks neither running nor ended as queued.
      gpus: sql<number>`coalesce(sum(case when ${jobs.arrayTasks} is null then ${jobs.gpus} else ${jobs.gpus} * least(${jobs.arrayTasks} -
        (select count(*) from job_tasks t where t.job_id = "jobs"."id" and t.settled_at is not null), coalesce(${jobs.arrayThrottle}, ${jobs.arrayTasks})) end), 0)`.mapWith(Number),
      queued: sql<number>`coalesce(sum(case when ${jobs.arrayTasks} is null then (${jobs.state} in ('SUBMITTING', 'PENDING'))::int else ${jobs.arrayTasks} -
        (select count(*) from job_tasks t where t.job_id = "jobs"."id" and (t.settled_at is not null or t.state = 'RUNNING')) end), 0)`.mapWith(Number),
    })
    .from(allocations)
    .leftJoin(jobs, and(eq(jobs.allocationId, allocations.id), isNull(jobs.settledAt), inArray(jobs.state, ['SUBMITTING', 'PENDING', 'RUNNING'])))
    .groupBy(allocations.id)
    .orderBy(allocations.id);
  return rows.map((r) => ({ id: r.id, counters: { gpus: r.activeGpus, queued: r.queuedJobs }, counted: { gpus: r.gpus, queued: r.queued } }));
}

async function expectCountersMatch(db: Db) {
  const rows = await inFlightAgainstJobs(db);
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect({ id: row.id, ...row.counters }).toEqual({ id: row.id, ...row.counted });
}

async function counters(db: Db, allocationId: string) {
  const [row] = await db.select({ gpus: allocations.activeGpus, queued: allocations.queuedJobs }).from(allocations).where(eq(allocations.id, allocationId));
  return row;
}

const TODAY = '2026-12-03';

describe.each(dbTargets())('allocation counters of jobs in flight on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  it('equal the count of the jobs after submissions, hand-overs, starts, requeues, settlements, cancellations and expiry', async () => {
    let clock = Date.parse(`${TODAY}T09:00:00Z`);
    const now = () => new Date(clock);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `In Flight Lab ${randomUUID().slice(0, 6)}` });
    const main = await activeAllocation(db, owner, admin, { gpuHours: 1000, today: TODAY });
    const ending = await activeAllocation(db, owner, admin, { gpuHours: 1000, today: TODAY, periodEnd: '2026-12-05' });
    const slurm = scriptedScheduler();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: slurm.port });
    const submit = (allocationId: string, gpus: number) =>
      asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: `job-${gpus}`, kind: 'training', gpus, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });

    // Submitted and handed over: PENDING, queued.
    const m = [await submit(main.allocationId, 1), await submit(main.allocationId, 2), await submit(main.allocationId, 4), await submit(main.allocationId, 8), await submit(main.allocationId, 3)];
    const e = [await submit(ending.allocationId, 2), await submit(ending.allocationId, 4), await submit(ending.allocationId, 1)];
    // The scheduler unreachable: two stay SUBMITTING, still queued.
    slurm.setDown(true);
    const stuck = [await submit(main.allocationId, 5), await submit(main.allocationId, 6)];
    expect(stuck.map((j) => j.state)).toEqual(['SUBMITTING', 'SUBMITTING']);
    slurm.setDown(false);
    expect(await counters(db, main.allocationId)).toEqual({ gpus: 1 + 2 + 4 + 8 + 3 + 5 + 6, queued: 7 });
    expect(await counters(db, ending.allocationId)).toEqual({ gpus: 7, queued: 3 });
    await expectCountersMatch(db);

    // Three start (PENDING to RUNNING in one reconciler batch), one on the ending allocation.
    clock += 60_000;
    for (const job of [m[0]!, m[1]!, e[0]!]) slurm.set(job.id, { state: 'RUNNING', pendingReason: null, startedAt: now(), nodeList: ['n1'], gpuSeconds: 1 });
    await reconcileOnce(db, slurm.port, now()); // also hands the stuck jobs over (their leases ran out)
    expect(await counters(db, main.allocationId)).toEqual({ gpus: 29, queued: 5 });
    expect(await counters(db, ending.allocationId)).toEqual({ gpus: 7, queued: 2 });
    await expectCountersMatch(db);

    // One is requeued (RUNNING to PENDING), one completes, one pending job is cancelled, one fails at once.
    clock += 60_000;
    slurm.set(m[1]!.id, { state: 'PENDING', pendingReason: 'BeginTime', startedAt: null, nodeList: [], gpuSeconds: 0 });
    slurm.set(m[0]!.id, { state: 'COMPLETED', endedAt: now(), exitCode: 0, gpuSeconds: 60 });
    await asOwner.job.cancel({ jobId: m[2]!.id });
    slurm.set(m[2]!.id, { state: 'CANCELLED', endedAt: now(), gpuSeconds: 0 });
    slurm.set(m[3]!.id, { state: 'FAILED', endedAt: now(), exitCode: 1, gpuSeconds: 0 });
    await reconcileOnce(db, slurm.port, now());
    expect(await counters(db, main.allocationId)).toEqual({ gpus: 2 + 3 + 5 + 6, queued: 4 });
    await expectCountersMatch(db);

    // A job cancelled before it reached the scheduler (cancelUnsubmitted), and one the scheduler refuses (FAILED unsubmitted).
    slurm.setDown(true);
    const unsent = await submit(main.allocationId, 7);
    slurm.setDown(false);
    await asOwner.job.cancel({ jobId: unsent.id });
    expect((await db.select({ state: jobs.state }).from(jobs).where(eq(jobs.id, unsent.id)))[0]?.state).toBe('CANCELLED');
    const refusing: SchedulerPort = { ...slurm.port, submit: () => Promise.reject(Object.assign(new Error('no such partition'), { name: 'SchedulerRefusedError', reason: 'partition', code: null })) };
    const refused = await callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: refusing }).job.submit({ allocationId: main.allocationId, resourceClassId: 'h100', name: 'refused', kind: 'training', gpus: 2, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });
    expect(refused.state).toBe('FAILED');
    expect(await counters(db, main.allocationId)).toEqual({ gpus: 16, queued: 4 });
    await expectCountersMatch(db);

    // The ending allocation expires: its queued jobs are cancelled, the running one finishes and is settled.
    clock = Date.parse('2026-12-05T00:00:30Z');
    expect(await expireDueAllocations(db, '2026-12-05')).toEqual([ending.allocationId]);
    await expectCountersMatch(db);
    for (const job of [e[1]!, e[2]!]) slurm.set(job.id, { state: 'CANCELLED', endedAt: now(), gpuSeconds: 0 });
    slurm.set(e[0]!.id, { state: 'COMPLETED', endedAt: now(), exitCode: 0, gpuSeconds: 3600 });
    await reconcileOnce(db, slurm.port, now());
    expect(await counters(db, ending.allocationId)).toEqual({ gpus: 0, queued: 0 });

    // The rest end: nothing in flight is left.
    for (const job of [m[1]!, m[4]!, ...stuck]) slurm.set(job.id, { state: 'COMPLETED', pendingReason: null, endedAt: now(), exitCode: 0, gpuSeconds: 0 });
    await reconcileOnce(db, slurm.port, now());
    expect(await counters(db, main.allocationId)).toEqual({ gpus: 0, queued: 0 });
    await expectCountersMatch(db);
  });

  it.skipIf(target !== 'postgres')('hold an allocation to its limits exactly under many parallel submissions of one person', async () => {
    const clock = Date.parse(`${TODAY}T09:00:00Z`);
    const now = () => new Date(clock);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Racing Lab ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10_000, today: TODAY });
    const slurm = scriptedScheduler();
    const staff = callerFor(db, { userId: admin.userId, now });
    const caller = () => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: slurm.port });
    const race = (n: number, gpus: number) =>
      Promise.allSettled(
        Array.from({ length: n }, (_, i) =>
          caller().job.submit({ allocationId, resourceClassId: 'h100', name: `race-${i}`, kind: 'training', gpus, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() }),
        ),
      );
    const outcome = (results: PromiseSettledResult<unknown>[]) => ({
      admitted: results.filter((r) => r.status === 'fulfilled').length,
      refusals: results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code?: string }).code] : [])),
    });

    // The queue's limit: 7 of 40 racing submissions pass, the others are refused for it (not "busy").
    await staff.staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 1000, maxWalltimeHours: 12, maxQueuedJobs: 7, reason: 'Seven queued at most' });
    const queued = outcome(await race(40, 1));
    expect(queued).toEqual({ admitted: 7, refusals: Array.from({ length: 33 }, () => 'PRECONDITION_FAILED') });
    expect(await counters(db, allocationId)).toEqual({ gpus: 7, queued: 7 });

    // Three start while more race in, the reconciler's batch beside the submissions: the queue has room for three.
    const open = await db.select({ id: jobs.id }).from(jobs).where(eq(jobs.allocationId, allocationId)).orderBy(jobs.id).limit(3);
    for (const { id } of open) slurm.set(id, { state: 'RUNNING', pendingReason: null, startedAt: now(), nodeList: ['n1'] });
    await reconcileOnce(db, slurm.port, now());
    const more = outcome(await race(20, 1));
    expect(more.admitted).toBe(3);
    expect(await counters(db, allocationId)).toEqual({ gpus: 10, queued: 7 });

    // GPUs at once: 10 in flight under 24 leave room for 7 jobs of 2 GPUs out of 40, while the reconciler
    // starts the queued ones in the same moment.
    await staff.staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 24, maxWalltimeHours: 12, maxQueuedJobs: 1000, reason: 'Twenty-four GPUs at once' });
    const started = await db.select({ id: jobs.id }).from(jobs).where(eq(jobs.allocationId, allocationId)).orderBy(jobs.id);
    for (const { id } of started) slurm.set(id, { state: 'RUNNING', pendingReason: null, startedAt: now(), nodeList: ['n1'] });
    const [gpus] = await Promise.all([race(40, 2), reconcileOnce(db, slurm.port, now())]);
    expect(outcome(gpus)).toEqual({ admitted: 7, refusals: Array.from({ length: 33 }, () => 'PRECONDITION_FAILED') });
    const after = await counters(db, allocationId);
    expect(after?.gpus).toBe(24);
    await expectCountersMatch(db);
  });

  it.skipIf(target !== 'postgres')('hold an allocation to its limits exactly when one person races job arrays, while the reconciler settles their tasks', async () => {
    const clock = Date.parse(`${TODAY}T09:00:00Z`);
    const now = () => new Date(clock);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Racing Sweeps ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10_000, today: TODAY });
    const slurm = scriptedScheduler();
    const staff = callerFor(db, { userId: admin.userId, now });
    const caller = () => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: slurm.port });
    const race = (n: number, array: string) =>
      Promise.allSettled(
        Array.from({ length: n }, (_, i) =>
          caller().job.submit({ allocationId, resourceClassId: 'h100', name: `sweep-${i}`, kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID(), array }),
        ),
      );
    const admitted = (results: PromiseSettledResult<{ id: string }>[]) => results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : []));
    const refusals = (results: PromiseSettledResult<unknown>[]) => results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code?: string }).code] : []));

    // Every task is a queued job: 5 arrays of 10 fill a queue of 50, out of 30 racing.
    await staff.staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 1000, maxWalltimeHours: 12, maxQueuedJobs: 50, reason: 'Fifty queued at most' });
    const first = await race(30, '0-9%2');
    expect(admitted(first)).toHaveLength(5);
    expect(refusals(first)).toEqual(Array.from({ length: 25 }, () => 'PRECONDITION_FAILED'));
    expect(await counters(db, allocationId)).toEqual({ gpus: 10, queued: 50 });

    // Two tasks of each run and end, and two more start, in the reconciler's round while 30 more arrays race: the 20 tasks no longer waiting make room for two more arrays.
    const task = (index: number, state: 'RUNNING' | 'COMPLETED') => ({ index, schedulerJobId: `x_${index}`, state, startedAt: now(), endedAt: state === 'COMPLETED' ? now() : null, exitCode: state === 'COMPLETED' ? 0 : null, signal: null, nodeList: ['n1'], gpuSeconds: 60, energyWh: 1 });
    for (const id of admitted(first)) {
      slurm.set(id, summariseArray({ portalJobId: id, schedulerJobId: 'x', tasks: [task(0, 'COMPLETED'), task(1, 'COMPLETED'), task(2, 'RUNNING'), task(3, 'RUNNING')], waiting: 6, neverRan: 0, pendingReason: 'JobArrayTaskLimit', energyMeasured: false, siteId: 'de-jena' }));
    }
    const [second] = await Promise.all([race(30, '0-9%2'), reconcileOnce(db, slurm.port, now())]);
    await reconcileOnce(db, slurm.port, now());
    // However the round and the race interleaved, the queue was never overfilled and the counters equal the tasks.
    const queuedNow = (await counters(db, allocationId))!.queued;
    expect(queuedNow).toBeLessThanOrEqual(50);
    expect(admitted(second).length).toBeLessThanOrEqual(2);
    expect(refusals(second).every((c) => c === 'PRECONDITION_FAILED')).toBe(true);
    await expectCountersMatch(db);
    // Each array's two ended tasks were charged and their shares released, once.
    const charges = await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(ledgerEntries).where(and(inArray(ledgerEntries.jobId, admitted(first)), eq(ledgerEntries.kind, 'charge')));
    expect(charges[0]!.n).toBe(10);
  });
});
