// A job array on a real Slurm through the whole portal: one request, one Slurm array; its tasks appear as
// they start, never more than its throttle at once, each settled as it ends; the job's charge — the sum
// of its tasks' charges in the ledger — equals what sacct reports, task by task (elapsed × GPUs).
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, jobTasks, ledgerEntries } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { openReservations } from '~/server/services/ledger/ledger';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmScheduler } from './index';
import { sacct, testClusterSettings, waitUntil } from './testing';

describe('a job array on a real Slurm, from the API to the ledger', () => {
  let handle: DbHandle;
  let db: Db;
  const target = dbTargets().at(-1)!; // real Postgres when the run has one
  const now = () => new Date();
  let port: SchedulerPort;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let allocationId: string;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Slurm Sweep ${randomUUID().slice(0, 6)}` });
    ({ allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: now().toISOString().slice(0, 10), scheduler: port }));
  });
  afterAll(async () => handle?.close());

  it('a 20-task array with %4 runs at most 4 at once and its ledger equals the sum of its tasks', { timeout: 360_000 }, async () => {
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'slurm sweep', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 5, image: 'img', command: 'sleep 3; echo "task $SLURM_ARRAY_TASK_ID"', env: {}, idempotencyKey: randomUUID(), array: '0-19%4' });
    expect(job.state).toBe('PENDING');
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!;
    expect(await row()).toMatchObject({ arrayTasks: 20, arrayThrottle: 4, reservedAmount: 20 * 300 });
    let most = 0;
    const settled = await waitUntil(async () => {
      await reconcileOnce(db, port, now());
      const r = await row();
      most = Math.max(most, r.tasksRunning);
      return r.settledAt !== null;
    }, 300);
    expect(settled).toBe(true);
    const done = await row();
    expect(done.state).toBe('COMPLETED');
    expect(most).toBeGreaterThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(4);

    // Every task, as Slurm's accounting has it: 20 records, one per task.
    const records = sacct(job.id);
    expect(records).toHaveLength(20);
    const sum = records.reduce((s, r) => s + r.elapsedSeconds * r.gpus, 0);
    expect(done.gpuSeconds).toBe(sum);
    expect(done.chargedAmount).toBe(sum);
    const tasks = await db.select().from(jobTasks).where(eq(jobTasks.jobId, job.id));
    expect(tasks.map((t) => t.taskIndex).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(tasks.every((t) => t.state === 'COMPLETED' && t.settledAt !== null)).toBe(true);
    expect(new Set(tasks.map((t) => t.schedulerJobId)).size).toBe(20);
    // By the tasks' own start and end: at most 4 ran at any moment.
    for (const t of tasks) expect(tasks.filter((o) => o.startedAt! <= t.startedAt! && o.endedAt! > t.startedAt!).length).toBeLessThanOrEqual(4);
    // The ledger: one charge per task, summing to sacct's; the whole reservation released.
    const entries = await db.select().from(ledgerEntries).where(eq(ledgerEntries.jobId, job.id));
    expect(entries.filter((e) => e.kind === 'charge').reduce((s, e) => s + e.amount, 0)).toBe(sum);
    expect(entries.filter((e) => e.kind === 'release').reduce((s, e) => s + e.amount, 0)).toBe(20 * 300);
    expect(await openReservations(db, allocationId)).toEqual([]);
    const [a] = await db.select().from(allocations).where(and(eq(allocations.id, allocationId)));
    expect(a).toMatchObject({ reserved: 0, queuedJobs: 0, activeGpus: 0 });
  });
});
