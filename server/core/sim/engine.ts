/**
 * The general discrete-event engine for the GPU cluster (node-level placement,
 * Slurm-like states, quotas, fair share, node failures, energy). It serves two
 * drivers: replay (`runToCompletion`) and live/incremental (`submit`, `cancel`,
 * `advanceTo`, `snapshot`), and its whole state is plain JSON (`serialize` /
 * `restoreEngine`) so a persisted adapter can resume it after a restart.
 *
 * Within one instant: job ends, node repairs, node failures, arrivals, then ONE
 * scheduling cycle (`scheduleCycle`). Cycles run only at instants where
 * something happened. Fair-share usage is brought up to date only at such
 * instants (and on cancel), so splitting `advanceTo` calls or a
 * serialise/restore in between never changes results.
 *
 * Per-call cost in live use does not grow with the jobs held: jobs, the
 * pending queue and ended jobs are indexed (maps and insertion-ordered sets,
 * turned into the plain arrays of `EngineState` only by `serialize`), and with
 * `policy.queueDepth` a cycle reads only the head of each partition's queue. Nor does a cycle's cost
 * grow with the machine: the free GPUs, running jobs, quota counters and site draws a cycle reads are
 * kept in a `CycleState` changed at every start, end, failure, repair and time-limit change, and the
 * running GPUs per account and the fair-share factors are kept per instant.
 */
import { clusterGpuCount, nodeName, validateCluster } from './cluster';
import { runCycle, fairShareFactors, type CycleAccount, type CycleDecision, type CycleRequest } from './cycle';
import { CycleState } from './cycle-state';
import type { CyclePendingJob, CycleQueue } from './order';
import { jobEnergyWh, nodePowerCentiW, type GpuAllocation } from './energy';
import { capItCentiW, facilityPowerW, jobPowerCentiW, sitePueMilli } from './power';
import { SimInputError } from './errors';
import { EventKind, peekEvent, popEvent, pushEvent, type SimEvent } from './events';
import { accrual, accrueBy, accrueUsage, fairShareFactor } from './fairshare';
import { arrayEndState, arraySlots, arrayWindow, newArrayTasks, takeNextIndex, taskId, tasksWaiting, type ArrayTasks } from './array';
import { createRng, exponentialSeconds, type RngState } from './random';
import { dependencyHolds, type AccountLimits, type EngineConfig, type JobSpec, type JobState, type PendingReason } from './types';

/** A job as shown to callers. `endTimeSeconds` is set once the job has ended; `energyWh` is so far for a running job. */
export interface JobView {
  id: string;
  /** Submission number on this engine, from 0 (a stable scheduler job id). */
  seq: number;
  user: string;
  account: string;
  partition: string;
  gpus: number;
  nodeCount: number;
  walltimeLimitSeconds: number;
  state: JobState;
  pendingReason: PendingReason | null;
  priority: number | null;
  submitTimeSeconds: number;
  startTimeSeconds: number | null;
  endTimeSeconds: number | null;
  nodeList: string[];
  /** As Slurm reports it: the program's exit code, 0 when a signal ended the job; null while it runs or if it never ran. */
  exitCode: number | null;
  /** The signal that ended the job: 15 (SIGTERM) at its time limit (TIMEOUT) or when cancelled while running; else null. */
  signal: number | null;
  energyWh: number | null;
  /** True once the job has waited with PowerCap at least once (what-if planning counts these); absent otherwise. */
  heldByPowerCap?: true;
  /** A task of a job array: the array's id and the task's index (absent on other jobs). */
  arrayTask?: { arrayId: string; index: number };
  /**
   * A job array's own view (only from `job` and `endedJobs`: `snapshot` lists its tasks, which are the
   * jobs that run). Its state is RUNNING while a task runs, PENDING while none runs and some wait, then
   * how it ended (arrayEndState); times, energy and exit code come from its tasks.
   */
  array?: ArrayView;
}

/** What a job array's view adds: its tasks as they stand. */
export interface ArrayView {
  text: string;
  count: number;
  throttle: number | null;
  /** Tasks that started (running, or ended after running), by index. */
  tasks: JobView[];
  /** Tasks that wait to start. */
  waiting: number;
  /** Tasks that ended without ever starting (the array, or they, were cancelled while they waited). */
  neverRan: number;
  /** Why the waiting tasks wait (the first one's reason), null when none waits. */
  waitingReason: PendingReason | null;
}

/** Node states as shown to callers (a partly used node counts as allocated). */
export type NodeStateName = 'idle' | 'allocated' | 'down';

/** A node as shown to callers, with its current power draw. */
export interface NodeView {
  id: string;
  partition: string;
  siteId: string;
  state: NodeStateName;
  gpus: number;
  allocatedGpus: number;
  powerW: number;
  repairAtSeconds: number | null;
}

/** An account's usage as shown to callers. */
export interface AccountView {
  name: string;
  shares: number;
  decayedUsageGpuSeconds: number;
  usedGpuSeconds: number;
  fairShareFactor: number;
}

/** What `clusterView` returns: the machine and queue sizes, without per-job or per-account detail. */
export interface ClusterView {
  nowSeconds: number;
  nodes: NodeView[];
  totalPowerW: number;
  pendingJobs: number;
  runningJobs: number;
  totalGpus: number;
}

/** A site's power as shown to callers: IT draw, facility draw (IT × PUE) and its cap, in W. */
export interface SitePowerView {
  siteId: string;
  itPowerW: number;
  facilityPowerW: number;
  powerCapW: number | null;
}

/** What `snapshot` returns. Jobs not yet submitted by the clock are left out. */
export interface EngineSnapshot extends ClusterView {
  jobs: JobView[];
  accounts: AccountView[];
}

/** A job inside the serialised state. */
export interface JobRecord {
  spec: JobSpec;
  seq: number;
  arrived: boolean;
  state: JobState;
  pendingReason: PendingReason | null;
  priority: number | null;
  startTimeSeconds: number | null;
  endTimeSeconds: number | null;
  nodeIndices: number[];
  energyWh: number | null;
  /** Set once the job has waited with PowerCap (only capped sites ever set it). */
  heldByPowerCap?: true;
  /** A dependency's jobs not ended yet, and whether one ended in a way that never satisfies it. */
  waitingOn?: string[];
  dependencyNever?: true;
  /** A job array's record: its tasks' bookkeeping (the record itself never runs; its tasks do). */
  array?: ArrayTasks;
  /** A task of a job array (its spec is the array's, with the task's id): the array and the index. */
  arrayTask?: { arrayId: string; index: number };
}

/** A node inside the serialised state. */
export interface NodeRecord {
  id: string;
  partition: number;
  down: boolean;
  repairAtSeconds: number | null;
  failEpoch: number;
  allocatedGpus: number;
  jobIds: string[];
}

/** An account inside the serialised state. */
export interface AccountRecord {
  name: string;
  shares: number;
  limits: AccountLimits | null;
  decayedUsageGpuSeconds: number;
  finishedGpuSeconds: number;
}

/** The engine's full state as plain JSON. */
export interface EngineState {
  version: 1;
  config: EngineConfig;
  nowSeconds: number;
  usageAsOfSeconds: number;
  rng: RngState;
  eventSeq: number;
  submitSeq: number;
  events: SimEvent[];
  jobs: JobRecord[];
  pendingIds: string[];
  runningIds: string[];
  nodes: NodeRecord[];
  accounts: AccountRecord[];
}

