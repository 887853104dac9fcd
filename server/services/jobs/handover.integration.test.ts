// One hand-over per job: the request that created a job and the reconciler (or two reconcilers)
// reaching for the same SUBMITTING job at the same moment make exactly one scheduler job, even with a
// scheduler that would create a second job for a second submit (as a real Slurm does). The lease on
// the job row decides; the port's idempotency stays the second guard. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobEvents, jobs } from '~/db/schema';
import { SchedulerRefusedError, SchedulerUnavailableError, type SchedulerBudget, type SchedulerJobSpec, type SchedulerJobStatus, type SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { HANDOVER_LEASE_MS } from './jobs';
import { reconcileOnce } from './reconciler';

/** A scheduler that, like Slurm, makes a new job for every submit call, and can hold a submit in flight. */
function nonIdempotentScheduler() {
  const created: { portalJobId: string; schedulerJobId: string; cancelled: boolean }[] = [];
  const attempts: (number | undefined)[] = [];
  let gate: Promise<void> | null = null;
  let failNext: Error | null = null;
  const port: SchedulerPort = {
    async submit(spec: SchedulerJobSpec) {
      attempts.push(spec.attempt);
      if (failNext) {
        const error = failNext;
        failNext = null;
        throw error;
      }
      const entry = { portalJobId: spec.portalJobId, schedulerJobId: `fake-${created.length + 1}`, cancelled: false };
      created.push(entry);
      if (gate) await gate;
      return { schedulerJobId: entry.schedulerJobId };
    },
    cancel(portalJobId) {
      for (const e of created) if (e.portalJobId === portalJobId) e.cancelled = true;
      return Promise.resolve();
    },
    jobs(ids) {
      const out: SchedulerJobStatus[] = [];
      for (const id of ids) {
        const e = created.findLast((c) => c.portalJobId === id);
        if (!e) continue;
        out.push({ portalJobId: id, schedulerJobId: e.schedulerJobId, state: e.cancelled ? 'CANCELLED' : 'PENDING', pendingReason: e.cancelled ? null : 'Priority', startedAt: null, endedAt: e.cancelled ? new Date() : null, exitCode: null, signal: null, nodeList: [], gpuSeconds: 0, energyWh: 0, energyMeasured: false, siteId: 'de-jena' });
      }
      return Promise.resolve(out);
    },
    describeCluster: () => Promise.resolve({ at: new Date(), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 }),
  };
  let open: () => void = () => undefined;
  return {
    port,
    created,
    attempts,
    hold() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      gate = null;
      open();
    },
    failOnce(error: Error = new Error('scheduler unreachable')) {
      failNext = error;
    },
    of: (portalJobId: string) => created.filter((c) => c.portalJobId === portalJobId),
  };
}

