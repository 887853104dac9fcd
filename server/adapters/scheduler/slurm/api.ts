// The adapter's view of slurmrestd (SlurmApi) on the typed client: answers mapped to the portal's terms
// (mapping.ts), failures to the port's two errors — refused for good (SchedulerRefusedError) or not
// answered (SchedulerUnavailableError) — and a refused token renewed once before giving up.
import { isFinalState, isSchedulerUnavailable, SchedulerRefusedError, SchedulerUnavailableError, type SchedulerRefusalReason } from '~/server/core/scheduler/port';
import type { CtldJob, DbJob, SlurmApi, SlurmArrayRef, SlurmNode, SlurmPartition } from './adapter';
import type { SlurmClient } from './client';
import type { CtldJob as SlurmCtldRecord, DbJob as SlurmDbRecord } from './schemas';
import { isSlurmError, SLURM_ERRNO, type SlurmError } from './errors';
import { arrayBitmapIndexes, arrayTaskCount, batchStepPending, expandHostlist, gpusFromGres, statusFromCtld, statusFromDb, timeLimitSeconds } from './mapping';
import { accountLimits, setAccountLimitsSacctmgr, syncBudgetsRest, type SacctmgrRunner, type SlurmBudget } from './limits';

export interface SlurmApiOptions {
  client: SlurmClient;
  /** renews the service user's token (after slurmrestd refused it). */
  renewToken: () => void;
  /** A client for a Slurm admin (budgets, raising a session's time limit), with its own token renewal; without it Slurm enforces no budgets. */
  admin?: { client: SlurmClient; renewToken: () => void };
  cluster: string;
  serviceUser: string;
  now: () => Date;
  /**
   * A client acting for a person (X-SLURM-USER-NAME: that person, the service's privileged token): jobs
   * submitted through it run as the person. Without it a submit as a person is refused.
   */
  asPerson?: (user: string) => { client: SlurmClient; renewToken: () => void };
  /** Runs sacctmgr (SLURM_ACCOUNT_LIMITS=sacctmgr): each project account's own GPU-minute limit, binding all its members together. */
  sacctmgr?: SacctmgrRunner;
}

const REFUSAL: Record<number, SchedulerRefusalReason> = {
  [SLURM_ERRNO.ESLURM_INVALID_PARTITION_NAME]: 'partition',
  [SLURM_ERRNO.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE]: 'resources',
  [SLURM_ERRNO.ESLURM_INVALID_ACCOUNT]: 'account',
  [SLURM_ERRNO.ESLURM_ACCOUNTING_POLICY]: 'limit',
};

/** toPortError turns a client failure into the port's errors. */
export function toPortError(error: unknown): Error {
  if (!isSlurmError(error)) return error instanceof Error ? error : new Error(String(error));
  if (error.kind === 'permanent') return new SchedulerRefusedError(error.message, (error.code !== null ? REFUSAL[error.code] : undefined) ?? 'other', error.code);
  return new SchedulerUnavailableError(error.message, { cause: error, transient: error.kind === 'transient' || error.kind === 'not-found' });
}

const DOWN = /DOWN|DRAIN|FAIL|NOT_RESPONDING|POWER/i;

function epochDate(seconds: number | null | undefined): Date | null {
  return typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000) : null;
}

/** Where a slurmctld record sits in a job array (array_job_id 0: no array). */
export function ctldArrayRef(job: SlurmCtldRecord): SlurmArrayRef | undefined {
  if (!job.array_job_id) return undefined;
  const taskId = typeof job.array_task_id === 'number' ? job.array_task_id : null;
  return { jobId: job.array_job_id, taskId, ...(taskId === null ? { pending: arrayTaskCount(job.array_task_string) } : {}) };
}

/** Where a slurmdbd record sits in a job array (array.job_id 0: no array). */
export function dbArrayRef(record: SlurmDbRecord): SlurmArrayRef | undefined {
  const array = record.array;
  if (!array?.job_id) return undefined;
  const taskId = typeof array.task_id === 'number' ? array.task_id : null;
  return { jobId: array.job_id, taskId, ...(taskId === null ? { indexes: arrayBitmapIndexes(array.task) } : {}) };
}

