// Against a live Slurm (scripts/slurm-test-cluster.sh start; source its env file): every client operation
// once, the token paths, and a budget on a fresh account. Skipped when SLURM_REST_URL is not set.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { SchedulerJobSpec } from '~/server/core/scheduler/port';
import { createSlurmClient, type SlurmClient } from './client';
import { isSlurmError, SlurmError } from './errors';
import { mintSlurmToken, tokenSourceFromEnv } from './jwt';
import { budgetHoldsFrom, syncBudgetsRest } from './limits';
import { jobState, statusFromCtld, statusFromDb, submitBody } from './mapping';
import type { CtldJob, DbJob } from './schemas';

const env = process.env;
const live = Boolean(env.SLURM_REST_URL);
const ACCOUNT = 'contract-account';
// SLURM_PARTITIONS maps classes to partitions (h100=gpu); the first one is used.
const PARTITION = (env.SLURM_PARTITIONS ?? 'x=gpu').split(',')[0]!.split('=')[1] ?? 'gpu';

function client(user = env.SLURM_REST_USER ?? 'portal', token?: () => string | Promise<string>): SlurmClient {
  return createSlurmClient({ baseUrl: env.SLURM_REST_URL!, user, token: token ?? tokenSourceFromEnv({ ...env, SLURM_REST_USER: user }) });
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function spec(over: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return {
    portalJobId: `slurmrest-live-${randomUUID()}`,
    name: 'live test',
    partition: 'h100',
    gpus: 1,
    nodes: 1,
    walltimeSeconds: 60,
    account: ACCOUNT,
    user: 'portal',
    image: 'none',
    command: 'sleep 1',
    env: { PORTAL_TEST: '1' },
    ...over,
  };
}

describe.skipIf(!live)('slurmrestd client against a live Slurm', () => {
  const portal = live ? client() : (null as unknown as SlurmClient);
  const admin = live ? client(env.SLURM_ADMIN_USER ?? 'portaladmin') : (null as unknown as SlurmClient);
  const cleanup: (() => Promise<void>)[] = [];
  const body = (s: SchedulerJobSpec) => submitBody(s, { partition: PARTITION, jobDir: env.SLURM_JOB_DIR ?? '/tmp', launcher: 'none', now: new Date() });

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }, 60_000);

  it('ping, nodes, partitions, diag', async () => {
    expect((await portal.ping()).map((p) => p.ping)).toContain('UP');
    const nodes = await portal.nodes();
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n) => typeof n.gres === 'string')).toBe(true);
    expect((await portal.partitions()).map((p) => p.name)).toContain(PARTITION);
    expect((await portal.diag()).dbdAgentQueueSize).toEqual(expect.any(Number));
  }, 30_000);

  it('submits a short job, finds it by name in slurmctld and slurmdbd, and reads its accounting', async () => {
    const s = spec();
    const { jobId } = await portal.submitJob(body(s));
    cleanup.push(() => portal.cancelJob(jobId));
    const listed = await portal.listJobs();
    expect(listed.filter((j) => j.name === s.portalJobId).map((j) => String(j.job_id))).toEqual([jobId]);

    const done = await until<CtldJob>('the job to end', 30_000, async () => {
      const job = await portal.getJob(jobId);
      return jobState(job.job_state).state === 'COMPLETED' ? job : null;
    });
    const ctld = statusFromCtld(done, nowSeconds());
    expect(ctld).toMatchObject({ portalJobId: s.portalJobId, schedulerJobId: jobId, state: 'COMPLETED', exitCode: 0, gpus: 1, account: ACCOUNT, partition: PARTITION });
    expect(ctld.startedAt).not.toBeNull();
    expect(ctld.nodeList.length).toBe(1);

    // slurmdbd lags behind slurmctld (≈1 s): wait for its final record.
    const record = await until<DbJob>('the slurmdbd record', 30_000, async () => {
      const rows = await portal.dbJobs({ names: [s.portalJobId, 'no-such-name-x'], cluster: env.SLURM_CLUSTER });
      const row = rows.find((r) => r.name === s.portalJobId);
      return row && jobState(row.state.current).state === 'COMPLETED' ? row : null;
    });
    const db = statusFromDb(record, { nowSeconds: nowSeconds(), ctldExit: { exitCode: ctld.exitCode, signal: ctld.signal } });
    expect(db).toMatchObject({ portalJobId: s.portalJobId, schedulerJobId: jobId, state: 'COMPLETED', exitCode: 0, gpus: 1, nodeList: ctld.nodeList });
    expect(db.elapsedSeconds).toBeGreaterThanOrEqual(1);
    expect(db.gpuSeconds).toBe(db.elapsedSeconds);
    expect((await portal.dbJob(jobId)).map((r) => r.name)).toContain(s.portalJobId);
  }, 90_000);

  it('cancels a running job; an unknown job is not-found', async () => {
    const s = spec({ command: 'sleep 120', walltimeSeconds: 180 });
    const { jobId } = await portal.submitJob(body(s));
    cleanup.push(() => portal.cancelJob(jobId));
    await until('the job to start', 30_000, async () => ((await portal.getJob(jobId)).job_state === 'RUNNING' ? true : null));
    await portal.cancelJob(jobId);
    const job = await until<CtldJob>('the cancel', 30_000, async () => {
      const j = await portal.getJob(jobId);
      return jobState(j.job_state).state === 'CANCELLED' ? j : null;
    });
    const cancelled = statusFromCtld(job, nowSeconds());
    expect(cancelled.state).toBe('CANCELLED');
    expect(cancelled.startedAt).not.toBeNull();
    expect(cancelled.endedAt).not.toBeNull();
    const error = await portal.getJob('999999').catch((e: unknown) => e);
    expect(isSlurmError(error, 'not-found')).toBe(true);
  }, 90_000);

  it('a minted token is accepted; an expired one is classified auth on slurmctld, submit and slurmdbd', async () => {
    const key = readFileSync(env.SLURM_JWT_KEY_FILE!);
    const user = env.SLURM_REST_USER ?? 'portal';
    const fresh = client(user, () => mintSlurmToken(key, user, 300, nowSeconds()));
    expect((await fresh.ping()).length).toBeGreaterThan(0);
    const expired = client(user, () => mintSlurmToken(key, user, 60, nowSeconds() - 3600));
    const failures = await Promise.all([
      expired.listJobs().catch((e: unknown) => e),
      expired.submitJob(body(spec())).catch((e: unknown) => e),
      expired.dbJobs({ names: ['x'] }).catch((e: unknown) => e),
    ]);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(SlurmError);
      expect((failure as SlurmError).kind, (failure as SlurmError).message).toBe('auth');
    }
  }, 60_000);

  it('writes a budget on a fresh account, reads it back, and Slurm holds a job over it', async () => {
    const account = `slurmrest-${randomUUID().slice(0, 8)}`;
    cleanup.push(() => admin.deleteAccount(account));
    const cluster = env.SLURM_CLUSTER ?? 'ci';
    const user = env.SLURM_REST_USER ?? 'portal';
    expect(await syncBudgetsRest(admin, cluster, user, [{ account, partition: PARTITION, gpuMinutes: 120 }])).toEqual([
      { account, partition: PARTITION, gpuMinutes: 120, usedGpuMinutes: null },
    ]);
    expect(await syncBudgetsRest(admin, cluster, user, [{ account, partition: PARTITION, gpuMinutes: 5 }])).toEqual([
      { account, partition: PARTITION, gpuMinutes: 5, usedGpuMinutes: null },
    ]);

    // 4 GPUs × 2 min = 8 GPU-minutes > 5: held (not refused), reason AssocGrpGRESMinutes.
    const s = spec({ account, gpus: 4, walltimeSeconds: 120, command: 'sleep 1' });
    const { jobId } = await portal.submitJob(body(s));
    cleanup.push(() => portal.cancelJob(jobId));
    const holds = await until('the hold', 30_000, async () => {
      const found = budgetHoldsFrom(await portal.listJobs()).filter((h) => h.schedulerJobId === jobId);
      return found.length > 0 ? found : null;
    });
    expect(holds.map(({ submittedAt: _, ...rest }) => rest)).toEqual([
      { schedulerJobId: jobId, portalJobId: s.portalJobId, account, partition: PARTITION, reason: 'AssocGrpGRESMinutes', gpus: 4, timeLimitSeconds: 120 },
    ]);
    expect(holds[0]!.submittedAt).toBeInstanceOf(Date);
    await portal.cancelJob(jobId);
  }, 90_000);
});
