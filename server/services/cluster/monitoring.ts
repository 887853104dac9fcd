// What the centre's monitoring reads from the database at each scrape of /api/metrics: open jobs by
// state, the outbox's backlog, the ledger's totals and the worker's last round. Each is one small
// query on the portal's own connection (all tenants), kept on partial indexes or small tables so a
// scrape every 15 s costs next to nothing.
import { count, inArray, isNull, min, sql, type AnyColumn } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, jobs, mailOutbox } from '~/db/schema';
import { FINAL_STATES } from '~/server/core/scheduler/port';
import { readSchedulerStatus } from './scheduler-status';

export type JobState = (typeof jobs.state.enumValues)[number];
export type BudgetUnit = (typeof allocations.unit.enumValues)[number];

export interface MonitoringFigures {
  /** Jobs not yet settled, by state (every state present, 0 when none). */
  openJobs: Record<JobState, { count: number; oldestSubmittedAt: Date | null }>;
  /** When the oldest job in a final state that is not yet settled ended (null: none). */
  oldestUnsettledEndedAt: Date | null;
  outbox: { pending: number; oldestPendingAt: Date | null };
  /** The allocations' cached balances summed per unit (every unit present). */
  ledger: Record<BudgetUnit, { granted: number; charged: number; reserved: number; expired: number; overrun: number }>;
  /** When the worker last recorded a round (null before its first). */
  workerCheckedAt: Date | null;
}

const asDate = (value: Date | string | null | undefined): Date | null => (value == null ? null : new Date(value));

/** monitoringFigures reads the figures /api/metrics reports from the database. */
export async function monitoringFigures(db: Db): Promise<MonitoringFigures> {
  const sum = (column: AnyColumn) => sql<string>`coalesce(sum(${column}), 0)`;
  const [open, unsettled, [outbox], balances, status] = await Promise.all([
    // Open jobs only (the partial index jobs_open_idx): settled ones are history, in the usage reports.
    db.select({ state: jobs.state, count: count(), oldest: min(jobs.submittedAt) }).from(jobs).where(isNull(jobs.settledAt)).groupBy(jobs.state),
    db
      .select({ endedAt: min(jobs.endedAt) })
      .from(jobs)
      .where(sql`${isNull(jobs.settledAt)} and ${inArray(jobs.state, [...FINAL_STATES])}`),
    db.select({ pending: count(), oldest: min(mailOutbox.createdAt) }).from(mailOutbox).where(sql`${mailOutbox.status} = 'pending'`),
    db
      .select({ unit: allocations.unit, granted: sum(allocations.granted), charged: sum(allocations.charged), reserved: sum(allocations.reserved), expired: sum(allocations.expired), overrun: sum(allocations.overrun) })
      .from(allocations)
      .groupBy(allocations.unit),
    readSchedulerStatus(db),
  ]);
  const openJobs = Object.fromEntries(jobs.state.enumValues.map((state) => [state, { count: 0, oldestSubmittedAt: null }])) as MonitoringFigures['openJobs'];
  for (const row of open) openJobs[row.state] = { count: row.count, oldestSubmittedAt: asDate(row.oldest) };
  const zero = { granted: 0, charged: 0, reserved: 0, expired: 0, overrun: 0 };
  const ledger = Object.fromEntries(allocations.unit.enumValues.map((unit) => [unit, { ...zero }])) as MonitoringFigures['ledger'];
  for (const row of balances) {
    ledger[row.unit] = { granted: Number(row.granted), charged: Number(row.charged), reserved: Number(row.reserved), expired: Number(row.expired), overrun: Number(row.overrun) };
  }
  return {
    openJobs,
    oldestUnsettledEndedAt: asDate(unsettled[0]?.endedAt),
    outbox: { pending: outbox?.pending ?? 0, oldestPendingAt: asDate(outbox?.oldest) },
    ledger,
    workerCheckedAt: status?.checkedAt ?? null,
  };
}