/** The engine as drivers and adapters use it. */
export interface ClusterEngine {
  /** nowSeconds is the simulation clock. */
  readonly nowSeconds: number;
  /** submit queues a job; it arrives at its submit time (which must not be before the clock). */
  submit(job: JobSpec): void;
  /** validate throws the SimInputError that `submit` would throw for this job, and changes nothing. */
  validate(job: JobSpec): void;
  /** cancel ends a pending or running job now as CANCELLED (an array: every task, those waiting never run); false if it had already ended. */
  cancel(jobId: string): boolean;
  /** stop ends a running job now as if it had ended on its own (a service told to stop: COMPLETED, or FAILED by its exit code); a pending one is cancelled; false if it had already ended. */
  stop(jobId: string): boolean;
  /**
   * extend raises a pending or running job's time limit (Slurm: `scontrol update TimeLimit=`, as an
   * operator): it runs until its runtime or the new limit, whichever comes first, and the queue is planned
   * again with it. A limit below the current one or above the partition's: SimInputError; an array:
   * SimInputError; false if the job had already ended.
   */
  extend(jobId: string, walltimeLimitSeconds: number): boolean;
  /** injectNodeFailure makes a node fail at a given time (down for repairSeconds, default the configured repair time). */
  injectNodeFailure(nodeId: string, atSeconds: number, repairSeconds?: number): void;
  /** advanceTo processes every event up to and including timeSeconds and moves the clock there. */
  advanceTo(timeSeconds: number): void;
  /** nextEventSeconds is the time of the next queued event (null when none). */
  nextEventSeconds(): number | null;
  /** runToCompletion advances until no job can make progress any more (or the limit) and returns the clock. */
  runToCompletion(limitSeconds?: number): number;
  /** snapshot returns the jobs, nodes, accounts and power at the clock. */
  snapshot(): EngineSnapshot;
  /** clusterView returns the nodes, power and queue sizes at the clock (cost independent of the jobs held). */
  clusterView(): ClusterView;
  /** sitePower returns each site's IT and facility power and its cap at the clock (cost: the nodes). */
  sitePower(): SitePowerView[];
  /** endedJobs returns the views of the jobs that have ended and are not pruned yet. */
  endedJobs(): JobView[];
  /** job returns one job's view (an array's with its tasks), or undefined. */
  job(jobId: string): JobView | undefined;
  /** serialize returns the full state as plain JSON (a deep copy). */
  serialize(): EngineState;
  /** serializeJson returns the full state as JSON text (what `serialize` returns, without building a copy first). */
  serializeJson(): string;
  /** pruneFinished forgets jobs that ended before the given time and returns how many (cost: the ended jobs held). */
  pruneFinished(endedBeforeSeconds: number): number;
}

function isWhole(n: unknown, min: number): boolean {
  return typeof n === 'number' && Number.isInteger(n) && n >= min;
}

function deepCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * The signal Slurm ends a running job with, at its time limit and when the portal cancels it: a plain
 * cancel (DELETE /job, as scancel) ends the batch script by SIGTERM before any SIGKILL, so Slurm records
 * 0:15 for both (recorded: `slurm/fixtures/07-job-get-after-delete` exit_code 15, its batch step SIGNALED 15).
 */
const SIGTERM = 15;

/**
 * endOfJob is a job's exit code and signal as Slurm reports them for the same event: a program that
 * ended by itself (or a service stopped as asked) its exit code and no signal; TIMEOUT and cancelled
 * while running 0 and SIGTERM; nothing for a job that never ran, runs still, or lost its node.
 */
function endOfJob(j: JobRecord): { exitCode: number | null; signal: number | null } {
  if (j.state === 'COMPLETED' || j.state === 'FAILED') return { exitCode: j.spec.exitCode, signal: null };
  if (j.state === 'TIMEOUT' || (j.state === 'CANCELLED' && j.startTimeSeconds !== null)) return { exitCode: 0, signal: SIGTERM };
  return { exitCode: null, signal: null };
}

/** The pending jobs of one partition and account, in arrival order. */
interface PendingQueue extends CycleQueue {
  ids: Set<string>;
  /** The queue as cycles read it (one reader, reused by every cycle). */
  jobs: QueueReader;
  /** Its place in Engine.queueList. */
  at: number;
}

/** An account and the GPUs its jobs run now. */
interface AccountUsage {
  record: AccountRecord;
  runningGpus: number;
  /** Its fair-share factor, computed for the usage update numbered `shareOf` (Engine.fairShareOf). */
  share: number;
  shareOf: number;
}

/** Most jobs one dependency may name (the portal's own limit is lower). */
const MAX_DEPENDENCIES = 100;

/** A pending job as cycles see it, with its record (so a cycle's notes reach the record without a lookup). */
interface PendingView extends CyclePendingJob {
  readonly record: JobRecord;
}

/**
 * QueueReader reads a pending queue for a cycle (Engine.pendingJobs) with one result object for the
 * whole read, so a cycle allocates nothing per job it reads.
 */
class QueueReader implements Iterator<CyclePendingJob>, Iterable<CyclePendingJob> {
  private readonly result = { done: false, value: undefined as unknown as CyclePendingJob };
  private ids: Iterator<string> | null = null;
  /** The array being read: its id and the indices of the tasks still to yield. */
  private arrayId = '';
  private tasks: number[] = [];
  private task = 0;

  constructor(
    private readonly queue: Set<string>,
    private readonly arrayOf: (id: string) => ArrayTasks | undefined,
    private readonly view: (id: string) => CyclePendingJob,
  ) {}

  /** Starts a read from the queue's head (a queue is read once at a time: by one cycle). */
  [Symbol.iterator](): this {
    this.ids = this.queue.values();
    this.tasks = [];
    this.task = 0;
    this.result.done = false;
    return this;
  }

  next(): IteratorResult<CyclePendingJob> {
    const result = this.result as IteratorResult<CyclePendingJob>;
    for (;;) {
      if (this.task < this.tasks.length) {
        result.value = this.view(taskId(this.arrayId, this.tasks[this.task++]!));
        return result;
      }
      const next = this.ids!.next();
      if (next.done) {
        result.done = true;
        result.value = undefined;
        return result;
      }
      const tasks = this.arrayOf(next.value);
      if (!tasks) {
        result.value = this.view(next.value);
        return result;
      }
      this.arrayId = next.value;
      this.tasks = tasks.waiting.slice(0, arraySlots(tasks));
      this.task = 0;
    }
  }
}

class Engine implements ClusterEngine {
  // `s.jobs` and `s.pendingIds` stay empty while the engine runs: the indexes below hold them,
  // and `serialize` writes them back as arrays in the same order.
  private readonly s: EngineState;
  /** Every job held, in submission order. */
  private readonly jobs = new Map<string, JobRecord>();
  /** Arrived pending jobs in arrival order (a set: starting or cancelling one is O(1)). */
  private readonly pending = new Set<string>();
  /** The same jobs per partition and account, for bounded cycles; empty queues are dropped. */
  private readonly queues = new Map<string, PendingQueue>();
  /** The same queues as a list, for the cycles (no copy per cycle). */
  private readonly queueList: PendingQueue[] = [];
  /** Pending jobs as the cycles read them (pendingJob), dropped when they start or end. */
  private readonly pendingViews = new Map<string, PendingView>();
  /** Jobs that have ended and are not pruned yet. */
  private readonly ended = new Set<string>();
  /** Jobs another job waits on → the jobs waiting (rebuilt from the records on restore). */
  private readonly dependents = new Map<string, Set<string>>();
  /** Arrays in the pending queue: `pending` holds each as one entry that stands for its waiting tasks. */
  private readonly arraysPending = new Set<string>();
  private readonly accounts = new Map<string, AccountRecord>();
  private readonly partitionIndex = new Map<string, number>();
  private readonly nodeIndex = new Map<string, number>();
  private readonly siteIndex = new Map<string, number>();
  /** Running jobs in start order (`s.runningIds` while serialised; a set: ending one is O(1)). */
  private readonly running = new Set<string>();
  /** Every account with its running GPUs (the rate its usage grows at), in the accounts' order. */
  private readonly usage: AccountUsage[] = [];
  private readonly usageOf = new Map<string, AccountUsage>();
  /** What cycles read of the machine, kept in step with the node and job records (cycle-state.ts). */
  private readonly cycleState: CycleState;
  /** Fair-share factors at the last usage update, filled as cycles ask (cleared when usage or accounts change). */
  private fairShares: { totalUsage: number; totalShares: number } | null = null;
  /** Counts the totals summed in `fairShares`: an account's factor is current when computed for the latest. */
  private fairShareTotals = 0;
  /** Whether any site has a power cap (else the cycle never looks at power). */
  private readonly capped: boolean;
  private progressEvents = 0;

