// The SchedulerPort: what the portal needs from a batch scheduler (the simulated cluster or a real
// Slurm through slurmrestd). Types only; adapters in server/adapters/scheduler implement it and must
// pass the one contract suite (server/adapters/scheduler/contract.ts).

/**
 * The Slurm job states the portal knows, the one list: the pg enum `job_state` (db/schema.ts, after the
 * portal's own SUBMITTING) and the API's enums derive from it. A new state goes last (ALTER TYPE … ADD VALUE).
 */
export const SCHEDULER_JOB_STATES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL', 'PREEMPTED'] as const;

/** When a job may start after others: they all completed (afterok), ended at all (afterany) or failed (afternotok). */
export const JOB_DEPENDENCY_TYPES = ['afterok', 'afterany', 'afternotok'] as const;
export type JobDependencyType = (typeof JOB_DEPENDENCY_TYPES)[number];

/** Slurm job states the portal knows. */
export type SchedulerJobState = (typeof SCHEDULER_JOB_STATES)[number];

/** The states a job never leaves. PREEMPTED: another job took its nodes (not requeued); it is charged what it ran. */
export const FINAL_STATES: readonly SchedulerJobState[] = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL', 'PREEMPTED'];

const PORTAL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * isPortalId tells a name the portal gives at the scheduler — a job's name is its portal job id, an
 * account is its project's id (both UUIDs) — from one made around the portal (sbatch from a shell).
 */
export function isPortalId(name: string): boolean {
  return PORTAL_ID.test(name);
}

/** isFinalState tells whether a job in this state will never change again. */
export function isFinalState(state: SchedulerJobState): boolean {
  return FINAL_STATES.includes(state);
}

/** A job as the portal submits it. */
export interface SchedulerJobSpec {
  /** The portal's job id: a retried submit with the same id must not create a second job. */
  portalJobId: string;
  /**
   * Which hand-over attempt this is (1 = the first). On the first attempt nobody can have submitted the
   * job yet, so an adapter may skip its duplicate lookup; on a retry (or when unknown) it must look.
   */
  attempt?: number;
  name: string;
  /** Partition = the resource class id. */
  partition: string;
  gpus: number;
  nodes: number;
  walltimeSeconds: number;
  /** Fair-share account (the project's id) and the person's POSIX user the job runs as (identity.ts). */
  account: string;
  user: string;
  /** The project's POSIX group (identity.ts projectGroupName): the job's files belong to it. */
  group?: string;
  image: string;
  command: string;
  env: Record<string, string>;
  /** Earliest start (Slurm's --begin): the job stays PENDING with reason BeginTime until then. */
  begin?: Date;
  /**
   * Start only after these portal jobs ended as `type` asks (Slurm's --dependency): until then the job
   * stays PENDING with reason Dependency; one that never may start waits with DependencyNeverSatisfied.
   * Only jobs not yet final in the portal are named (the portal decides the others itself).
   */
  dependency?: { type: JobDependencyType; portalJobIds: string[] };
  /**
   * A job array (Slurm's --array): one submission runs the job once per task index, as separate tasks
   * with the same spec (each with `gpus`, `nodes`, `walltimeSeconds`); `text` is parseArray's canonical
   * text ("0-19%4"), the throttle after `%` the most tasks running at once. A task sees its index in
   * SLURM_ARRAY_TASK_ID. The job's status then reports its tasks (`tasks`) and their sum.
   */
  array?: { text: string };
  /**
   * An interactive session (issue #28): its command is the session launcher with the app's name, run on
   * the node as it is (never inside the job's container image), which starts the app and writes its
   * connection file into the job's folder.
   */
  session?: { app: string };
  /**
   * What the simulated cluster should pretend happens (ignored by a real scheduler):
   * the runtime the job would need, its mean GPU utilisation and its exit code.
   */
  simulation?: { runtimeSeconds: number; gpuUtilPercent: number; exitCode: number };
  /**
   * The job's working folder, an absolute path on the site's filesystem (`<workspace>/jobs/<job id>`,
   * core/files/job-folder.ts), made by the portal before the hand-over. The job starts there and its
   * stdout and stderr go there (`stdout.log`, `stderr.log`; an array's task `stdout-<index>.log`).
   * Unset: the adapter's own folder (older callers and tests).
   */
  workDir?: string;
}

