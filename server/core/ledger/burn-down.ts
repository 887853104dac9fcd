// Burn-down of an allocation: usage per day and when the budget runs out at the recent rate. Pure.

export interface DailyUsage {
  /** Day as YYYY-MM-DD (UTC). */
  day: string;
  amount: number;
}

const DAY_MS = 86_400_000;

/** dayKey returns the UTC day of an instant as YYYY-MM-DD. */
export function dayKey(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** fillDays returns one entry per day from start to end (inclusive), zero where there was no usage. */
export function fillDays(usage: readonly DailyUsage[], start: Date, end: Date): DailyUsage[] {
  const byDay = new Map(usage.map((u) => [u.day, u.amount]));
  const out: DailyUsage[] = [];
  for (let t = Date.parse(dayKey(start)); t <= Date.parse(dayKey(end)); t += DAY_MS) {
    const day = dayKey(new Date(t));
    out.push({ day, amount: byDay.get(day) ?? 0 });
  }
  return out;
}

/**
 * projectExhaustion returns the day the remaining budget runs out at the average rate of the last
 * `windowDays` days up to `today`, or null when nothing was used in that window (no projection).
 */
export function projectExhaustion(remaining: number, usage: readonly DailyUsage[], today: Date, windowDays = 14): { ratePerDay: number; exhaustsOn: string | null } {
  const from = Date.parse(dayKey(today)) - (windowDays - 1) * DAY_MS;
  const used = usage.filter((u) => Date.parse(u.day) >= from && Date.parse(u.day) <= Date.parse(dayKey(today))).reduce((s, u) => s + u.amount, 0);
  const ratePerDay = used / windowDays;
  if (ratePerDay <= 0) return { ratePerDay: 0, exhaustsOn: null };
  if (remaining <= 0) return { ratePerDay, exhaustsOn: dayKey(today) };
  const days = Math.ceil(remaining / ratePerDay);
  return { ratePerDay, exhaustsOn: dayKey(new Date(Date.parse(dayKey(today)) + days * DAY_MS)) };
}

/**
 * unusedAtEnd is what would be left, and so expire, when a period ends if usage went on at `ratePerDay`
 * from today: remaining − rate × the days left (period_end is the first day outside the period), at
 * least 0; rounded down to whole units.
 */
export function unusedAtEnd(remaining: number, ratePerDay: number, today: Date, periodEnd: string): number {
  const daysLeft = Math.max(0, Math.round((Date.parse(periodEnd) - Date.parse(dayKey(today))) / DAY_MS));
  return Math.max(0, Math.floor(remaining - ratePerDay * daysLeft));
}

/** thresholdsCrossed returns the notice thresholds (per-mille) passed when usage moves from before to after. */
export function thresholdsCrossed(beforePermille: number, afterPermille: number, thresholds: readonly number[] = [800, 1000]): number[] {
  return thresholds.filter((t) => beforePermille < t && afterPermille >= t);
}
