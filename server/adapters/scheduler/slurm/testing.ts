// Support for the tests against a real Slurm (*.slurm.test.ts): the settings of the test cluster that
// scripts/slurm-test-cluster.sh started (its env file, exported by .ci/run), Slurm's own accounting
// (`sacct`) to compare charges with, and its daemons to stop and start for the outage tests.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { jobs } from '~/db/schema';
import { configuredCatalogue } from '~/server/catalogue';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { parseEnv } from '~/server/env.js';
import type { SlurmClassInfo } from './adapter';
import { createSlurmScheduler, slurmSettings, type SlurmSettings } from './index';

/** The test cluster's settings, polling every second (tests wait in real time). */
export function testClusterSettings(overrides: Partial<SlurmSettings> = {}): SlurmSettings {
  const config = parseEnv({ ...process.env, SCHEDULER: 'slurm', SLURM_POLL_SECONDS: '1' });
  return { ...slurmSettings(config), ...overrides };
}

/** The catalogue's resource classes as the adapter needs them (no database). */
export function catalogueClasses(): SlurmClassInfo[] {
  return configuredCatalogue().resourceClasses.map((rc) => ({
    id: rc.id,
    siteId: rc.siteId,
    gpuModel: rc.gpuModel,
    gpusPerNode: rc.gpusPerNode,
    maxWalltimeSeconds: rc.maxWalltimeSeconds,
    gpuIdlePowerW: rc.gpuIdlePowerW,
    gpuMaxPowerW: rc.gpuMaxPowerW,
    nodeBasePowerW: rc.nodeBasePowerW,
    ...(rc.slurm ? { slurm: rc.slurm } : {}),
  }));
}

/** One `sacct` row of a job (its allocation line, -X): what Slurm's accounting says it used. */
export interface SacctRow {
  jobId: number;
  name: string;
  state: string;
  elapsedSeconds: number;
  gpus: number;
  account: string;
}

/**
 * sacct returns Slurm's accounting of the jobs with this name (one row per Slurm job; with `attempts`,
 * one per attempt of a requeued job, as `sacct -D` shows them).
 */
export function sacct(name: string, options: { attempts?: boolean } = {}): SacctRow[] {
  const out = execFileSync('sacct', ['-n', '-P', '-X', '-a', ...(options.attempts ? ['-D'] : []), '-S', 'now-30days', '--name', name, '-o', 'JobIDRaw,JobName%80,State,ElapsedRaw,AllocTRES%200,Account'], {
    encoding: 'utf8',
    env: { ...process.env },
  });
  return out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [jobId, jobName, state, elapsed, tres, account] = line.split('|');
      const gpus = /gres\/gpu=(\d+)/.exec(tres ?? '')?.[1];
      return { jobId: Number(jobId), name: jobName!, state: state!.split(' ')[0]!, elapsedSeconds: Number(elapsed), gpus: gpus ? Number(gpus) : 0, account: account ?? '' };
    });
}

