// The ledger and the scheduler's accounting side by side (issue #26, part 2): per project account and
// resource class, the GPU-seconds the portal knows of (its own jobs and those imported as run around it)
// against what the scheduler counts for the same account over the same days. With every job settled and
// every outside job imported, the two are equal; a difference names where to look.

/** GPU-seconds of one account (a project id) in one class (or the scheduler's partition name when it maps to none). */
export interface UsageFigure {
  account: string;
  partition: string;
  gpuSeconds: number;
}

export interface UsageDifference {
  account: string;
  partition: string;
  portalGpuSeconds: number;
  schedulerGpuSeconds: number;
  /** schedulerGpuSeconds − portalGpuSeconds: above 0 the scheduler counts more than the ledger holds. */
  differenceGpuSeconds: number;
}

/** The ledger against the scheduler's accounting over the last days (stored with the full budget sync, shown to staff). */
export interface UsageCheck {
  /** Jobs that ended from here on are counted on both sides. */
  since: Date;
  rows: UsageDifference[];
}

/**
 * compareUsage sums both sides per account and class and returns one row per pair either side has, the
 * largest differences first (then by account and class): equal rows included, so staff see what agrees.
 */
export function compareUsage(portal: readonly UsageFigure[], scheduler: readonly UsageFigure[]): UsageDifference[] {
  const rows = new Map<string, UsageDifference>();
  const add = (figure: UsageFigure, side: 'portalGpuSeconds' | 'schedulerGpuSeconds') => {
    const key = `${figure.account}\u0000${figure.partition}`;
    const row = rows.get(key) ?? { account: figure.account, partition: figure.partition, portalGpuSeconds: 0, schedulerGpuSeconds: 0, differenceGpuSeconds: 0 };
    row[side] += figure.gpuSeconds;
    rows.set(key, row);
  };
  for (const f of portal) add(f, 'portalGpuSeconds');
  for (const f of scheduler) add(f, 'schedulerGpuSeconds');
  return [...rows.values()]
    .map((r) => ({ ...r, differenceGpuSeconds: r.schedulerGpuSeconds - r.portalGpuSeconds }))
    .sort((a, b) => Math.abs(b.differenceGpuSeconds) - Math.abs(a.differenceGpuSeconds) || a.account.localeCompare(b.account) || a.partition.localeCompare(b.partition));
}