/** A job's state and accounting as the scheduler reports it. */
export interface SchedulerJobStatus {
  portalJobId: string;
  schedulerJobId: string;
  state: SchedulerJobState;
  /** Slurm's reason code while PENDING (Priority, Resources, a limit…), else null. */
  pendingReason: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  /**
   * The exit code as Slurm reports it (sacct's `ExitCode` before the colon): the program's own, 0 when a
   * signal ended it; null while the job runs or when it never ran.
   */
  exitCode: number | null;
  /** The signal that ended the job (sacct's after the colon, e.g. 15 for a TIMEOUT), else null. Slurm shows `${exitCode}:${signal ?? 0}`. */
  signal: number | null;
  nodeList: string[];
  /** GPU-seconds used so far (final once the state is final): GPUs × elapsed run time. */
  gpuSeconds: number;
  /** IT energy in watt-hours so far (final once the state is final). */
  energyWh: number;
  /** True when the energy was measured by the hardware, false when modelled. */
  energyMeasured: boolean;
  /** The site the job ran (or will run) at. */
  siteId: string | null;
  /**
   * A job the scheduler requeued (a node failed, it was preempted): its earlier attempts, oldest first.
   * The status above is the last attempt's, its gpuSeconds and energy those of all attempts together.
   */
  earlierAttempts?: { state: SchedulerJobState; startedAt: Date | null; endedAt: Date | null; gpuSeconds: number }[];
  /**
   * A job array: its tasks that started or ended after starting, by index (tasks still waiting, or
   * cancelled before they ran, are not listed; `tasksWaiting` counts those still waiting). The status
   * above is the array's as a whole (core/scheduler/array-status.ts summariseArray): gpuSeconds and
   * energy the sum over its tasks.
   */
  tasks?: SchedulerTaskStatus[];
  /** A job array: how many of its tasks wait to start (not yet listed in `tasks`). */
  tasksWaiting?: number;
}

/** One task of a job array as the scheduler reports it (the fields mean what they mean on a job). */
export interface SchedulerTaskStatus {
  index: number;
  /** The scheduler's id of this task (Slurm: the task's own job id). */
  schedulerJobId: string;
  state: SchedulerJobState;
  startedAt: Date | null;
  endedAt: Date | null;
  exitCode: number | null;
  signal: number | null;
  nodeList: string[];
  gpuSeconds: number;
  energyWh: number;
}

export interface ClusterNodeStatus {
  name: string;
  partition: string;
  state: 'idle' | 'allocated' | 'down';
  gpus: number;
  allocatedGpus: number;
  powerW: number;
}

/** The cluster as the scheduler sees it now. */
export interface ClusterDescription {
  at: Date;
  partitions: { name: string; siteId: string; gpuModel: string; nodes: number; gpusPerNode: number; maxWalltimeSeconds: number }[];
  nodes: ClusterNodeStatus[];
  pendingJobs: number;
  runningJobs: number;
  powerW: number;
}

export interface SchedulerPort {
  /** submit hands a job to the scheduler; idempotent by portalJobId (a retry returns the first job's id). */
  submit(spec: SchedulerJobSpec): Promise<{ schedulerJobId: string }>;
  /**
   * cancel stops a pending or running job (CANCELLED); cancelling a finished or unknown job changes
   * nothing. With `stop`, a running job is told to end as a service ends when asked to (Slurm:
   * `scancel --signal=TERM`, the service exits cleanly): it ends COMPLETED with the usage so far; a
   * pending one is cancelled all the same.
   */
  cancel(portalJobId: string, options?: { stop?: boolean }): Promise<void>;
  /** jobs reports the current status of the given jobs (unknown ids are left out). */
  jobs(portalJobIds: string[]): Promise<SchedulerJobStatus[]>;
  /** describeCluster reports partitions, nodes (free, busy, down), queue and power now. */
  describeCluster(): Promise<ClusterDescription>;
  /** Where a real scheduler writes a job's output on the cluster (a path), when it does; the simulated cluster has none. */
  /** (`arrayTask`: a job array's task, or `%a` for the pattern every task's file follows.) */
  outputLocation?(portalJobId: string, schedulerJobId: string, group?: string | null, arrayTask?: number | '%a'): string;
  /**
   * writeOutput brings the output files of jobs it runs up to date in their working folders, given each
   * job's latest status (the simulated cluster; a real scheduler's nodes write them and it has no such method).
   */
  writeOutput?(items: readonly { job: OutputJob; status: SchedulerJobStatus }[], now: Date): Promise<void>;
  /**
   * sessionAddress says where the portal's proxy reaches an interactive session (issue #28) on a node the
   * scheduler reported in the job's nodeList: the address to connect to. The simulated cluster runs
   * sessions on this machine (127.0.0.1); Slurm answers the node's NodeAddr. The caller checks that the
   * node is one of the job's before asking.
   */
  sessionAddress?(nodeName: string): Promise<string>;
  /**
   * extendTimeLimit raises a pending or running job's time limit to `walltimeSeconds` (an interactive
   * session extended, issue #28): the simulated cluster's engine; Slurm updates the job's TimeLimit with the
   * service's operator token, which a person's own cannot raise. Answers false when the job has already
   * ended (nothing changed); a limit the scheduler refuses (over the partition's): SchedulerRefusedError.
   */
  extendTimeLimit?(portalJobId: string, walltimeSeconds: number): Promise<boolean>;
  /** Seconds on the cluster's clock per wall-clock second: the simulated cluster's speed; absent: 1. */
  readonly clockSpeed?: number;
}

