/** Quota checks before a job may start (Slurm's QOS / association limits). */
import type { AccountLimits, PendingReason } from './types';

/** What the limit check needs to know about the job and current usage. */
export interface LimitCheck {
  gpus: number;
  walltimeLimitSeconds: number;
  /** GPUs the job's user already runs in this account. */
  userRunningGpus: number;
  /** Account GPU-seconds committed: finished usage + running jobs × their walltime limits. */
  accountCommittedGpuSeconds: number;
}

/** limitReason returns the pending reason when starting the job would break a limit, or null when it may start. */
export function limitReason(check: LimitCheck, limits: AccountLimits | undefined): PendingReason | null {
  if (!limits) return null;
  if (limits.maxGpusPerUser !== undefined && check.userRunningGpus + check.gpus > limits.maxGpusPerUser) {
    return 'QOSMaxGRESPerUser';
  }
  if (
    limits.grpGpuMinutes !== undefined &&
    check.accountCommittedGpuSeconds + check.gpus * check.walltimeLimitSeconds > limits.grpGpuMinutes * 60
  ) {
    return 'AssocGrpGRESMinutes';
  }
  return null;
}
