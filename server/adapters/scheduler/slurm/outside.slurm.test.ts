// Usage both ways on a real Slurm: a job submitted with sbatch from a shell into the project's account
// (around the portal) is read back from slurmdbd and charged to the project's ledger once, so the
// portal's remaining budget is again Slurm's limit (GrpTRESMins) minus Slurm's usage of the account.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, ledgerEntries, outsideJobs } from '~/db/schema';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { available } from '~/server/core/ledger/balance';
import { checkSchedulerUsage, importOutsideUsage } from '~/server/services/cluster/outside-usage';
import { activeAllocation, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmScheduler, type SlurmSettings } from './index';
import { testClusterSettings, waitUntil } from './testing';

/** Slurm's accounting of an account's jobs: state, elapsed seconds and GPUs per job (every attempt). */
function accountJobs(account: string): { jobId: string; state: string; elapsedSeconds: number; gpus: number }[] {
  const out = execFileSync('sacct', ['-n', '-P', '-X', '-D', '-a', '-A', account, '-S', 'now-1days', '-o', 'JobIDRaw,State,ElapsedRaw,AllocTRES%200'], { encoding: 'utf8', env: process.env });
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [jobId = '', state = '', elapsed = '0', tres = ''] = line.split('|');
      return { jobId, state: state.split(' ')[0]!, elapsedSeconds: Number(elapsed), gpus: Number(/gres\/gpu=(\d+)/.exec(tres)?.[1] ?? 0) };
    });
}

/** The account's GPU-minute limit in partition gpu (GrpTRESMins), as sacctmgr shows it. */
function limitGpuMinutes(account: string): number {
  const value = execFileSync('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `account=${account}`, 'user=portal', 'partition=gpu', 'format=GrpTRESMins'], { encoding: 'utf8', env: process.env }).trim();
  return Number(/gres\/gpu=(\d+)/.exec(value)?.[1]);
}

describe('usage around the portal, on a real Slurm', () => {
  let handle: DbHandle;
  let db: Db;
  let settings: SlurmSettings;
  const now = () => new Date();

  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!);
    db = handle.db;
    settings = testClusterSettings();
  });
  afterAll(async () => handle?.close());

  it('a job sbatch-ed into the project’s account reaches the ledger after one import, once; remaining = Slurm’s limit − Slurm’s usage', async () => {
    const port = createSlurmScheduler(settings, await slurmClassesFromCatalogue(db));
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Slurm Outside ${randomUUID().slice(0, 6)}` });
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: now().toISOString().slice(0, 10), scheduler: port });
    expect(limitGpuMinutes(projectId)).toBe(600);

    // From a member's shell, straight to Slurm: 2 GPUs for about 6 seconds.
    const slurmJobId = execFileSync('runuser', ['-u', 'portal', '--', 'sbatch', '--parsable', '-A', projectId, '-p', 'gpu', '--gres=gpu:2', '-t', '2', '-J', 'from-a-shell', '-D', settings.jobDir, '-o', '/dev/null', '--wrap', 'sleep 6'], { encoding: 'utf8', env: process.env }).trim();
    expect(await waitUntil(() => accountJobs(projectId).some((j) => j.jobId === slurmJobId && j.state === 'COMPLETED'), 90), 'the job ran to its end').toBe(true);

    const first = await importOutsideUsage(db, port, now());
    expect(first).toMatchObject({ imported: 1, charged: 1 });
    const [row] = await db.select().from(outsideJobs).where(and(eq(outsideJobs.cluster, settings.cluster), eq(outsideJobs.schedulerJobId, slurmJobId)));
    const slurm = accountJobs(projectId);
    const [sacctRow] = slurm.filter((j) => j.jobId === slurmJobId);
    expect(sacctRow!.elapsedSeconds).toBeGreaterThan(0);
    expect(row).toMatchObject({ projectId, allocationId, name: 'from-a-shell', schedulerUser: 'portal', state: 'COMPLETED', gpuSeconds: sacctRow!.elapsedSeconds * 2, chargedAmount: sacctRow!.elapsedSeconds * 2 });
    const charges = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, allocationId), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.jobId)));
    expect(charges.map((c) => c.amount)).toEqual([sacctRow!.elapsedSeconds * 2]);

    // The portal's remaining budget is Slurm's limit minus what Slurm counts against the account.
    const [allocation] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
    const slurmUsage = slurm.reduce((sum, j) => sum + j.elapsedSeconds * j.gpus, 0);
    expect(available(allocation!)).toBe(limitGpuMinutes(projectId) * 60 - slurmUsage);

    // Staff's comparison: the ledger holds for the account what slurmdbd counts, to the GPU-second.
    const check = await checkSchedulerUsage(db, port, now());
    const rows = check!.rows.filter((r) => r.account === projectId);
    expect(rows.reduce((sum, r) => sum + r.schedulerGpuSeconds, 0)).toBe(slurmUsage);
    expect(rows.map((r) => r.differenceGpuSeconds)).toEqual(rows.map(() => 0));

    // A second run changes nothing.
    expect((await importOutsideUsage(db, port, now()))?.imported).toBe(0);
    expect(await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, allocationId), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.jobId)))).toHaveLength(1);
  });
});