/** What writing a job's output needs to know of it (SchedulerPort.writeOutput). */
export interface OutputJob {
  jobId: string;
  /** The job's working folder, absolute (SchedulerJobSpec.workDir). */
  workDir: string;
  kind: 'training' | 'fine_tuning' | 'inference' | 'batch' | 'interactive';
  image: string;
  gpus: number;
  /** An array's number of tasks, else null. */
  arrayTasks: number | null;
  /** The inputs picked from the workspace (absolute paths, PORTAL_INPUTS), which the job reads first. */
  inputs?: string[];
  /** An interactive session: its app (the launcher's argument) and the project's workspace it opens in. */
  app?: string;
  workspace?: string;
  /** An inference service: the model name its server serves (issue #29). */
  servedModel?: string;
}

/**
 * A budget the scheduler enforces itself (Slurm: the project's account association in the partition gets
 * `GrpTRESMins=gres/gpu=N`), so a job submitted around the portal cannot overspend either.
 * `partition` is the portal's resource class id; the adapter maps it.
 */
export interface SchedulerBudget {
  account: string;
  partition: string;
  gpuMinutes: number;
  /** The POSIX users of the project's members (identity.ts): where jobs run as their people, each is bound by the budget. */
  users?: string[];
  /** The tenant's account the project's account belongs under (tenant → project), by the tenant's id. */
  parent?: string;
}

/** A budget as the scheduler holds it after a sync (gpuMinutes null: no limit there), with the usage it counts against it when it tells. */
export interface SchedulerBudgetState {
  account: string;
  partition: string;
  gpuMinutes: number | null;
  usedGpuMinutes: number | null;
  /** The scheduler runs no jobs of this class (no partition for it), so it enforces nothing there: not drift. */
  notEnforced?: boolean;
}

/** A job the scheduler holds because its account's budget limit would be exceeded (Slurm: `AssocGrpGRESMinutes`). */
export interface BudgetHold {
  schedulerJobId: string;
  /** The portal job, when the portal submitted it (else it was submitted around the portal). */
  portalJobId: string | null;
  account: string;
  /** The portal's resource class id, or the scheduler's partition name when it maps to none. */
  partition: string;
  reason: string;
  gpus: number;
  timeLimitSeconds: number;
  submittedAt: Date | null;
}

/** A scheduler that enforces budgets itself, as defence in depth behind the portal's ledger. */
export interface BudgetEnforcing {
  /** syncBudgets applies the limits (creating missing accounts and associations) and reads them back. */
  syncBudgets(budgets: SchedulerBudget[]): Promise<SchedulerBudgetState[]>;
  /** budgetHolds lists the jobs the scheduler holds on a budget limit now. */
  budgetHolds(): Promise<BudgetHold[]>;
}

/**
 * A job that ran in a portal project's account at the scheduler without being submitted through the
 * portal (Slurm: `sbatch -A <project>` from a shell), as the scheduler's accounting records it once final.
 */
export interface OutsideJob {
  /** The scheduler's cluster; with schedulerJobId it names the job once (the import is idempotent by both). */
  cluster: string;
  schedulerJobId: string;
  name: string;
  /** The project id (the Slurm account). */
  account: string;
  /** The portal's resource class id, or the scheduler's partition name when it maps to none. */
  partition: string;
  resourceClassId: string | null;
  /** Who ran it (the Unix user), when the scheduler says. */
  user: string | null;
  state: SchedulerJobState;
  startedAt: Date | null;
  endedAt: Date | null;
  /** Every attempt's GPU time, capped at the time limit: what the scheduler counts against the account. */
  gpuSeconds: number;
}

