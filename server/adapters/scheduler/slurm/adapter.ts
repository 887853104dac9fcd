// The SchedulerPort on a real Slurm through slurmrestd (REST v0.0.38 for slurmctld, dbv0.0.38 for
// slurmdbd). The portal's job id is the Slurm job's name; Slurm's own accounting decides every charge.
//
// - submit: the first hand-over attempt submits at once (nobody can have submitted the job yet). A retry
//   looks the name up first in slurmctld (GET /jobs) and in slurmdbd (/slurmdb/jobs?job_name=…), both,
//   because slurmdbd lags about a second behind and slurmctld forgets a job MinJobAge after it ended. It
//   submits again only when both answered, both found nothing, and slurmctld's agent queue to slurmdbd is
//   empty (else a record may still be on its way). A lookup that fails leaves the job waiting.
// - jobs: one cached GET /jobs per poll for everything slurmctld still holds, plus one slurmdbd query for
//   the names it no longer holds or that have ended. A job is final only once slurmdbd's record is final:
//   its elapsed time, GPUs, start and end are what `sacct` shows, so the charge equals it. An id is left
//   out only under the same proof as a resubmit; when Slurm cannot be asked, jobs() throws.
// - Two Slurm jobs with one name (a lost answer retried where the proof failed): the lowest id is the
//   job, the others are cancelled and logged. An array is one submission: its tasks' records share its id.
// - Arrays (spec.array): slurmctld and slurmdbd hold one record per started task (its own job id) and
//   one for the tasks not started; they become one status with core/scheduler/array-status.ts summariseArray.
// - Failures: every call times out (20 s); an unreachable Slurm opens a breaker that backs off
//   (1, 2, 4 … 60 s) so requests do not each wait for a timeout; refusals for good are
//   SchedulerRefusedError, everything else SchedulerUnavailableError (the portal keeps the job).
import { jobEnergyEstimateWh } from '~/server/core/jobs/estimates';
import type { SlurmSubmitBody } from './client';
import { preferCtldExit, type SlurmExit } from './mapping';
import { summariseArray } from '~/server/core/scheduler/array-status';
import {
  isFinalState,
  isPortalId,
  isSchedulerUnavailable,
  SchedulerRefusedError,
  SchedulerUnavailableError,
  type BudgetEnforcing,
  type BudgetHold,
  type ClusterDescription,
  type SchedulerBudget,
  type SchedulerBudgetState,
  type SchedulerJobSpec,
  type SchedulerJobState,
  type SchedulerJobStatus,
  type SchedulerTaskStatus,
  type OutsideJob,
  type SchedulerPort,
  type UsageReporting,
} from '~/server/core/scheduler/port';

/**
 * Where a record sits in a job array (absent on a job that is no array). Each started task is a record
 * of its own (its own job id, `taskId` its index); the tasks not started yet are one record under the
 * array's id with `taskId` null (the last task to start takes that record, and the id, over).
 */
export interface SlurmArrayRef {
  /** The array's job id (the id its submit answered; scancel of it ends every task). */
  jobId: number;
  taskId: number | null;
  /** slurmctld, on the record of tasks not started: how many its task string names (complete false: cut short or empty). */
  pending?: { count: number; complete: boolean; indexes?: number[] };
  /** slurmdbd, on that record: their indexes from its bitmap as last sent (it may still hold tasks that started since). */
  indexes?: number[];
}

/** A job as slurmctld reports it (GET /slurm/v0.0.38/jobs), already mapped to the portal's terms. */
export interface CtldJob {
  jobId: number;
  /** The job's name: the portal job id for the portal's jobs. */
  name: string;
  account: string;
  partition: string;
  state: SchedulerJobState;
  /** Slurm's state_reason while pending ("Priority", "Resources", "AssocGrpGRESMinutes"…), else null. */
  pendingReason: string | null;
  /** The exit code decoded from the wait status (0 when a signal ended it); null while it runs. */
  exitCode: number | null;
  /** The signal decoded from the wait status, else null. */
  signal: number | null;
  nodeList: string[];
  gpus: number;
  timeLimitSeconds: number | null;
  submittedAt: Date | null;
  startedAt: Date | null;
  /** Only once the job ended (a running job's end_time is a forecast). */
  endedAt: Date | null;
  array?: SlurmArrayRef;
}

/**
 * A job as slurmdbd records it (GET /slurmdb/v0.0.38/jobs): what `sacct` shows. A requeued job has one
 * record per attempt under one job id (`sacct -D`), told apart by their submission (the requeue's time).
 */
export interface DbJob {
  jobId: number;
  name: string;
  /** The Unix user it ran as (null when slurmdbd did not say). */
  user: string | null;
  submittedAt: Date | null;
  account: string;
  partition: string;
  state: SchedulerJobState;
  /** True once the record is final (the job ended and slurmdbd has its end). */
  final: boolean;
  elapsedSeconds: number;
  /** gres/gpu allocated over all nodes. */
  gpus: number;
  startedAt: Date | null;
  endedAt: Date | null;
  /** Null when slurmdbd cannot tell (dbv0.0.38 reports exit 1 as SUCCESS/0): then slurmctld's counts. */
  exitCode: number | null;
  /** The signal that ended the job: the record's, else its batch step's (a TIMEOUT job: 15). */
  signal: number | null;
  nodeList: string[];
  timeLimitSeconds: number | null;
  /** Energy the hardware measured, in joules, when it did (> 0). */
  energyJoules: number | null;
  /** The earlier attempts of a requeued job, oldest first (set by the adapter, which folds them into the last). */
  earlier?: DbJob[];
  array?: SlurmArrayRef;
}

/** The Slurm submission a record belongs to: its job, or its array (every task's record carries the array's id). */
export function submissionId(record: { jobId: number; array?: SlurmArrayRef }): number {
  return record.array?.jobId ?? record.jobId;
}

