// The simulated scheduler on every database target: the SchedulerPort contract, plus what only the
// simulated adapter promises — persistence across restarts, re-anchoring on a speed change, one
// consistent cluster for several processes, and the catalogue as its machine.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, migrateDb, type Db, type DbHandle } from '~/db/client';
import { simClusterOps, simClusterSnapshots, simClusterState, simFinishedJobs } from '~/db/schema';
import { isFinalState, type SchedulerJobSpec, type SchedulerJobStatus, type SchedulerPort } from '~/server/core/scheduler/port';
import { createEngine, policyFromName, type ClusterConfig, type EngineState } from '~/server/core/sim';
import { testCluster, testPartition } from '~/server/core/sim/fixtures';
import { dbTargets, openTestDb } from '~/server/testing/harness';
import { clusterConfigFromCatalogue } from './cluster-config';
import { schedulerContract } from './contract';
import { createSimulatedScheduler, SimulatedSchedulerInputError, type SimulatedScheduler, type SimulatedSchedulerOptions } from './simulated';

const START_MS = Date.parse('2026-12-01T08:00:00Z');
const SPEED = 60;

/** A wall clock the test moves by hand, by simulated seconds (at a speed) or by wall milliseconds. */
function manualClock(startMs: number, speed = SPEED) {
  let simSeconds = 0;
  let extraMs = 0;
  return {
    // ceil: the adapter floors, so the simulated clock lands exactly on the seconds advanced (speed ≤ 1000).
    now: () => new Date(startMs + extraMs + Math.ceil((simSeconds * 1000) / speed)),
    advanceSimSeconds(seconds: number) {
      simSeconds += seconds;
    },
    advanceWallMs(ms: number) {
      extraMs += ms;
    },
  };
}

// A small seeded generator, so a failure can be replayed.
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function job(portalJobId: string, options: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return {
    portalJobId,
    name: portalJobId,
    partition: 'h100-ch',
    gpus: 4,
    nodes: 1,
    walltimeSeconds: 3600,
    account: 'project-a',
    user: 'alice',
    image: 'pytorch:24.10',
    command: 'python train.py',
    env: {},
    simulation: { runtimeSeconds: 600, gpuUtilPercent: 80, exitCode: 0 },
    ...options,
  };
}

/** Twenty mixed jobs on two partitions, big enough to queue: some fail, some time out. */
function scenarioJobs(prefix: string): SchedulerJobSpec[] {
  const random = seeded(20261201);
  const pick = (n: number) => Math.floor(random() * n);
  return Array.from({ length: 20 }, (_, i) => {
    const partition = i % 3 === 0 ? 'b200' : 'h100-ch';
    const gpusPerNode = partition === 'b200' ? 8 : 4;
    const nodes = 1 + pick(3);
    const perNode = 1 + pick(gpusPerNode);
    const runtimeSeconds = 600 + pick(12) * 600;
    const timesOut = i % 5 === 4;
    return job(`${prefix}-${i}`, {
      partition,
      gpus: nodes * perNode,
      nodes,
      walltimeSeconds: timesOut ? runtimeSeconds - 300 : runtimeSeconds + 1800,
      account: `project-${'abc'[pick(3)]}`,
      user: `user-${pick(5)}`,
      simulation: { runtimeSeconds, gpuUtilPercent: 40 + pick(61), exitCode: i % 7 === 3 ? 1 : 0 },
    });
  });
}

async function stateRow(db: Db, clusterId: string) {
  const [row] = await db.select().from(simClusterState).where(eq(simClusterState.id, clusterId));
  return row!;
}

async function snapshotSeqs(db: Db, clusterId: string): Promise<number[]> {
  const rows = await db.select({ seq: simClusterSnapshots.seq }).from(simClusterSnapshots).where(eq(simClusterSnapshots.clusterId, clusterId)).orderBy(asc(simClusterSnapshots.seq));
  return rows.map((r) => r.seq);
}

async function opSeqs(db: Db, clusterId: string): Promise<number[]> {
  const rows = await db.select({ seq: simClusterOps.seq }).from(simClusterOps).where(eq(simClusterOps.clusterId, clusterId)).orderBy(asc(simClusterOps.seq));
  return rows.map((r) => r.seq);
}

/** The messages of an error and of its causes (drivers wrap database errors). */
function messages(error: unknown): string {
  const out: string[] = [];
  for (let e = error; e instanceof Error; e = e.cause) out.push(e.message);
  return out.join(' / ');
}

