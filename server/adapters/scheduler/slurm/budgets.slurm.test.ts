// Budgets enforced by Slurm too: a grant becomes the project account's GrpTRESMins in Slurm; a job
// submitted straight to Slurm (sbatch, around the portal) that would overspend waits on
// AssocGrpGRESMinutes, staff see it as drift, and a raised budget lets it run.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSlurmScheduler } from './index';
import { testClusterSettings, waitUntil } from './testing';

/** GrpTRESMins of the service user's association of the account in partition gpu, as sacctmgr shows it. */
function grpTresMins(account: string): string {
  return execFileSync('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `account=${account}`, 'user=portal', 'partition=gpu', 'format=GrpTRESMins'], { encoding: 'utf8' }).trim();
}

/** squeue's state and reason of a Slurm job. */
function stateOf(jobId: string): { state: string; reason: string } {
  const [state = '', reason = ''] = execFileSync('squeue', ['-h', '-j', jobId, '-o', '%T|%r'], { encoding: 'utf8' }).trim().split('|');
  return { state, reason };
}

describe('budgets in Slurm', () => {
  let handle: DbHandle;
  let db: Db;
  let port: SchedulerPort;
  const now = () => new Date();
  const today = now().toISOString().slice(0, 10);
  let around: string | null = null;

  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!);
    db = handle.db;
    port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
  });
  afterAll(async () => {
    if (around) execFileSync('scancel', [around]);
    await handle?.close();
  });

  it('a grant appears as GrpTRESMins; a job over budget submitted around the portal waits, staff see the drift, a raise lets it run', async () => {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Slurm Budget ${randomUUID().slice(0, 6)}` });
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 1, today, scheduler: port });
    expect(grpTresMins(projectId)).toBe('gres/gpu=60');

    // 4 GPUs × 30 minutes = 120 GPU-minutes, straight to Slurm as the project's account.
    around = execFileSync('runuser', ['-u', 'portal', '--', 'sbatch', '--parsable', '-A', projectId, '-p', 'gpu', '--gres=gpu:4', '-t', '30', '-J', 'around-the-portal', '-D', '/tmp', '-o', '/dev/null', '--wrap', 'sleep 1'], { encoding: 'utf8', env: process.env }).trim();
    expect(await waitUntil(() => stateOf(around!).reason === 'AssocGrpGRESMinutes', 30), `held on the budget: ${JSON.stringify(stateOf(around))}`).toBe(true);
    expect(stateOf(around).state).toBe('PENDING');

    // A job through the portal within the budget still runs (1 GPU × 5 minutes).
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const job = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'within budget', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 5, image: 'img', command: 'sleep 2', env: {}, idempotencyKey: randomUUID() });
    expect(await waitUntil(async () => (await port.jobs([job.id]))[0]?.state !== 'PENDING', 30)).toBe(true);

    // Staff see the job Slurm holds on the project's limit, submitted around the portal.
    const asStaff = callerFor(db, { userId: admin.userId, now, scheduler: port });
    const view = await asStaff.staff.schedulerBudgets();
    expect(view.enforcing).toBe(true);
    const hold = view.holds?.find((h) => h.schedulerJobId === around);
    expect(hold).toMatchObject({ portalJobId: null, account: projectId, partition: 'h100', gpus: 4, reason: 'AssocGrpGRESMinutes' });
    expect(hold!.drift).toBe('aroundPortal');

    // Staff raise the budget by 2 GPU-hours: Slurm's limit follows, and the held job runs.
    await asStaff.staff.adjustAllocation({ allocationId, amount: 2, reason: 'More time for the test' });
    expect(grpTresMins(projectId)).toBe('gres/gpu=180');
    expect(await waitUntil(() => stateOf(around!).state !== 'PENDING', 90), 'the raised limit applies').toBe(true);
  });
});