/**
 * foldAttempts turns slurmdbd's records of one name into one per Slurm job: a requeued job's attempts
 * (one job id, several records) become its last attempt, with the earlier ones beside it. Lowest id first.
 * An array task is a job of its own (requeued, it keeps its id and index); the record of an array's tasks
 * not started is kept apart from the task that later takes its id.
 */
export function foldAttempts(records: DbJob[]): DbJob[] {
  const byId = new Map<string, DbJob[]>();
  for (const r of records) {
    const key = `${r.jobId}/${r.array?.taskId ?? ''}`;
    byId.set(key, [...(byId.get(key) ?? []), r]);
  }
  return [...byId.values()]
    .map((attempts) => {
      attempts.sort((a, b) => (a.submittedAt?.getTime() ?? 0) - (b.submittedAt?.getTime() ?? 0));
      const last = attempts.at(-1)!;
      return attempts.length > 1 ? { ...last, earlier: attempts.slice(0, -1) } : last;
    })
    .sort((a, b) => a.jobId - b.jobId);
}

export interface SlurmNode {
  name: string;
  /** NodeAddr (where slurmctld reaches the node), null when Slurm gives none. */
  address?: string | null;
  partitions: string[];
  gpus: number;
  allocatedGpus: number;
  down: boolean;
}

export interface SlurmPartition {
  name: string;
  nodes: string[];
  maxTimeSeconds: number | null;
}

/** What the adapter needs of slurmrestd; errors come classified (SchedulerUnavailableError / SchedulerRefusedError). */
export interface SlurmApi {
  listJobs(): Promise<CtldJob[]>;
  /** Submits a job (the v0.0.38 body, built here), answers Slurm's job id. */
  /** Submits as the service user, or with `asUser` as that person (the service's privileged token acting for them). */
  submit(body: SlurmSubmitBody, asUser?: string): Promise<number>;
  /** KILL cancels (CANCELLED); TERM asks the job to end (a service exits cleanly: COMPLETED). */
  signal(jobId: number, signal: 'KILL' | 'STOP'): Promise<void>;
  /** Sets a job's time limit in minutes, with the service's (operator's) token. */
  setTimeLimit(jobId: number, minutes: number): Promise<void>;
  /**
   * slurmdbd's records of the jobs with these names, submitted in the last `days` days. With
   * `neverEligible`, also those slurmdbd gave no eligible time (a job held until it was cancelled, an
   * array's tasks that never ran), which the plain query misses, but without steps.
   */
  dbJobsByName(names: string[], days: number, query?: { neverEligible?: boolean }): Promise<DbJob[]>;
  /**
   * slurmdbd's records of one array, by its id: its tasks' and that of its tasks that never ran, which
   * slurmdbd records without an eligible time, so that the query by name (eligible in the period) misses it.
   */
  dbArrayJobs(arrayJobId: number): Promise<DbJob[]>;
  /** slurmdbd's records of every job of these accounts submitted or eligible in the last `days` days. */
  dbJobsOfAccounts?(accounts: string[], days: number): Promise<DbJob[]>;
  /** slurmctld's queue of records not yet sent to slurmdbd (`/diag` dbd_agent_queue_size). */
  dbdAgentQueueSize(): Promise<number>;
  nodes(): Promise<SlurmNode[]>;
  partitions(): Promise<SlurmPartition[]>;
  /** Applies GrpTRESMins=gres/gpu per (account, partition) for the service user, reads them back. */
  syncBudgets?(budgets: { account: string; partition: string; gpuMinutes: number; users?: string[]; parent?: string }[]): Promise<{ account: string; partition: string; gpuMinutes: number | null; usedGpuMinutes: number | null }[]>;
}

export type { SlurmSubmitBody };

/** The power model and site of a resource class (modelled energy when the hardware measures none). */
export interface SlurmClassInfo {
  id: string;
  siteId: string;
  gpuModel: string;
  gpusPerNode: number;
  maxWalltimeSeconds: number;
  gpuIdlePowerW: number;
  gpuMaxPowerW: number;
  nodeBasePowerW: number;
  /** How the class runs beyond its partition: QoS, GPU type (typed GRES), constraint, reservation (the catalogue's `slurm`). */
  slurm?: SlurmClassOptions;
}

/** The catalogue's Slurm options of a resource class. */
export interface SlurmClassOptions {
  qos?: string;
  gpuType?: string;
  constraint?: string;
  reservation?: string;
}

export interface SlurmAdapterOptions {
  api: SlurmApi;
  /** Resource class id → Slurm partition. */
  partitions: Record<string, string>;
  classes: SlurmClassInfo[];
  /** Builds the submit body of a spec for its partition (mapping.ts submitBody with the launcher and job dir), making the project's folder first where the jobs run as their people. */
  submitBody(spec: SchedulerJobSpec, partition: string): SlurmSubmitBody | Promise<SlurmSubmitBody>;
  /** Jobs are submitted as their person (spec.user, SLURM_SUBMIT_AS=person), not as the service user. */
  submitAsPerson?: boolean;
  /** How long one GET /jobs answers every read, in ms (SLURM_POLL_SECONDS). */
  pollMs: number;
  now: () => Date;
  /** GPU utilisation assumed for modelled energy, in percent. */
  assumedGpuUtilPercent: number;
  log?: (line: string) => void;
  /** How far back slurmdbd is asked for a job by name, in days; default 30. */
  lookbackDays?: number;
  /** How long an unknown id waits for slurmctld's records to reach slurmdbd before the answer is "cannot tell", in ms; default 3000. */
  agentQueueWaitMs?: number;
  /** Waits `ms` (tests pass a fake). */
  sleep?: (ms: number) => Promise<void>;
  /** The Slurm cluster's name (ClusterName), which names the jobs read back from its accounting. */
  cluster?: string;
}

const BREAKER_MAX_MS = 60_000;
/** Names per slurmdbd query (the URL stays short). */
const DB_NAMES_PER_QUERY = 100;
/** Final slurmdbd records kept in memory (they never change). */
const FINAL_CACHE_MAX = 20_000;
/** Arrays whose records are kept in memory (live ones for a poll, ended ones for good): up to 10,000 records each. */
const ARRAY_CACHE_MAX = 500;
/** How often slurmctld's queue to slurmdbd is looked at while an unknown id waits for it to drain. */
const AGENT_QUEUE_POLL_MS = 250;

