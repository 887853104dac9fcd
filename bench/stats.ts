// Latency statistics shared by the live-path benchmarks.

/** quantile returns the nearest-rank quantile (like percentile_disc) of ascending values; NaN when empty. */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.min(sorted.length, Math.ceil(p * sorted.length)) - 1)]!;
}

/** median returns the median of ascending values; NaN when empty. */
export function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** ascending returns a sorted copy. */
export function ascending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** num formats a number for the tables (en-GB grouping); NaN shows as a dash. */
export function num(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return '—';
  return n.toLocaleString('en-GB', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