  constructor(state: EngineState) {
    this.s = state;
    validateCluster(state.config.cluster);
    state.config.cluster.partitions.forEach((p, i) => this.partitionIndex.set(p.name, i));
    state.config.cluster.sites.forEach((site, i) => this.siteIndex.set(site.id, i));
    this.capped = state.config.cluster.sites.some((site) => site.powerCapW !== undefined);
    state.nodes.forEach((n, i) => this.nodeIndex.set(n.id, i));
    for (const j of state.jobs) {
      this.jobs.set(j.spec.id, j);
      // An array's ended tasks are retired with it, not one by one.
      if (j.endTimeSeconds !== null && !j.arrayTask) this.ended.add(j.spec.id);
      for (const parent of j.waitingOn ?? []) this.addDependent(parent, j.spec.id);
    }
    for (const id of state.pendingIds) this.enqueue(this.jobs.get(id)!);
    for (const a of state.accounts) this.addAccount(a);
    this.cycleState = this.stateOfRecords();
    for (const id of state.runningIds) {
      this.running.add(id);
      this.countRunning(this.jobs.get(id)!, 1);
    }
    state.jobs = [];
    state.pendingIds = [];
    state.runningIds = [];
    for (const e of state.events) if (this.isProgress(e)) this.progressEvents++;
  }

  get nowSeconds(): number {
    return this.s.nowSeconds;
  }

  submit(spec: JobSpec): void {
    this.validateJob(spec);
    this.ensureAccount(spec.account);
    const record: JobRecord = {
      spec: { ...spec },
      seq: this.s.submitSeq++,
      arrived: false,
      state: 'PENDING',
      pendingReason: 'None',
      priority: null,
      startTimeSeconds: null,
      endTimeSeconds: null,
      nodeIndices: [],
      energyWh: null,
      // One record at submit however many tasks: they are made jobs when the array arrives and as they start.
      ...(spec.array ? { array: newArrayTasks(spec.array.text) } : {}),
    };
    if (spec.dependency) {
      // Jobs that ended already decide now; the others when they end (resolveDependents).
      const waiting: string[] = [];
      for (const parent of new Set(spec.dependency.jobIds)) {
        const p = this.jobs.get(parent);
        const endedAs = p ? (p.endTimeSeconds === null ? null : p.state) : (spec.dependency.ended?.[parent] ?? null);
        if (p && endedAs === null) waiting.push(parent);
        else if (endedAs !== null && !dependencyHolds(spec.dependency.type, endedAs)) record.dependencyNever = true;
      }
      if (waiting.length) record.waitingOn = waiting;
      for (const parent of waiting) this.addDependent(parent, spec.id);
    }
    this.jobs.set(spec.id, record);
    this.push({ atSeconds: spec.submitTimeSeconds, kind: EventKind.JobArrival, ref: spec.id });
    // Wake the scheduler when the job may start (nothing else may happen at that instant).
    if (spec.beginTimeSeconds !== undefined && spec.beginTimeSeconds > spec.submitTimeSeconds) {
      this.push({ atSeconds: spec.beginTimeSeconds, kind: EventKind.Wake, ref: spec.id });
    }
  }

  validate(spec: JobSpec): void {
    this.validateJob(spec);
  }

  cancel(jobId: string): boolean {
    return this.end(jobId, false);
  }

  stop(jobId: string): boolean {
    return this.end(jobId, true);
  }

  private end(jobId: string, stop: boolean): boolean {
    const job = this.jobs.get(jobId);
    if (!job) throw new SimInputError(`unknown job "${jobId}"`);
    const now = this.s.nowSeconds;
    if (job.array) {
      if (!this.endArrayNow(job, stop)) return false;
    } else if (job.arrayTask && job.state === 'PENDING') {
      this.dropWaitingTask(job, now);
    } else if (job.state === 'RUNNING') {
      this.updateUsage(now);
      this.finish(job, now, !stop ? 'CANCELLED' : job.spec.exitCode === 0 ? 'COMPLETED' : 'FAILED');
    } else if (job.state === 'PENDING') {
      if (job.arrived) this.dequeue(job);
      job.arrived = true;
      job.state = 'CANCELLED';
      job.pendingReason = null;
      job.endTimeSeconds = now;
      this.ended.add(jobId);
      this.dropDependency(job);
      this.resolveDependents(job);
    } else {
      return false;
    }
    this.push({ atSeconds: now, kind: EventKind.Wake, ref: jobId });
    return true;
  }

  extend(jobId: string, walltimeLimitSeconds: number): boolean {
    const job = this.jobs.get(jobId);
    if (!job) throw new SimInputError(`unknown job "${jobId}"`);
    if (job.array || job.arrayTask) throw new SimInputError('the time limit of a job array is not extended');
    if (job.state !== 'RUNNING' && job.state !== 'PENDING') return false;
    const max = this.partition(this.partitionIndex.get(job.spec.partition)!).maxWalltimeSeconds;
    if (!isWhole(walltimeLimitSeconds, job.spec.walltimeLimitSeconds) || walltimeLimitSeconds > max) {
      throw new SimInputError(`time limit must be a whole number of seconds from ${job.spec.walltimeLimitSeconds} to the partition's ${max}`);
    }
    const plannedBefore = this.plannedEnd(job);
    job.spec.walltimeLimitSeconds = walltimeLimitSeconds;
    if (job.state === 'RUNNING') this.cycleState.extend(jobId, walltimeLimitSeconds);
    // A job that would have hit the old limit ends later: the end planned before no longer matches (isLive
    // drops it) and the new one is queued. One that ends on its own before the old limit ends as planned.
    if (job.state === 'RUNNING' && this.plannedEnd(job) !== plannedBefore) this.push({ atSeconds: this.plannedEnd(job), kind: EventKind.JobEnd, ref: jobId });
    this.push({ atSeconds: this.s.nowSeconds, kind: EventKind.Wake, ref: jobId });
    return true;
  }

  injectNodeFailure(nodeId: string, atSeconds: number, repairSeconds?: number): void {
    const index = this.nodeIndex.get(nodeId);
    if (index === undefined) throw new SimInputError(`unknown node "${nodeId}"`);
    if (!isWhole(atSeconds, this.s.nowSeconds)) throw new SimInputError('failure time must be a whole second not before the clock');
    const repair = repairSeconds ?? this.s.config.nodeFailures?.repairSeconds;
    if (repair === undefined || !isWhole(repair, 1)) throw new SimInputError('repairSeconds must be a whole number ≥ 1');
    this.push({ atSeconds, kind: EventKind.NodeFail, ref: index, epoch: null, repairSeconds: repair });
  }

  advanceTo(timeSeconds: number): void {
    if (!isWhole(timeSeconds, this.s.nowSeconds)) {
      throw new SimInputError(`cannot advance to ${timeSeconds}: time must be a whole second ≥ ${this.s.nowSeconds}`);
    }
    for (let next = peekEvent(this.s.events); next && next.atSeconds <= timeSeconds; next = peekEvent(this.s.events)) {
      this.processInstant(next.atSeconds);
    }
    this.s.nowSeconds = timeSeconds;
  }