describe.each(dbTargets())('simulated scheduler on %s', (target) => {
  schedulerContract(`simulated on ${target}`, async () => {
    const handle = await openTestDb(target);
    const cluster = await clusterConfigFromCatalogue(handle.db);
    const clock = manualClock(START_MS);
    const port = createSimulatedScheduler({ db: handle.db, cluster, speed: SPEED, now: clock.now });
    // Kajaani's B200 partition: the contract fills the harness partition with one job, which Lugano's demo
    // power cap (24 kW facility) could never start and admission would refuse.
    const partition = cluster.partitions.find((p) => p.name === 'b200')!;
    return {
      port,
      partition: partition.name,
      gpusPerNode: partition.gpusPerNode,
      nodes: partition.nodes,
      advanceSeconds: async (seconds) => {
        clock.advanceSimSeconds(seconds);
        await port.advance();
      },
      close: () => handle.close(),
    };
  });

  describe('adapter', () => {
    let handle: DbHandle;
    let cluster: ClusterConfig;

    beforeAll(async () => {
      handle = await openTestDb(target);
      cluster = await clusterConfigFromCatalogue(handle.db);
    });
    afterAll(async () => handle?.close());

    function scheduler(clusterId: string, now: () => Date, speed = SPEED, extra: Partial<SimulatedSchedulerOptions> = {}): SimulatedScheduler {
      return createSimulatedScheduler({ db: handle.db, cluster, speed, now, clusterId, ...extra });
    }

    it('builds the machine from the active resource classes and the sites of the catalogue', () => {
      expect(cluster.partitions.map((p) => p.name)).toEqual(['b200', 'h100', 'h100-ch']);
      expect(cluster.partitions.find((p) => p.name === 'h100')).toEqual({
        name: 'h100',
        siteId: 'de-jena',
        nodes: 16,
        gpusPerNode: 8,
        gpuModel: 'NVIDIA H100 SXM 80 GB',
        cpusPerNode: 96,
        memoryGbPerNode: 1536,
        gpuIdlePowerW: 70,
        gpuMaxPowerW: 700,
        nodeBasePowerW: 1500,
        maxWalltimeSeconds: 48 * 3600,
      });
      expect(cluster.partitions.find((p) => p.name === 'h100-ch')).toMatchObject({ siteId: 'ch-lugano', nodes: 8, gpusPerNode: 4, maxWalltimeSeconds: 24 * 3600 });
      expect(cluster.sites).toEqual([
        // The demo catalogue caps Lugano's facility power at 24 kW (so the cluster page shows a cap).
        { id: 'ch-lugano', country: 'CH', eu: false, powerCapW: 24_000, pueMilli: 1200 },
        { id: 'de-jena', country: 'DE', eu: true },
        { id: 'fi-kajaani', country: 'FI', eu: true },
      ]);
    });

    it('rejects jobs the cluster cannot run with a clear error, and keeps working after', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('rejects', clock.now);
      expect(await port.submit(job('accepted-before-rejects'))).toEqual({ schedulerJobId: 'sim-1' });
      const cases: [Partial<SchedulerJobSpec>, RegExp][] = [
        [{ partition: 'a100' }, /unknown partition "a100"/],
        [{ gpus: 5, nodes: 1 }, /more than 4 GPUs per node/],
        [{ gpus: 6, nodes: 4 }, /multiple of nodes/],
      ];
      for (const [i, [options, message]] of cases.entries()) {
        const error: unknown = await port.submit(job(`rejected-${i}`, options)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SimulatedSchedulerInputError);
        expect((error as Error).message).toMatch(message);
      }
      expect(await port.jobs(['rejected-0', 'rejected-1', 'rejected-2'])).toEqual([]);
      clock.advanceSimSeconds(60);
      expect(await port.submit(job('accepted-after-rejects'))).toEqual({ schedulerJobId: 'sim-2' });
      const after = await port.jobs(['accepted-before-rejects', 'accepted-after-rejects']);
      expect(after.map((s) => [s.state, s.gpuSeconds])).toEqual([
        ['RUNNING', 4 * 60],
        ['RUNNING', 0],
      ]);
      // Four calls committed (two submits, two jobs reads); the three rejected submits rolled back.
      expect((await stateRow(handle.db, 'rejects')).version).toBe(4);
    });

    it('reports the site, modelled energy, wall-clock times and sim-<n> ids', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('report', clock.now);
      expect(await port.submit(job('report-1'))).toEqual({ schedulerJobId: 'sim-1' });
      expect(await port.submit(job('report-2', { partition: 'h100', gpus: 8 }))).toEqual({ schedulerJobId: 'sim-2' });
      clock.advanceSimSeconds(60);
      const [running] = await port.jobs(['report-1']);
      expect(running).toMatchObject({ state: 'RUNNING', siteId: 'ch-lugano', energyMeasured: false, gpuSeconds: 4 * 60, pendingReason: null, exitCode: null, endedAt: null });
      expect(running!.startedAt).toEqual(new Date(START_MS));
      expect(running!.nodeList).toEqual(['h100-ch-001']);
      clock.advanceSimSeconds(600);
      const [done, other] = await port.jobs(['report-1', 'report-2']);
      // 4 GPUs × (70 + 630 × 0.8 W) + 900 W node base = 3,196 W for 600 s = 532.7 Wh.
      expect(done).toMatchObject({ state: 'COMPLETED', exitCode: 0, gpuSeconds: 4 * 600, energyWh: 533, siteId: 'ch-lugano' });
      expect(done!.endedAt).toEqual(new Date(START_MS + (600 * 1000) / SPEED));
      expect(other).toMatchObject({ schedulerJobId: 'sim-2', siteId: 'de-jena' });
    });

    it('runs a job without simulation details until its walltime (TIMEOUT), like a service that is never stopped', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('service', clock.now);
      await port.submit({ ...job('service-1', { walltimeSeconds: 1200 }), simulation: undefined });
      clock.advanceSimSeconds(1199);
      expect((await port.jobs(['service-1']))[0]!.state).toBe('RUNNING');
      clock.advanceSimSeconds(1);
      // As Slurm reports a TIMEOUT: the job 0:0, its batch step ended by SIGTERM (0:15).
      expect((await port.jobs(['service-1']))[0]).toMatchObject({ state: 'TIMEOUT', gpuSeconds: 4 * 1200, exitCode: 0, signal: 15 });
    });

    it('extends a running job\'s time limit, logged so that another process and a restart hold it too', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('extend', clock.now);
      await port.submit({ ...job('extend-1', { walltimeSeconds: 1200 }), simulation: undefined });
      await port.submit(job('extend-done', { walltimeSeconds: 1200 }));
      clock.advanceSimSeconds(600);
      expect(await port.extendTimeLimit!('extend-1', 3000)).toBe(true);
      // Asked again, or for less than it holds: nothing changes, nothing is logged.
      const seqs = (await opSeqs(handle.db, 'extend')).length;
      expect(await port.extendTimeLimit!('extend-1', 3000)).toBe(true);
      await expect(port.extendTimeLimit!('extend-1', 1800)).rejects.toThrow(/below the job's 3000 s/);
      expect((await opSeqs(handle.db, 'extend')).length).toBe(seqs);
      // Over the partition's longest walltime (h100-ch: 24 h): refused for good.
      await expect(port.extendTimeLimit!('extend-1', 25 * 3600)).rejects.toMatchObject({ name: 'SchedulerRefusedError', reason: 'limit' });
      // A job that has ended (extend-done ran its 600 s): false.
      clock.advanceSimSeconds(1);
      expect(await port.extendTimeLimit!('extend-done', 3000)).toBe(false);
      expect(await port.extendTimeLimit!('no-such-job', 3000)).toBe(false);
      // Another process (a restart) replays the log: past its old limit of 1200 s the job runs on, and ends at 3000 s.
      const again = scheduler('extend', clock.now);
      clock.advanceSimSeconds(1200);
      expect((await again.jobs(['extend-1']))[0]!.state).toBe('RUNNING');
      clock.advanceSimSeconds(3000 - 1801);
      expect((await again.jobs(['extend-1']))[0]).toMatchObject({ state: 'TIMEOUT', gpuSeconds: 4 * 3000 });
    });

    it('moves ended jobs out of the engine into sim_finished_jobs and bumps the version on every call', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('retire', clock.now, SPEED, { checkpointEveryOps: 1 });
      await port.submit(job('retire-1'));
      await port.submit(job('retire-2', { simulation: { runtimeSeconds: 5000, gpuUtilPercent: 50, exitCode: 0 } }));
      expect((await stateRow(handle.db, 'retire')).version).toBe(2);
      clock.advanceSimSeconds(600);
      await port.advance();
      expect((await stateRow(handle.db, 'retire')).version).toBe(3);
      // The engine holds only the job still running: a snapshot of it (after the two submits) shows it alone.
      expect(await port.checkpoint()).toEqual({ seq: 2 });
      const [snapshot] = await handle.db
        .select()
        .from(simClusterSnapshots)
        .where(and(eq(simClusterSnapshots.clusterId, 'retire'), eq(simClusterSnapshots.seq, 2)));
      expect((snapshot!.state as EngineState).jobs.map((j) => j.spec.id)).toEqual(['retire-2']);
      const [finished] = await handle.db.select().from(simFinishedJobs).where(eq(simFinishedJobs.portalJobId, 'retire-1'));
      expect(finished).toMatchObject({ clusterId: 'retire', finishedAt: new Date(START_MS + 10_000) });
      expect(finished!.status).toMatchObject({ portalJobId: 'retire-1', schedulerJobId: 'sim-1', state: 'COMPLETED', gpuSeconds: 2400, exitCode: 0, signal: null });
      // A row retired before signals were kept has none: it reads as no signal.
      const { signal: _signal, ...older } = finished!.status as Record<string, unknown>;
      await handle.db.update(simFinishedJobs).set({ status: older }).where(eq(simFinishedJobs.portalJobId, 'retire-1'));
      expect((await port.jobs(['retire-1']))[0]).toMatchObject({ state: 'COMPLETED', exitCode: 0, signal: null });
      // A retry of a finished job's submit returns its id and does not run it again.
      expect(await port.submit(job('retire-1'))).toEqual({ schedulerJobId: 'sim-1' });
      expect((await port.describeCluster()).runningJobs).toBe(1);
    });

    it('a dependency on a job that already ended and left the engine is decided by how it ended, also after a restart', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('dep-retired', clock.now);
      await port.submit(job('dep-fails', { simulation: { runtimeSeconds: 60, gpuUtilPercent: 50, exitCode: 1 } }));
      await port.submit(job('dep-ok', { simulation: { runtimeSeconds: 60, gpuUtilPercent: 50, exitCode: 0 } }));
      clock.advanceSimSeconds(120);
      await port.advance(); // both ended and were retired to sim_finished_jobs
      // The portal has not seen them end yet and names them: their end decides, not "unknown, so satisfied".
      await port.submit(job('after-fail', { dependency: { type: 'afterok', portalJobIds: ['dep-fails'] } }));
      await port.submit(job('after-ok', { dependency: { type: 'afterok', portalJobIds: ['dep-ok'] } }));
      const read = async (p: SchedulerPort) => Object.fromEntries((await p.jobs(['after-fail', 'after-ok'])).map((j) => [j.portalJobId, j.state === 'PENDING' ? j.pendingReason : j.state]));
      expect(await read(port)).toEqual({ 'after-fail': 'DependencyNeverSatisfied', 'after-ok': 'RUNNING' });
      // A second process rebuilds the cluster from the ops: the same decision.
      expect(await read(scheduler('dep-retired', clock.now))).toEqual({ 'after-fail': 'DependencyNeverSatisfied', 'after-ok': 'RUNNING' });
    });

    it('continues every queued and running job after a restart exactly as an uninterrupted run', async () => {
      const STEP_SECONDS = 900;
      async function scenario(clusterId: string, restartAfterStep: number | null) {
        const clock = manualClock(START_MS);
        let port = scheduler(clusterId, clock.now);
        const specs = scenarioJobs(clusterId);
        const ids = specs.map((s) => s.portalJobId);
        for (const s of specs.slice(0, 12)) await port.submit(s);
        let atRestart: SchedulerJobStatus[] = [];
        for (let step = 1; step <= 100; step++) {
          clock.advanceSimSeconds(STEP_SECONDS);
          await port.advance();
          if (step === 1) for (const s of specs.slice(12)) await port.submit(s);
          if (step === 2) await port.cancel(specs[16]!.portalJobId);
          if (step === restartAfterStep) {
            atRestart = await port.jobs(ids);
            port = scheduler(clusterId, clock.now); // a new process: nothing in memory
          }
          if ((await port.jobs(ids)).every((s) => isFinalState(s.state))) break;
        }
        const final = await port.jobs(ids);
        const anonymous = (list: SchedulerJobStatus[]) => list.map((s) => ({ ...s, portalJobId: s.portalJobId.replace(`${clusterId}-`, '') }));
        return { final: anonymous(final), atRestart };
      }

      const uninterrupted = await scenario('straight', null);
      const restarted = await scenario('restarted', 3);
      const states = new Set(restarted.atRestart.map((s) => s.state));
      expect(states.has('RUNNING') && states.has('PENDING'), `states at the restart: ${[...states].join(', ')}`).toBe(true);
      expect(restarted.atRestart.some((s) => isFinalState(s.state))).toBe(true);
      expect(restarted.final).toHaveLength(20);
      expect(restarted.final.every((s) => isFinalState(s.state))).toBe(true);
      expect(new Set(restarted.final.map((s) => s.state))).toEqual(new Set(['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED']));
      expect(restarted.final).toEqual(uninterrupted.final);
    });

    it('re-anchors the clock when the speed changes, so simulated time never jumps', async () => {
      const clock = manualClock(START_MS);
      const slow = scheduler('speed', clock.now, 60);
      await slow.submit(job('speed-long', { partition: 'h100', gpus: 8, walltimeSeconds: 86_400, simulation: { runtimeSeconds: 36_000, gpuUtilPercent: 90, exitCode: 0 } }));
      await slow.submit(job('speed-short', { partition: 'h100', gpus: 8, simulation: { runtimeSeconds: 600, gpuUtilPercent: 90, exitCode: 0 } }));
      clock.advanceWallMs(100_000); // 100 s × 60 = 6,000 simulated seconds
      // A process configured ten times faster takes over: the clock is re-anchored at the current simulated time.
      const fast = scheduler('speed', clock.now, 600);
      const [long, short] = await fast.jobs(['speed-long', 'speed-short']);
      expect(long!.gpuSeconds).toBe(8 * 6000);
      // The short job ended at 600 s under the old speed: 10 wall seconds after the start.
      expect(short).toMatchObject({ state: 'COMPLETED', endedAt: new Date(START_MS + 10_000) });
      expect(await stateRow(handle.db, 'speed')).toMatchObject({ speed: 600, simAnchorSeconds: 6000, wallAnchor: new Date(START_MS + 100_000) });
      clock.advanceWallMs(10_000); // × 600 = 6,000 more
      expect((await fast.jobs(['speed-long']))[0]!.gpuSeconds).toBe(8 * 12_000);
      // And back: the slow process re-anchors again at 12,000 s.
      expect((await slow.jobs(['speed-long']))[0]!.gpuSeconds).toBe(8 * 12_000);
      expect(await stateRow(handle.db, 'speed')).toMatchObject({ speed: 60, simAnchorSeconds: 12_000, wallAnchor: new Date(START_MS + 110_000) });
      clock.advanceWallMs(10_000); // × 60 = 600 more
      const [later] = await slow.jobs(['speed-long']);
      expect(later).toMatchObject({ state: 'RUNNING', gpuSeconds: 8 * 12_600 });
      expect(later!.startedAt!.getTime()).toBeLessThanOrEqual(clock.now().getTime());
    });

    it('creates the cluster state once when several processes start at the same time', async () => {
      const clock = manualClock(START_MS);
      const ports = [scheduler('race', clock.now), scheduler('race', clock.now), scheduler('race', clock.now)];
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => ports[i % 3]!.submit(job(`race-${i}`, { partition: 'h100', gpus: 8 }))));
      expect(new Set(results.map((r) => r.schedulerJobId)).size).toBe(12);
      expect((await stateRow(handle.db, 'race')).version).toBe(12);
      expect((await ports[0]!.describeCluster()).runningJobs).toBe(12);
    });

    it('gives two adapter instances on one database one consistent cluster', async () => {
      const clock = manualClock(START_MS);
      const a = scheduler('shared', clock.now);
      const b = scheduler('shared', clock.now);
      const { schedulerJobId } = await a.submit(job('shared-x', { simulation: { runtimeSeconds: 5000, gpuUtilPercent: 80, exitCode: 0 } }));
      const [seen] = await b.jobs(['shared-x']);
      expect(seen).toMatchObject({ schedulerJobId, state: 'RUNNING' });
      expect(await b.submit(job('shared-x'))).toEqual({ schedulerJobId });

      // Concurrent calls from both instances: distinct jobs, retries of one id included, nothing lost.
      const specs = Array.from({ length: 20 }, (_, i) => job(`shared-${i}`, { partition: 'h100', gpus: 8 }));
      const results = await Promise.all([
        ...specs.map((s, i) => (i % 2 === 0 ? a : b).submit(s)),
        a.submit(job('shared-y')),
        b.submit(job('shared-y')),
        a.advance(),
        b.describeCluster(),
      ]);
      const ids = results.slice(0, 20).map((r) => (r as { schedulerJobId: string }).schedulerJobId);
      expect(new Set(ids).size).toBe(20);
      expect((results[20] as { schedulerJobId: string }).schedulerJobId).toBe((results[21] as { schedulerJobId: string }).schedulerJobId);
      const fromA = await a.describeCluster();
      const fromB = await b.describeCluster();
      expect(fromB).toEqual(fromA);
      expect(fromA.runningJobs + fromA.pendingJobs).toBe(22);
      expect(await a.jobs(specs.map((s) => s.portalJobId))).toEqual(await b.jobs(specs.map((s) => s.portalJobId)));

      clock.advanceSimSeconds(60);
      await b.cancel('shared-x');
      expect((await a.jobs(['shared-x']))[0]).toMatchObject({ state: 'CANCELLED', gpuSeconds: 4 * 60 });
      clock.advanceSimSeconds(540);
      await b.advance();
      expect((await a.jobs(['shared-y']))[0]).toMatchObject({ state: 'COMPLETED', gpuSeconds: 4 * 600 });
    });

    it('an engine rebuilt from the latest snapshot and the ops after it equals one that never stopped', async () => {
      const STEP_SECONDS = 900;
      async function scenario(clusterId: string, rebuildAtStep: number | null) {
        const clock = manualClock(START_MS);
        const first = scheduler(clusterId, clock.now, SPEED, { checkpointEveryOps: 4 });
        let port = first;
        const specs = scenarioJobs(clusterId);
        const ids = specs.map((s) => s.portalJobId);
        const submit = async (s: SchedulerJobSpec) => {
          await port.submit(s);
          await port.checkpoint(); // as the worker does every round
        };
        let stored = { snapshots: [] as number[], ops: [] as number[] };
        const compared: [SchedulerJobStatus[], SchedulerJobStatus[]][] = [];
        for (const s of specs.slice(0, 12)) await submit(s);
        for (let step = 1; step <= 100; step++) {
          clock.advanceSimSeconds(STEP_SECONDS);
          await port.advance();
          if (step === 1) for (const s of specs.slice(12, 16)) await submit(s);
          if (step === 2) await port.cancel(specs[14]!.portalJobId);
          if (step === rebuildAtStep) {
            stored = { snapshots: await snapshotSeqs(handle.db, clusterId), ops: await opSeqs(handle.db, clusterId) };
            port = scheduler(clusterId, clock.now); // a new process: nothing in memory
          }
          // The rebuilt engine takes new jobs too; the first instance catches up on them.
          if (step === 4) for (const s of specs.slice(16)) await submit(s);
          if (rebuildAtStep !== null && step >= rebuildAtStep) compared.push([await port.jobs(ids), await first.jobs(ids)]);
          if (step > 4 && (await port.jobs(ids)).every((s) => isFinalState(s.state))) break;
        }
        const final = (await port.jobs(ids)).map((s) => ({ ...s, portalJobId: s.portalJobId.replace(`${clusterId}-`, '') }));
        return { final, stored, compared };
      }

      const straight = await scenario('snap-straight', null);
      const rebuilt = await scenario('snap-rebuilt', 3);
      // Snapshots after ops 4, 8, …, 16 (checkpoints keep the last two); ops 1–12 pruned, 17 is the cancel.
      expect(rebuilt.stored).toEqual({ snapshots: [12, 16], ops: [13, 14, 15, 16, 17] });
      expect(rebuilt.compared.length).toBeGreaterThan(3);
      for (const [fromRebuilt, fromFirst] of rebuilt.compared) expect(fromRebuilt).toEqual(fromFirst);
      expect(rebuilt.final).toHaveLength(20);
      expect(new Set(rebuilt.final.map((s) => s.state))).toEqual(new Set(['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED']));
      expect(rebuilt.final).toEqual(straight.final);
    });

    it('writes a snapshot every N ops or after a while, and keeps only what a rebuild needs', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('prune', clock.now, SPEED, { checkpointEveryOps: 5, checkpointEveryMs: 60_000 });
      const ids = Array.from({ length: 23 }, (_, i) => `prune-${i + 1}`);
      const written: number[] = [];
      for (const id of ids) {
        await port.submit(job(id, { partition: 'h100', gpus: 8 }));
        const snapshot = await port.checkpoint();
        if (snapshot) written.push(snapshot.seq);
      }
      expect(written).toEqual([5, 10, 15, 20]);
      // The newest snapshot, the one before it, and the ops after that one.
      expect(await snapshotSeqs(handle.db, 'prune')).toEqual([15, 20]);
      expect(await opSeqs(handle.db, 'prune')).toEqual([16, 17, 18, 19, 20, 21, 22, 23]);
      // Three ops since and no minute passed: nothing due. A minute later the three are enough.
      expect(await port.checkpoint()).toBeNull();
      clock.advanceWallMs(60_000);
      expect(await port.checkpoint()).toEqual({ seq: 23 });
      expect(await snapshotSeqs(handle.db, 'prune')).toEqual([20, 23]);
      expect(await opSeqs(handle.db, 'prune')).toEqual([21, 22, 23]);
      // Time alone, with no op since, writes nothing.
      clock.advanceWallMs(120_000);
      expect(await port.checkpoint()).toBeNull();
      const fresh = scheduler('prune', clock.now);
      const seen = await fresh.jobs(ids);
      expect(seen).toHaveLength(23);
      expect(seen).toEqual(await port.jobs(ids));
    });

    it('leaves no half-applied engine behind when a transaction fails after the engine moved', async () => {
      const clock = manualClock(START_MS);
      const port = scheduler('poison', clock.now);
      expect(await port.submit(job('poison-ok-1'))).toEqual({ schedulerJobId: 'sim-1' });
      // The database refuses to log this one job: the engine has already taken it when the write fails.
      await handle.db.execute(
        sql.raw(`create function poison_op() returns trigger language plpgsql as $$
          begin
            if new.cluster_id = 'poison' and new.payload->>'id' = 'poison-x' then raise exception 'poisoned op'; end if;
            return new;
          end $$`),
      );
      await handle.db.execute(sql.raw('create trigger poison_op before insert on sim_cluster_ops for each row execute function poison_op()'));
      clock.advanceSimSeconds(60);
      try {
        const error: unknown = await port.submit(job('poison-x')).catch((e: unknown) => e);
        expect(messages(error)).toMatch(/poisoned op/);
      } finally {
        await handle.db.execute(sql.raw('drop trigger poison_op on sim_cluster_ops'));
        await handle.db.execute(sql.raw('drop function poison_op()'));
      }
      expect((await stateRow(handle.db, 'poison')).version).toBe(1);
      // The next call rebuilds the engine from the database: no trace of the job, no gap in the ids.
      expect(await port.jobs(['poison-x'])).toEqual([]);
      expect(await port.submit(job('poison-ok-2', { gpus: 2 }))).toEqual({ schedulerJobId: 'sim-2' });
      const fresh = scheduler('poison', clock.now);
      expect(await fresh.describeCluster()).toEqual(await port.describeCluster());
      expect(await port.jobs(['poison-ok-1', 'poison-ok-2'])).toEqual(await fresh.jobs(['poison-ok-1', 'poison-ok-2']));
      expect(await port.submit(job('poison-x', { gpus: 2 }))).toEqual({ schedulerJobId: 'sim-3' });
      expect((await fresh.jobs(['poison-x']))[0]).toMatchObject({ schedulerJobId: 'sim-3', state: 'RUNNING' });
    });

    it('keeps two instances consistent through interleaved, concurrent submits, cancels and reads', async () => {
      const clock = manualClock(START_MS);
      const a = scheduler('mix', clock.now, SPEED, { checkpointEveryOps: 7 });
      const b = scheduler('mix', clock.now);
      const random = seeded(8);
      const pick = (n: number) => Math.floor(random() * n);
      const submitted: string[] = [];
      const seenStates = new Set<string>();
      for (let round = 0; round < 40; round++) {
        const actions = Array.from({ length: 1 + pick(4) }, (): (() => Promise<unknown>) => {
          const port = pick(2) === 0 ? a : b;
          const r = random();
          if (r < 0.55 || submitted.length === 0) {
            const id = `mix-${submitted.length}`;
            submitted.push(id);
            const partition = pick(2) === 0 ? 'h100-ch' : 'b200';
            const nodes = 1 + pick(2);
            const runtimeSeconds = 600 + pick(10) * 600;
            const spec = job(id, { partition, nodes, gpus: nodes * (1 + pick(4)), walltimeSeconds: runtimeSeconds + 600, account: `project-${pick(3)}`, simulation: { runtimeSeconds, gpuUtilPercent: 50, exitCode: 0 } });
            return () => port.submit(spec);
          }
          if (r < 0.8) {
            const id = submitted[pick(submitted.length)]!;
            return () => port.cancel(id);
          }
          const ids = [...submitted];
          return async () => {
            for (const status of await port.jobs(ids)) seenStates.add(status.state);
          };
        });
        await Promise.all(actions.map((run) => run()));
        if (round % 5 === 4) await a.checkpoint();
        clock.advanceSimSeconds(pick(4) * 300);
      }
      const fromA = await a.jobs(submitted);
      expect(fromA).toHaveLength(submitted.length);
      expect(await b.jobs(submitted)).toEqual(fromA);
      const fresh = scheduler('mix', clock.now);
      expect(await fresh.jobs(submitted)).toEqual(fromA);
      expect(new Set(fromA.map((s) => s.schedulerJobId)).size).toBe(submitted.length);
      // Jobs queued on the way, some were cancelled and some ran to the end.
      expect(seenStates).toContain('PENDING');
      const states = new Set(fromA.map((s) => s.state));
      for (const state of ['COMPLETED', 'CANCELLED'] as const) expect(states, [...states].join(', ')).toContain(state);
      const described = await a.describeCluster();
      expect(await b.describeCluster()).toEqual(described);
      expect(await fresh.describeCluster()).toEqual(described);
    });
  });

  describe('a cluster stored before the operations log', () => {
    it('continues from its whole stored engine after the migrations', async () => {
      const handle = await openTestDb(target, { migrate: false });
      const folder = mkdtempSync(join(tmpdir(), 'portal-migrations-'));
      try {
        // The migrations up to 0010, when sim_cluster_state.state held the whole engine.
        const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number; tag: string }[] };
        journal.entries = journal.entries.filter((e) => e.idx <= 10);
        mkdirSync(join(folder, 'meta'));
        writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal));
        for (const e of journal.entries) copyFileSync(join(MIGRATIONS_FOLDER, `${e.tag}.sql`), join(folder, `${e.tag}.sql`));
        await migrateDb(handle, folder);

        // What the old adapter stored: three jobs at 60 s on 2 nodes × 4 GPUs, the third queued behind the others.
        const cluster = testCluster([testPartition()]);
        const engine = createEngine({ cluster, policy: policyFromName('multifactor'), seed: 42, startTimeSeconds: 0, nodeFailures: null });
        const legacyJob = (id: string, gpus: number, nodes: number, runtimeSeconds: number) => ({
          id,
          submitTimeSeconds: 0,
          user: 'alice',
          account: 'project-a',
          partition: 'gpu',
          gpus,
          nodes,
          walltimeLimitSeconds: 7200,
          runtimeSeconds,
          gpuUtilPercent: 80,
          exitCode: 0,
        });
        engine.submit(legacyJob('legacy-a', 4, 1, 600));
        engine.submit(legacyJob('legacy-b', 4, 1, 5000));
        engine.submit(legacyJob('legacy-c', 8, 2, 600));
        engine.advanceTo(60);
        await handle.db.execute(
          sql`insert into sim_cluster_state (id, version, state, wall_anchor, sim_anchor_seconds, speed, updated_at)
              values ('legacy', 7, ${JSON.stringify(engine.serialize())}::jsonb, ${new Date(START_MS).toISOString()}, 0, ${SPEED}, ${new Date(START_MS + 1000).toISOString()})`,
        );

        await migrateDb(handle);
        const row = await stateRow(handle.db, 'legacy');
        expect(row).toMatchObject({ version: 7, opSeq: 0, simNowSeconds: 60, speed: SPEED });
        expect(row).not.toHaveProperty('state');
        const [snapshot] = await handle.db.select().from(simClusterSnapshots).where(eq(simClusterSnapshots.clusterId, 'legacy'));
        expect(snapshot).toMatchObject({ seq: 0, simSeconds: 60 });
        const state = snapshot!.state as EngineState;
        expect(state.config.policy.queueDepth).toBe(100);
        expect(state.jobs.map((j) => j.spec.id)).toEqual(['legacy-a', 'legacy-b', 'legacy-c']);

        const clock = manualClock(START_MS);
        clock.advanceSimSeconds(60);
        const port = createSimulatedScheduler({ db: handle.db, cluster, speed: SPEED, now: clock.now, clusterId: 'legacy' });
        const at60 = await port.jobs(['legacy-a', 'legacy-b', 'legacy-c']);
        expect(at60.map((s) => [s.schedulerJobId, s.state, s.gpuSeconds])).toEqual([
          ['sim-1', 'RUNNING', 4 * 60],
          ['sim-2', 'RUNNING', 4 * 60],
          ['sim-3', 'PENDING', 0],
        ]);
        clock.advanceSimSeconds(600);
        const [a, , c] = await port.jobs(['legacy-a', 'legacy-b', 'legacy-c']);
        expect(a).toMatchObject({ state: 'COMPLETED', gpuSeconds: 4 * 600, endedAt: new Date(START_MS + (600 * 1000) / SPEED) });
        expect(c).toMatchObject({ state: 'PENDING', pendingReason: 'Resources' });
        expect(await port.submit(job('legacy-d', { partition: 'gpu', gpus: 4 }))).toEqual({ schedulerJobId: 'sim-4' });
        expect((await stateRow(handle.db, 'legacy')).version).toBe(10);
      } finally {
        await handle.close();
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });
});