/** createSlurmApi builds the adapter's SlurmApi on a slurmrestd client. */
export function createSlurmApi(options: SlurmApiOptions): SlurmApi {
  const nowSeconds = () => Math.floor(options.now().getTime() / 1000);

  /**
   * One call; a refused token is renewed and the call tried once more — except a submit: slurmctld's
   * "refused" answers (5005 "Zero Bytes were transmitted or received") also come when it took the job
   * and the answer was lost, so a submit is never sent twice here; the next hand-over looks it up first.
   */
  async function run<T>(fn: (c: SlurmClient) => Promise<T>, target: { client: SlurmClient; renewToken: () => void } = options, retry = true): Promise<T> {
    try {
      return await fn(target.client);
    } catch (error) {
      if (!isSlurmError(error, 'auth')) throw toPortError(error);
      target.renewToken();
      if (!retry) throw toPortError(error);
      try {
        return await fn(target.client);
      } catch (again) {
        throw toPortError(again);
      }
    }
  }

  /** slurmdbd's records in the adapter's terms: what sacct shows (elapsed, GPUs, start and end) and who ran them. */
  function toDbJobs(records: SlurmDbRecord[]): DbJob[] {
    const now = nowSeconds();
    return records.map((record): DbJob => {
      const s = statusFromDb(record, { nowSeconds: now });
      const array = dbArrayRef(record);
      return {
        ...(array ? { array } : {}),
        jobId: record.job_id,
        name: record.name,
        user: record.user ?? null,
        submittedAt: typeof record.time.submission === 'number' && record.time.submission > 0 ? new Date(record.time.submission * 1000) : null,
        account: s.account ?? '',
        partition: s.partition ?? '',
        state: s.state,
        // Final with its end, and for a job Slurm ended, with the batch step that holds its signal (or long after).
        final: isFinalState(s.state) && s.endedAt !== null && !batchStepPending(record, s.state, s.startedAt !== null, now),
        elapsedSeconds: s.elapsedSeconds,
        gpus: s.gpus,
        startedAt: s.startedAt,
        endedAt: s.endedAt,
        exitCode: s.exitCode,
        signal: s.signal,
        nodeList: s.nodeList,
        timeLimitSeconds: s.timeLimitSeconds,
        energyJoules: s.energyJoules,
      };
    });
  }

  function personTarget(user: string) {
    if (!options.asPerson) throw new SchedulerRefusedError(`jobs cannot be submitted as ${user}: the portal is not set up to act for people (SLURM_SUBMIT_AS=person)`, 'other');
    return options.asPerson(user);
  }

  const api: SlurmApi = {
    async listJobs() {
      const jobs = await run((c) => c.listJobs());
      const now = nowSeconds();
      return jobs.map((job): CtldJob => {
        const s = statusFromCtld(job, now);
        const array = ctldArrayRef(job);
        return {
          ...(array ? { array } : {}),
          jobId: job.job_id,
          name: job.name,
          account: s.account ?? '',
          partition: s.partition ?? '',
          state: s.state,
          pendingReason: s.pendingReason,
          exitCode: s.exitCode,
          signal: s.signal,
          nodeList: s.nodeList,
          gpus: s.gpus,
          timeLimitSeconds: s.timeLimitSeconds,
          submittedAt: epochDate(job.submit_time),
          startedAt: s.startedAt,
          endedAt: s.endedAt,
        };
      });
    },

    async submit(body, asUser) {
      const target = asUser === undefined ? options : personTarget(asUser);
      const { jobId } = await run((c) => c.submitJob(body), target, false);
      return Number(jobId);
    },

    async signal(jobId, signal) {
      try {
        // A stop is SIGUSR1, which the job's wrapper (stoppable) turns into a clean end; a cancel is Slurm's own.
        await run((c) => c.cancelJob(String(jobId), signal === 'STOP' ? { signal: 'USR1' } : undefined));
      } catch (error) {
        // Gone already: nothing to stop.
        if (isSchedulerUnavailable(error) && isSlurmError(error.cause, 'not-found')) return;
        throw error;
      }
    },

    async setTimeLimit(jobId, minutes) {
      // Only an operator or admin may raise a job's time limit (a user may only lower it): Slurm's admin where
      // the site gives one (SLURM_ADMIN_USER), else the service user, which must then be an operator.
      try {
        await run((c) => c.setTimeLimit(String(jobId), minutes), options.admin);
      } catch (error) {
        // Refused as not allowed: asking again cannot help (the site's configuration must change), so it is no outage.
        const cause = isSchedulerUnavailable(error) ? error.cause : undefined;
        if (isSlurmError(cause) && (cause.code === SLURM_ERRNO.ESLURM_ACCESS_DENIED || cause.code === SLURM_ERRNO.ESLURM_USER_ID_MISSING)) {
          throw new SchedulerRefusedError(`Slurm does not let the portal's user raise a time limit (${cause.message}): only an operator may; set SLURM_ADMIN_USER`, 'other', cause.code);
        }
        throw error;
      }
    },

    async dbJobsByName(names, days, query = {}) {
      return toDbJobs(await run((c) => c.dbJobs({ names, startTime: `now-${days}days`, ...(query.neverEligible ? { bySubmission: true } : {}) })));
    },

    async dbArrayJobs(arrayJobId) {
      return toDbJobs(await run((c) => c.dbJob(String(arrayJobId))));
    },

    async dbJobsOfAccounts(accounts, days) {
      return toDbJobs(await run((c) => c.dbJobsOfAccounts({ accounts, startTime: `now-${days}days`, cluster: options.cluster })));
    },

    async dbdAgentQueueSize() {
      const { dbdAgentQueueSize } = await run((c) => c.diag());
      if (dbdAgentQueueSize === null) throw new SchedulerUnavailableError('slurmctld did not report its queue to slurmdbd (GET /diag)');
      return dbdAgentQueueSize;
    },

    async nodes() {
      const nodes = await run((c) => c.nodes());
      return nodes.map(
        (n): SlurmNode => ({
          name: n.name,
          address: n.address ?? null,
          partitions: n.partitions ?? [],
          gpus: gpusFromGres(n.gres),
          allocatedGpus: gpusFromGres(n.gres_used),
          down: DOWN.test([n.state ?? '', ...(n.state_flags ?? [])].join(' ')),
        }),
      );
    },

    async partitions() {
      const partitions = await run((c) => c.partitions());
      return partitions.map((p): SlurmPartition => ({ name: p.name, nodes: expandHostlist(p.nodes), maxTimeSeconds: timeLimitSeconds(p.max_time_limit) }));
    },
  };
  const admin = options.admin;
  if (admin) {
    api.syncBudgets = async (budgets: SlurmBudget[]) => {
      const applied = await run((c) => syncBudgetsRest(c, options.cluster, options.serviceUser, budgets), admin);
      // The accounts exist now: their own limit (all members together), where the site writes it with sacctmgr.
      if (options.sacctmgr && budgets.length) {
        try {
          await setAccountLimitsSacctmgr(options.sacctmgr, options.cluster, accountLimits(budgets));
        } catch (error) {
          throw toPortError(error);
        }
      }
      return applied;
    };
  }
  return api;
}

export type { SlurmError };
