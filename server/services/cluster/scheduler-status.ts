// Whether the scheduler answers: the worker notes each round's outcome in one row (scheduler_status),
// so every process's pages can say "scheduler unreachable" (staff) and "waiting to be handed over"
// (a submitted job) instead of failing, and staff see since when and why.
import { eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { schedulerStatus } from '~/db/schema';

export interface SchedulerStatus {
  reachable: boolean;
  lastOkAt: Date | null;
  unreachableSince: Date | null;
  lastError: string | null;
  checkedAt: Date;
}

/** How often an unchanged outcome is written again (so checkedAt tells that the worker is alive). */
const REWRITE_MS = 60_000;

const memo: { last?: { reachable: boolean; writtenAt: number } } = ((globalThis as { __portalSchedulerStatus?: typeof memo }).__portalSchedulerStatus ??= {});

/** noteSchedulerOutcome records whether the scheduler answered at `now` (error null: it did); an unchanged outcome is written at most once a minute. */
export async function noteSchedulerOutcome(db: Db, now: Date, error: unknown): Promise<void> {
  const reachable = error === null || error === undefined;
  const last = memo.last;
  if (last && last.reachable === reachable && now.getTime() - last.writtenAt < REWRITE_MS) return;
  const message = reachable ? null : (error instanceof Error ? error.message : JSON.stringify(error)).split('\n')[0]!.slice(0, 500);
  await db
    .insert(schedulerStatus)
    .values({ id: 1, reachable, lastOkAt: reachable ? now : null, unreachableSince: reachable ? null : now, lastError: message, checkedAt: now })
    .onConflictDoUpdate({
      target: schedulerStatus.id,
      set: reachable
        ? { reachable, lastOkAt: now, unreachableSince: null, checkedAt: now }
        : // The first failure after answers starts the outage; later ones keep its start.
          { reachable, unreachableSince: sql`coalesce(${schedulerStatus.unreachableSince}, ${now.toISOString()}::timestamptz)`, lastError: message, checkedAt: now },
    });
  memo.last = { reachable, writtenAt: now.getTime() };
}

/** readSchedulerStatus returns the last recorded outcome, or null before the worker's first round. */
export async function readSchedulerStatus(db: DbOrTx): Promise<SchedulerStatus | null> {
  const [row] = await db.select().from(schedulerStatus).where(eq(schedulerStatus.id, 1));
  return row ? { reachable: row.reachable, lastOkAt: row.lastOkAt, unreachableSince: row.unreachableSince, lastError: row.lastError, checkedAt: row.checkedAt } : null;
}