  nextEventSeconds(): number | null {
    return peekEvent(this.s.events)?.atSeconds ?? null;
  }

  runToCompletion(limitSeconds = Number.MAX_SAFE_INTEGER): number {
    while (this.progressEvents > 0) {
      const next = peekEvent(this.s.events);
      if (!next || next.atSeconds > limitSeconds) break;
      this.advanceTo(next.atSeconds);
    }
    return this.s.nowSeconds;
  }

  snapshot(): EngineSnapshot {
    const jobs: JobView[] = [];
    for (const j of this.jobs.values()) if (j.arrived && !j.array) jobs.push(this.view(j));
    const { nowSeconds, nodes, totalPowerW, pendingJobs, runningJobs, totalGpus } = this.clusterView();
    return { nowSeconds, jobs, nodes, accounts: this.accountViews(), totalPowerW, pendingJobs, runningJobs, totalGpus };
  }

  clusterView(): ClusterView {
    let totalCentiW = 0;
    const nodes = this.s.nodes.map((n): NodeView => {
      const p = this.partition(n.partition);
      const centiW = nodePowerCentiW(p, this.allocations(n), n.down);
      totalCentiW += centiW;
      return {
        id: n.id,
        partition: p.name,
        siteId: p.siteId,
        state: n.down ? 'down' : n.allocatedGpus > 0 ? 'allocated' : 'idle',
        gpus: p.gpusPerNode,
        allocatedGpus: n.allocatedGpus,
        powerW: Math.round(centiW / 100),
        repairAtSeconds: n.repairAtSeconds,
      };
    });
    return {
      nowSeconds: this.s.nowSeconds,
      nodes,
      totalPowerW: Math.round(totalCentiW / 100),
      pendingJobs: this.pendingCount(),
      runningJobs: this.running.size,
      totalGpus: clusterGpuCount(this.s.config.cluster),
    };
  }

  sitePower(): SitePowerView[] {
    const sites = this.s.config.cluster.sites;
    const draw = this.siteDrawCentiW();
    return sites.map((site, i): SitePowerView => ({
      siteId: site.id,
      itPowerW: Math.round((draw[i] ?? 0) / 100),
      facilityPowerW: facilityPowerW(draw[i] ?? 0, sitePueMilli(site)),
      powerCapW: site.powerCapW ?? null,
    }));
  }

  /** Each site's IT draw in centiW, in the order of `cluster.sites`. */
  private siteDrawCentiW(): number[] {
    const draw = this.s.config.cluster.sites.map(() => 0);
    for (const n of this.s.nodes) {
      const p = this.partition(n.partition);
      const site = this.siteIndex.get(p.siteId)!;
      draw[site] = (draw[site] ?? 0) + nodePowerCentiW(p, this.allocations(n), n.down);
    }
    return draw;
  }

  endedJobs(): JobView[] {
    return [...this.ended].map((id) => this.view(this.jobs.get(id)!));
  }

  private accountViews(): AccountView[] {
    const usage = this.usageAt(this.s.nowSeconds);
    const factors = fairShareFactors(usage);
    return [...this.accounts.values()].map((a): AccountView => {
      let used = a.finishedGpuSeconds;
      for (const id of this.running) {
        const j = this.jobs.get(id);
        if (j && j.spec.account === a.name) used += j.spec.gpus * (this.s.nowSeconds - (j.startTimeSeconds ?? 0));
      }
      return {
        name: a.name,
        shares: a.shares,
        decayedUsageGpuSeconds: usage.get(a.name)?.decayedUsageGpuSeconds ?? 0,
        usedGpuSeconds: used,
        fairShareFactor: factors.get(a.name) ?? 1,
      };
    });
  }

  job(jobId: string): JobView | undefined {
    const j = this.jobs.get(jobId);
    return j ? this.view(j) : undefined;
  }

  serialize(): EngineState {
    return JSON.parse(this.serializeJson()) as EngineState;
  }

  serializeJson(): string {
    return JSON.stringify({ ...this.s, jobs: [...this.jobs.values()], pendingIds: [...this.pending], runningIds: [...this.running] });
  }

  pruneFinished(endedBeforeSeconds: number): number {
    let pruned = 0;
    for (const id of this.ended) {
      const j = this.jobs.get(id);
      if ((j?.endTimeSeconds ?? 0) >= endedBeforeSeconds) continue;
      // An array goes with the tasks it held.
      for (const index of j?.array?.started ?? []) if (this.jobs.delete(taskId(id, index))) pruned++;
      this.ended.delete(id);
      this.jobs.delete(id);
      pruned++;
    }
    return pruned;
  }

  // ---- instants -------------------------------------------------------------

  private processInstant(t: number): void {
    this.s.nowSeconds = t;
    let handled = false;
    for (let e = peekEvent(this.s.events); e && e.atSeconds === t; e = peekEvent(this.s.events)) {
      popEvent(this.s.events);
      if (this.isProgress(e)) this.progressEvents--;
      if (!this.isLive(e)) continue;
      if (!handled) {
        this.updateUsage(t);
        handled = true;
      }
      this.handle(e, t);
    }
    if (handled) this.runCycle(t);
  }

  private isLive(e: SimEvent): boolean {
    switch (e.kind) {
      case EventKind.JobEnd: {
        const j = this.jobs.get(String(e.ref));
        return !!j && j.state === 'RUNNING' && this.plannedEnd(j) === e.atSeconds;
      }
      case EventKind.NodeRepair: {
        const n = this.s.nodes[Number(e.ref)];
        return !!n && n.down && n.repairAtSeconds === e.atSeconds;
      }
      case EventKind.NodeFail: {
        const n = this.s.nodes[Number(e.ref)];
        return !!n && !n.down && (e.epoch === null || e.epoch === undefined || e.epoch === n.failEpoch);
      }
      case EventKind.JobArrival: {
        const j = this.jobs.get(String(e.ref));
        return !!j && !j.arrived;
      }
      default:
        return true;
    }
  }

  private handle(e: SimEvent, t: number): void {
    switch (e.kind) {
      case EventKind.JobEnd: {
        const j = this.jobs.get(String(e.ref))!;
        const timedOut = j.spec.runtimeSeconds > j.spec.walltimeLimitSeconds;
        this.finish(j, t, timedOut ? 'TIMEOUT' : j.spec.exitCode === 0 ? 'COMPLETED' : 'FAILED');
        return;
      }
      case EventKind.NodeRepair: {
        const index = Number(e.ref);
        const n = this.s.nodes[index]!;
        n.down = false;
        n.repairAtSeconds = null;
        this.cycleState.nodeUp(index);
        this.scheduleRandomFailure(index, t);
        return;
      }
      case EventKind.NodeFail: {
        const index = Number(e.ref);
        const n = this.s.nodes[index]!;
        const repair = e.repairSeconds ?? this.s.config.nodeFailures?.repairSeconds ?? 1;
        n.down = true;
        n.failEpoch++;
        n.repairAtSeconds = t + repair;
        this.cycleState.nodeDown(index, n.repairAtSeconds);
        this.push({ atSeconds: t + repair, kind: EventKind.NodeRepair, ref: index });
        const victims = n.jobIds
          .map((id) => this.jobs.get(id)!)
          .sort((a, b) => a.seq - b.seq);
        for (const j of victims) this.finish(j, t, 'NODE_FAIL');
        return;
      }
      case EventKind.JobArrival: {
        const j = this.jobs.get(String(e.ref))!;
        j.arrived = true;
        j.pendingReason = 'None';
        this.enqueue(j);
        if (j.array) this.topUp(j);
        return;
      }
      default:
        return;
    }
  }

