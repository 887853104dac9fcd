// The simulated scheduler adapter: the SchedulerPort on top of the discrete-event cluster engine
// (server/core/sim), persisted in the database so it survives restarts and is shared by every
// process of the portal.
//
// Live mode: simulated time = simAnchorSeconds + (now − wallAnchor) × speed. Every call runs in one
// transaction that locks the cluster's `sim_cluster_state` row, restores the engine (or reuses the
// one this instance wrote last, when the row's version says nothing changed since), advances it to
// the current simulated time, applies the operation, moves ended jobs to `sim_finished_jobs` (and
// prunes them from the engine) and writes the state back with version + 1.
//
// The machine, policy, seed and failure model are fixed when the row is first created; later
// instances continue the stored engine (their `cluster`, `policy`, `seed` and `nodeFailures` options
// only apply to a new cluster). A different `speed` re-anchors the clock, so time never jumps.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db, Tx } from '~/db/client';
import { simClusterState, simFinishedJobs } from '~/db/schema';
import type { ClusterDescription, SchedulerJobSpec, SchedulerJobStatus, SchedulerPort } from '~/server/core/scheduler/port';
import {
  createEngine,
  policyFromName,
  restoreEngine,
  SimInputError,
  type ClusterConfig,
  type ClusterEngine,
  type EngineConfig,
  type EngineState,
  type JobSpec,
  type JobView,
  type NodeFailureConfig,
} from '~/server/core/sim';

/** Options of `createSimulatedScheduler`. */
export interface SimulatedSchedulerOptions {
  db: Db;
  /** The machine (see clusterConfigFromCatalogue); used when the cluster's state is first created. */
  cluster: ClusterConfig;
  /** Simulated seconds per wall-clock second, a whole number ≥ 1. */
  speed: number;
  /** The wall clock. */
  now: () => Date;
  /** Which simulated cluster (one `sim_cluster_state` row); default 'default'. */
  clusterId?: string;
  /** Seed of the engine's random node failures; default 42. */
  seed?: number;
  /** Scheduling policy; default 'multifactor' (age + fair share priority with EASY backfill). */
  policy?: 'easy' | 'multifactor';
  /** Random node failures (exponential between failures per node, fixed repair); default none. */
  nodeFailures?: NodeFailureConfig | null;
}

/** The simulated scheduler: the port, plus `advance()` for a worker to move the cluster to the current time. */
export type SimulatedScheduler = SchedulerPort & {
  clusterId: string;
  /** advance brings the simulated cluster up to the current time (jobs start and end) and persists it. */
  advance(): Promise<void>;
};

/** SimulatedSchedulerInputError is a job the simulated cluster cannot run (unknown partition, too many GPUs per node, …). */
export class SimulatedSchedulerInputError extends Error {
  override name = 'SimulatedSchedulerInputError';
}

const DEFAULT_CLUSTER_ID = 'default';
const DEFAULT_SEED = 42;
const MS_PER_SECOND = 1000;

/** The linear map between wall-clock and simulated time. */
interface SimClock {
  wallAnchorMs: number;
  simAnchorSeconds: number;
  speed: number;
}

/** An engine with what the adapter derives from its state. */
interface LoadedEngine {
  engine: ClusterEngine;
  config: EngineConfig;
  /** Submit sequence number of each job the engine still holds (schedulerJobId = sim-<seq + 1>). */
  seqById: Map<string, number>;
  nextSeq: number;
}

interface CachedEngine extends LoadedEngine {
  /** The `sim_cluster_state.version` this engine's state was written as. */
  version: number;
}

/** What an operation gets inside the locked transaction. */
interface Call {
  tx: Tx;
  now: Date;
  loaded: LoadedEngine;
  clock: SimClock;
}

/** A finished job's status as stored in `sim_finished_jobs.status` (dates as ISO strings). */
type StoredStatus = Omit<SchedulerJobStatus, 'startedAt' | 'endedAt'> & { startedAt: string | null; endedAt: string | null };

