// The simulated scheduler on every database target: the SchedulerPort contract, plus what only the
// simulated adapter promises — persistence across restarts, re-anchoring on a speed change, one
// consistent cluster for several processes, and the catalogue as its machine.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { simClusterSnapshots, simClusterState, simFinishedJobs } from '~/db/schema';
import { isFinalState, type SchedulerJobSpec, type SchedulerJobStatus } from '~/server/core/scheduler/port';
import type { ClusterConfig, EngineState } from '~/server/core/sim';
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

describe.each(dbTargets())('simulated scheduler on %s', (target) => {
  schedulerContract(`simulated on ${target}`, async () => {
    const handle = await openTestDb(target);
    const cluster = await clusterConfigFromCatalogue(handle.db);
    const clock = manualClock(START_MS);
    const port = createSimulatedScheduler({ db: handle.db, cluster, speed: SPEED, now: clock.now });
    const partition = cluster.partitions.find((p) => p.name === 'h100-ch')!;
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
        { id: 'ch-lugano', country: 'CH', eu: false },
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
      expect((await port.jobs(['service-1']))[0]).toMatchObject({ state: 'TIMEOUT', gpuSeconds: 4 * 1200, exitCode: null });
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
      expect(finished!.status).toMatchObject({ portalJobId: 'retire-1', schedulerJobId: 'sim-1', state: 'COMPLETED', gpuSeconds: 2400 });
      // A retry of a finished job's submit returns its id and does not run it again.
      expect(await port.submit(job('retire-1'))).toEqual({ schedulerJobId: 'sim-1' });
      expect((await port.describeCluster()).runningJobs).toBe(1);
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
  });
});
