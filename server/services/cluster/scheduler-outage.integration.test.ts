// A scheduler that stops answering: the portal stays up. Submissions wait with their reservation and are
// handed over once it answers, staff see since when it is away, and nothing is settled without it.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { jobs } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { switchable } from '~/server/testing/switchable-scheduler';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { startWorker } from '~/server/worker';
import { readSchedulerStatus } from './scheduler-status';

describe.each(dbTargets())('scheduler outage on %s', (target) => {
  let handle: DbHandle;
  let clock = Date.UTC(2026, 11, 1, 9);
  const now = () => new Date(clock);

  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  it('jobs wait and are forwarded later, staff see the outage from the first failed hand-over, the job page says why it waits', async () => {
    const db = handle.db;
    const sim = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now, clusterId: `outage-${randomUUID()}` });
    const scheduler = switchable(sim);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Outage Lab ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: now().toISOString().slice(0, 10) });
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: scheduler.port });
    const asStaff = callerFor(db, { userId: admin.userId, now, scheduler: scheduler.port });
    const worker = startWorker(handle, scheduler.port, { reconcileMs: 3_600_000, now, log: () => undefined });
    try {
      scheduler.set(true);
      const job = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'outage', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });
      expect(job.state).toBe('SUBMITTING');
      // The failed hand-over itself tells staff, before the worker's next round.
      expect(await readSchedulerStatus(db)).toMatchObject({ reachable: false, unreachableSince: now() });
      expect((await asStaff.staff.cluster()).scheduler).toMatchObject({ reachable: false, unreachableSince: now() });
      await worker.tick();
      const status = await readSchedulerStatus(db);
      expect(status).toMatchObject({ reachable: false, unreachableSince: now() });
      expect(status!.lastError).toMatch(/ECONNREFUSED/);
      const cluster = await asStaff.staff.cluster();
      expect(cluster.description).toBeNull();
      expect(cluster.scheduler).toMatchObject({ reachable: false, unreachableSince: now() });
      expect((await asOwner.job.get({ jobId: job.id })).waitingForScheduler).toBe(true);

      // A minute later still away: the outage keeps its start.
      const since = now();
      clock += 60_000;
      await worker.tick();
      expect((await readSchedulerStatus(db))!.unreachableSince).toEqual(since);

      // Back: the next round hands the job over, once.
      scheduler.set(false);
      clock += 60_000;
      await worker.tick();
      const [row] = await db.select().from(jobs).where(eq(jobs.id, job.id));
      expect(row!.state === 'PENDING' || row!.state === 'RUNNING').toBe(true);
      expect(row!.handoverAttempts).toBeGreaterThan(1); // the request's try and the rounds' retries
      expect(await readSchedulerStatus(db)).toMatchObject({ reachable: true, unreachableSince: null });
      expect((await asStaff.staff.cluster()).scheduler.reachable).toBe(true);
      expect((await asOwner.job.get({ jobId: job.id })).waitingForScheduler).toBe(false);
    } finally {
      worker.stop();
    }
  });
});