/** scontrolJob returns `scontrol show job`'s fields of a Slurm job (Requeue, Restarts, JobState…). */
export function scontrolJob(schedulerJobId: string): Record<string, string> {
  const out = execFileSync('scontrol', ['show', 'job', '-o', schedulerJobId], { encoding: 'utf8', env: { ...process.env } });
  return Object.fromEntries(out.trim().split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

/** setNodeState sets a test node down (as a failed node is) or resumes it; an operator's `scontrol update`. */
export function setNodeState(node: string, state: 'down' | 'resume'): void {
  const args = ['update', `nodename=${node}`, `state=${state}`, ...(state === 'down' ? ['reason=portal-test'] : [])];
  try {
    execFileSync('scontrol', args, { stdio: 'pipe', env: { ...process.env } });
  } catch (error) {
    // Resuming a node that is up already is refused ("Invalid node state specified"): nothing to do.
    if (state === 'down') throw error;
  }
}

/** The test cluster script (scripts/slurm-test-cluster.sh), for stopping and starting daemons. */
function clusterScript(): string {
  const script = process.env.SLURM_TEST_SCRIPT;
  if (!script) throw new Error('SLURM_TEST_SCRIPT is not set: source the test cluster env file (scripts/slurm-test-cluster.sh env)');
  return script;
}

export type SlurmDaemon = 'slurmrestd' | 'slurmctld' | 'slurmdbd';

/** stopDaemon stops one daemon of the test cluster (its state stays). */
export function stopDaemon(daemon: SlurmDaemon): void {
  execFileSync(clusterScript(), ['stop-daemon', daemon], { stdio: 'pipe' });
}

/** startCluster starts whatever daemon of the test cluster is not running. */
export function startCluster(): void {
  execFileSync(clusterScript(), ['start'], { stdio: 'pipe' });
}

/** sleep waits in real time. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** waitUntil polls the condition every second until it holds or maxSeconds have passed. */
export async function waitUntil(condition: () => Promise<boolean> | boolean, maxSeconds: number): Promise<boolean> {
  const deadline = Date.now() + maxSeconds * 1000;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await sleep(1000);
  }
}

/** settleJob runs the reconciler every second until the portal job is settled (throws after maxSeconds) and returns its row. */
export async function settleJob(db: Db, scheduler: SchedulerPort, jobId: string, maxSeconds = 180): Promise<typeof jobs.$inferSelect> {
  const settled = await waitUntil(async () => {
    await reconcileOnce(db, scheduler, new Date());
    const [row] = await db.select({ settledAt: jobs.settledAt }).from(jobs).where(eq(jobs.id, jobId));
    return row?.settledAt !== null;
  }, maxSeconds);
  if (!settled) throw new Error(`job ${jobId} was not settled within ${maxSeconds} s`);
  const [row] = await db.select().from(jobs).where(eq(jobs.id, jobId));
  return row!;
}

/** What a test of the portal on the test cluster works with: its database and the Slurm port on the catalogue's classes. */
export interface SlurmPortal {
  readonly db: Db;
  readonly port: SchedulerPort;
  /** newTenant makes a tenant (its owner) with an allocation of 10 GPU-hours granted by a new admin, and the owner's API on the port. */
  newTenant(name: string): Promise<{ owner: Awaited<ReturnType<typeof createTenant>>; allocationId: string; projectId: string; api: ReturnType<typeof callerFor> }>;
}

/** waitForJson waits (up to `seconds`) until a file holds JSON and returns it (a job's connection file). */
export async function waitForJson<T>(file: string, seconds = 120): Promise<T | undefined> {
  let value: T | undefined;
  await waitUntil(async () => {
    value = (JSON.parse(await readFile(file, 'utf8').catch(() => 'null')) as T | null) ?? undefined;
    return value !== undefined;
  }, seconds);
  return value;
}

/**
 * useSlurmPortal opens the test database (real Postgres when the run has one) before the file's tests and
 * the Slurm port on it, and closes the database after them: call it at the top of a `describe`.
 */
export function useSlurmPortal(): SlurmPortal {
  let handle: DbHandle | undefined;
  let db: Db | undefined;
  let port: SchedulerPort | undefined;
  beforeAll(async () => {
    handle = await openTestDb(dbTargets().at(-1)!);
    db = handle.db;
    port = createSlurmScheduler(testClusterSettings(), await slurmClassesFromCatalogue(db));
  });
  afterAll(async () => handle?.close());
  const now = () => new Date();
  return {
    async newTenant(name) {
      const admin = await createStaff(this.db, 'admin');
      const owner = await createTenant(this.db, { name: `${name} ${randomUUID().slice(0, 6)}` });
      const { allocationId, projectId } = await activeAllocation(this.db, owner, admin, { gpuHours: 10, today: now().toISOString().slice(0, 10), scheduler: this.port });
      return { owner, allocationId, projectId, api: callerFor(this.db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: this.port }) };
    },
    get db() {
      if (!db) throw new Error('useSlurmPortal: the database is open only inside the tests');
      return db;
    },
    get port() {
      if (!port) throw new Error('useSlurmPortal: the port is made only inside the tests');
      return port;
    },
  };
}
