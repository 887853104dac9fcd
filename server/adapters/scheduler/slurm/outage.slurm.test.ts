// Slurm's daemons stopped under the portal, one at a time, and an expired token: the portal stays up,
// submissions wait and are forwarded once Slurm answers, and every job is charged once, from Slurm's
// own accounting. (Each case stops a daemon of the test cluster and starts it again.)
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs, ledgerEntries } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { readSchedulerStatus } from '~/server/services/cluster/scheduler-status';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { startWorker } from '~/server/worker';
import { mintSlurmToken } from './jwt';
import { createSlurmScheduler } from './index';
import { sacct, startCluster, stopDaemon, testClusterSettings, waitUntil, type SlurmDaemon } from './testing';

describe('Slurm away under the portal', () => {
  let handle: DbHandle;
  let db: Db;
  const now = () => new Date();
  const today = now().toISOString().slice(0, 10);
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let allocationId: string;

  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Slurm Outage ${randomUUID().slice(0, 6)}` });
    const port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    ({ allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today, scheduler: port }));
  });
  afterEach(() => startCluster()); // whatever a case stopped runs again for the next
  afterAll(async () => handle?.close());

  const input = () => ({ allocationId, resourceClassId: 'h100', name: 'outage', kind: 'training' as const, gpus: 1, nodes: 1, walltimeMinutes: 5, image: 'img', command: 'sleep 5', env: {}, idempotencyKey: randomUUID() });

  /** Runs worker rounds until the job is settled; returns its row. */
  async function settled(jobId: string, port: SchedulerPort, maxSeconds: number) {
    const worker = startWorker(handle, port, { reconcileMs: 1000, log: () => undefined });
    try {
      const ok = await waitUntil(async () => {
        await worker.tick();
        const [row] = await db.select({ settledAt: jobs.settledAt }).from(jobs).where(eq(jobs.id, jobId));
        return row?.settledAt !== null;
      }, maxSeconds);
      expect(ok, `job ${jobId} settled within ${maxSeconds} s of Slurm's return`).toBe(true);
    } finally {
      worker.stop();
    }
    return (await db.select().from(jobs).where(eq(jobs.id, jobId)))[0]!;
  }

  async function expectChargedOnceAsSacct(jobId: string) {
    const row = (await db.select().from(jobs).where(eq(jobs.id, jobId)))[0]!;
    const records = sacct(jobId);
    expect(records, 'one Slurm job').toHaveLength(1);
    const charges = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, jobId), eq(ledgerEntries.kind, 'charge')));
    expect(charges).toHaveLength(1);
    expect(charges[0]!.amount).toBe(records[0]!.elapsedSeconds * records[0]!.gpus);
    expect(row.gpuSeconds).toBe(records[0]!.elapsedSeconds * records[0]!.gpus);
  }

  it.each<[SlurmDaemon]>([['slurmrestd'], ['slurmctld']])('%s stopped: submissions wait in the portal and are forwarded once it is back', async (daemon) => {
    const port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    stopDaemon(daemon);
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit(input());
    expect(job.state).toBe('SUBMITTING');
    // The portal stays up: a worker round goes through, staff see the outage, the job page says why it waits.
    const worker = startWorker(handle, port, { reconcileMs: 3_600_000, log: () => undefined });
    await worker.tick();
    worker.stop();
    expect((await readSchedulerStatus(db))?.reachable).toBe(false);
    const asStaff = callerFor(db, { userId: admin.userId, now, scheduler: port });
    expect((await asStaff.staff.cluster()).scheduler.reachable).toBe(false);
    expect((await asOwner.job.get({ jobId: job.id })).waitingForScheduler).toBe(true);
    expect(sacct(job.id)).toHaveLength(0);

    startCluster();
    const row = await settled(job.id, port, 150);
    expect(row.state).toBe('COMPLETED');
    await expectChargedOnceAsSacct(job.id);
    expect((await readSchedulerStatus(db))?.reachable).toBe(true);
  });

  it('slurmdbd stopped: jobs are submitted and run, and are settled only once its record is back', async () => {
    const port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    stopDaemon('slurmdbd');
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit(input());
    expect(job.state).toBe('PENDING');
    // It runs and ends in slurmctld; without slurmdbd's final record it is not settled.
    const ended = await waitUntil(async () => {
      await reconcileOnce(db, port, now());
      const [row] = await db.select().from(jobs).where(eq(jobs.id, job.id));
      return row!.startedAt !== null;
    }, 60);
    expect(ended).toBe(true);
    await new Promise((r) => setTimeout(r, 10_000));
    await reconcileOnce(db, port, now());
    expect((await db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!.settledAt).toBeNull();

    startCluster();
    const row = await settled(job.id, port, 150);
    expect(row.state).toBe('COMPLETED');
    await expectChargedOnceAsSacct(job.id);
  });

  it('an expired token: submissions wait until a valid one is in the token file, then are forwarded once', async () => {
    const settings = testClusterSettings();
    const key = fs.readFileSync(settings.jwtKeyFile!);
    const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'slurm-token-')), 'token');
    const nowSeconds = Math.floor(Date.now() / 1000);
    fs.writeFileSync(tokenFile, mintSlurmToken(key, settings.user, 60, nowSeconds - 3600)); // expired an hour ago
    const port = createSlurmScheduler({ ...settings, jwtKeyFile: undefined, tokenFile, adminUser: undefined }, await slurmClassesFromCatalogue(db));
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit(input());
    expect(job.state).toBe('SUBMITTING');
    expect(sacct(job.id)).toHaveLength(0);
    // The operator renews the token file; the adapter reads it again after the refusal.
    fs.writeFileSync(tokenFile, mintSlurmToken(key, settings.user, 3600, Math.floor(Date.now() / 1000)));
    const row = await settled(job.id, port, 150);
    expect(row.state).toBe('COMPLETED');
    await expectChargedOnceAsSacct(job.id);
  });
});
