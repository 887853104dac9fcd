/**
 * Fair-share usage. Each account's usage (GPU-seconds) decays exponentially
 * with a half-life H; while it runs g GPUs it grows at rate g. Over an interval
 * Δ with constant g the exact update is u·2^(−Δ/H) + g·H/ln2·(1 − 2^(−Δ/H)).
 */

/** decayUsage returns usage after elapsedSeconds of decay: usage × 2^(−elapsed / halfLife); halfLife 0 means no decay. */
export function decayUsage(usageGpuSeconds: number, elapsedSeconds: number, halfLifeSeconds: number): number {
  if (halfLifeSeconds <= 0 || elapsedSeconds <= 0) return usageGpuSeconds;
  return usageGpuSeconds * Math.pow(2, -elapsedSeconds / halfLifeSeconds);
}

/** One interval of accrual: its length and the decay over it, the same for every account (computed once per instant). */
export interface Accrual {
  elapsedSeconds: number;
  halfLifeSeconds: number;
  /** 2^(−Δ/H). */
  decay: number;
  /** 1 − 2^(−Δ/H), via expm1 to keep precision when Δ ≪ H. */
  grown: number;
}

/** accrual computes the decay over an interval once, for `accrueBy` on every account. */
export function accrual(elapsedSeconds: number, halfLifeSeconds: number): Accrual {
  const decays = halfLifeSeconds > 0 && elapsedSeconds > 0;
  return {
    elapsedSeconds,
    halfLifeSeconds,
    decay: decayUsage(1, elapsedSeconds, halfLifeSeconds),
    grown: decays ? -Math.expm1((-elapsedSeconds * Math.LN2) / halfLifeSeconds) : 0,
  };
}

/** accrueBy advances decayed usage over the interval of `step` during which the account ran `gpus` GPUs throughout. */
export function accrueBy(step: Accrual, usageGpuSeconds: number, gpus: number): number {
  if (step.elapsedSeconds <= 0) return usageGpuSeconds;
  if (step.halfLifeSeconds <= 0) return usageGpuSeconds + gpus * step.elapsedSeconds;
  const decayed = usageGpuSeconds * step.decay;
  if (gpus === 0) return decayed;
  return decayed + ((gpus * step.halfLifeSeconds) / Math.LN2) * step.grown;
}

/** accrueUsage advances decayed usage over an interval during which the account ran `gpus` GPUs throughout. */
export function accrueUsage(usageGpuSeconds: number, gpus: number, elapsedSeconds: number, halfLifeSeconds: number): number {
  return accrueBy(accrual(elapsedSeconds, halfLifeSeconds), usageGpuSeconds, gpus);
}

/** fairShareFactor is Slurm's classic factor 2^(−U/S): U the account's fraction of all decayed usage, S its fraction of all shares (1 when nobody has used anything). */
export function fairShareFactor(usageGpuSeconds: number, totalUsageGpuSeconds: number, shares: number, totalShares: number): number {
  if (totalUsageGpuSeconds <= 0) return 1;
  if (shares <= 0 || totalShares <= 0) return 0;
  const usageShare = usageGpuSeconds / totalUsageGpuSeconds;
  const shareShare = shares / totalShares;
  return Math.pow(2, -usageShare / shareShare);
}
