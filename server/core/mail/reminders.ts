// Which allocations get a reminder that they end soon, on which day. An allocation's period is
// [periodStart, periodEnd): it can be used up to the end of the day before periodEnd, and the worker
// expires it on periodEnd. "Ends in N days" counts from today to that last usable day, so 0 = today is
// its last day (the expiry notice of the next day says it has ended).

/** The days before an allocation's last day on which its people are reminded. */
export const EXPIRY_MARKS = [30, 14, 7, 0] as const;

const DAY_MS = 86_400_000;

/** daysLeft is how many days after `today` an allocation ending (exclusively) on `periodEnd` can still be used; both yyyy-mm-dd. */
export function daysLeft(periodEnd: string, today: string): number {
  return Math.round((Date.parse(`${periodEnd}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / DAY_MS) - 1;
}

/** markedPeriodEnds lists the period ends (yyyy-mm-dd) of allocations at a reminder mark on `today`, to look them up by. */
export function markedPeriodEnds(today: string): string[] {
  const start = Date.parse(`${today}T00:00:00Z`);
  return EXPIRY_MARKS.map((mark) => new Date(start + (mark + 1) * DAY_MS).toISOString().slice(0, 10));
}

/** lastUsableDay is the last day of a period that ends (exclusively) on periodEnd. */
export function lastUsableDay(periodEnd: string): string {
  return new Date(Date.parse(`${periodEnd}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
}

export interface ExpiringCandidate {
  id: string;
  periodStart: string;
  periodEnd: string;
}

/** allocationsAtMark keeps the allocations that are in their period today and at one of the reminder marks, with their days left. */
export function allocationsAtMark<T extends ExpiringCandidate>(candidates: readonly T[], today: string): (T & { daysLeft: number })[] {
  return candidates
    .filter((a) => a.periodStart <= today && today < a.periodEnd)
    .map((a) => ({ ...a, daysLeft: daysLeft(a.periodEnd, today) }))
    .filter((a) => (EXPIRY_MARKS as readonly number[]).includes(a.daysLeft));
}

/** remindersByPerson groups the allocations at a mark by who is to hear of them: one reminder per person, allocations soonest first. */
export function remindersByPerson<T extends { id: string; daysLeft: number }>(atMark: readonly T[], recipientsOf: (allocation: T) => readonly string[]): Map<string, T[]> {
  const byPerson = new Map<string, T[]>();
  for (const allocation of atMark) {
    for (const person of new Set(recipientsOf(allocation))) {
      const list = byPerson.get(person) ?? [];
      list.push(allocation);
      byPerson.set(person, list);
    }
  }
  for (const list of byPerson.values()) list.sort((a, b) => a.daysLeft - b.daysLeft || (a.id < b.id ? -1 : 1));
  return byPerson;
}