  private runCycle(t: number): void {
    // Each rerun follows a cycle that started a job, so the reruns are bounded by the jobs started.
    while (this.cycleOnce(t));
  }

  /** One cycle, applied; true when another should run at once (unread jobs, or an array made new tasks jobs as others started). */
  private cycleOnce(t: number): boolean {
    // The cycle takes the started jobs' GPUs in the cycle state itself; the records follow here.
    const decision: CycleDecision = runCycle(this.cycleState, this.cycleRequest(t));
    const arraysStarted = new Set<JobRecord>();
    for (const start of decision.starts) {
      const j = this.jobs.get(start.id)!;
      const perNode = j.spec.gpus / j.spec.nodes;
      j.state = 'RUNNING';
      j.pendingReason = null;
      j.startTimeSeconds = t;
      j.nodeIndices = start.nodeIndices;
      for (const index of start.nodeIndices) {
        const n = this.s.nodes[index]!;
        n.allocatedGpus += perNode;
        n.jobIds.push(j.spec.id);
      }
      if (j.arrayTask) arraysStarted.add(this.taskStarted(j, t));
      else this.dequeue(j);
      this.running.add(j.spec.id);
      this.countRunning(j, 1);
      this.push({ atSeconds: this.plannedEnd(j), kind: EventKind.JobEnd, ref: j.spec.id });
    }
    // Arrays whose tasks started make their next tasks jobs; those over the throttle wait for it.
    let made = false;
    for (const a of arraysStarted) {
      if (this.topUp(a)) made = true;
      const tasks = a.array!;
      for (const index of tasks.waiting.slice(arraySlots(tasks))) this.jobs.get(taskId(a.spec.id, index))!.pendingReason = 'JobArrayTaskLimit';
    }
    return decision.rerun || made;
  }

  private cycleRequest(t: number): CycleRequest {
    const bounded = this.s.config.policy.queueDepth !== undefined;
    const { sites, partitions } = this.s.config.cluster;
    return {
      nowSeconds: t,
      policy: this.s.config.policy,
      partitions,
      pending: bounded ? [] : [...this.pendingJobs(this.pending)],
      queues: bounded ? this.queueList : undefined,
      accounts: this.accounts,
      fairShare: this.shareOf,
      note: this.noteConsidered,
      caps: this.capped ? { partitionSite: partitions.map((p) => this.siteIndex.get(p.siteId)!), capCentiW: sites.map((site) => capItCentiW(site)) } : undefined,
    };
  }

  /** stateOfRecords builds the cycle state from the node and running-job records (at start and on restore). */
  private stateOfRecords(): CycleState {
    const { partitions, sites } = this.s.config.cluster;
    const state = new CycleState(
      partitions,
      this.s.nodes.map((n) => n.partition),
      partitions.map((p) => this.siteIndex.get(p.siteId)!),
      sites.length,
    );
    this.s.nodes.forEach((n, i) => {
      if (n.down) state.nodeDown(i, n.repairAtSeconds);
    });
    for (const id of this.s.runningIds) state.start(this.cycleRunning(this.jobs.get(id)!));
    return state;
  }

  /** A running job as the cycle state holds it. */
  private cycleRunning(j: JobRecord) {
    return {
      id: j.spec.id,
      partition: this.partitionIndex.get(j.spec.partition)!,
      user: j.spec.user,
      account: j.spec.account,
      gpus: j.spec.gpus,
      nodeIndices: j.nodeIndices,
      walltimeLimitSeconds: j.spec.walltimeLimitSeconds,
      startTimeSeconds: j.startTimeSeconds ?? this.s.nowSeconds,
      powerCentiW: this.capped ? this.jobPower(j) : undefined,
    };
  }

  private jobPower(j: JobRecord): number {
    const p = this.partition(this.partitionIndex.get(j.spec.partition)!);
    return jobPowerCentiW(p, j.spec.gpus, j.spec.gpuUtilPercent);
  }

  /** pendingJob is a pending job as cycles see it: made once while it waits; its limit and dependency hold are read afresh each time. */
  private pendingJob(id: string): PendingView {
    let view = this.pendingViews.get(id);
    const j = view ? view.record : this.jobs.get(id)!;
    if (!view) {
      view = {
        record: j,
        id,
        seq: j.seq,
        submitTimeSeconds: j.spec.submitTimeSeconds,
        partition: this.partitionIndex.get(j.spec.partition)!,
        user: j.spec.user,
        account: j.spec.account,
        gpus: j.spec.gpus,
        nodes: j.spec.nodes,
        walltimeLimitSeconds: j.spec.walltimeLimitSeconds,
        powerCentiW: this.capped ? this.jobPower(j) : undefined,
        beginSeconds: j.spec.beginTimeSeconds,
        heldBy: undefined,
      };
      this.pendingViews.set(id, view);
    }
    // An array's tasks wait on what the array waits on.
    const held = j.arrayTask ? this.jobs.get(j.arrayTask.arrayId)! : j;
    view.walltimeLimitSeconds = j.spec.walltimeLimitSeconds;
    view.heldBy = held.dependencyNever ? 'DependencyNeverSatisfied' : held.waitingOn ? 'Dependency' : undefined;
    return view;
  }

  /**
   * The pending jobs of a queue in its order; an array stands at its place in the queue for its waiting
   * tasks, in index order (they share its submit time and seq, so they sort there), as many as its
   * throttle lets start now: the cycle can never run more of its tasks at once.
   */
  private pendingJobs(ids: Set<string>): QueueReader {
    return new QueueReader(ids, this.arrayOf, this.viewOf);
  }

  /** An array pending in a queue is in `arraysPending`: with none, no lookup. */
  private readonly arrayOf = (id: string): ArrayTasks | undefined => (this.arraysPending.size === 0 ? undefined : this.jobs.get(id)!.array);
  private readonly viewOf = (id: string): CyclePendingJob => this.pendingJob(id);
  private readonly shareOf = (account: string): number => this.fairShareOf(account);

  /** A cycle's note on a job it considered: its priority now and why it waits (a start is applied in cycleOnce). */
  private readonly noteConsidered = (job: CyclePendingJob, priority: number, reason: PendingReason | null): void => {
    const j = (job as PendingView).record;
    j.priority = priority;
    if (reason === null) return;
    j.pendingReason = reason;
    if (reason === 'PowerCap') j.heldByPowerCap = true;
  };

  /** Pending jobs, each waiting task of an array counted (made a job or not). */
  private pendingCount(): number {
    let count = this.pending.size - this.arraysPending.size;
    for (const id of this.arraysPending) count += tasksWaiting(this.jobs.get(id)!.array!);
    return count;
  }

  // ---- job arrays -----------------------------------------------------------

  /** Makes the array's next tasks jobs (arrived, pending) until its window of waiting tasks is full; true when it made any. */
  private topUp(a: JobRecord): boolean {
    const tasks = a.array!;
    let made = false;
    while (tasks.waiting.length < arrayWindow(tasks)) {
      const index = takeNextIndex(tasks);
      if (index === null) break;
      const id = taskId(a.spec.id, index);
      if (this.jobs.has(id)) throw new SimInputError(`array "${a.spec.id}": task id "${id}" is already a job`);
      const spec: JobSpec = { ...a.spec, id };
      delete spec.array;
      delete spec.dependency;
      this.jobs.set(id, {
        spec,
        seq: a.seq,
        arrived: true,
        state: 'PENDING',
        pendingReason: 'None',
        priority: null,
        startTimeSeconds: null,
        endTimeSeconds: null,
        nodeIndices: [],
        energyWh: null,
        arrayTask: { arrayId: a.spec.id, index },
      });
      tasks.waiting.push(index);
      made = true;
    }
    return made;
  }