/** A scheduler whose accounting the portal reads back, so usage around the portal reaches the ledger. */
export interface UsageReporting {
  /** outsideJobs lists the final jobs of these accounts since `since`, including the portal's own (the caller tells them apart). */
  outsideJobs(accounts: string[], since: Date): Promise<OutsideJob[]>;
}

/** isUsageReporting tells whether a scheduler adapter reports the jobs run in its accounts. */
export function isUsageReporting(port: SchedulerPort): port is SchedulerPort & UsageReporting {
  return 'outsideJobs' in port && typeof port.outsideJobs === 'function';
}

/** One cluster of several (one per group of sites): its name, the sites it runs jobs for, the resource classes it runs, its adapter. */
export interface RoutedCluster {
  name: string;
  sites: readonly string[];
  classes: readonly string[];
  port: SchedulerPort;
}

/** A port standing for several clusters (server/adapters/scheduler/router.ts), each followed on its own. */
export interface ClusterSet {
  readonly clusters: readonly RoutedCluster[];
}

/**
 * clustersOf lists the clusters a port stands for: a router's, or the port itself as the one cluster of
 * every site (named `default`, sites null: all).
 */
export function clustersOf(port: SchedulerPort): { name: string; sites: readonly string[] | null; port: SchedulerPort }[] {
  const routed = (port as Partial<ClusterSet>).clusters;
  return routed ? routed.map((c) => ({ name: c.name, sites: c.sites, port: c.port })) : [{ name: clusterNameOf(port, null), sites: null, port }];
}

/** clusterNameOf names the cluster that runs a site's jobs through this port: a router's by the site, a routed cluster's own name, else `default`. */
export function clusterNameOf(port: SchedulerPort, siteId: string | null): string {
  const routed = (port as Partial<ClusterSet>).clusters;
  if (routed) return routed.find((c) => siteId !== null && c.sites.includes(siteId))?.name ?? 'default';
  return (port as { clusterName?: string }).clusterName ?? 'default';
}

/** isBudgetEnforcing tells whether a scheduler adapter enforces budgets itself. */
export function isBudgetEnforcing(port: SchedulerPort): port is SchedulerPort & BudgetEnforcing {
  return 'syncBudgets' in port && typeof port.syncBudgets === 'function' && 'budgetHolds' in port && typeof port.budgetHolds === 'function';
}

/**
 * SchedulerUnavailableError: the scheduler cannot be reached or does not answer (down, timing out, our
 * credentials refused). Nothing is decided: the portal keeps the job and tries again later.
 */
export class SchedulerUnavailableError extends Error {
  /** The scheduler answered, with a passing failure (it is up): callers need not back off. */
  readonly transient: boolean;
  constructor(message: string, options?: { cause?: unknown; transient?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SchedulerUnavailableError';
    this.transient = options?.transient ?? false;
  }
}

/** Why a scheduler refused a job for good. */
export type SchedulerRefusalReason = 'account' | 'resources' | 'limit' | 'partition' | 'other';

/**
 * SchedulerRefusedError: the scheduler refuses the job as asked, for good (no such partition, more than
 * a node has, over a hard limit, an account it does not know). Retrying the same request cannot help.
 */
export class SchedulerRefusedError extends Error {
  constructor(
    message: string,
    readonly reason: SchedulerRefusalReason,
    readonly code: number | null = null,
  ) {
    super(message);
    this.name = 'SchedulerRefusedError';
  }
}

// Told apart by name, not `instanceof`: Next.js bundles the worker (instrumentation) and the routes
// separately, so an error from the process's one adapter may come from another copy of these classes.

/** isSchedulerUnavailable tells whether an error means the scheduler did not answer (try again later). */
export function isSchedulerUnavailable(error: unknown): error is SchedulerUnavailableError {
  return error instanceof Error && error.name === 'SchedulerUnavailableError';
}

/** isSchedulerRefused tells whether an error means the scheduler refused the job for good. */
export function isSchedulerRefused(error: unknown): error is SchedulerRefusedError {
  return error instanceof Error && error.name === 'SchedulerRefusedError';
}

/** A scheduler with upkeep to do off the request path (the simulated cluster writes snapshots of its engine). */
export interface Checkpointing {
  /** checkpoint does the upkeep if it is due; the worker calls it every round. */
  checkpoint(): Promise<unknown>;
}

/** isCheckpointing tells whether a scheduler adapter wants the worker's checkpoint calls. */
export function isCheckpointing(port: SchedulerPort): port is SchedulerPort & Checkpointing {
  return 'checkpoint' in port && typeof port.checkpoint === 'function';
}
