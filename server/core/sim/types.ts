/**
 * Domain types of the simulated GPU cluster: configuration, jobs, states,
 * policies. Times are whole seconds on the simulation clock; power in watts.
 */

/** A data-centre site; `eu` marks sites inside the European Union. */
export interface Site {
  id: string;
  country: string;
  eu: boolean;
  /**
   * Facility power cap in W at the meter (IT power × PUE). Unset: no cap. A job starts only if the
   * site's projected facility power stays ≤ the cap (see power.ts).
   */
  powerCapW?: number;
  /** Power usage effectiveness × 1000 (1.2 → 1200); facility power = IT power × pueMilli / 1000. Default 1000. */
  pueMilli?: number;
}

/** A Slurm-like partition: a set of identical nodes at one site. */
export interface Partition {
  name: string;
  siteId: string;
  nodes: number;
  gpusPerNode: number;
  gpuModel: string;
  cpusPerNode: number;
  memoryGbPerNode: number;
  gpuIdlePowerW: number;
  gpuMaxPowerW: number;
  nodeBasePowerW: number;
  maxWalltimeSeconds: number;
}

/** The whole machine: sites and their partitions. */
export interface ClusterConfig {
  sites: Site[];
  partitions: Partition[];
}

/** Slurm job states used by the simulator. */
export type JobState = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED' | 'NODE_FAIL';

/** Terminal job states (the job will never run again). */
export const TERMINAL_STATES: readonly JobState[] = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL'];

/** Why a pending job is not running (Slurm's reason codes). */
export type PendingReason =
  | 'None'
  | 'Priority'
  | 'Resources'
  | 'QOSMaxGRESPerUser'
  | 'AssocGrpGRESMinutes'
  | 'PartitionTimeLimit'
  | 'PowerCap'
  | 'BeginTime'
  | 'Dependency'
  | 'DependencyNeverSatisfied'
  | 'JobArrayTaskLimit';

/** When a job may start after others (Slurm's --dependency): all of them ended OK, ended at all, or failed. */
export type DependencyType = 'afterok' | 'afterany' | 'afternotok';

/** dependencyHolds tells whether a job that ended in `state` satisfies a dependency of this type (the portal's rule too). */
export function dependencyHolds(type: DependencyType, state: string): boolean {
  if (type === 'afterany') return true;
  return (state === 'COMPLETED') === (type === 'afterok');
}

/**
 * A job as submitted. `runtimeSeconds` is how long it would really run (known
 * to the simulator, not to the scheduler); `walltimeLimitSeconds` is the
 * user's limit (the scheduler's estimate; the job is killed with TIMEOUT when
 * it would run longer). A job of `nodes` nodes takes `gpus / nodes` GPUs on each.
 */
export interface JobSpec {
  id: string;
  submitTimeSeconds: number;
  user: string;
  account: string;
  partition: string;
  gpus: number;
  nodes: number;
  walltimeLimitSeconds: number;
  runtimeSeconds: number;
  /** Mean GPU utilisation while running, whole percent 0..100. */
  gpuUtilPercent: number;
  /** Exit code when the job ends by itself: 0 ⇒ COMPLETED, otherwise FAILED. */
  exitCode: number;
  /** Earliest start (Slurm's --begin); before it the job waits with `BeginTime` and does not block the queue. */
  beginTimeSeconds?: number;
  /**
   * Start only after these jobs (ids on this engine) ended as `type` asks; until then the job waits with
   * `Dependency` and does not block the queue. A job that can never start waits with
   * `DependencyNeverSatisfied` until cancelled, as Slurm's does. A job not held is decided by `ended`
   * when it names it, else it counts as ended in a way that satisfies.
   */
  dependency?: {
    type: DependencyType;
    jobIds: string[];
    /** How jobs it names ended that the engine no longer holds (retired by a live driver): their end decides. */
    ended?: Record<string, string>;
  };
  /**
   * A job array (Slurm's --array, parseArray's text "0-19%4"): one submission, one task per index, each a
   * job of its own with id `${id}_${index}` and this spec. Tasks start in index order, at most the
   * throttle (`%N`) at once (the others wait with `JobArrayTaskLimit`); begin time and dependency hold
   * for the array as a whole. Tasks are made jobs lazily, so a large array costs one record at submit.
   */
  array?: { text: string };
}

/** Per-account quota limits (checked before a job may start). */
export interface AccountLimits {
  /** Most GPUs one user of the account may have running at once (QOSMaxGRESPerUser). */
  maxGpusPerUser?: number;
  /** GPU-minutes the account may use in total: finished + running (by walltime) + the new job (AssocGrpGRESMinutes). */
  grpGpuMinutes?: number;
}

/** An account known up front, with its fair-share shares (default 1) and limits. */
export interface AccountConfig {
  name: string;
  shares?: number;
  limits?: AccountLimits;
}

/** How the pending queue is ordered and whether later jobs may backfill. */
export interface PolicyConfig {
  order: 'submit' | 'multifactor';
  backfill: 'none' | 'easy';
  /** Multifactor weight of the age factor (min(age, maxAge) / maxAge). */
  ageWeight: number;
  /** Multifactor weight of the fair-share factor 2^(−usage share / shares share). */
  fairShareWeight: number;
  maxAgeSeconds: number;
  /** Half-life of the decay of recorded usage; 0 disables decay. */
  usageHalfLifeSeconds: number;
  /**
   * The most pending jobs of one partition a scheduling cycle looks at, in queue order (Slurm's
   * partition_job_depth); the others keep their last reason and priority. Unset: the whole queue.
   * Live clusters set it so a cycle costs the same with 100 or 100,000 jobs queued.
   */
  queueDepth?: number;
}

/** Named policies understood by `policyFromName`. */
export type PolicyName = 'fifo' | 'easy' | 'multifactor';

/** Random node failures: exponential time between failures per node, fixed repair time. */
export interface NodeFailureConfig {
  mtbfSeconds: number;
  repairSeconds: number;
}

/** Everything needed to create an engine. */
export interface EngineConfig {
  cluster: ClusterConfig;
  policy: PolicyConfig;
  accounts?: AccountConfig[];
  nodeFailures?: NodeFailureConfig | null;
  seed: number;
  startTimeSeconds?: number;
}