  /** A task started: its array counts it running; the array leaves the queue once no task waits. Returns the array. */
  private taskStarted(j: JobRecord, t: number): JobRecord {
    const a = this.jobs.get(j.arrayTask!.arrayId)!;
    const tasks = a.array!;
    tasks.waiting.splice(tasks.waiting.indexOf(j.arrayTask!.index), 1);
    this.pendingViews.delete(j.spec.id);
    tasks.started.push(j.arrayTask!.index);
    tasks.running++;
    if (a.startTimeSeconds === null) a.startTimeSeconds = t;
    this.dequeueIfDrained(a);
    return a;
  }

  /** A task ended (after running): the array ends with its last task. */
  private taskEnded(j: JobRecord, t: number): void {
    const a = this.jobs.get(j.arrayTask!.arrayId)!;
    const tasks = a.array!;
    tasks.running--;
    if (tasks.running === 0 && tasks.waiting.length === 0 && tasks.next === null && a.endTimeSeconds === null) this.arrayEnded(a, t);
  }

  private dequeueIfDrained(a: JobRecord): void {
    const tasks = a.array!;
    if (tasks.waiting.length === 0 && tasks.next === null && this.arraysPending.has(a.spec.id)) this.dequeue(a);
  }

  /** A waiting task is cancelled on its own: it never ran, its record goes, the next task takes its place. */
  private dropWaitingTask(j: JobRecord, now: number): void {
    const a = this.jobs.get(j.arrayTask!.arrayId)!;
    const tasks = a.array!;
    tasks.waiting.splice(tasks.waiting.indexOf(j.arrayTask!.index), 1);
    this.pendingViews.delete(j.spec.id);
    tasks.neverRan++;
    j.state = 'CANCELLED';
    j.pendingReason = null;
    j.endTimeSeconds = now;
    this.resolveDependents(j);
    this.jobs.delete(j.spec.id);
    this.topUp(a);
    this.dequeueIfDrained(a);
    if (tasks.running === 0 && tasks.waiting.length === 0 && tasks.next === null) this.arrayEnded(a, now);
  }

  /** Cancels (or stops) a whole array now: waiting tasks never run, running ones end; false if it had ended. */
  private endArrayNow(a: JobRecord, stop: boolean): boolean {
    if (a.endTimeSeconds !== null) return false;
    const now = this.s.nowSeconds;
    const tasks = a.array!;
    for (const index of tasks.waiting) {
      const j = this.jobs.get(taskId(a.spec.id, index))!;
      this.pendingViews.delete(j.spec.id);
      j.state = 'CANCELLED';
      j.endTimeSeconds = now;
      this.resolveDependents(j);
      this.jobs.delete(j.spec.id);
    }
    tasks.waiting = [];
    tasks.next = null;
    tasks.neverRan = tasks.count - tasks.started.length;
    if (this.arraysPending.has(a.spec.id)) this.dequeue(a);
    a.arrived = true;
    const running = tasks.started.map((index) => this.jobs.get(taskId(a.spec.id, index))!).filter((j) => j.state === 'RUNNING');
    if (running.length > 0) this.updateUsage(now);
    // The last one to finish ends the array.
    for (const j of running) this.finish(j, now, !stop ? 'CANCELLED' : j.spec.exitCode === 0 ? 'COMPLETED' : 'FAILED');
    if (a.endTimeSeconds === null) this.arrayEnded(a, now);
    return true;
  }

  /** Every task has ended: the array ends as its tasks say (arrayEndState), and the jobs waiting on it learn how. */
  private arrayEnded(a: JobRecord, t: number): void {
    const tasks = a.array!;
    const held = [...tasks.started].sort((x, y) => x - y).map((index) => this.jobs.get(taskId(a.spec.id, index))!);
    a.state = arrayEndState(
      held.map((j) => j.state),
      tasks.neverRan,
    );
    a.pendingReason = null;
    a.endTimeSeconds = t;
    a.energyWh = held.length > 0 ? held.reduce((sum, j) => sum + (j.energyWh ?? 0), 0) : null;
    this.ended.add(a.spec.id);
    this.dropDependency(a);
    this.resolveDependents(a);
  }

  private arrayView(a: JobRecord): JobView {
    const tasks = a.array!;
    const views = [...tasks.started].sort((x, y) => x - y).map((index) => this.view(this.jobs.get(taskId(a.spec.id, index))!));
    const ended = a.endTimeSeconds !== null;
    const state: JobState = ended ? a.state : tasks.running > 0 ? 'RUNNING' : 'PENDING';
    const first = tasks.waiting[0];
    const waiting = tasksWaiting(tasks);
    const waitingReason = waiting === 0 ? null : first === undefined ? a.pendingReason : this.jobs.get(taskId(a.spec.id, first))!.pendingReason;
    // As summariseArray: the highest exit code once ended (with its signal); the running tasks' nodes, else all.
    let exit: JobView | null = null;
    if (ended) for (const v of views) if (v.exitCode !== null && (exit === null || v.exitCode > (exit.exitCode ?? -1))) exit = v;
    const running = views.filter((v) => v.state === 'RUNNING');
    const nodes = new Set((running.length > 0 ? running : views).flatMap((v) => v.nodeList));
    return {
      id: a.spec.id,
      seq: a.seq,
      user: a.spec.user,
      account: a.spec.account,
      partition: a.spec.partition,
      gpus: a.spec.gpus,
      nodeCount: a.spec.nodes,
      walltimeLimitSeconds: a.spec.walltimeLimitSeconds,
      state,
      pendingReason: state === 'PENDING' ? waitingReason : null,
      priority: first === undefined ? null : this.jobs.get(taskId(a.spec.id, first))!.priority,
      submitTimeSeconds: a.spec.submitTimeSeconds,
      startTimeSeconds: a.startTimeSeconds,
      endTimeSeconds: ended ? a.endTimeSeconds : null,
      nodeList: [...nodes].sort(),
      exitCode: exit?.exitCode ?? null,
      signal: exit ? exit.signal : null,
      energyWh: views.length > 0 ? views.reduce((sum, v) => sum + (v.energyWh ?? 0), 0) : null,
      array: { text: tasks.text, count: tasks.count, throttle: tasks.throttle, tasks: views, waiting, neverRan: tasks.neverRan, waitingReason },
    };
  }

  // ---- the pending queue ----------------------------------------------------

  private queueKey(j: JobRecord): string {
    return `${j.spec.partition}\u0000${j.spec.account}`;
  }

  private enqueue(j: JobRecord): void {
    this.pending.add(j.spec.id);
    if (j.array) this.arraysPending.add(j.spec.id);
    const key = this.queueKey(j);
    let queue = this.queues.get(key);
    if (!queue) {
      const ids = new Set<string>();
      queue = { partition: this.partitionIndex.get(j.spec.partition)!, account: j.spec.account, ids, jobs: this.pendingJobs(ids), at: this.queueList.length };
      this.queues.set(key, queue);
      this.queueList.push(queue);
    }
    queue.ids.add(j.spec.id);
  }

  private dequeue(j: JobRecord): void {
    this.pending.delete(j.spec.id);
    this.pendingViews.delete(j.spec.id);
    this.arraysPending.delete(j.spec.id);
    const key = this.queueKey(j);
    const queue = this.queues.get(key);
    if (!queue) return;
    queue.ids.delete(j.spec.id);
    if (queue.ids.size > 0) return;
    this.queues.delete(key);
    // The last queue takes its place in the list (the cycle's order does not depend on the queues' order).
    const last = this.queueList.pop()!;
    if (last !== queue) {
      last.at = queue.at;
      this.queueList[queue.at] = last;
    }
  }

  // ---- job and node bookkeeping --------------------------------------------