function simSecondsAt(clock: SimClock, wallMs: number): number {
  return clock.simAnchorSeconds + Math.floor(((wallMs - clock.wallAnchorMs) * clock.speed) / MS_PER_SECOND);
}

function wallDateAt(clock: SimClock, simSeconds: number): Date {
  return new Date(clock.wallAnchorMs + Math.round(((simSeconds - clock.simAnchorSeconds) * MS_PER_SECOND) / clock.speed));
}

function loadedFromState(engine: ClusterEngine, state: EngineState): LoadedEngine {
  const seqById = new Map<string, number>();
  for (const j of state.jobs) seqById.set(j.spec.id, j.seq);
  return { engine, config: state.config, seqById, nextSeq: state.submitSeq };
}

function schedulerJobIdOf(loaded: LoadedEngine, portalJobId: string): string {
  const seq = loaded.seqById.get(portalJobId);
  return seq === undefined ? portalJobId : `sim-${seq + 1}`;
}

function statusOf(view: JobView, loaded: LoadedEngine, clock: SimClock): SchedulerJobStatus {
  const nowSeconds = loaded.engine.nowSeconds;
  const start = view.startTimeSeconds;
  const end = view.endTimeSeconds;
  const partition = loaded.config.cluster.partitions.find((p) => p.name === view.partition);
  return {
    portalJobId: view.id,
    schedulerJobId: schedulerJobIdOf(loaded, view.id),
    state: view.state,
    pendingReason: view.state === 'PENDING' ? (view.pendingReason ?? 'None') : null,
    startedAt: start === null ? null : wallDateAt(clock, start),
    endedAt: end === null ? null : wallDateAt(clock, end),
    exitCode: view.exitCode,
    nodeList: [...view.nodeList],
    gpuSeconds: start === null ? 0 : view.gpus * ((end ?? nowSeconds) - start),
    energyWh: view.energyWh ?? 0,
    energyMeasured: false,
    siteId: partition?.siteId ?? null,
  };
}

function toStored(status: SchedulerJobStatus): StoredStatus {
  return { ...status, startedAt: status.startedAt?.toISOString() ?? null, endedAt: status.endedAt?.toISOString() ?? null };
}

function fromStored(stored: StoredStatus): SchedulerJobStatus {
  return {
    ...stored,
    startedAt: stored.startedAt === null ? null : new Date(stored.startedAt),
    endedAt: stored.endedAt === null ? null : new Date(stored.endedAt),
  };
}

function jobSpecFor(spec: SchedulerJobSpec, submitTimeSeconds: number): JobSpec {
  const sim = spec.simulation ?? { runtimeSeconds: spec.walltimeSeconds + 1, gpuUtilPercent: 90, exitCode: 0 };
  return {
    id: spec.portalJobId,
    submitTimeSeconds,
    user: spec.user,
    account: spec.account,
    partition: spec.partition,
    gpus: spec.gpus,
    nodes: spec.nodes,
    walltimeLimitSeconds: spec.walltimeSeconds,
    runtimeSeconds: sim.runtimeSeconds,
    gpuUtilPercent: sim.gpuUtilPercent,
    exitCode: sim.exitCode,
  };
}

