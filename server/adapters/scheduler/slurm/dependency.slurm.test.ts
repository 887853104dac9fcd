// Dependencies on a real Slurm, through the portal: B afterok A goes to Slurm as --dependency=afterok:<A's
// Slurm id> and starts only after A completed; when A fails, Slurm holds B (DependencyNeverSatisfied)
// and the portal cancels it — nothing charged, its reservation released.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobEvents, jobs } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmScheduler } from './index';
import { sacct, scontrolJob, settleJob, testClusterSettings } from './testing';

describe('dependencies on a real Slurm', () => {
  let handle: DbHandle;
  let db: Db;
  let port: SchedulerPort;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let allocationId: string;
  const now = () => new Date();

  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!);
    db = handle.db;
    port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db, { name: `Slurm Dependency ${randomUUID().slice(0, 6)}` });
    ({ allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: now().toISOString().slice(0, 10), scheduler: port }));
  });
  afterAll(async () => handle?.close());

  const api = () => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
  const input = (command: string, dependency?: { type: 'afterok' | 'afterany' | 'afternotok'; jobIds: string[] }) => ({ allocationId, resourceClassId: 'h100', name: 'dependency', kind: 'training' as const, gpus: 1, nodes: 1, walltimeMinutes: 5, image: 'img', command, env: {}, idempotencyKey: randomUUID(), ...(dependency ? { dependency } : {}) });

  it('B afterok A starts after A completed; with A failing, B is cancelled and its reservation released', async () => {
    const a = await api().job.submit(input('sleep 4'));
    const b = await api().job.submit(input('sleep 1', { type: 'afterok', jobIds: [a.id] }));
    expect(b.state).toBe('PENDING');
    const slurmIdOf = async (id: string) => (await db.select({ s: jobs.schedulerJobId }).from(jobs).where(eq(jobs.id, id)))[0]!.s!;
    expect(scontrolJob(await slurmIdOf(b.id)).Dependency).toMatch(new RegExp(`^afterok:${await slurmIdOf(a.id)}`));
    const [doneA, doneB] = [await settleJob(db, port, a.id), await settleJob(db, port, b.id)];
    expect([doneA.state, doneB.state]).toEqual(['COMPLETED', 'COMPLETED']);
    expect(doneB.startedAt!.getTime()).toBeGreaterThanOrEqual(doneA.endedAt!.getTime());

    const failing = await api().job.submit(input('sleep 3; exit 1'));
    const after = await api().job.submit(input('sleep 1', { type: 'afterok', jobIds: [failing.id] }));
    const reservedWhileWaiting = (await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!.reserved;
    expect(reservedWhileWaiting).toBeGreaterThan(0);
    expect((await settleJob(db, port, failing.id)).state).toBe('FAILED');
    const cancelled = await settleJob(db, port, after.id);
    expect(cancelled).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0, chargedAmount: 0, startedAt: null });
    // Never eligible, so slurmctld sent slurmdbd no record: Slurm's word for it is slurmctld's.
    expect(sacct(after.id)).toEqual([]);
    expect(scontrolJob(await slurmIdOf(after.id))).toMatchObject({ JobState: 'CANCELLED', Reason: 'DependencyNeverSatisfied' });
    const messages = (await db.select({ message: jobEvents.message }).from(jobEvents).where(eq(jobEvents.jobId, after.id))).map((e) => e.message);
    expect(messages).toContain('job.event.dependencyNeverSatisfied');
    expect((await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!.reserved).toBe(0);
  });
});