  private finish(j: JobRecord, t: number, state: JobState): void {
    const start = j.startTimeSeconds ?? t;
    const perNode = j.spec.gpus / j.spec.nodes;
    for (const index of j.nodeIndices) {
      const n = this.s.nodes[index]!;
      n.allocatedGpus -= perNode;
      n.jobIds = n.jobIds.filter((id) => id !== j.spec.id);
    }
    this.running.delete(j.spec.id);
    this.countRunning(j, -1);
    this.cycleState.end(j.spec.id);
    j.state = state;
    j.endTimeSeconds = t;
    if (!j.arrayTask) this.ended.add(j.spec.id);
    j.energyWh = this.energy(j, t - start);
    const account = this.accounts.get(j.spec.account)!;
    account.finishedGpuSeconds += j.spec.gpus * (t - start);
    this.resolveDependents(j);
    if (j.arrayTask) this.taskEnded(j, t);
  }

  private addDependent(parent: string, child: string): void {
    let set = this.dependents.get(parent);
    if (!set) this.dependents.set(parent, (set = new Set()));
    set.add(child);
  }

  /** A job ended: the jobs waiting on it wait on one job less, or learn they never may start. */
  private resolveDependents(j: JobRecord): void {
    const children = this.dependents.get(j.spec.id);
    if (!children) return;
    this.dependents.delete(j.spec.id);
    for (const id of children) {
      const child = this.jobs.get(id);
      if (!child?.waitingOn || child.endTimeSeconds !== null) continue;
      child.waitingOn = child.waitingOn.filter((p) => p !== j.spec.id);
      if (child.waitingOn.length === 0) delete child.waitingOn;
      if (!dependencyHolds(child.spec.dependency!.type, j.state)) child.dependencyNever = true;
    }
  }

  /** A waiting job ended itself (cancelled): it waits on nothing any more. */
  private dropDependency(j: JobRecord): void {
    for (const parent of j.waitingOn ?? []) this.dependents.get(parent)?.delete(j.spec.id);
    delete j.waitingOn;
  }

  private energy(j: JobRecord, runSeconds: number): number {
    const p = this.partition(this.partitionIndex.get(j.spec.partition)!);
    return jobEnergyWh({ model: p, gpus: j.spec.gpus, gpuUtilPercent: j.spec.gpuUtilPercent, runSeconds });
  }

  private plannedEnd(j: JobRecord): number {
    return (j.startTimeSeconds ?? 0) + Math.min(j.spec.runtimeSeconds, j.spec.walltimeLimitSeconds);
  }

  private allocations(n: NodeRecord): GpuAllocation[] {
    return n.jobIds.map((id) => {
      const j = this.jobs.get(id)!;
      return { gpus: j.spec.gpus / j.spec.nodes, gpuUtilPercent: j.spec.gpuUtilPercent };
    });
  }

  private scheduleRandomFailure(index: number, t: number): void {
    const failures = this.s.config.nodeFailures;
    if (!failures) return;
    const node = this.s.nodes[index]!;
    const at = t + exponentialSeconds(this.s.rng, failures.mtbfSeconds);
    this.push({ atSeconds: at, kind: EventKind.NodeFail, ref: index, epoch: node.failEpoch });
  }

  private partition(index: number) {
    const p = this.s.config.cluster.partitions[index];
    if (!p) throw new Error(`no partition ${index}`);
    return p;
  }

  // ---- usage ----------------------------------------------------------------

  /** countRunning adds (1) or takes away (−1) a job's GPUs from its account's running GPUs. */
  private countRunning(j: JobRecord, sign: 1 | -1): void {
    this.usageOf.get(j.spec.account)!.runningGpus += sign * j.spec.gpus;
  }

  /** updateUsage brings every account's decayed usage up to t (the decay computed once for all). */
  private updateUsage(t: number): void {
    const dt = t - this.s.usageAsOfSeconds;
    if (dt <= 0) return;
    const step = accrual(dt, this.s.config.policy.usageHalfLifeSeconds);
    const accrue = accrueBy; // read once, not per account (an imported binding is a getter call under tsx's CommonJS)
    for (const { record, runningGpus } of this.usage) {
      // Nothing used and nothing running stays 0.
      if (record.decayedUsageGpuSeconds !== 0 || runningGpus !== 0) record.decayedUsageGpuSeconds = accrue(step, record.decayedUsageGpuSeconds, runningGpus);
    }
    this.s.usageAsOfSeconds = t;
    this.fairShares = null;
  }

  /**
   * fairShareOf is an account's fair-share factor at the last usage update — what `fairShareFactors`
   * gives over the accounts in the same order — with the totals summed once per update, and each
   * account's factor computed when a cycle first asks for it.
   */
  private fairShareOf(account: string): number {
    if (!this.fairShares) {
      let totalUsage = 0;
      let totalShares = 0;
      for (const a of this.accounts.values()) {
        totalUsage += a.decayedUsageGpuSeconds;
        totalShares += a.shares;
      }
      this.fairShares = { totalUsage, totalShares };
      this.fairShareTotals++;
    }
    const row = this.usageOf.get(account);
    if (!row) return 1;
    if (row.shareOf !== this.fairShareTotals) {
      const a = row.record;
      row.share = fairShareFactor(a.decayedUsageGpuSeconds, this.fairShares.totalUsage, a.shares, this.fairShares.totalShares);
      row.shareOf = this.fairShareTotals;
    }
    return row.share;
  }

  private usageAt(t: number): Map<string, CycleAccount> {
    const dt = t - this.s.usageAsOfSeconds;
    const halfLife = this.s.config.policy.usageHalfLifeSeconds;
    const out = new Map<string, CycleAccount>();
    for (const a of this.accounts.values()) {
      out.set(a.name, {
        shares: a.shares,
        limits: a.limits ?? undefined,
        decayedUsageGpuSeconds: accrueUsage(a.decayedUsageGpuSeconds, this.usageOf.get(a.name)?.runningGpus ?? 0, dt, halfLife),
        finishedGpuSeconds: a.finishedGpuSeconds,
      });
    }
    return out;
  }

  private ensureAccount(name: string): void {
    if (this.accounts.has(name)) return;
    const record: AccountRecord = { name, shares: 1, limits: null, decayedUsageGpuSeconds: 0, finishedGpuSeconds: 0 };
    this.addAccount(record);
    this.s.accounts.push(record);
    this.fairShares = null;
  }

  private addAccount(record: AccountRecord): void {
    const row = { record, runningGpus: 0, share: 1, shareOf: 0 };
    this.accounts.set(record.name, record);
    this.usage.push(row);
    this.usageOf.set(record.name, row);
  }

  // ---- events and validation ------------------------------------------------

  private push(e: Omit<SimEvent, 'seq'>): void {
    const event: SimEvent = { ...e, seq: this.s.eventSeq++ };
    if (this.isProgress(event)) this.progressEvents++;
    pushEvent(this.s.events, event);
  }

  /** Random (MTBF) failures are not progress: they never let a waiting job start. */
  private isProgress(e: SimEvent): boolean {
    return !(e.kind === EventKind.NodeFail && e.epoch !== null && e.epoch !== undefined);
  }

  private view(j: JobRecord): JobView {
    if (j.array) return this.arrayView(j);
    const ended = j.endTimeSeconds !== null;
    const { exitCode, signal } = endOfJob(j);
    let energyWh = j.energyWh;
    if (j.state === 'RUNNING') energyWh = this.energy(j, this.s.nowSeconds - (j.startTimeSeconds ?? this.s.nowSeconds));
    return {
      id: j.spec.id,
      seq: j.seq,
      user: j.spec.user,
      account: j.spec.account,
      partition: j.spec.partition,
      gpus: j.spec.gpus,
      nodeCount: j.spec.nodes,
      walltimeLimitSeconds: j.spec.walltimeLimitSeconds,
      state: j.state,
      pendingReason: j.state === 'PENDING' ? j.pendingReason : null,
      priority: j.priority,
      submitTimeSeconds: j.spec.submitTimeSeconds,
      startTimeSeconds: j.startTimeSeconds,
      endTimeSeconds: ended ? j.endTimeSeconds : null,
      nodeList: j.nodeIndices.map((i) => this.s.nodes[i]!.id),
      exitCode,
      signal,
      energyWh,
      ...(j.heldByPowerCap ? { heldByPowerCap: true as const } : {}),
      ...(j.arrayTask ? { arrayTask: { ...j.arrayTask } } : {}),
    };
  }

