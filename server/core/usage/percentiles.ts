// Figures of the centre dashboard: percentiles, utilisation, energy per GPU-hour, date ranges and
// exact decimal rendering of integer amounts. Pure: values in, values out.
import { addDays } from '../working-days';
import { isPeriodProblem, MAX_PERIOD_DAYS, periodDays, resolvePeriod } from './periods';

export const SECONDS_PER_DAY = 86_400;
export const SECONDS_PER_HOUR = 3600;
/** The longest range the centre dashboard accepts: two years, one of them a leap year. */
export const MAX_RANGE_DAYS = MAX_PERIOD_DAYS;


/**
 * nearestRank returns the p-th percentile (0 < p ≤ 1) of an ascending array by the nearest-rank
 * method: the smallest value with at least p of the values at or below it (the ⌈p·n⌉-th value).
 * This is what SQL `percentile_disc(p) within group (order by …)` returns. Null for no values.
 */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  if (!(p > 0 && p <= 1)) throw new RangeError(`percentile must be in (0, 1], got ${p}`);
  const rank = Math.max(1, Math.ceil(p * sorted.length - 1e-9));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/**
 * utilisation is used GPU-seconds ÷ (capacity GPUs × seconds in the period), as a fraction.
 * 0 when there is no capacity. It is not clamped, so usage booked on the wrong day would show.
 */
export function utilisation(usedGpuSeconds: number, capacityGpus: number, periodSeconds: number): number {
  const capacity = capacityGpus * periodSeconds;
  return capacity > 0 ? usedGpuSeconds / capacity : 0;
}

/** kwhPerGpuHour is energy (Wh) per GPU-hour used, in kWh; null when no GPU time was used. */
export function kwhPerGpuHour(energyWh: number, gpuSeconds: number): number | null {
  if (gpuSeconds <= 0) return null;
  return energyWh / 1000 / (gpuSeconds / SECONDS_PER_HOUR);
}

export { isDay } from './periods';
export { addDays } from '../working-days';

/** rangeDays counts the days of an inclusive range. */
export function rangeDays(from: string, to: string): number {
  return periodDays({ from, to });
}

/** daysOf lists every day of an inclusive range, in order. */
export function daysOf(from: string, to: string): string[] {
  const n = rangeDays(from, to);
  return Array.from({ length: Math.max(0, n) }, (_, i) => addDays(from, i));
}

export type RangeProblem = { field: 'from' | 'to'; problem: 'invalid' | 'toBeforeFrom' | 'tooLong' };

/** rangeProblem says what is wrong with an inclusive day range (the field and why), or null. */
export function rangeProblem(from: string, to: string, maxDays = MAX_RANGE_DAYS): RangeProblem | null {
  const period = resolvePeriod({ from, to });
  if (isPeriodProblem(period)) {
    const problem = period.key === 'period.endBeforeStart' ? 'toBeforeFrom' : period.key === 'period.tooLong' ? 'tooLong' : 'invalid';
    return { field: period.field === 'from' ? 'from' : 'to', problem };
  }
  return rangeDays(from, to) > maxDays ? { field: 'to', problem: 'tooLong' } : null;
}

/**
 * pue is power usage effectiveness: facility energy ÷ IT energy of the same jobs (both Wh); null
 * without IT energy.
 */
export function pue(facilityEnergyWh: number, itEnergyWh: number): number | null {
  return itEnergyWh > 0 ? facilityEnergyWh / itEnergyWh : null;
}

export const RANGE_PRESETS = ['last30Days', 'thisMonth', 'lastMonth', 'last90Days'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];

/** rangePresets are the dashboard's ready ranges as of today: the last 30 days, this month so far, last month, the last 90 days. */
export function rangePresets(today: string): Record<RangePreset, { from: string; to: string }> {
  const firstOfMonth = `${today.slice(0, 7)}-01`;
  const lastMonthEnd = addDays(firstOfMonth, -1);
  return {
    last30Days: defaultRange(today, 30),
    thisMonth: { from: firstOfMonth, to: today },
    lastMonth: { from: `${lastMonthEnd.slice(0, 7)}-01`, to: lastMonthEnd },
    last90Days: defaultRange(today, 90),
  };
}

/** defaultRange is the last `days` days up to and including today. */
export function defaultRange(today: string, days = 30): { from: string; to: string } {
  return { from: addDays(today, -(days - 1)), to: today };
}

/**
 * fixedDecimal renders numerator ÷ denominator (integers) with exactly `digits` decimals, rounded
 * half away from zero, computed exactly (no binary floating point): fixedDecimal(1234, 1000, 3) = "1.234".
 */
export function fixedDecimal(numerator: number, denominator: number, digits: number): string {
  if (!Number.isInteger(numerator) || !Number.isInteger(denominator) || denominator === 0) {
    throw new RangeError(`fixedDecimal needs integers and a non-zero denominator, got ${numerator}/${denominator}`);
  }
  const negative = numerator < 0 !== denominator < 0 && numerator !== 0;
  const num = BigInt(Math.abs(numerator)) * 10n ** BigInt(digits);
  const den = BigInt(Math.abs(denominator));
  const scaled = (2n * num + den) / (2n * den);
  if (scaled === 0n) return digits > 0 ? `0.${'0'.repeat(digits)}` : '0';
  const text = scaled.toString().padStart(digits + 1, '0');
  const whole = text.slice(0, text.length - digits);
  const fraction = text.slice(text.length - digits);
  return `${negative ? '-' : ''}${whole}${digits > 0 ? `.${fraction}` : ''}`;
}