export type SlurmScheduler = SchedulerPort & BudgetEnforcing & UsageReporting;

/** createSlurmPort returns the SchedulerPort (with budgets) on a Slurm reached through `api`. */
export function createSlurmPort(options: SlurmAdapterOptions): SlurmScheduler {
  const { api, now } = options;
  const log = options.log ?? ((line: string) => console.warn(line));
  const lookbackDays = options.lookbackDays ?? 30;
  const agentQueueWaitMs = options.agentQueueWaitMs ?? 3000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const classes = new Map(options.classes.map((c) => [c.id, c]));
  const classOfPartition = new Map(Object.entries(options.partitions).map(([cls, partition]) => [partition, cls]));

  // ---- breaker: an unreachable Slurm is not asked again until the back-off has passed ----
  let failures = 0;
  let blockedUntil = 0;
  let lastFailure: Error | null = null;
  async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const t = now().getTime();
    if (t < blockedUntil) throw new SchedulerUnavailableError(`Slurm is unreachable (${lastFailure?.message ?? 'no answer'}); next try in ${Math.ceil((blockedUntil - t) / 1000)} s`);
    try {
      const result = await fn();
      failures = 0;
      return result;
    } catch (error) {
      // Only a Slurm that does not answer (or refuses our token) opens the breaker; one that answered
      // with a passing failure is simply asked again next time.
      if (isSchedulerUnavailable(error) && error.transient) throw new SchedulerUnavailableError(`${what}: ${error.message}`, { cause: error, transient: true });
      if (isSchedulerUnavailable(error)) {
        failures += 1;
        lastFailure = error;
        blockedUntil = now().getTime() + Math.min(BREAKER_MAX_MS, 1000 * 2 ** (failures - 1));
        throw new SchedulerUnavailableError(`${what}: ${error.message}`, { cause: error });
      }
      throw error;
    }
  }

  // ---- slurmctld's jobs, one GET per poll ----
  let ctldCache: { at: number; jobs: Promise<CtldJob[]> } | null = null;
  function ctldJobs(fresh = false): Promise<CtldJob[]> {
    const t = now().getTime();
    if (!fresh && ctldCache && t - ctldCache.at < options.pollMs) return ctldCache.jobs;
    const jobs = call('slurmctld (GET /jobs)', () => api.listJobs());
    const entry = { at: t, jobs };
    ctldCache = entry;
    jobs.catch(() => {
      if (ctldCache === entry) ctldCache = null;
    });
    return jobs;
  }
  const invalidate = () => {
    ctldCache = null;
    recentArrays.clear();
  };

  /** slurmctld's jobs by name, lowest id first. */
  function byName(jobs: CtldJob[]): Map<string, CtldJob[]> {
    const map = new Map<string, CtldJob[]>();
    for (const job of jobs) {
      const list = map.get(job.name);
      if (list) list.push(job);
      else map.set(job.name, [job]);
    }
    for (const list of map.values()) list.sort((a, b) => a.jobId - b.jobId);
    return map;
  }

  // ---- slurmdbd's records: final ones are kept (they never change) ----
  /** A job's final record, or every record of an array once the array has ended (set by jobs()). */
  const finalRecords = new Map<string, DbJob[]>();
  const finalArrays = new Map<string, DbJob[]>();
  /**
   * A live array's records, read at most once per poll: an array is read from slurmdbd while it runs
   * (its ended tasks' charges are there, and slurmctld forgets each task MinJobAge after it ended).
   */
  const recentArrays = new Map<string, { at: number; records: DbJob[] }>();
  const bounded = <V>(map: Map<string, V>, max: number, name: string, value: V) => {
    map.delete(name);
    if (map.size >= max) map.delete(map.keys().next().value!);
    map.set(name, value);
  };
  const keepFinal = (name: string, records: DbJob[]) => {
    if (records.some((r) => r.array)) {
      recentArrays.delete(name);
      bounded(finalArrays, ARRAY_CACHE_MAX, name, records);
    } else if (!finalRecords.has(name)) bounded(finalRecords, FINAL_CACHE_MAX, name, records);
  };
  /**
   * slurmdbd's records of these names. An array's come by its id (the array ids slurmctld names in
   * `arrays`, else those the query by name finds): that read alone holds its tasks that never ran.
   */
  async function dbJobs(names: string[], arrays = new Map<string, number[]>(), reuseArrays = false): Promise<Map<string, DbJob[]>> {
    const out = new Map<string, DbJob[]>();
    const ask: string[] = [];
    const byId = new Map<string, number[]>();
    const t = now().getTime();
    for (const name of names) {
      const known = finalRecords.get(name) ?? finalArrays.get(name);
      const recent = reuseArrays ? recentArrays.get(name) : undefined;
      if (known) out.set(name, known);
      else if (recent && t - recent.at < options.pollMs) out.set(name, recent.records);
      else if (arrays.has(name)) byId.set(name, arrays.get(name)!);
      else ask.push(name);
    }
    const byName = async (list: string[], query: { neverEligible?: boolean } = {}) => {
      for (let i = 0; i < list.length; i += DB_NAMES_PER_QUERY) {
        const chunk = list.slice(i, i + DB_NAMES_PER_QUERY);
        const records = await call('slurmdbd (GET /slurmdb/jobs)', () => api.dbJobsByName(chunk, lookbackDays, query));
        for (const record of records) {
          const found = out.get(record.name);
          if (found) found.push(record);
          else out.set(record.name, [record]);
        }
      }
    };
    await byName(ask);
    // Names the query finds nothing of (rare: slurmctld no longer holds them either) are asked once more
    // for records without an eligible time: one that never ran, or an array's that is read by id below.
    const unseen = ask.filter((name) => !out.has(name));
    if (unseen.length) await byName(unseen, { neverEligible: true });
    for (const name of ask) {
      const ids = [...new Set((out.get(name) ?? []).filter((r) => r.array).map(submissionId))];
      if (ids.length) byId.set(name, ids);
    }
    for (const [name, ids] of byId) {
      const records = (out.get(name) ?? []).filter((r) => !ids.includes(submissionId(r)));
      for (const id of ids) {
        // Job ids restart after a purge: only the array's records of this name.
        const read = await call('slurmdbd (GET /slurmdb/job)', () => api.dbArrayJobs(id));
        records.push(...read.filter((r) => r.name === name && submissionId(r) === id));
      }
      if (records.length) out.set(name, records);
      else out.delete(name);
    }
    for (const name of new Set([...ask, ...byId.keys()])) {
      const records = out.get(name);
      if (!records) continue;
      const list = foldAttempts(records);
      out.set(name, list);
      const first = list[0]!;
      // An array's records are final one task at a time: jobs() keeps them once the array has ended.
      if (list.some((r) => r.array)) bounded(recentArrays, ARRAY_CACHE_MAX, name, { at: t, records: list });
      else if (first.final && list.length === 1) keepFinal(name, list);
    }
    return out;
  }

  /** Exits slurmctld reported, kept for when it has forgotten the job (slurmdbd's may be ambiguous); an array task's by `exitKey`. */
  const exits = new Map<string, SlurmExit>();
  const remember = (key: string, job: CtldJob) => {
    if (job.exitCode === null) return;
    if (exits.size >= FINAL_CACHE_MAX) exits.delete(exits.keys().next().value!);
    exits.set(key, { exitCode: job.exitCode, signal: job.signal });
  };
  const exitKey = (name: string, index: number) => `${name}[${index}]`;

  /** Scheduler ids this process submitted (a retry in this process needs no lookup). */
  const submitted = new Map<string, number>();

  /**
   * Cancels every job of a name but the lowest id (a duplicate from a retried hand-over). Ids are
   * submissions (submissionId): a duplicate array is cancelled as a whole by its array id.
   */
  async function dropDuplicates(name: string, ids: number[]): Promise<void> {
    const [keep, ...extra] = [...new Set(ids)].sort((a, b) => a - b);
    for (const id of extra) {
      log(`[slurm] job ${name} exists twice in Slurm (${keep} and ${id}): keeping ${keep}, cancelling ${id}`);
      await call('slurmctld (DELETE /job)', () => api.signal(id, 'KILL'));
    }
    if (extra.length) invalidate();
  }

  /** Slurm's --dependency for portal jobs: their Slurm ids (a job not at Slurm yet makes the hand-over wait). */
  async function slurmDependency(portalJobId: string, dependency: NonNullable<SchedulerJobSpec['dependency']>): Promise<string> {
    const ids: number[] = [];
    for (const parent of dependency.portalJobIds) {
      const id = submitted.get(parent) ?? (await lookUp(parent));
      if (id === null) throw new SchedulerUnavailableError(`job ${parent}, which ${portalJobId} depends on, is not at Slurm yet`, { transient: true });
      ids.push(id);
    }
    return `${dependency.type}:${ids.join(':')}`;
  }

  /**
   * lookUp finds the Slurm job (or array: its id) of a portal job id in slurmctld and slurmdbd; null only
   * with proof that Slurm has none (both answered, both found nothing, nothing on its way to slurmdbd).
   */
  async function lookUp(name: string): Promise<number | null> {
    const [ctld, db] = await Promise.all([ctldJobs(true), dbJobs([name])]);
    const ids = [...(byName(ctld).get(name) ?? []), ...(db.get(name) ?? [])].map(submissionId);
    if (ids.length) {
      await dropDuplicates(name, ids);
      return Math.min(...ids);
    }
    const queued = await call('slurmctld (GET /diag)', () => api.dbdAgentQueueSize());
    if (queued > 0) throw new SchedulerUnavailableError(`cannot tell whether Slurm has job ${name}: ${queued} record(s) are still on their way to slurmdbd`);
    return null;
  }

  function partitionOf(classId: string): string {
    const partition = options.partitions[classId];
    if (!partition) throw new SchedulerRefusedError(`no Slurm partition is configured for resource class ${classId} (SLURM_PARTITIONS)`, 'partition');
    return partition;
  }

  function modelledEnergyWh(classId: string | undefined, gpus: number, seconds: number): number {
    const rc = classId ? classes.get(classId) : undefined;
    if (!rc || gpus <= 0 || seconds <= 0) return 0;
    return jobEnergyEstimateWh(rc, gpus, seconds, options.assumedGpuUtilPercent);
  }

  /** The status of a job slurmctld still runs or queues (usage so far, modelled energy). */
  function liveStatus(portalJobId: string, job: CtldJob): SchedulerJobStatus {
    const classId = classOfPartition.get(job.partition);
    const t = now().getTime();
    const running = job.state === 'RUNNING' && job.startedAt !== null;
    const elapsed = running ? Math.max(0, Math.floor((t - job.startedAt!.getTime()) / 1000)) : 0;
    const capped = job.timeLimitSeconds === null ? elapsed : Math.min(elapsed, job.timeLimitSeconds);
    return {
      portalJobId,
      schedulerJobId: String(job.jobId),
      state: job.state === 'PENDING' ? 'PENDING' : 'RUNNING',
      pendingReason: job.state === 'PENDING' ? (job.pendingReason ?? 'Priority') : null,
      startedAt: running ? job.startedAt : null,
      endedAt: null,
      exitCode: null,
      signal: null,
      nodeList: running ? job.nodeList : [],
      gpuSeconds: job.gpus * capped,
      energyWh: modelledEnergyWh(classId, job.gpus, capped),
      energyMeasured: false,
      siteId: classId ? (classes.get(classId)?.siteId ?? null) : null,
    };
  }

  /** A job as slurmctld ended it, with its figures (its usage capped at the time limit, modelled energy): for a task whose record is not final yet. */
  function endedStatus(portalJobId: string, job: CtldJob): SchedulerJobStatus {
    const classId = classOfPartition.get(job.partition);
    const end = (job.endedAt ?? now()).getTime();
    const elapsed = job.startedAt ? Math.max(0, Math.floor((end - job.startedAt.getTime()) / 1000)) : 0;
    const capped = job.timeLimitSeconds === null ? elapsed : Math.min(elapsed, job.timeLimitSeconds);
    return {
      ...liveStatus(portalJobId, job),
      state: job.state,
      pendingReason: null,
      startedAt: job.startedAt,
      endedAt: job.endedAt,
      exitCode: job.exitCode,
      signal: job.signal,
      nodeList: job.nodeList,
      gpuSeconds: job.gpus * capped,
      energyWh: modelledEnergyWh(classId, job.gpus, capped),
    };
  }

  /** A job slurmctld ended before it ever started and slurmdbd never heard of: final, nothing used. */
  function neverStartedStatus(portalJobId: string, job: CtldJob): SchedulerJobStatus {
    const classId = classOfPartition.get(job.partition);
    return {
      portalJobId,
      schedulerJobId: String(job.jobId),
      state: job.state,
      pendingReason: null,
      startedAt: null,
      endedAt: job.endedAt ?? now(),
      exitCode: null,
      signal: null,
      nodeList: [],
      gpuSeconds: 0,
      energyWh: 0,
      energyMeasured: false,
      siteId: classId ? (classes.get(classId)?.siteId ?? null) : null,
    };
  }

  /** What one attempt used: its run time capped at the time limit, GPU-seconds and energy (measured or modelled). */
  function attemptUse(record: DbJob, limit: number | null) {
    const classId = classOfPartition.get(record.partition);
    const started = record.startedAt !== null && record.elapsedSeconds > 0 && record.nodeList.length > 0;
    const seconds = started ? (limit === null ? record.elapsedSeconds : Math.min(record.elapsedSeconds, limit)) : 0;
    const measured = record.energyJoules !== null && record.energyJoules > 0;
    const energyWh = measured ? Math.round(record.energyJoules! / 3600) : modelledEnergyWh(classId, record.gpus, seconds);
    return { started, gpuSeconds: record.gpus * seconds, energyWh, measured };
  }

  /**
   * The final status from slurmdbd's record: what sacct shows, GPU time capped at the time limit. A
   * requeued job ends as its last attempt ends, and is charged every attempt, as Slurm counts its usage.
   */
  function finalStatus(portalJobId: string, record: DbJob, ctld: CtldJob | undefined, exitOf = portalJobId): SchedulerJobStatus {
    const classId = classOfPartition.get(record.partition);
    const limit = record.timeLimitSeconds ?? ctld?.timeLimitSeconds ?? null;
    const last = attemptUse(record, limit);
    const earlier = (record.earlier ?? []).map((attempt) => ({ attempt, use: attemptUse(attempt, limit) }));
    const started = last.started;
    const state = ctld && isFinalState(ctld.state) ? ctld.state : record.state;
    const ctldExit = ctld && ctld.exitCode !== null ? { exitCode: ctld.exitCode, signal: ctld.signal } : exits.get(exitOf);
    const exit = preferCtldExit(ctldExit, record);
    return {
      portalJobId,
      schedulerJobId: String(record.jobId),
      state,
      pendingReason: null,
      startedAt: started ? record.startedAt : null,
      endedAt: record.endedAt ?? ctld?.endedAt ?? now(),
      exitCode: exit.exitCode ?? (state === 'COMPLETED' ? 0 : null),
      signal: exit.signal,
      nodeList: started ? record.nodeList : [],
      gpuSeconds: earlier.reduce((sum, e) => sum + e.use.gpuSeconds, last.gpuSeconds),
      energyWh: earlier.reduce((sum, e) => sum + e.use.energyWh, last.energyWh),
      energyMeasured: last.measured,
      siteId: classId ? (classes.get(classId)?.siteId ?? null) : null,
      ...(earlier.length
        ? { earlierAttempts: earlier.map(({ attempt, use }) => ({ state: attempt.state, startedAt: use.started ? attempt.startedAt : null, endedAt: attempt.endedAt, gpuSeconds: use.gpuSeconds })) }
        : {}),
    };
  }

  /** A slurmdbd record that is not final yet, read as slurmctld would report it. */
  function recordAsCtld(record: DbJob): CtldJob {
    const started = record.startedAt !== null && record.nodeList.length > 0;
    return { ...record, state: started ? 'RUNNING' : 'PENDING', pendingReason: started ? null : 'Accounting', exitCode: null, signal: null, submittedAt: null, startedAt: started ? record.startedAt : null, endedAt: null };
  }

  /** An array task's status, from the status it would have as a job of its own. */
  function taskOf(index: number, s: SchedulerJobStatus): SchedulerTaskStatus {
    return { index, schedulerJobId: s.schedulerJobId, state: s.state, startedAt: s.startedAt, endedAt: s.endedAt, exitCode: s.exitCode, signal: s.signal, nodeList: s.nodeList, gpuSeconds: s.gpuSeconds, energyWh: s.energyWh };
  }

  /**
   * One array's status from its records in slurmctld and slurmdbd, by summariseArray. Each started task
   * is read as a job of its own (live from slurmctld, final only with slurmdbd's final record, its
   * attempts folded); the record of the tasks not started counts them as waiting while it pends, and as
   * never run once it ended (cancelled) — from slurmctld's task string where whole, else slurmdbd's bitmap
   * less the tasks that started since. A task that ended without ever starting is not listed either.
   * `proof`: slurmdbd answered and nothing is on its way to it (what slurmctld ended unstarted is final).
   * `fromDbAlone`: slurmdbd's records alone give this status (an ended array's can be kept).
   */
  async function arrayStatus(portalJobId: string, ctldRecords: CtldJob[], dbRecords: DbJob[], proof: () => Promise<boolean>): Promise<{ status: SchedulerJobStatus; fromDbAlone: boolean }> {
    const first = ctldRecords[0] ?? dbRecords[0]!;
    const ctldTasks = new Map<number, CtldJob>();
    const dbTasks = new Map<number, DbJob>();
    let ctldRest: CtldJob | undefined;
    let dbRest: DbJob | undefined;
    for (const job of ctldRecords) {
      const index = job.array?.taskId ?? null;
      if (index === null) ctldRest = job;
      else ctldTasks.set(index, job);
    }
    for (const record of dbRecords) {
      const index = record.array?.taskId ?? null;
      if (index === null) dbRest = record;
      else dbTasks.set(index, record);
    }
    const tasks: SchedulerTaskStatus[] = [];
    let waiting = 0;
    let neverRan = 0;
    let pendingReason: string | null = null;
    let fromDbAlone = true;
    let measured = true;
    let unsettled = false;
    const indexes = [...new Set([...ctldTasks.keys(), ...dbTasks.keys()])].sort((a, b) => a - b);
    for (const index of indexes) {
      const job = ctldTasks.get(index);
      const record = dbTasks.get(index);
      if (job) remember(exitKey(portalJobId, index), job);
      // A task requeued after it ran (its earlier attempts in slurmdbd) is listed while it waits again.
      const ranBefore = (record?.earlier ?? []).some((a) => a.startedAt !== null);
      if (job && !isFinalState(job.state)) {
        fromDbAlone = false;
        measured = false;
        // The last task left waiting is a record of its own (with its index), not started: it waits.
        if (job.state === 'PENDING' && !ranBefore) {
          waiting++;
          pendingReason ??= job.pendingReason;
        } else tasks.push(taskOf(index, liveStatus(portalJobId, job)));
      } else if (record?.final) {
        if (record.startedAt === null && !ranBefore) neverRan++;
        else {
          const status = finalStatus(portalJobId, record, job, exitKey(portalJobId, index));
          measured &&= status.energyMeasured;
          tasks.push(taskOf(index, status));
        }
      } else if (job) {
        // Ended in slurmctld, not yet final in slurmdbd (its record is a second or so behind): listed as
        // slurmctld ended it, with slurmctld's figures, but the array is not settled until Slurm's record is.
        fromDbAlone = false;
        measured = false;
        if (job.startedAt !== null) {
          unsettled = true;
          tasks.push(taskOf(index, endedStatus(portalJobId, job)));
        } else if (job.state === 'CANCELLED' && (await proof())) neverRan++;
        else {
          waiting++;
          pendingReason = 'Accounting';
        }
      } else if (record) {
        fromDbAlone = false;
        measured = false;
        const live = recordAsCtld(record);
        if (live.state === 'PENDING' && !ranBefore) {
          waiting++;
          pendingReason ??= 'Accounting';
        } else tasks.push(taskOf(index, liveStatus(portalJobId, live)));
      }
    }
    // The tasks not started: slurmctld's text is cut short past 64 characters, slurmdbd's bitmap is whole
    // but as last sent (it may still hold tasks that have a record of their own by now).
    const rest = (): number => {
      const pending = ctldRest?.array?.pending;
      // A task may have started between slurmctld's answer and slurmdbd's: counted once, as started.
      if (pending?.complete && pending.indexes) return pending.indexes.filter((i) => !ctldTasks.has(i) && !dbTasks.has(i)).length;
      if (pending?.complete) return pending.count;
      const left = (dbRest?.array?.indexes ?? []).filter((i) => !ctldTasks.has(i) && !dbTasks.has(i)).length;
      return Math.max(1, left, pending?.count ?? 0);
    };
    if (ctldRest && !isFinalState(ctldRest.state)) {
      fromDbAlone = false;
      waiting += rest();
      pendingReason = ctldRest.pendingReason ?? pendingReason;
    } else if (dbRest?.final) {
      neverRan += rest();
    } else if (ctldRest) {
      fromDbAlone = false;
      if (await proof()) neverRan += rest();
      else {
        waiting += rest();
        pendingReason = 'Accounting';
      }
    } else if (dbRest && ctldRecords.length === 0) {
      // slurmctld holds none of it and slurmdbd's record of them is not final yet: not settled.
      fromDbAlone = false;
      waiting += rest();
      pendingReason ??= 'Accounting';
    }
    const classId = classOfPartition.get(first.partition);
    const summary = summariseArray({
      portalJobId,
      schedulerJobId: String(submissionId(first)),
      tasks,
      waiting,
      neverRan,
      pendingReason: pendingReason ?? 'Priority',
      energyMeasured: tasks.length > 0 && measured,
      siteId: classId ? (classes.get(classId)?.siteId ?? null) : null,
    });
    // Every task has ended, some only in slurmctld: running still, as a job is until its record is final.
    const status = unsettled && isFinalState(summary.state) ? { ...summary, state: 'RUNNING' as const, endedAt: null, exitCode: null, signal: null } : summary;
    return { status, fromDbAlone };
  }

  let budgetChain: Promise<unknown> = Promise.resolve();

  const port: SlurmScheduler = {
    async submit(spec) {
      const partition = partitionOf(spec.partition);
      const known = submitted.get(spec.portalJobId);
      if (known !== undefined) return { schedulerJobId: String(known) };
      if (spec.attempt !== 1) {
        const existing = await lookUp(spec.portalJobId);
        if (existing !== null) {
          submitted.set(spec.portalJobId, existing);
          return { schedulerJobId: String(existing) };
        }
      }
      const dependency = spec.dependency ? await slurmDependency(spec.portalJobId, spec.dependency) : undefined;
      const jobId = await call('slurmctld (POST /job/submit)', async () => {
        const body = await options.submitBody(spec, partition);
        const job = body.job;
        return api.submit(dependency && job ? { ...body, job: { ...job, dependency } } : body, options.submitAsPerson ? spec.user : undefined);
      });
      submitted.set(spec.portalJobId, jobId);
      invalidate();
      return { schedulerJobId: String(jobId) };
    },

    async cancel(portalJobId, cancelOptions) {
      const jobs = byName(await ctldJobs(true)).get(portalJobId) ?? [];
      const live = jobs.filter((j) => !isFinalState(j.state));
      const signals = new Map<number, 'KILL' | 'STOP'>();
      for (const job of live) {
        // An array is cancelled as one, by its id (scancel <array id> ends every task, running or waiting).
        // A stop is for services, which are no arrays: slurmctld refuses to signal an array's waiting
        // tasks (2020), so an array asked to stop is cancelled all the same.
        if (job.array) signals.set(job.array.jobId, 'KILL');
        // A service asked to stop gets SIGTERM and exits cleanly (COMPLETED); a pending one is cancelled.
        else signals.set(job.jobId, cancelOptions?.stop && job.state === 'RUNNING' ? 'STOP' : 'KILL');
      }
      for (const [jobId, signal] of signals) await call('slurmctld (DELETE /job)', () => api.signal(jobId, signal));
      if (signals.size) invalidate();
    },

    async extendTimeLimit(portalJobId, walltimeSeconds) {
      const live = (byName(await ctldJobs(true)).get(portalJobId) ?? []).filter((j) => !isFinalState(j.state));
      if (live.length === 0) return false;
      if (live.some((j) => j.array)) throw new SchedulerRefusedError('the time limit of a job array is not extended', 'other');
      // Slurm keeps time limits in minutes: the portal's are whole minutes (a part of one is rounded up, never cut).
      const minutes = Math.ceil(walltimeSeconds / 60);
      for (const job of live) {
        if (job.timeLimitSeconds !== null && job.timeLimitSeconds >= minutes * 60) continue;
        await call('slurmctld (POST /job/{id})', () => api.setTimeLimit(job.jobId, minutes));
      }
      invalidate();
      return true;
    },

    async jobs(portalJobIds) {
      // A record slurmctld has just written (a job submitted a moment ago) is usually with slurmdbd within
      // a second: wait that long for proof before answering "cannot tell", which holds the reconciler back.
      async function agentQueueDrains(): Promise<boolean> {
        for (let waited = 0; ; waited += AGENT_QUEUE_POLL_MS) {
          if ((await call('slurmctld (GET /diag)', () => api.dbdAgentQueueSize())) === 0) return true;
          if (waited >= agentQueueWaitMs) return false;
          await sleep(AGENT_QUEUE_POLL_MS);
        }
      }
      if (portalJobIds.length === 0) return [];
      const ctld = byName(await ctldJobs());
      // slurmdbd is asked for the names slurmctld no longer holds, for those that ended, and for arrays
      // (their ended tasks' records; once per poll).
      const askDb = portalJobIds.filter((id) => {
        const list = ctld.get(id);
        return !list || list.some((j) => j.array) || isFinalState(list[0]!.state);
      });
      // slurmdbd away (slurmctld still answers): ended jobs wait for their record, live ones are followed.
      let db = new Map<string, DbJob[]>();
      let dbError: SchedulerUnavailableError | null = null;
      // An array slurmctld holds is read from slurmdbd by its id.
      const arrays = new Map<string, number[]>();
      for (const id of askDb) {
        const ids = [...new Set((ctld.get(id) ?? []).filter((j) => j.array).map(submissionId))];
        if (ids.length) arrays.set(id, ids);
      }
      try {
        if (askDb.length) db = await dbJobs(askDb, arrays, true);
      } catch (error) {
        if (!(isSchedulerUnavailable(error))) throw error;
        dbError = error;
      }
      let proven: boolean | null = null;
      const proof = async (): Promise<boolean> => {
        if (dbError) return false;
        proven ??= await agentQueueDrains();
        return proven;
      };
      const out: SchedulerJobStatus[] = [];
      for (const id of portalJobIds) {
        const inCtld = ctld.get(id);
        const inDb = db.get(id);
        // One submission is one Slurm job or one array (its tasks' records share its id): two are a duplicate.
        const ctldIds = [...new Set((inCtld ?? []).map(submissionId))];
        const dbIds = [...new Set((inDb ?? []).map(submissionId))];
        if (ctldIds.length > 1) await dropDuplicates(id, ctldIds);
        else if (dbIds.length > 1) await dropDuplicates(id, dbIds);
        const kept = ctldIds.length ? Math.min(...ctldIds) : dbIds.length ? Math.min(...dbIds) : null;
        const arrayCtld = (inCtld ?? []).filter((j) => submissionId(j) === kept);
        const arrayDb = (inDb ?? []).filter((r) => submissionId(r) === kept);
        if ([...arrayCtld, ...arrayDb].some((r) => r.array)) {
          const { status, fromDbAlone } = await arrayStatus(id, arrayCtld, arrayDb, proof);
          if (fromDbAlone && !dbError && isFinalState(status.state)) keepFinal(id, arrayDb);
          out.push(status);
          continue;
        }
        const job = inCtld?.[0];
        if (job) remember(id, job);
        const record = inDb?.find((r) => !job || r.jobId === job.jobId) ?? inDb?.[0];
        if (job && !isFinalState(job.state)) {
          out.push(liveStatus(id, job));
        } else if (record?.final) {
          out.push(finalStatus(id, record, job));
        } else if (job && !record && job.state === 'CANCELLED' && job.startedAt === null && (await proof())) {
          // Cancelled before it was ever eligible (a dependency never met, a begin not reached): slurmctld
          // sends such a job no record, so slurmdbd will never have one. Nothing ran: slurmctld's word ends it.
          out.push(neverStartedStatus(id, job));
        } else if (job) {
          // Ended in slurmctld, not yet final in slurmdbd: not settled until Slurm's record is.
          out.push(liveStatus(id, { ...job, state: job.startedAt ? 'RUNNING' : 'PENDING', pendingReason: job.startedAt ? null : 'Accounting' }));
        } else if (record) {
          out.push(liveStatus(id, recordAsCtld(record)));
        } else {
          // Unknown to both: left out only with proof that nothing is on its way to slurmdbd.
          if (dbError) throw dbError;
          proven ??= await agentQueueDrains();
          if (!proven) throw new SchedulerUnavailableError(`cannot tell whether Slurm has job ${id}: records are still on their way to slurmdbd`);
        }
      }
      return out;
    },

    async describeCluster(): Promise<ClusterDescription> {
      const [nodes, partitions, jobs] = await Promise.all([call('slurmctld (GET /nodes)', () => api.nodes()), call('slurmctld (GET /partitions)', () => api.partitions()), ctldJobs()]);
      const out: ClusterDescription = { at: now(), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 };
      const byNodeName = new Map(nodes.map((n) => [n.name, n]));
      for (const [classId, partitionName] of Object.entries(options.partitions)) {
        const partition = partitions.find((p) => p.name === partitionName);
        const rc = classes.get(classId);
        if (!partition || !rc) continue;
        const members = partition.nodes.map((name) => byNodeName.get(name)).filter((n): n is SlurmNode => n !== undefined);
        out.partitions.push({
          name: classId,
          siteId: rc.siteId,
          gpuModel: rc.gpuModel,
          nodes: members.length,
          gpusPerNode: members.length ? Math.max(...members.map((n) => n.gpus)) : 0,
          maxWalltimeSeconds: partition.maxTimeSeconds ?? rc.maxWalltimeSeconds,
        });
        for (const n of members) {
          // Power is modelled (fake or unmetered GPUs): the node's base, idle GPUs, busy GPUs at the assumed load.
          const busyW = ((rc.gpuMaxPowerW - rc.gpuIdlePowerW) * options.assumedGpuUtilPercent) / 100;
          const powerW = n.down ? 0 : Math.round((rc.nodeBasePowerW * n.gpus) / Math.max(1, rc.gpusPerNode) + n.gpus * rc.gpuIdlePowerW + n.allocatedGpus * busyW);
          out.nodes.push({ name: n.name, partition: classId, state: n.down ? 'down' : n.allocatedGpus > 0 ? 'allocated' : 'idle', gpus: n.gpus, allocatedGpus: n.allocatedGpus, powerW });
          out.powerW += powerW;
        }
      }
      const mapped = new Set(Object.values(options.partitions));
      for (const job of jobs) {
        if (!mapped.has(job.partition)) continue;
        // An array's tasks not started are one record: each counts as a job waiting.
        if (job.state === 'PENDING') out.pendingJobs += job.array?.pending ? Math.max(1, job.array.pending.count) : 1;
        else if (job.state === 'RUNNING') out.runningJobs++;
      }
      return out;
    },

    syncBudgets(budgets: SchedulerBudget[]): Promise<SchedulerBudgetState[]> {
      const sync = api.syncBudgets?.bind(api);
      if (!sync) return Promise.reject(new SchedulerUnavailableError('no Slurm admin is configured (SLURM_ADMIN_USER): Slurm enforces no budgets'));
      const rows = budgets.filter((b) => options.partitions[b.partition]).map((b) => ({ account: b.account, partition: partitionOf(b.partition), gpuMinutes: b.gpuMinutes, ...(b.parent ? { parent: b.parent } : {}), ...(options.submitAsPerson ? { users: b.users ?? [] } : {}) }));
      // One sync at a time: slurmdbd refuses association writes that overlap (error -1).
      const run = budgetChain.then(async () => {
        const applied = rows.length ? await call('slurmdbd (POST /slurmdb/associations)', () => sync(rows)) : [];
        const unmapped = budgets.filter((b) => !options.partitions[b.partition]).map((b) => ({ ...b, gpuMinutes: null, usedGpuMinutes: null, notEnforced: true }));
        return [...applied.map((a) => ({ ...a, partition: classOfPartition.get(a.partition) ?? a.partition })), ...unmapped];
      });
      budgetChain = run.catch(() => undefined);
      return run;
    },

    async outsideJobs(accounts: string[], since: Date): Promise<OutsideJob[]> {
      const read = api.dbJobsOfAccounts?.bind(api);
      if (!read || accounts.length === 0) return [];
      const days = Math.max(1, Math.ceil((now().getTime() - since.getTime()) / 86_400_000));
      const out: OutsideJob[] = [];
      for (let i = 0; i < accounts.length; i += DB_NAMES_PER_QUERY) {
        const records = await call('slurmdbd (GET /slurmdb/jobs)', () => read(accounts.slice(i, i + DB_NAMES_PER_QUERY), days));
        for (const record of foldAttempts(records)) {
          if (!record.final) continue;
          const final = finalStatus(record.name, record, undefined);
          const classId = classOfPartition.get(record.partition) ?? null;
          out.push({
            cluster: options.cluster ?? 'slurm',
            schedulerJobId: String(record.jobId),
            name: record.name,
            account: record.account,
            partition: classId ?? record.partition,
            resourceClassId: classId,
            user: record.user,
            state: final.state,
            startedAt: final.startedAt,
            endedAt: final.endedAt,
            gpuSeconds: final.gpuSeconds,
          });
        }
      }
      return out;
    },

    async budgetHolds(): Promise<BudgetHold[]> {
      const jobs = await ctldJobs();
      return jobs
        .filter((j) => j.state === 'PENDING' && j.pendingReason !== null && /Grp(GRES|TRES)Min/.test(j.pendingReason))
        .map((j) => ({
          schedulerJobId: String(j.jobId),
          // The portal names its jobs by their id; anything else was submitted around the portal.
          portalJobId: isPortalId(j.name) ? j.name : null,
          account: j.account,
          partition: classOfPartition.get(j.partition) ?? j.partition,
          reason: j.pendingReason!,
          gpus: j.gpus,
          timeLimitSeconds: j.timeLimitSeconds ?? 0,
          submittedAt: j.submittedAt,
        }));
    },
  };
  return port;
}