/** createSimulatedScheduler returns the SchedulerPort of a simulated cluster persisted in the database (live mode at `speed`). */
export function createSimulatedScheduler(options: SimulatedSchedulerOptions): SimulatedScheduler {
  const { db, speed } = options;
  const clusterId = options.clusterId ?? DEFAULT_CLUSTER_ID;
  if (!Number.isSafeInteger(speed) || speed < 1) throw new Error(`simulated scheduler: speed must be a whole number ≥ 1 (got ${speed})`);
  if (clusterId === '') throw new Error('simulated scheduler: clusterId must not be empty');

  // The engine this instance last committed, keyed by the row version it was written as. A call takes
  // it out (so a failed transaction cannot leave a half-applied engine behind) and puts the new one back.
  let cache: CachedEngine | null = null;

  function newEngine(): ClusterEngine {
    return createEngine({
      cluster: options.cluster,
      policy: policyFromName(options.policy ?? 'multifactor'),
      nodeFailures: options.nodeFailures ?? null,
      seed: options.seed ?? DEFAULT_SEED,
      startTimeSeconds: 0,
    });
  }

  async function lockRow(tx: Tx) {
    const [row] = await tx.select().from(simClusterState).where(eq(simClusterState.id, clusterId)).for('update');
    return row;
  }

  /** Locks the cluster's row (creating it with a fresh engine on first use) and returns the row and its engine. */
  async function lockAndLoad(tx: Tx, now: Date): Promise<{ version: number; clock: SimClock; loaded: LoadedEngine }> {
    let row = await lockRow(tx);
    if (!row) {
      const engine = newEngine();
      const state = engine.serialize();
      const inserted = await tx
        .insert(simClusterState)
        .values({ id: clusterId, version: 0, state, wallAnchor: now, simAnchorSeconds: engine.nowSeconds, speed, updatedAt: now })
        .onConflictDoNothing()
        .returning({ version: simClusterState.version });
      if (inserted.length > 0) {
        return { version: 0, clock: { wallAnchorMs: now.getTime(), simAnchorSeconds: engine.nowSeconds, speed }, loaded: loadedFromState(engine, state) };
      }
      row = await lockRow(tx); // another process created it first
      if (!row) throw new Error(`simulated scheduler: cannot create the state of cluster "${clusterId}"`);
    }
    const clock: SimClock = { wallAnchorMs: row.wallAnchor.getTime(), simAnchorSeconds: row.simAnchorSeconds, speed: row.speed };
    if (cache !== null && cache.version === row.version) {
      const hit = cache;
      cache = null;
      return { version: row.version, clock, loaded: hit };
    }
    const state = row.state as EngineState;
    return { version: row.version, clock, loaded: loadedFromState(restoreEngine(state), state) };
  }

  /** Moves jobs that have ended into sim_finished_jobs and drops them from the engine. */
  async function retireEndedJobs(tx: Tx, loaded: LoadedEngine, clock: SimClock): Promise<void> {
    const ended = loaded.engine.snapshot().jobs.filter((j) => j.endTimeSeconds !== null);
    if (ended.length === 0) return;
    const rows = ended.map((view) => {
      const status = statusOf(view, loaded, clock);
      return { portalJobId: view.id, clusterId, status: toStored(status), finishedAt: status.endedAt ?? wallDateAt(clock, loaded.engine.nowSeconds) };
    });
    await tx.insert(simFinishedJobs).values(rows).onConflictDoNothing();
    loaded.engine.pruneFinished(loaded.engine.nowSeconds + 1);
  }

  /** Runs one operation in one transaction on the locked, advanced, persisted cluster state. */
  async function withCluster<T>(op: (call: Call) => T | Promise<T>): Promise<T> {
    const { result, committed } = await db.transaction(async (tx) => {
      const now = options.now();
      const nowMs = now.getTime();
      const { version, clock: stored, loaded } = await lockAndLoad(tx, now);
      const { engine } = loaded;
      const simNowSeconds = Math.max(engine.nowSeconds, simSecondsAt(stored, nowMs));
      const clock: SimClock = stored.speed === speed ? stored : { wallAnchorMs: nowMs, simAnchorSeconds: simNowSeconds, speed };
      engine.advanceTo(simNowSeconds);
      // Jobs that ended before a re-anchor get their wall-clock times from the clock they ran under.
      if (clock !== stored) await retireEndedJobs(tx, loaded, stored);
      const value = await op({ tx, now, loaded, clock });
      await retireEndedJobs(tx, loaded, clock);
      const state = engine.serialize();
      await tx
        .update(simClusterState)
        .set({ version: version + 1, state, wallAnchor: new Date(clock.wallAnchorMs), simAnchorSeconds: clock.simAnchorSeconds, speed: clock.speed, updatedAt: now })
        .where(eq(simClusterState.id, clusterId));
      const next: CachedEngine = { ...loadedFromState(engine, state), version: version + 1 };
      return { result: value, committed: next };
    });
    if (cache === null || cache.version < committed.version) cache = committed;
    return result;
  }

  async function submit(spec: SchedulerJobSpec): Promise<{ schedulerJobId: string }> {
    return withCluster(async ({ tx, loaded }) => {
      const { engine } = loaded;
      if (engine.job(spec.portalJobId)) return { schedulerJobId: schedulerJobIdOf(loaded, spec.portalJobId) };
      const [done] = await tx
        .select({ clusterId: simFinishedJobs.clusterId, status: simFinishedJobs.status })
        .from(simFinishedJobs)
        .where(eq(simFinishedJobs.portalJobId, spec.portalJobId));
      if (done) {
        if (done.clusterId !== clusterId) {
          throw new SimulatedSchedulerInputError(`simulated scheduler: job id "${spec.portalJobId}" was already used on cluster "${done.clusterId}"`);
        }
        return { schedulerJobId: (done.status as StoredStatus).schedulerJobId };
      }
      try {
        engine.submit(jobSpecFor(spec, engine.nowSeconds));
      } catch (error) {
        if (error instanceof SimInputError) {
          throw new SimulatedSchedulerInputError(`simulated scheduler rejected the job: ${error.message}`, { cause: error });
        }
        throw error;
      }
      loaded.seqById.set(spec.portalJobId, loaded.nextSeq);
      loaded.nextSeq += 1;
      engine.advanceTo(engine.nowSeconds); // schedule at once: the job starts now if it fits
      return { schedulerJobId: schedulerJobIdOf(loaded, spec.portalJobId) };
    });
  }

  async function cancel(portalJobId: string): Promise<void> {
    await withCluster(({ loaded: { engine } }) => {
      const view = engine.job(portalJobId);
      if (!view || (view.state !== 'PENDING' && view.state !== 'RUNNING')) return;
      engine.cancel(portalJobId);
      engine.advanceTo(engine.nowSeconds); // the freed GPUs go to waiting jobs now
    });
  }

  async function jobs(portalJobIds: string[]): Promise<SchedulerJobStatus[]> {
    const ids = [...new Set(portalJobIds)];
    if (ids.length === 0) return [];
    return withCluster(async ({ tx, loaded, clock }) => {
      const found = new Map<string, SchedulerJobStatus>();
      const missing: string[] = [];
      for (const id of ids) {
        const view = loaded.engine.job(id);
        if (view) found.set(id, statusOf(view, loaded, clock));
        else missing.push(id);
      }
      if (missing.length > 0) {
        const rows = await tx
          .select({ portalJobId: simFinishedJobs.portalJobId, status: simFinishedJobs.status })
          .from(simFinishedJobs)
          .where(and(eq(simFinishedJobs.clusterId, clusterId), inArray(simFinishedJobs.portalJobId, missing)));
        for (const row of rows) found.set(row.portalJobId, fromStored(row.status as StoredStatus));
      }
      return ids.flatMap((id) => {
        const status = found.get(id);
        return status ? [status] : [];
      });
    });
  }

  async function describeCluster(): Promise<ClusterDescription> {
    return withCluster(({ now, loaded }) => {
      const view = loaded.engine.snapshot();
      return {
        at: now,
        partitions: loaded.config.cluster.partitions.map((p) => ({
          name: p.name,
          siteId: p.siteId,
          gpuModel: p.gpuModel,
          nodes: p.nodes,
          gpusPerNode: p.gpusPerNode,
          maxWalltimeSeconds: p.maxWalltimeSeconds,
        })),
        nodes: view.nodes.map((n) => ({ name: n.id, partition: n.partition, state: n.state, gpus: n.gpus, allocatedGpus: n.allocatedGpus, powerW: n.powerW })),
        pendingJobs: view.pendingJobs,
        runningJobs: view.runningJobs,
        powerW: view.totalPowerW,
      };
    });
  }

  async function advance(): Promise<void> {
    await withCluster(() => undefined);
  }

  return { clusterId, submit, cancel, jobs, describeCluster, advance };
}
