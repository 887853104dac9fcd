// Report periods: a month, a quarter or a chosen range, as inclusive UTC days. Pure.

export type PeriodInput = { month: string } | { quarter: string } | { from: string; to: string };

export type PeriodProblem = { field: 'to' | 'from' | 'month' | 'quarter'; key: 'period.endBeforeStart' | 'period.tooLong' | 'period.invalid'; params: Record<string, number | string> };

export const MAX_PERIOD_DAYS = 731;

const DAY_MS = 86_400_000;

/** isDay tells whether a string is a real calendar day written YYYY-MM-DD. */
export function isDay(day: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) && new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) === day;
}

function lastDayOfMonth(year: number, month: number): string {
  return new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
}

/** resolvePeriod turns a month (YYYY-MM), quarter (YYYY-Qn) or range into inclusive from/to days, or says what is wrong. */
export function resolvePeriod(input: PeriodInput): { from: string; to: string } | PeriodProblem {
  if ('month' in input) {
    const m = /^(\d{4})-(\d{2})$/.exec(input.month);
    const year = Number(m?.[1]);
    const month = Number(m?.[2]);
    if (!m || month < 1 || month > 12) return { field: 'month', key: 'period.invalid', params: {} };
    return { from: `${m[1]}-${m[2]}-01`, to: lastDayOfMonth(year, month) };
  }
  if ('quarter' in input) {
    const q = /^(\d{4})-Q([1-4])$/.exec(input.quarter);
    if (!q) return { field: 'quarter', key: 'period.invalid', params: {} };
    const first = (Number(q[2]) - 1) * 3 + 1;
    return { from: `${q[1]}-${String(first).padStart(2, '0')}-01`, to: lastDayOfMonth(Number(q[1]), first + 2) };
  }
  if (!isDay(input.from)) return { field: 'from', key: 'period.invalid', params: {} };
  if (!isDay(input.to)) return { field: 'to', key: 'period.invalid', params: {} };
  if (input.to < input.from) return { field: 'to', key: 'period.endBeforeStart', params: { from: input.from, to: input.to } };
  const days = periodDays(input);
  if (days > MAX_PERIOD_DAYS) return { field: 'to', key: 'period.tooLong', params: { days, max: MAX_PERIOD_DAYS } };
  return { from: input.from, to: input.to };
}

/** periodDays counts the days of an inclusive period. */
export function periodDays(period: { from: string; to: string }): number {
  return Math.round((Date.parse(`${period.to}T00:00:00Z`) - Date.parse(`${period.from}T00:00:00Z`)) / DAY_MS) + 1;
}

/** isPeriodProblem tells a refusal from a resolved period. */
export function isPeriodProblem(value: { from: string; to: string } | PeriodProblem): value is PeriodProblem {
  return 'key' in value;
}

/**
 * A range of days cut into the calendar months it holds whole (first and last month's first day, or
 * null) and the days before and after them: the centre dashboard reads whole months from its month
 * rows and the rest from its day rows (server/services/usage/centre.ts).
 */
export interface MonthSplit {
  months: { first: string; last: string } | null;
  days: { from: string; to: string }[];
}

/** splitByMonths cuts [from, to] (inclusive days, YYYY-MM-DD) into whole months and the days around them. */
export function splitByMonths(from: string, to: string): MonthSplit {
  const monthStart = (day: string) => `${day.slice(0, 7)}-01`;
  const nextMonth = (day: string) => {
    const d = new Date(`${monthStart(day)}T00:00:00Z`);
    d.setUTCMonth(d.getUTCMonth() + 1);
    return d.toISOString().slice(0, 10);
  };
  const dayBefore = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  // The first whole month starts on `from` or on the next month's first day; the last ends on `to` or before its month.
  const first = from === monthStart(from) ? from : nextMonth(from);
  const afterLast = dayBefore(nextMonth(to)) === to ? nextMonth(to) : monthStart(to);
  if (first >= afterLast) return { months: null, days: [{ from, to }] };
  const days: { from: string; to: string }[] = [];
  if (from < first) days.push({ from, to: dayBefore(first) });
  if (afterLast <= to) days.push({ from: afterLast, to });
  return { months: { first, last: monthStart(dayBefore(afterLast)) }, days };
}
