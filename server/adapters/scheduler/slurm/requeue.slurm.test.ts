// A node fails under a running job, on a real Slurm. By default the portal submits with --no-requeue
// (slurmrestd 22.05 ignores `requeue: false`; `scontrol show job` must say Requeue=0): the job ends
// NODE_FAIL and is charged what it ran. Where the site lets Slurm requeue (SLURM_REQUEUE=on), the job runs
// again under the same id; the portal follows its last attempt and charges every attempt, so the ledger
// equals Slurm's usage of the job (`sacct -D`), not only its first record.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobEvents, jobs, ledgerEntries } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmScheduler } from './index';
import { sacct, scontrolJob, setNodeState, sleep, testClusterSettings, waitUntil } from './testing';

describe('a node fails under a running job on a real Slurm', () => {
  let handle: DbHandle;
  let db: Db;
  const target = dbTargets().at(-1)!;
  const now = () => new Date();
  const today = now().toISOString().slice(0, 10);
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let allocationId: string;
  let downed: string[] = [];

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Slurm Requeue ${randomUUID().slice(0, 6)}` });
    const port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    ({ allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today, scheduler: port }));
  });
  afterEach(() => {
    for (const node of downed) setNodeState(node, 'resume');
    downed = [];
  });
  afterAll(async () => handle?.close());

  const input = (command: string) => ({ allocationId, resourceClassId: 'h100', name: 'node failure', kind: 'training' as const, gpus: 2, nodes: 1, walltimeMinutes: 5, image: 'img', command, idempotencyKey: randomUUID() });

  /** Runs reconciler rounds until the job's row satisfies the check. */
  async function follow(jobId: string, port: SchedulerPort, check: (row: typeof jobs.$inferSelect) => boolean, maxSeconds: number) {
    let row: typeof jobs.$inferSelect | undefined;
    const reached = await waitUntil(async () => {
      await reconcileOnce(db, port, now());
      [row] = await db.select().from(jobs).where(eq(jobs.id, jobId));
      return !!row && check(row);
    }, maxSeconds);
    expect(reached, `job ${jobId} reached the expected state within ${maxSeconds} s (it is ${row?.state}, ${row?.pendingReason})`).toBe(true);
    return row!;
  }

  async function failNodeUnder(jobId: string, port: SchedulerPort) {
    const running = await follow(jobId, port, (r) => r.state === 'RUNNING', 60);
    await sleep(6000); // it has run a few seconds: the attempt has usage to charge
    const node = running.nodeList![0]!;
    downed.push(node);
    setNodeState(node, 'down');
    return running;
  }

  async function schedulerIdOf(jobId: string) {
    const [row] = await db.select({ schedulerJobId: jobs.schedulerJobId }).from(jobs).where(eq(jobs.id, jobId));
    expect(row?.schedulerJobId, 'the job was handed over').toEqual(expect.any(String));
    return row!.schedulerJobId!;
  }

  async function charged(jobId: string) {
    const rows = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, jobId), eq(ledgerEntries.kind, 'charge')));
    expect(rows).toHaveLength(1);
    return Math.abs(rows[0]!.amount);
  }

  it('submitted with --no-requeue (Requeue=0): the job ends NODE_FAIL, charged what it ran, as sacct says', async () => {
    const port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit(input('sleep 120'));
    expect(scontrolJob(await schedulerIdOf(job.id))).toMatchObject({ Requeue: '0' });
    await failNodeUnder(job.id, port);
    const row = await follow(job.id, port, (r) => r.settledAt !== null, 120);
    expect(row.state).toBe('NODE_FAIL');
    const [record] = sacct(job.id, { attempts: true });
    expect(sacct(job.id, { attempts: true })).toHaveLength(1);
    expect(record).toMatchObject({ state: 'NODE_FAIL', gpus: 2 });
    expect(record!.elapsedSeconds).toBeGreaterThan(0);
    expect(row.gpuSeconds).toBe(record!.elapsedSeconds * record!.gpus);
    expect(await charged(job.id)).toBe(row.gpuSeconds);
  });

  it('where the site lets Slurm requeue: the job runs again, and the charge is every attempt, as Slurm counts it', async () => {
    const port = createSlurmScheduler(testClusterSettings({ requeue: true }), await slurmClassesFromCatalogue(db));
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit(input('sleep 20'));
    const slurmJobId = await schedulerIdOf(job.id);
    expect(scontrolJob(slurmJobId)).toMatchObject({ Requeue: '1' });
    await failNodeUnder(job.id, port);
    // Slurm requeues it and holds it for its begin time (about two minutes); the page says "requeued".
    const waiting = await follow(job.id, port, (r) => r.state === 'PENDING', 60);
    expect(waiting.pendingReason).toBe('Requeued');
    setNodeState(downed.pop()!, 'resume');
    const row = await follow(job.id, port, (r) => r.settledAt !== null, 300);
    expect(row.state).toBe('COMPLETED');
    expect(row.schedulerJobId).toBe(slurmJobId);
    const attempts = sacct(job.id, { attempts: true });
    expect(attempts.map((a) => a.state)).toEqual(['NODE_FAIL', 'COMPLETED']);
    expect(attempts[0]!.elapsedSeconds).toBeGreaterThan(0);
    const slurmUsage = attempts.reduce((sum, a) => sum + a.elapsedSeconds * a.gpus, 0);
    expect(row.gpuSeconds).toBe(slurmUsage);
    expect(await charged(job.id)).toBe(slurmUsage);
    const events = await db.select().from(jobEvents).where(eq(jobEvents.jobId, job.id));
    expect(events.filter((e) => e.message === 'job.event.requeued')).toMatchObject([{ state: 'NODE_FAIL', data: { gpuSeconds: attempts[0]!.elapsedSeconds * attempts[0]!.gpus } }]);
  });
});
