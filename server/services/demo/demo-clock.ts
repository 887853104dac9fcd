// The demo history's clock: each step of the seed runs as of the instant it would have happened, so
// applications, decisions, projects and audit rows carry plausible times instead of all the moment
// of seeding. Audit events, ledger entries and notifications are stamped as they are written
// (server/services/replay-clock.ts); rows the step created in the other tables are re-dated right after it.
import { gte, sql } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, applications, invitations, memberships, organisations, projectMembers, projects, staffRoles, users } from '~/db/schema';
import { atReplayedTime } from '~/server/services/replay-clock';

/** The tables whose `created_at` the database stamps and a demo step may create rows in. */
const DATED = [users, organisations, memberships, staffRoles, invitations, projects, projectMembers, applications, allocations] as const;

/** atDemoTime runs one step of the demo seed as of `at` (seeding is sequential: nothing else writes these tables meanwhile). */
export async function atDemoTime<T>(db: Db, at: Date, step: () => Promise<T>): Promise<T> {
  // The database's clock, not the process's: created_at is stamped by it.
  const [row] = await db.select({ ms: sql<number>`floor(extract(epoch from clock_timestamp()) * 1000)`.mapWith(Number) }).from(sql`(select 1) as one`);
  const since = new Date(row!.ms);
  const result = await atReplayedTime(at, step);
  for (const table of DATED) await db.update(table).set({ createdAt: at }).where(gte(table.createdAt, since));
  return result;
}
