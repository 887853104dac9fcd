// Jobs run around the portal (sbatch -A <project> from a shell) reach the project's ledger: charged once
// per cluster and job id, the portal's own jobs left alone, a job of a class without allocation recorded
// uncharged (the table is behind the tenant wall: server/api/rls.integration.test.ts). On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, ledgerEntries, outsideJobs } from '~/db/schema';
import type { OutsideJob, SchedulerPort, UsageReporting } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { importOutsideUsage } from './outside-usage';

describe.each(dbTargets())('usage around the portal on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  it('charges a job submitted outside the portal once, and nothing else', async () => {
    const now = new Date('2026-12-03T12:00:00Z');
    const today = now.toISOString().slice(0, 10);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Outside Lab ${randomUUID().slice(0, 6)}` });
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today });
    const scripted = scriptedScheduler();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler: scripted.port });
    const portalJob = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'through the portal', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });

    const cluster = `ci-${randomUUID().slice(0, 6)}`;
    const record = (id: string, name: string, changes: Partial<OutsideJob> = {}): OutsideJob => ({
      cluster,
      schedulerJobId: id,
      name,
      account: projectId,
      partition: 'h100',
      resourceClassId: 'h100',
      user: 'alice',
      state: 'COMPLETED',
      startedAt: new Date('2026-12-03T10:00:00Z'),
      endedAt: new Date('2026-12-03T10:01:40Z'),
      gpuSeconds: 200,
      ...changes,
    });
    const reported: OutsideJob[] = [
      record('101', 'train.sh'),
      // The portal's own job: settled through the reconciler, never here.
      record('102', portalJob.id, { gpuSeconds: 3600 }),
      // A class the project has no allocation for: recorded, not charged.
      record('103', 'b200-test', { partition: 'b200', resourceClassId: 'b200', gpuSeconds: 50 }),
      // An account that is not a project of this portal.
      record('104', 'other', { account: 'contract-account' }),
    ];
    const asked: { accounts: string[]; since: Date }[] = [];
    const port: SchedulerPort & UsageReporting = {
      ...scripted.port,
      outsideJobs: (accounts, since) => {
        asked.push({ accounts, since });
        return Promise.resolve(reported.filter((r) => accounts.includes(r.account) || r.account === 'contract-account'));
      },
    };
    const charges = () => db.select().from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, allocationId), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.jobId)));
    const [before] = await db.select().from(allocations).where(eq(allocations.id, allocationId));

    expect(await importOutsideUsage(db, port, now)).toEqual({ imported: 2, charged: 1 });
    expect(asked[0]!.accounts).toContain(projectId);
    expect(asked[0]!.since).toEqual(new Date(now.getTime() - 30 * 86_400_000));
    const rows = await db.select().from(outsideJobs).where(eq(outsideJobs.cluster, cluster));
    expect(rows.map((r) => [r.schedulerJobId, r.allocationId, r.chargedAmount, r.schedulerUser]).sort()).toEqual([
      ['101', allocationId, 200, 'alice'],
      ['103', null, 0, 'alice'],
    ]);
    const [charge] = await charges();
    expect(charge).toMatchObject({ amount: 200, overrun: 200 });
    expect(charge!.reason).toMatch(/Slurm job 101 .*train\.sh.*alice, submitted outside the portal/);
    const [after] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
    expect(after!.charged - before!.charged).toBe(200);

    // A second run changes nothing, and reads from a day before the last job it imported.
    expect(await importOutsideUsage(db, port, now)).toEqual({ imported: 0, charged: 0 });
    expect(asked[1]!.since).toEqual(new Date(new Date('2026-12-03T10:01:40Z').getTime() - 86_400_000));
    expect(await charges()).toHaveLength(1);
    expect((await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!.charged).toBe(after!.charged);

  });

  it('a scheduler that reports no accounting (the simulated cluster) imports nothing', async () => {
    expect(await importOutsideUsage(db, scriptedScheduler().port, new Date())).toBeNull();
  });
});
