// One hand-over per job: the request that created a job and the reconciler (or two reconcilers)
// reaching for the same SUBMITTING job at the same moment make exactly one scheduler job, even with a
// scheduler that would create a second job for a second submit (as a real Slurm does). The lease on
// the job row decides; the port's idempotency stays the second guard. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs } from '~/db/schema';
import type { SchedulerJobSpec, SchedulerJobStatus, SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { HANDOVER_LEASE_MS } from './jobs';
import { reconcileOnce } from './reconciler';

/** A scheduler that, like Slurm, makes a new job for every submit call, and can hold a submit in flight. */
function nonIdempotentScheduler() {
  const created: { portalJobId: string; schedulerJobId: string; cancelled: boolean }[] = [];
  let gate: Promise<void> | null = null;
  let failNext = false;
  const port: SchedulerPort = {
    async submit(spec: SchedulerJobSpec) {
      if (failNext) {
        failNext = false;
        throw new Error('scheduler unreachable');
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
        out.push({ portalJobId: id, schedulerJobId: e.schedulerJobId, state: e.cancelled ? 'CANCELLED' : 'PENDING', pendingReason: e.cancelled ? null : 'Priority', startedAt: null, endedAt: e.cancelled ? new Date() : null, exitCode: null, nodeList: [], gpuSeconds: 0, energyWh: 0, energyMeasured: false, siteId: 'de-jena' });
      }
      return Promise.resolve(out);
    },
    describeCluster: () => Promise.resolve({ at: new Date(), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 }),
  };
  let open: () => void = () => undefined;
  return {
    port,
    created,
    hold() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release() {
      gate = null;
      open();
    },
    failOnce() {
      failNext = true;
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

  it('a cancel during the hand-over stops the job once it is at the scheduler', async () => {
    const scheduler = nonIdempotentScheduler();
    scheduler.hold();
    const submitting = asOwner(scheduler.port).job.submit(input());
    await waitFor(() => scheduler.created.length === 1);
    const portalJobId = scheduler.created[0]!.portalJobId;
    // The cancel cannot take the lease: it is recorded and left to the hand-over and the reconciler.
    expect(await asOwner(scheduler.port).job.cancel({ jobId: portalJobId })).toEqual({ state: 'SUBMITTING' });
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
});