describe.each(dbTargets())('hand-over on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let allocationId: string;
  const now = new Date();
  const today = now.toISOString().slice(0, 10);

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Handover University ${randomUUID().slice(0, 6)}` });
    ({ allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 500, today }));
  });
  afterAll(async () => handle?.close());

  const input = () => ({ allocationId, resourceClassId: 'h100', name: 'handover', kind: 'training' as const, gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });
  const asOwner = (scheduler: SchedulerPort) => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler });

  async function waitFor(check: () => boolean) {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  }

  async function jobRow(id: string) {
    return (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!;
  }

  it('the request path and the reconciler at the same moment make one scheduler job', async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.hold();
    const submitting = asOwner(scheduler.port).job.submit(input());
    // The request has committed the job and is inside the scheduler's submit.
    await waitFor(() => scheduler.created.length === 1);
    const portalJobId = scheduler.created[0]!.portalJobId;
    expect((await jobRow(portalJobId)).state).toBe('SUBMITTING');
    // The reconciler sees a SUBMITTING job at the same moment, and leaves it to the lease holder.
    const round = await reconcileOnce(db, scheduler.port, now);
    expect(round.submitted).toBe(0);
    scheduler.release();
    const job = await submitting;
    expect(job.state).toBe('PENDING');
    await reconcileOnce(db, scheduler.port, now);
    expect(scheduler.of(portalJobId)).toHaveLength(1);
    expect((await jobRow(portalJobId)).schedulerJobId).toBe(scheduler.of(portalJobId)[0]!.schedulerJobId);
  });

  it('two reconcilers retrying a failed hand-over at the same moment make one scheduler job', async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.failOnce();
    const job = await asOwner(scheduler.port).job.submit(input());
    // The hand-over failed: the job waits for the reconciler, and its lease was given back.
    const failed = await jobRow(job.id);
    expect(failed.state).toBe('SUBMITTING');
    expect(failed.handoverUntil).toBeNull();
    scheduler.hold();
    const rounds = Promise.all([reconcileOnce(db, scheduler.port, now), reconcileOnce(db, scheduler.port, now), reconcileOnce(db, scheduler.port, now)]);
    await waitFor(() => scheduler.created.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    scheduler.release();
    const results = await rounds;
    expect(results.map((r) => r.submitted).reduce((a, b) => a + b, 0)).toBe(1);
    expect(scheduler.of(job.id)).toHaveLength(1);
    expect((await jobRow(job.id)).state).toBe('PENDING');
  });

  it('a hand-over whose process died is taken over once its lease has run out', async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.failOnce();
    const job = await asOwner(scheduler.port).job.submit(input());
    // As if a process had claimed the job and died mid hand-over.
    await db.update(jobs).set({ handoverUntil: new Date(now.getTime() + HANDOVER_LEASE_MS) }).where(eq(jobs.id, job.id));
    expect((await reconcileOnce(db, scheduler.port, now)).submitted).toBe(0);
    expect(scheduler.of(job.id)).toHaveLength(0);
    const later = new Date(now.getTime() + HANDOVER_LEASE_MS + 1000);
    expect((await reconcileOnce(db, scheduler.port, later)).submitted).toBe(1);
    expect(scheduler.of(job.id)).toHaveLength(1);
  });

  it("a slow hand-over past its lease is not taken over by its own process's reconciler", async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.hold();
    const submitting = asOwner(scheduler.port).job.submit(input());
    await waitFor(() => scheduler.created.length === 1);
    const portalJobId = scheduler.created[0]!.portalJobId;
    // The request is alive but slow (on the embedded database a burst can keep it waiting this long):
    // its lease has run out, yet this process's reconciler leaves the job to it, round after round.
    const later = new Date(now.getTime() + HANDOVER_LEASE_MS + 1000);
    for (let i = 0; i < 3; i++) expect((await reconcileOnce(db, scheduler.port, later)).submitted).toBe(0);
    expect(scheduler.attempts).toEqual([1]);
    scheduler.release();
    expect((await submitting).state).toBe('PENDING');
    expect(scheduler.of(portalJobId)).toHaveLength(1);
    // Another process (no mark of its own) would have taken it over after the lease: that is the crash case above.
  });

  it('a cancel during the hand-over stops the job once it is at the scheduler', async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.hold();
    const submitting = asOwner(scheduler.port).job.submit(input());
    await waitFor(() => scheduler.created.length === 1);
    const portalJobId = scheduler.created[0]!.portalJobId;
    // The cancel cannot take the lease: it is recorded and left to the hand-over and the reconciler.
    expect(await asOwner(scheduler.port).job.cancel({ jobId: portalJobId })).toEqual({ id: portalJobId, state: 'SUBMITTING' });
    scheduler.release();
    await submitting;
    await reconcileOnce(db, scheduler.port, now);
    await reconcileOnce(db, scheduler.port, now);
    const row = await jobRow(portalJobId);
    expect(row.state).toBe('CANCELLED');
    expect(row.settledAt).not.toBeNull();
    expect(scheduler.of(portalJobId)).toHaveLength(1);
    expect(scheduler.of(portalJobId)[0]!.cancelled).toBe(true);
  });

  it('tells the scheduler which attempt a hand-over is: the first needs no duplicate lookup, a retry does', async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.failOnce(new SchedulerUnavailableError('slurmctld does not answer'));
    const job = await asOwner(scheduler.port).job.submit(input());
    expect((await jobRow(job.id)).state).toBe('SUBMITTING');
    await reconcileOnce(db, scheduler.port, now);
    expect(scheduler.attempts).toEqual([1, 2]);
    expect((await jobRow(job.id)).handoverAttempts).toBe(2);
    expect(scheduler.of(job.id)).toHaveLength(1);
  });

  it('an unreachable scheduler leaves the job waiting with its reservation; the next round hands it over', async () => {
    const scheduler = nonIdempotentScheduler();
    const [before] = await db.select({ reserved: allocations.reserved }).from(allocations).where(eq(allocations.id, allocationId));
    scheduler.failOnce(new SchedulerUnavailableError('connect ECONNREFUSED 127.0.0.1:6820'));
    const job = await asOwner(scheduler.port).job.submit(input());
    expect(job.state).toBe('SUBMITTING');
    const [waiting] = await db.select({ reserved: allocations.reserved }).from(allocations).where(eq(allocations.id, allocationId));
    expect(waiting!.reserved - before!.reserved).toBe(3600); // 1 GPU × 60 minutes, still held
    expect((await reconcileOnce(db, scheduler.port, now)).submitted).toBe(1);
    expect((await jobRow(job.id)).state).toBe('PENDING');
  });

  it('a job the scheduler refuses for good ends FAILED, nothing charged, its reservation released', async () => {
    const scheduler = nonIdempotentScheduler();
    const [before] = await db.select({ reserved: allocations.reserved, charged: allocations.charged }).from(allocations).where(eq(allocations.id, allocationId));
    scheduler.failOnce(new SchedulerRefusedError('Requested node configuration is not available', 'resources', 2014));
    const job = await asOwner(scheduler.port).job.submit(input());
    const row = await jobRow(job.id);
    expect(row).toMatchObject({ state: 'FAILED', gpuSeconds: 0, chargedAmount: 0 });
    expect(row.settledAt).not.toBeNull();
    const [after] = await db.select({ reserved: allocations.reserved, charged: allocations.charged }).from(allocations).where(eq(allocations.id, allocationId));
    expect(after).toEqual(before);
    const events = await db.select().from(jobEvents).where(eq(jobEvents.jobId, job.id)).orderBy(jobEvents.id);
    expect(events.at(-1)).toMatchObject({ state: 'FAILED', message: 'job.event.refusedByScheduler', data: { reason: 'Requested node configuration is not available' } });
    // The reconciler does not try it again.
    await reconcileOnce(db, scheduler.port, now);
    expect(scheduler.attempts).toHaveLength(1);
  });

  it('a project the scheduler does not know yet gets its budget (and account) synced, and the job goes on', async () => {
    const scheduler = nonIdempotentScheduler();
    const synced: string[] = [];
    const port = {
      ...scheduler.port,
      syncBudgets: (budgets: SchedulerBudget[]) => {
        synced.push(...budgets.map((b) => `${b.account}/${b.partition}=${b.gpuMinutes}`));
        return Promise.resolve(budgets.map((b) => ({ ...b, usedGpuMinutes: null })));
      },
      budgetHolds: () => Promise.resolve([]),
    };
    scheduler.failOnce(new SchedulerRefusedError('Invalid account or account/partition combination specified', 'account', 2045));
    const job = await asOwner(port).job.submit(input());
    expect(job.state).toBe('PENDING');
    const [row] = await db.select({ projectId: jobs.projectId }).from(jobs).where(eq(jobs.id, job.id));
    expect(synced).toContain(`${row!.projectId}/h100=30000`); // the 500 GPU-hour allocation
    expect(scheduler.of(job.id)).toHaveLength(1);
  });
});
