// The simulated scheduler adapter: the SchedulerPort on top of the discrete-event cluster engine
// (server/core/sim), shared by every process of the portal through the database, and resumed
// exactly after a restart (a kill included).
//
// Storage is an append-only operations log plus snapshots, and each process keeps the engine in
// memory and moves it forward incrementally:
// - `sim_cluster_state`: one small row per cluster (op seq, the simulated-time high-water mark,
//   the clock anchors, a call counter), locked by every call of every process;
// - `sim_cluster_ops`: every submit, cancel and extend that changed the engine, with its simulated time;
// - `sim_cluster_snapshots`: the serialised engine after some op seq, written by `checkpoint()`
//   off the request path;
// - `sim_finished_jobs`: ended jobs, moved out of the engine so it only holds queued and running ones.
//   A job array is one engine array (its tasks are engine jobs `${portalJobId}_${index}`), reported as
//   one status by summariseArray and retired as one row with its tasks once its last task ended.
//
// A call runs in one transaction: lock the row; bring this process's engine up to it (apply the
// ops other processes logged since its seq, or rebuild it from the latest snapshot + the ops after
// it); advance it to t = max(row's sim now, clock(now)); apply the call; log the op if it changed
// anything; retire the jobs that ended; update the row. Ops are therefore in non-decreasing
// simulated time, and since the engine's results do not depend on where `advanceTo` stops or on a
// serialise/restore in between, replaying the log from any snapshot gives the engine every live
// process has. No call reads or writes anything whose size grows with the jobs held.
//
// The calls waiting in one process share a transaction (group commit): one lock, one write and one
// commit for all of them, each still planned and applied in arrival order, as if they had come one
// after another at the same instant. Under load that is what keeps the lock short per call.
//
// Live mode: simulated time = simAnchorSeconds + (now − wallAnchor) × speed. The machine, policy,
// queue depth, seed and failure model are fixed when the cluster is first created (its first
// snapshot); later instances continue it and their `cluster`, `policy`, `queueDepth`, `seed` and
// `nodeFailures` options only apply to a new cluster. A different `speed` re-anchors the clock, so
// time never jumps.
import { followSimulatedServices } from './simulated-services';
import { followSimulatedSessions } from './simulated-sessions';
import { and, desc, eq, gt, inArray, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '~/db/client';
import { simClusterOps, simClusterSnapshots, simClusterState, simFinishedJobs } from '~/db/schema';
import { RUNS_UNTIL_STOPPED_SECONDS } from '~/server/core/jobs/estimates';
import { summariseArray } from '~/server/core/scheduler/array-status';
import { SchedulerRefusedError, type ClusterDescription, type OutputJob, type SchedulerJobSpec, type SchedulerJobStatus, type SchedulerPort, type SchedulerTaskStatus } from '~/server/core/scheduler/port';
import { writeSimulatedOutput } from './simulated-output';
import {
  createEngine,
  policyFromName,
  restoreEngineJson,
  SimInputError,
  type ClusterConfig,
  type ClusterEngine,
  type JobSpec,
  type JobView,
  type NodeFailureConfig,
  type Partition,
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
  /** Most pending jobs of one partition a scheduling cycle reads (Slurm's partition_job_depth); default 100. */
  queueDepth?: number;
  /** Random node failures (exponential between failures per node, fixed repair); default none. */
  nodeFailures?: NodeFailureConfig | null;
  /** `checkpoint()` writes a snapshot once this many ops were logged since the last one; default 1,000. */
  checkpointEveryOps?: number;
  /** …or once this much wall time has passed since the last one, if any op was logged; default 5 minutes. */
  checkpointEveryMs?: number;
}

/** The simulated scheduler: the port, plus `advance()` and `checkpoint()` for the worker. */
export type SimulatedScheduler = SchedulerPort & {
  clusterId: string;
  /** advance brings the simulated cluster up to the current time (jobs start and end) and persists it. */
  advance(): Promise<void>;
  /**
   * checkpoint writes a snapshot of this process's engine when one is due and deletes what no
   * rebuild needs any more (ops and snapshots older than the previous snapshot); it returns the
   * snapshot's op seq, or null when none was due. The worker calls it every round.
   */
  checkpoint(): Promise<{ seq: number } | null>;
};

/** SimulatedSchedulerInputError is a job the simulated cluster cannot run (unknown partition, too many GPUs per node, …). */
export class SimulatedSchedulerInputError extends Error {
  override name = 'SimulatedSchedulerInputError';
}

const DEFAULT_CLUSTER_ID = 'default';
const DEFAULT_SEED = 42;
/** The live queue depth: a cycle reads at most this many pending jobs per partition (also set on old clusters by migration 0012). */
const LIVE_QUEUE_DEPTH = 100;
const DEFAULT_CHECKPOINT_EVERY_OPS = 1000;
const DEFAULT_CHECKPOINT_EVERY_MS = 5 * 60_000;
const MS_PER_SECOND = 1000;
/** Ids per `sim_finished_jobs` lookup, well below Postgres's limit of bind parameters. */
const IDS_PER_QUERY = 5000;
/** A rebuild that finds the log pruned under it (a checkpoint in between) reads the newer snapshot. */
const REBUILD_ATTEMPTS = 3;
/** Most calls in one transaction: bounds how long a batch holds the cluster's lock. */
const MAX_BATCH = 32;

/** The linear map between wall-clock and simulated time. */
interface SimClock {
  wallAnchorMs: number;
  simAnchorSeconds: number;
  speed: number;
}

/**
 * This process's engine: the cluster after op `opSeq`, at a simulated time no later than one a
 * call committed. Outside a call it always equals a committed state (a call that fails after
 * changing it drops it), so `checkpoint` may write it as it is.
 */
interface LiveEngine {
  engine: ClusterEngine;
  opSeq: number;
  partitions: readonly Partition[];
}

/** What changed the engine besides the passing of time: the one code path for live calls and replay. */
/** A cancel with `stop` ends a running job as if it had ended on its own (engine.stop); logged as a cancel, with the flag in its payload. */
/** An extend raises a job's time limit (engine.extend). */
type SimOp =
  | { kind: 'submit'; atSeconds: number; job: JobSpec }
  | { kind: 'cancel'; atSeconds: number; jobId: string; stop?: true }
  | { kind: 'extend'; atSeconds: number; jobId: string; walltimeLimitSeconds: number };

/** The locked row, without anything large. */
interface StateRow {
  version: number;
  opSeq: number;
  simNowSeconds: number;
  wallAnchor: Date;
  simAnchorSeconds: number;
  speed: number;
}

/** A finished job as `sim_finished_jobs` holds it. */
interface FinishedRow {
  clusterId: string;
  status: StoredStatus;
}

/** What a call sees once the engine is up to date, before it moves: the simulated time it will run at. */
interface PlanContext {
  engine: ClusterEngine;
  /** The cluster's partitions (their longest time limits). */
  partitions: readonly Partition[];
  atSeconds: number;
  /** The clock the call runs under (to turn wall-clock times such as `begin` into simulated seconds). */
  clock: SimClock;
  /** The job the call asked to look up in `sim_finished_jobs` (read under the lock), if it is there. */
  finished: FinishedRow | undefined;
  /** Every job the call asked to look up that is there (a submit's own id and the jobs it depends on). */
  finishedAll: ReadonlyMap<string, FinishedRow>;
}

/** What a call sees once the engine has been advanced to its time. */
interface ApplyContext {
  live: LiveEngine;
  /** The clock the call runs under (after a re-anchor, the new one). */
  clock: SimClock;
  now: Date;
}

/**
 * What a call does once the engine has been advanced: the op it applied, if any, and its value,
 * read after the commit (so a large read does not hold the row lock) and before the next batch.
 */
type Apply<T> = (context: ApplyContext) => { op?: SimOp; value: () => T };

/**
 * A call's plan, run under the lock on the up-to-date engine before it moves: it may refuse the
 * call by throwing (nothing changes), or return what to do once the engine is advanced.
 */
type Plan<T> = (context: PlanContext) => Apply<T>;

/** A call waiting for its turn: the plan, the finished job it wants looked up, and its promise. */
interface Queued {
  plan: Plan<unknown>;
  /** The jobs to look up in `sim_finished_jobs`; the first is the call's own (`finished`). */
  finishedIds?: string[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** A task of a finished job array as stored (dates as ISO strings). */
type StoredTask = Omit<SchedulerTaskStatus, 'startedAt' | 'endedAt'> & { startedAt: string | null; endedAt: string | null };

/** A finished job's status as stored in `sim_finished_jobs.status` (dates as ISO strings; rows retired before signals were kept have none). */
type StoredStatus = Omit<SchedulerJobStatus, 'startedAt' | 'endedAt' | 'signal' | 'tasks'> & { startedAt: string | null; endedAt: string | null; signal?: number | null; tasks?: StoredTask[] };

function simSecondsAt(clock: SimClock, wallMs: number): number {
  return clock.simAnchorSeconds + Math.floor(((wallMs - clock.wallAnchorMs) * clock.speed) / MS_PER_SECOND);
}

// Rounded up, so the simulated time maps back (wallDateAt) to no earlier than the wall-clock time.
function simSecondsNotBefore(clock: SimClock, wallMs: number): number {
  return clock.simAnchorSeconds + Math.ceil(((wallMs - clock.wallAnchorMs) * clock.speed) / MS_PER_SECOND);
}

function wallDateAt(clock: SimClock, simSeconds: number): Date {
  return new Date(clock.wallAnchorMs + Math.round(((simSeconds - clock.simAnchorSeconds) * MS_PER_SECOND) / clock.speed));
}

function schedulerJobIdOf(view: JobView): string {
  return `sim-${view.seq + 1}`;
}

/** A task of a job array as the port reports it; its scheduler id is the array's and its index (Slurm's `1234_7`). */
function taskStatusOf(view: JobView, index: number, arrayJobId: string, nowSeconds: number, clock: SimClock): SchedulerTaskStatus {
  return { index, schedulerJobId: `${arrayJobId}_${index}`, ...figuresOf(view, nowSeconds, clock) };
}

/** What a job (or a task) reports of its run: its state, times, exit, nodes, GPU time so far and energy. */
function figuresOf(view: JobView, nowSeconds: number, clock: SimClock): Omit<SchedulerTaskStatus, 'index' | 'schedulerJobId'> {
  const start = view.startTimeSeconds;
  const end = view.endTimeSeconds;
  return {
    state: view.state,
    startedAt: start === null ? null : wallDateAt(clock, start),
    endedAt: end === null ? null : wallDateAt(clock, end),
    exitCode: view.exitCode,
    signal: view.signal,
    nodeList: [...view.nodeList],
    gpuSeconds: start === null ? 0 : view.gpus * ((end ?? nowSeconds) - start),
    energyWh: view.energyWh ?? 0,
  };
}

function statusOf(view: JobView, live: LiveEngine, clock: SimClock): SchedulerJobStatus {
  const nowSeconds = live.engine.nowSeconds;
  const partition = live.partitions.find((p) => p.name === view.partition);
  if (view.array) {
    // An array reads as its tasks say, by the one rule both schedulers use.
    const schedulerJobId = schedulerJobIdOf(view);
    return summariseArray({
      portalJobId: view.id,
      schedulerJobId,
      tasks: view.array.tasks.map((task) => taskStatusOf(task, task.arrayTask?.index ?? 0, schedulerJobId, nowSeconds, clock)),
      waiting: view.array.waiting,
      neverRan: view.array.neverRan,
      pendingReason: view.array.waiting > 0 ? (view.array.waitingReason ?? 'None') : null,
      energyMeasured: false,
      siteId: partition?.siteId ?? null,
    });
  }
  return {
    portalJobId: view.id,
    schedulerJobId: schedulerJobIdOf(view),
    ...figuresOf(view, nowSeconds, clock),
    pendingReason: view.state === 'PENDING' ? (view.pendingReason ?? 'None') : null,
    energyMeasured: false,
    siteId: partition?.siteId ?? null,
  };
}

function toStored(status: SchedulerJobStatus): StoredStatus {
  const { tasks, ...rest } = status;
  return {
    ...rest,
    startedAt: status.startedAt?.toISOString() ?? null,
    endedAt: status.endedAt?.toISOString() ?? null,
    ...(tasks ? { tasks: tasks.map((t) => ({ ...t, startedAt: t.startedAt?.toISOString() ?? null, endedAt: t.endedAt?.toISOString() ?? null })) } : {}),
  };
}

function fromStored(stored: StoredStatus): SchedulerJobStatus {
  const { tasks, ...rest } = stored;
  return {
    ...rest,
    signal: stored.signal ?? null,
    startedAt: stored.startedAt === null ? null : new Date(stored.startedAt),
    endedAt: stored.endedAt === null ? null : new Date(stored.endedAt),
    ...(tasks ? { tasks: tasks.map((t) => ({ ...t, startedAt: t.startedAt === null ? null : new Date(t.startedAt), endedAt: t.endedAt === null ? null : new Date(t.endedAt) })) } : {}),
  };
}

function jobSpecFor(spec: SchedulerJobSpec, submitTimeSeconds: number, clock: SimClock, ended: Record<string, string> = {}): JobSpec {
  // Without simulation details a job runs as a service does: until it is stopped or its time limit ends it.
  const sim = spec.simulation ?? { runtimeSeconds: RUNS_UNTIL_STOPPED_SECONDS, gpuUtilPercent: 90, exitCode: 0 };
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
    ...(spec.begin ? { beginTimeSeconds: Math.max(0, simSecondsNotBefore(clock, spec.begin.getTime())) } : {}),
    // The engine's job ids are the portal's.
    ...(spec.dependency ? { dependency: { type: spec.dependency.type, jobIds: spec.dependency.portalJobIds, ...(Object.keys(ended).length ? { ended } : {}) } } : {}),
    // One engine array: its tasks are jobs of the engine (`${portalJobId}_${index}`), none of the portal's.
    ...(spec.array ? { array: { text: spec.array.text } } : {}),
  };
}

/** Applies an op at its time and schedules at once (a new job starts now if it fits; freed GPUs go to waiting jobs). */
function applyOp(engine: ClusterEngine, op: SimOp): void {
  engine.advanceTo(op.atSeconds);
  if (op.kind === 'submit') engine.submit(op.job);
  // Only extends and cancels that changed a job are logged: one that does not means the log and the engine disagree.
  else if (op.kind === 'extend') {
    if (!engine.extend(op.jobId, op.walltimeLimitSeconds)) throw new Error(`simulated scheduler: logged extend of "${op.jobId}" found it already ended`);
  } else if (!(op.stop ? engine.stop(op.jobId) : engine.cancel(op.jobId))) throw new Error(`simulated scheduler: logged cancel of "${op.jobId}" found it already ended`);
  engine.advanceTo(op.atSeconds);
}

function opRow(clusterId: string, seq: number, op: SimOp): typeof simClusterOps.$inferInsert {
  const payload = op.kind === 'submit' ? op.job : op.kind === 'extend' ? { jobId: op.jobId, walltimeLimitSeconds: op.walltimeLimitSeconds } : op.stop ? { jobId: op.jobId, stop: true } : { jobId: op.jobId };
  return { clusterId, seq, atSeconds: op.atSeconds, kind: op.kind, payload };
}

function opFromRow(row: { atSeconds: number; kind: SimOp['kind']; payload: unknown }): SimOp {
  if (row.kind === 'extend') {
    const payload = row.payload as { jobId: string; walltimeLimitSeconds: number };
    return { kind: 'extend', atSeconds: row.atSeconds, jobId: payload.jobId, walltimeLimitSeconds: payload.walltimeLimitSeconds };
  }
  return row.kind === 'submit'
    ? { kind: 'submit', atSeconds: row.atSeconds, job: row.payload as JobSpec }
    : { kind: 'cancel', atSeconds: row.atSeconds, jobId: (row.payload as { jobId: string }).jobId, ...((row.payload as { stop?: boolean }).stop ? { stop: true as const } : {}) };
}

/** createSimulatedScheduler returns the SchedulerPort of a simulated cluster persisted in the database (live mode at `speed`). */
export function createSimulatedScheduler(options: SimulatedSchedulerOptions): SimulatedScheduler {
  const { db, speed } = options;
  const clusterId = options.clusterId ?? DEFAULT_CLUSTER_ID;
  const checkpointEveryOps = options.checkpointEveryOps ?? DEFAULT_CHECKPOINT_EVERY_OPS;
  const checkpointEveryMs = options.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS;
  if (!Number.isSafeInteger(speed) || speed < 1) throw new Error(`simulated scheduler: speed must be a whole number ≥ 1 (got ${speed})`);
  if (clusterId === '') throw new Error('simulated scheduler: clusterId must not be empty');
  if (!Number.isSafeInteger(checkpointEveryOps) || checkpointEveryOps < 1) throw new Error('simulated scheduler: checkpointEveryOps must be a whole number ≥ 1');

  let live: LiveEngine | null = null;
  // One thing at a time touches the engine: a batch of calls, or a checkpoint taking its state.
  let tail: Promise<unknown> = Promise.resolve();
  let waiting: Queued[] = [];
  let drainScheduled = false;

  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = tail.then(fn);
    tail = run.catch(() => undefined);
    return run;
  }

  /** Queues a call; the calls that gather while the previous batch runs go in the next one. */
  function enqueue<T>(plan: Plan<T>, finishedIds?: string[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      waiting.push({ plan, ...(finishedIds ? { finishedIds } : {}), resolve: resolve as (value: unknown) => void, reject });
      if (!drainScheduled) {
        drainScheduled = true;
        void exclusive(drain);
      }
    });
  }

  async function drain(): Promise<void> {
    drainScheduled = false;
    const batch = waiting.slice(0, MAX_BATCH);
    waiting = waiting.slice(batch.length);
    if (batch.length > 0) await runBatch(batch);
    if (waiting.length > 0 && !drainScheduled) {
      drainScheduled = true;
      void exclusive(drain);
    }
  }

  function newEngine(): ClusterEngine {
    return createEngine({
      cluster: options.cluster,
      policy: policyFromName(options.policy ?? 'multifactor', { queueDepth: options.queueDepth ?? LIVE_QUEUE_DEPTH }),
      nodeFailures: options.nodeFailures ?? null,
      seed: options.seed ?? DEFAULT_SEED,
      startTimeSeconds: 0,
    });
  }

  /** The latest snapshot (at or before op `atMostSeq`) restored, or null when the cluster has none. */
  async function loadSnapshot(q: Db | Tx, atMostSeq?: number): Promise<LiveEngine | null> {
    const [snapshot] = await q
      .select({
        seq: simClusterSnapshots.seq,
        // As text: parsed once here, rather than by the driver and then copied by restoreEngine.
        state: sql<string>`${simClusterSnapshots.state}::text`,
        partitions: sql<string>`(${simClusterSnapshots.state} -> 'config' -> 'cluster' -> 'partitions')::text`,
      })
      .from(simClusterSnapshots)
      .where(and(eq(simClusterSnapshots.clusterId, clusterId), atMostSeq === undefined ? undefined : lte(simClusterSnapshots.seq, atMostSeq)))
      .orderBy(desc(simClusterSnapshots.seq))
      .limit(1);
    if (!snapshot) return null;
    return { engine: restoreEngineJson(snapshot.state), opSeq: snapshot.seq, partitions: JSON.parse(snapshot.partitions) as Partition[] };
  }

  const rowColumns = {
    version: simClusterState.version,
    opSeq: simClusterState.opSeq,
    simNowSeconds: simClusterState.simNowSeconds,
    wallAnchor: simClusterState.wallAnchor,
    simAnchorSeconds: simClusterState.simAnchorSeconds,
    speed: simClusterState.speed,
  };

  async function lockRow(tx: Tx): Promise<StateRow | undefined> {
    const [row] = await tx.select(rowColumns).from(simClusterState).where(eq(simClusterState.id, clusterId)).for('update');
    return row;
  }

  /** Creates the cluster (row, first snapshot and this process's engine), unless another process just did; returns the locked row. */
  async function create(tx: Tx, now: Date): Promise<{ row: StateRow; created: boolean }> {
    const engine = newEngine();
    const created: StateRow = { version: 0, opSeq: 0, simNowSeconds: engine.nowSeconds, wallAnchor: now, simAnchorSeconds: engine.nowSeconds, speed };
    const inserted = await tx
      .insert(simClusterState)
      .values({ id: clusterId, ...created, updatedAt: now })
      .onConflictDoNothing()
      .returning({ id: simClusterState.id });
    if (inserted.length > 0) {
      // Leftovers of a cluster of this name whose row was deleted must not be replayed into this one.
      await tx.delete(simClusterOps).where(eq(simClusterOps.clusterId, clusterId));
      await tx.delete(simClusterSnapshots).where(eq(simClusterSnapshots.clusterId, clusterId));
      await tx.insert(simClusterSnapshots).values({ clusterId, seq: 0, state: sql`${engine.serializeJson()}::jsonb`, simSeconds: engine.nowSeconds, createdAt: now });
      live = { engine, opSeq: 0, partitions: options.cluster.partitions };
      return { row: created, created: true };
    }
    const raced = await lockRow(tx); // another process created it first
    if (!raced) throw new Error(`simulated scheduler: cannot create the state of cluster "${clusterId}"`);
    return { row: raced, created: false };
  }

  type OpRow = SimOp & { seq: number };

  /** The ops after `afterSeq` in order (up to `toSeq` when given). */
  async function readOps(tx: Tx, afterSeq: number, toSeq?: number): Promise<OpRow[]> {
    const rows = await tx
      .select({ seq: simClusterOps.seq, atSeconds: simClusterOps.atSeconds, kind: simClusterOps.kind, payload: simClusterOps.payload })
      .from(simClusterOps)
      .where(and(eq(simClusterOps.clusterId, clusterId), gt(simClusterOps.seq, afterSeq), toSeq === undefined ? undefined : lte(simClusterOps.seq, toSeq)))
      .orderBy(simClusterOps.seq);
    return rows.map((row) => ({ ...opFromRow(row), seq: row.seq }));
  }

  /** Whether `ops` are exactly the ops afterSeq + 1 … toSeq (none pruned by a checkpoint). */
  function complete(ops: readonly OpRow[], afterSeq: number, toSeq: number): boolean {
    return ops.length === toSeq - afterSeq && (ops.length === 0 || ops[ops.length - 1]!.seq === toSeq);
  }

  /** Rebuilds the engine under the lock from the latest snapshot at or before the row's op seq and the ops after it. */
  async function rebuild(tx: Tx, row: StateRow): Promise<LiveEngine> {
    for (let attempt = 1; ; attempt++) {
      const rebuilt = await loadSnapshot(tx, row.opSeq);
      if (!rebuilt) throw new Error(`simulated scheduler: cluster "${clusterId}" has no snapshot to rebuild its engine from`);
      const ops = await readOps(tx, rebuilt.opSeq, row.opSeq);
      if (!complete(ops, rebuilt.opSeq, row.opSeq)) {
        if (attempt < REBUILD_ATTEMPTS) continue;
        throw new Error(`simulated scheduler: ops ${rebuilt.opSeq + 1}…${row.opSeq} of cluster "${clusterId}" are missing`);
      }
      for (const op of ops) {
        applyOp(rebuilt.engine, op);
        rebuilt.opSeq = op.seq;
      }
      return rebuilt;
    }
  }

  /** Brings this process's engine up to the committed state of the locked row, given the ops logged after its seq. */
  async function sync(tx: Tx, row: StateRow, opsAfterLive: readonly OpRow[] | null): Promise<LiveEngine> {
    let current = live;
    if (current && current.opSeq < row.opSeq) {
      if (opsAfterLive && complete(opsAfterLive, current.opSeq, row.opSeq)) {
        for (const op of opsAfterLive) {
          applyOp(current.engine, op);
          current.opSeq = op.seq;
        }
      } else current = null;
    }
    if (!current || current.opSeq !== row.opSeq) current = await rebuild(tx, row);
    live = current;
    const { engine } = current;
    if (engine.nowSeconds < row.simNowSeconds) engine.advanceTo(row.simNowSeconds);
    // Every job that has ended by the row's time was retired (written to sim_finished_jobs) by the
    // call that committed that time, so the engine drops them without writing them again.
    engine.pruneFinished(engine.nowSeconds + 1);
    return current;
  }

  /** Takes the jobs that have ended out of the engine (cost: the jobs that ended), as sim_finished_jobs rows. */
  function retire(current: LiveEngine, clock: SimClock): (typeof simFinishedJobs.$inferInsert)[] {
    const ended = current.engine.endedJobs();
    if (ended.length === 0) return [];
    const rows = ended.map((view) => {
      const status = statusOf(view, current, clock);
      return { portalJobId: view.id, clusterId, status: toStored(status), finishedAt: status.endedAt ?? wallDateAt(clock, current.engine.nowSeconds) };
    });
    current.engine.pruneFinished(current.engine.nowSeconds + 1);
    return rows;
  }

  /**
   * Runs a batch of calls in one transaction on the locked, up-to-date and advanced cluster. Under
   * the lock that is three round trips: the lock (pipelined with the reads of the ops other
   * processes logged and of the finished jobs the calls ask for), one statement writing the ops,
   * the retired jobs and the row, and the commit. A call whose plan refuses fails alone and
   * changes nothing; any other failure fails the whole batch and drops this process's engine
   * (once it has moved), so a half-applied one never survives.
   */
  async function runBatch(batch: Queued[]): Promise<void> {
    const outcomes = new Map<Queued, { value: () => unknown } | { error: unknown }>();
    let changing = true;
    try {
      // A process without an engine restores the latest snapshot before taking the lock (it is a
      // committed state), so the lock is held only to catch up on the ops logged after it.
      if (live === null) live = await loadSnapshot(db);
      await db.transaction(async (tx) => {
        const now = options.now();
        const known = live;
        const finishedIds = [...new Set(batch.flatMap((q) => q.finishedIds ?? []))];
        const [locked, opsAfterLive, finishedRows] = await Promise.all([
          lockRow(tx),
          known ? readOps(tx, known.opSeq) : null,
          finishedIds.length === 0
            ? []
            : tx
                .select({ portalJobId: simFinishedJobs.portalJobId, clusterId: simFinishedJobs.clusterId, status: simFinishedJobs.status })
                .from(simFinishedJobs)
                .where(inArray(simFinishedJobs.portalJobId, finishedIds)),
        ]);
        const finished = new Map(finishedRows.map((r) => [r.portalJobId, { clusterId: r.clusterId, status: r.status as StoredStatus }]));
        const { row, created } = locked ? { row: locked, created: false } : await create(tx, now);
        const current = await sync(tx, row, live === known ? opsAfterLive : null);
        // The engine now equals a committed state, unless this transaction is the one creating the cluster.
        changing = created;

        const { engine } = current;
        const stored: SimClock = { wallAnchorMs: row.wallAnchor.getTime(), simAnchorSeconds: row.simAnchorSeconds, speed: row.speed };
        const atSeconds = Math.max(row.simNowSeconds, engine.nowSeconds, simSecondsAt(stored, now.getTime()));
        const clock: SimClock = stored.speed === speed ? stored : { wallAnchorMs: now.getTime(), simAnchorSeconds: atSeconds, speed };
        const applies: [Queued, Apply<unknown>][] = [];
        for (const q of batch) {
          try {
            const own = q.finishedIds?.[0];
            applies.push([q, q.plan({ engine, partitions: current.partitions, atSeconds, clock, finished: own === undefined ? undefined : finished.get(own), finishedAll: finished })]);
          } catch (error) {
            outcomes.set(q, { error });
          }
        }
        if (applies.length === 0) return; // every call refused: nothing moves, nothing is written

        changing = true;
        engine.advanceTo(atSeconds);
        // Jobs that ended before a re-anchor get their wall-clock times from the clock they ran under.
        const retired = clock === stored ? [] : retire(current, stored);
        let opSeq = row.opSeq;
        const ops: (typeof simClusterOps.$inferInsert)[] = [];
        for (const [q, apply] of applies) {
          const { value, op } = apply({ live: current, clock, now });
          if (op) ops.push(opRow(clusterId, ++opSeq, op));
          outcomes.set(q, { value });
        }
        retired.push(...retire(current, clock));
        const writes: SQL[] = [];
        if (ops.length > 0) writes.push(sql`ops as (${tx.insert(simClusterOps).values(ops).getSQL()})`);
        if (retired.length > 0) writes.push(sql`retired as (${tx.insert(simFinishedJobs).values(retired).onConflictDoNothing().getSQL()})`);
        const update = tx
          .update(simClusterState)
          .set({
            version: row.version + applies.length,
            opSeq,
            simNowSeconds: atSeconds,
            wallAnchor: new Date(clock.wallAnchorMs),
            simAnchorSeconds: clock.simAnchorSeconds,
            speed: clock.speed,
            updatedAt: now,
          })
          .where(eq(simClusterState.id, clusterId));
        await tx.execute(writes.length > 0 ? sql`with ${sql.join(writes, sql`, `)} ${update.getSQL()}` : update.getSQL());
        current.opSeq = opSeq;
      });
    } catch (error) {
      if (changing) live = null;
      for (const q of batch) if (!outcomes.has(q) || 'value' in outcomes.get(q)!) outcomes.set(q, { error }); // refusals keep their own error
    }
    for (const q of batch) {
      const outcome = outcomes.get(q)!;
      if ('error' in outcome) q.reject(outcome.error);
      else {
        try {
          q.resolve(outcome.value());
        } catch (error) {
          q.reject(error);
        }
      }
    }
  }

  /** A plan that only advances the cluster. */
  const advanceOnly: Plan<undefined> = () => () => ({ value: () => undefined });

  async function submit(spec: SchedulerJobSpec): Promise<{ schedulerJobId: string }> {
    const id = spec.portalJobId;
    return enqueue<{ schedulerJobId: string }>(({ engine, atSeconds, clock, finished, finishedAll }) => {
      const held = engine.job(id);
      if (held) return () => ({ value: () => ({ schedulerJobId: schedulerJobIdOf(held) }) });
      // Not in the engine and not new: it ended and was retired before this call took the lock.
      if (finished) {
        if (finished.clusterId !== clusterId) {
          throw new SimulatedSchedulerInputError(`simulated scheduler: job id "${id}" was already used on cluster "${finished.clusterId}"`);
        }
        return () => ({ value: () => ({ schedulerJobId: finished.status.schedulerJobId }) });
      }
      // Jobs it depends on that ended and were retired from the engine by an earlier call: their end decides.
      const ended = Object.fromEntries(
        (spec.dependency?.portalJobIds ?? []).flatMap((parent) => {
          const row = engine.job(parent) ? undefined : finishedAll.get(parent);
          return row && row.clusterId === clusterId ? [[parent, row.status.state]] : [];
        }),
      );
      const job = jobSpecFor(spec, atSeconds, clock, ended);
      try {
        engine.validate(job);
      } catch (error) {
        if (error instanceof SimInputError) throw new SimulatedSchedulerInputError(`simulated scheduler rejected the job: ${error.message}`, { cause: error });
        throw error;
      }
      return () => {
        // The same id may have been submitted by an earlier call of this batch.
        const again = engine.job(id);
        if (again) return { value: () => ({ schedulerJobId: schedulerJobIdOf(again) }) };
        const op: SimOp = { kind: 'submit', atSeconds, job };
        applyOp(engine, op);
        const schedulerJobId = schedulerJobIdOf(engine.job(id)!);
        return { op, value: () => ({ schedulerJobId }) };
      };
    }, [id, ...(spec.dependency?.portalJobIds ?? [])]);
  }

  async function cancel(portalJobId: string, options?: { stop?: boolean }): Promise<void> {
    // Decided once the engine has moved: the job may have ended on its own on the way.
    await enqueue<undefined>(({ engine, atSeconds }) => () => {
      const view = engine.job(portalJobId);
      if (!view || (view.state !== 'PENDING' && view.state !== 'RUNNING')) return { value: () => undefined };
      const op: SimOp = { kind: 'cancel', atSeconds, jobId: portalJobId, ...(options?.stop ? { stop: true as const } : {}) };
      applyOp(engine, op);
      return { op, value: () => undefined };
    });
  }

  async function extendTimeLimit(portalJobId: string, walltimeSeconds: number): Promise<boolean> {
    // Refused before the engine moves (a limit the partition does not allow, an array); decided once it has
    // moved, as a cancel is: the job may have ended on its own on the way (false).
    return enqueue<boolean>(({ engine, partitions, atSeconds }) => {
      const view = engine.job(portalJobId);
      if (view?.array) throw new SchedulerRefusedError('the time limit of a job array is not extended', 'other');
      const max = view ? partitions.find((p) => p.name === view.partition)?.maxWalltimeSeconds : undefined;
      if (!Number.isSafeInteger(walltimeSeconds) || (max !== undefined && walltimeSeconds > max)) {
        throw new SchedulerRefusedError(`time limit ${walltimeSeconds} s is over the partition's ${max ?? '?'} s`, 'limit');
      }
      return () => {
        const now = engine.job(portalJobId);
        if (!now || (now.state !== 'PENDING' && now.state !== 'RUNNING')) return { value: () => false };
        // Asked again (a retry): it holds already. A lower limit is no extension.
        if (walltimeSeconds === now.walltimeLimitSeconds) return { value: () => true };
        if (walltimeSeconds < now.walltimeLimitSeconds) {
          const held = now.walltimeLimitSeconds;
          return {
            value: () => {
              throw new SchedulerRefusedError(`time limit ${walltimeSeconds} s is below the job's ${held} s`, 'limit');
            },
          };
        }
        const op: SimOp = { kind: 'extend', atSeconds, jobId: portalJobId, walltimeLimitSeconds: walltimeSeconds };
        applyOp(engine, op);
        return { op, value: () => true };
      };
    });
  }

  async function jobs(portalJobIds: string[]): Promise<SchedulerJobStatus[]> {
    const ids = [...new Set(portalJobIds)];
    if (ids.length === 0) return [];
    const { found, missing } = await enqueue(() => ({ live: current, clock }) => ({
      value: () => {
        const statuses = new Map<string, SchedulerJobStatus>();
        const notHeld: string[] = [];
        for (const id of ids) {
          const view = current.engine.job(id);
          if (view) statuses.set(id, statusOf(view, current, clock));
          else notHeld.push(id);
        }
        return { found: statuses, missing: notHeld };
      },
    }));
    // Jobs the engine no longer holds were retired, at the latest by this call's commit; their rows never change.
    for (let i = 0; i < missing.length; i += IDS_PER_QUERY) {
      const rows = await db
        .select({ portalJobId: simFinishedJobs.portalJobId, status: simFinishedJobs.status })
        .from(simFinishedJobs)
        .where(and(eq(simFinishedJobs.clusterId, clusterId), inArray(simFinishedJobs.portalJobId, missing.slice(i, i + IDS_PER_QUERY))));
      for (const row of rows) found.set(row.portalJobId, fromStored(row.status as StoredStatus));
    }
    return ids.flatMap((id) => {
      const status = found.get(id);
      return status ? [status] : [];
    });
  }

  async function describeCluster(): Promise<ClusterDescription> {
    return enqueue(() => ({ live: current, now }) => ({
      value: () => {
        const view = current.engine.clusterView();
        return {
          at: now,
          partitions: current.partitions.map((p) => ({
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
      },
    }));
  }

  async function advance(): Promise<void> {
    await enqueue(advanceOnly);
  }

  async function checkpoint(): Promise<{ seq: number } | null> {
    if (live === null) await advance(); // this process has no engine yet: build it
    const now = options.now();
    const [latest] = await db
      .select({ seq: simClusterSnapshots.seq, createdAt: simClusterSnapshots.createdAt })
      .from(simClusterSnapshots)
      .where(eq(simClusterSnapshots.clusterId, clusterId))
      .orderBy(desc(simClusterSnapshots.seq))
      .limit(1);
    // Taken between batches, so the state is one a call committed; written without the row lock.
    const taken = await exclusive(() => {
      const current = live;
      if (!current) return Promise.resolve(null);
      const since = current.opSeq - (latest?.seq ?? -1);
      const due = since >= checkpointEveryOps || (since > 0 && (!latest || now.getTime() - latest.createdAt.getTime() >= checkpointEveryMs));
      if (!due) return Promise.resolve(null);
      return Promise.resolve({ seq: current.opSeq, simSeconds: current.engine.nowSeconds, json: current.engine.serializeJson() });
    });
    if (!taken) return null;
    await db
      .insert(simClusterSnapshots)
      .values({ clusterId, seq: taken.seq, simSeconds: taken.simSeconds, state: sql`${taken.json}::jsonb`, createdAt: now })
      .onConflictDoNothing();
    // Keep the previous snapshot and the ops after it: a rebuild needs only the newest snapshot and
    // what follows, and one that read the previous snapshot just before this one landed still finds its ops.
    if (latest && latest.seq < taken.seq) {
      await db.delete(simClusterOps).where(and(eq(simClusterOps.clusterId, clusterId), lte(simClusterOps.seq, latest.seq)));
      await db.delete(simClusterSnapshots).where(and(eq(simClusterSnapshots.clusterId, clusterId), lt(simClusterSnapshots.seq, latest.seq)));
    }
    return { seq: taken.seq };
  }

  /** The jobs' output, written into their folders as they run (a real cluster's nodes write their own). */
  async function writeOutput(items: readonly { job: OutputJob; status: SchedulerJobStatus }[], now: Date): Promise<void> {
    // Sessions start and stop their app on this machine; the others get their simulated output.
    followSimulatedSessions(items);
    // Inference services run their model server here too (issue #29).
    followSimulatedServices(items);
    // A few at a time: a round may follow thousands of jobs.
    for (let i = 0; i < items.length; i += 16) {
      await Promise.all(items.slice(i, i + 16).map(({ job, status }) => (job.kind === 'interactive' ? Promise.resolve() : writeSimulatedOutput({ ...job, kind: job.kind }, status, now, { speed }))));
    }
  }

  // Sessions run on this machine, whichever simulated node the job was given (issue #28).
  const sessionAddress = () => Promise.resolve('127.0.0.1');
  return { clusterId, submit, cancel, extendTimeLimit, jobs, describeCluster, advance, checkpoint, writeOutput, sessionAddress, clockSpeed: speed };
}
