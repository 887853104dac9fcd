// Budgets inside a company (issue #24): a project's monthly and total budget and a person's monthly limit,
// beside the tenant's monthly cap. Pure.
//
// What counts: only jobs on credit lines (allocations in cents) count against these euro budgets, at the
// price they reserved; GPU-hour allocations are budgets of their own and are never converted to euros.
// Spend in a month = what was charged in that month (less refunds, where they can be told apart: a
// project's, not a person's) + what is reserved now — the same rule as the tenant's monthly cap
// (server/services/ledger/ledger.ts monthSpendCents); a project's total spend = everything its credit lines
// charged and hold reserved. A reservation must fit every limit; the one with the least left binds.

/** The limits on a company's credit-line spending, tightest first when equal (the tenant's cap is named first). */
export const SPENDING_LIMITS = ['monthlyCap', 'projectMonthly', 'projectTotal', 'personMonthly'] as const;
export type SpendingLimitKind = (typeof SPENDING_LIMITS)[number];

/** One limit as it stands before a reservation: the limit and what is spent against it, in cents. */
export interface SpendingLimit {
  kind: SpendingLimitKind;
  limitCents: number;
  spentCents: number;
}

/** A limit with what it leaves (never below 0). */
export interface SpendingRoom extends SpendingLimit {
  leftCents: number;
}

/** The percentages of a limit at which owners and managers are alerted, once per threshold and period. */
export const ALERT_THRESHOLDS_PERCENT = [50, 80, 100] as const;
export type AlertThreshold = (typeof ALERT_THRESHOLDS_PERCENT)[number];

/** roomOf is what a limit leaves, never below 0. */
export function roomOf(limit: SpendingLimit): SpendingRoom {
  return { ...limit, leftCents: Math.max(0, limit.limitCents - limit.spentCents) };
}

/** bindingLimit returns the limit with the least left (the tenant's cap first on a tie), or null without limits. */
export function bindingLimit(limits: readonly SpendingLimit[]): SpendingRoom | null {
  let binding: SpendingRoom | null = null;
  for (const limit of limits) {
    const room = roomOf(limit);
    if (!binding || room.leftCents < binding.leftCents || (room.leftCents === binding.leftCents && SPENDING_LIMITS.indexOf(room.kind) < SPENDING_LIMITS.indexOf(binding.kind))) binding = room;
  }
  return binding;
}

/** spendingRefusal returns the binding limit a reservation of `amountCents` would pass, or null when it fits every limit. */
export function spendingRefusal(limits: readonly SpendingLimit[], amountCents: number): SpendingRoom | null {
  const passed = limits.filter((l) => l.spentCents + amountCents > l.limitCents);
  return bindingLimit(passed);
}

/**
 * alertThresholdsReached lists the thresholds a limit has reached once a reservation of `amountCents` is
 * made on `spentCents` (spend before it); 100 % is the limit used up. The caller alerts each threshold once
 * per period (a threshold reached earlier in the period is listed again and dropped there).
 */
export function alertThresholdsReached(limit: SpendingLimit, amountCents: number): AlertThreshold[] {
  const after = limit.spentCents + amountCents;
  return ALERT_THRESHOLDS_PERCENT.filter((p) => after * 100 >= p * limit.limitCents);
}

/** alertPeriod is the period a limit's alert is once in: the month (yyyy-mm) of `today`, or `total` for a project's total budget. */
export function alertPeriod(kind: SpendingLimitKind, today: string): string {
  return kind === 'projectTotal' ? 'total' : today.slice(0, 7);
}