  private validateJob(spec: JobSpec): void {
    const bad = (what: string): never => {
      throw new SimInputError(`job "${spec.id}": ${what}`);
    };
    if (typeof spec.id !== 'string' || spec.id === '') bad('id must be a non-empty string');
    if (this.jobs.has(spec.id)) bad('duplicate job id');
    const pIndex = this.partitionIndex.get(spec.partition);
    if (pIndex === undefined) return bad(`unknown partition "${spec.partition}"`);
    const p = this.partition(pIndex);
    if (!isWhole(spec.submitTimeSeconds, this.s.nowSeconds)) bad(`submit time must be a whole second ≥ the clock (${this.s.nowSeconds})`);
    if (!isWhole(spec.gpus, 1)) bad('gpus must be an integer ≥ 1');
    if (!isWhole(spec.nodes, 1)) bad('nodes must be an integer ≥ 1');
    if (spec.gpus % spec.nodes !== 0) bad('gpus must be a multiple of nodes');
    if (spec.gpus / spec.nodes > p.gpusPerNode) bad(`more than ${p.gpusPerNode} GPUs per node`);
    if (spec.nodes > p.nodes) bad(`more nodes than partition "${p.name}" has`);
    if (!isWhole(spec.walltimeLimitSeconds, 1)) bad('walltime limit must be an integer ≥ 1');
    if (!isWhole(spec.runtimeSeconds, 0)) bad('runtime must be an integer ≥ 0');
    if (!isWhole(spec.gpuUtilPercent, 0) || spec.gpuUtilPercent > 100) bad('GPU utilisation must be an integer percent 0..100');
    if (!Number.isInteger(spec.exitCode)) bad('exit code must be an integer');
    if (typeof spec.user !== 'string' || typeof spec.account !== 'string') bad('user and account must be strings');
    if (spec.beginTimeSeconds !== undefined && !isWhole(spec.beginTimeSeconds, 0)) bad('begin time must be a whole second ≥ 0');
    if (spec.dependency !== undefined) {
      const { type, jobIds } = spec.dependency;
      if (type !== 'afterok' && type !== 'afterany' && type !== 'afternotok') bad('dependency type must be afterok, afterany or afternotok');
      if (!Array.isArray(jobIds) || jobIds.length === 0 || jobIds.length > MAX_DEPENDENCIES) bad(`a dependency names 1 to ${MAX_DEPENDENCIES} jobs`);
      if (jobIds.some((id) => typeof id !== 'string' || id === spec.id)) bad('a dependency names other jobs by id');
    }
    if (spec.array !== undefined) {
      try {
        newArrayTasks(spec.array?.text);
      } catch (error) {
        if (error instanceof SimInputError) bad(error.message);
        throw error;
      }
    }
    // A held array's tasks are its jobs: no other job may take one of their ids.
    const task = /^(.+)_(\d+)$/.exec(spec.id);
    if (task && this.jobs.get(task[1]!)?.array) bad('that id belongs to a task of a job array');
  }
}

function validateConfig(config: EngineConfig): void {
  validateCluster(config.cluster);
  const p = config.policy;
  if (p.order !== 'submit' && p.order !== 'multifactor') throw new SimInputError('policy.order must be submit or multifactor');
  if (p.backfill !== 'none' && p.backfill !== 'easy') throw new SimInputError('policy.backfill must be none or easy');
  for (const [k, v] of [
    ['ageWeight', p.ageWeight],
    ['fairShareWeight', p.fairShareWeight],
    ['maxAgeSeconds', p.maxAgeSeconds],
    ['usageHalfLifeSeconds', p.usageHalfLifeSeconds],
  ] as const) {
    if (!Number.isFinite(v) || v < 0) throw new SimInputError(`policy.${k} must be a finite number ≥ 0`);
  }
  if (p.queueDepth !== undefined && !isWhole(p.queueDepth, 1)) throw new SimInputError('policy.queueDepth must be a whole number ≥ 1');
  if (!Number.isInteger(config.seed)) throw new SimInputError('seed must be an integer');
  const f = config.nodeFailures;
  if (f && (!isWhole(f.mtbfSeconds, 1) || !isWhole(f.repairSeconds, 1))) {
    throw new SimInputError('nodeFailures needs whole mtbfSeconds ≥ 1 and repairSeconds ≥ 1');
  }
  if (config.startTimeSeconds !== undefined && !isWhole(config.startTimeSeconds, 0)) {
    throw new SimInputError('startTimeSeconds must be a whole number ≥ 0');
  }
}

/** createEngine builds an engine at the configured start time (0 by default) with all nodes up and no jobs. */
export function createEngine(config: EngineConfig): ClusterEngine {
  validateConfig(config);
  const cfg = deepCopy(config);
  const now = cfg.startTimeSeconds ?? 0;
  const nodes: NodeRecord[] = [];
  cfg.cluster.partitions.forEach((p, pi) => {
    for (let i = 0; i < p.nodes; i++) {
      nodes.push({ id: nodeName(p, i), partition: pi, down: false, repairAtSeconds: null, failEpoch: 0, allocatedGpus: 0, jobIds: [] });
    }
  });
  const accounts: AccountRecord[] = [];
  for (const a of cfg.accounts ?? []) {
    if (accounts.some((x) => x.name === a.name)) throw new SimInputError(`duplicate account "${a.name}"`);
    if (a.shares !== undefined && !(a.shares >= 0)) throw new SimInputError(`account "${a.name}": shares must be ≥ 0`);
    accounts.push({ name: a.name, shares: a.shares ?? 1, limits: a.limits ?? null, decayedUsageGpuSeconds: 0, finishedGpuSeconds: 0 });
  }
  const state: EngineState = {
    version: 1,
    config: cfg,
    nowSeconds: now,
    usageAsOfSeconds: now,
    rng: createRng(cfg.seed),
    eventSeq: 0,
    submitSeq: 0,
    events: [],
    jobs: [],
    pendingIds: [],
    runningIds: [],
    nodes,
    accounts,
  };
  const failures = cfg.nodeFailures;
  if (failures) {
    nodes.forEach((n, i) => {
      const at = now + exponentialSeconds(state.rng, failures.mtbfSeconds);
      pushEvent(state.events, { atSeconds: at, kind: EventKind.NodeFail, ref: i, epoch: n.failEpoch, seq: state.eventSeq++ });
    });
  }
  return new Engine(state);
}

/** restoreEngine rebuilds an engine from `serialize()` output; continuing it gives the same results as never having stopped. */
export function restoreEngine(state: EngineState): ClusterEngine {
  return engineOf(state?.version === 1 ? deepCopy(state) : state);
}

/** restoreEngineJson rebuilds an engine from `serializeJson()` output (or `serialize()` output as JSON text). */
export function restoreEngineJson(json: string): ClusterEngine {
  return engineOf(JSON.parse(json) as EngineState);
}

/** The engine over a state it now owns. */
function engineOf(state: EngineState): Engine {
  if (!state || state.version !== 1) throw new SimInputError('unsupported engine state (expected version 1)');
  validateConfig(state.config);
  return new Engine(state);
}
