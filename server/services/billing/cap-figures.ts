// What staff see of a company's money before they change its credit lines or its monthly cap (issue
// #24): the cap as it is, the lines, this month's spend as the cap counts it and the months before.
import { and, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { allocations, ledgerEntries, organisations } from '~/db/schema';
import { monthsBefore } from '~/server/core/billing/monthly-cap';
import { monthSpendCents } from '~/server/services/ledger/ledger';

/** How many calendar months before this one the figures show. */
const MONTHS_SHOWN = 3;

/** A tenant's money as a decision over its credit lines and cap starts from. */
export interface CapFigures {
  orgId: string;
  orgName: string;
  /** The monthly cap now (null: no cap). */
  capCents: number | null;
  /** The tenant's active credit lines together, as granted now. */
  linesCents: number;
  /** This month's charges less refunds plus open reservations: what the cap counts. */
  spentThisMonthCents: number;
  /** What the credit lines were charged (less refunds) in each of the months before this one, newest first. */
  spentByMonth: { month: string; cents: number }[];
}

/** capFiguresOf returns the cap figures of tenants (by id; those not found are left out), as of `today` (YYYY-MM-DD). */
export async function capFiguresOf(db: DbOrTx, orgIds: readonly string[], today: string): Promise<Map<string, CapFigures>> {
  const ids = [...new Set(orgIds)];
  if (ids.length === 0) return new Map();
  const months = monthsBefore(today, MONTHS_SHOWN);
  const [orgs, lines, history, thisMonth] = await Promise.all([
    db.select({ id: organisations.id, name: organisations.name, capCents: organisations.monthlyCapCents }).from(organisations).where(inArray(organisations.id, ids)),
    db
      .select({ orgId: allocations.orgId, cents: sql<string>`coalesce(sum(${allocations.granted}), 0)` })
      .from(allocations)
      .where(and(inArray(allocations.orgId, ids), eq(allocations.unit, 'cents'), eq(allocations.status, 'active')))
      .groupBy(allocations.orgId),
    monthlySpend(db, ids, `${months[months.length - 1]}-01`, `${today.slice(0, 7)}-01`),
    Promise.all(ids.map(async (orgId) => [orgId, await monthSpendCents(db, orgId, today)] as const)),
  ]);
  const thisMonthByOrg = new Map(thisMonth);
  return new Map(
    orgs.map((org) => [
      org.id,
      {
        orgId: org.id,
        orgName: org.name,
        capCents: org.capCents,
        linesCents: Number(lines.find((l) => l.orgId === org.id)?.cents ?? 0),
        spentThisMonthCents: thisMonthByOrg.get(org.id) ?? 0,
        spentByMonth: months.map((month) => ({ month, cents: history.find((h) => h.orgId === org.id && h.month === month)?.cents ?? 0 })),
      },
    ]),
  );
}

/** monthlySpend sums what tenants' credit lines were charged (less refunds) per calendar month in [from, until). */
async function monthlySpend(db: DbOrTx, orgIds: string[], from: string, until: string) {
  const month = sql<string>`to_char(${ledgerEntries.at} at time zone 'UTC', 'YYYY-MM')`;
  const rows = await db
    .select({
      orgId: allocations.orgId,
      month,
      cents: sql<string>`coalesce(sum(case when ${ledgerEntries.kind} = 'charge' then ${ledgerEntries.amount} when ${ledgerEntries.kind} = 'refund' then -${ledgerEntries.amount} else 0 end), 0)`,
    })
    .from(ledgerEntries)
    .innerJoin(allocations, eq(allocations.id, ledgerEntries.allocationId))
    .where(and(inArray(allocations.orgId, orgIds), eq(allocations.unit, 'cents'), gte(ledgerEntries.at, sql`${from}::date`), lt(ledgerEntries.at, sql`${until}::date`)))
    .groupBy(allocations.orgId, month);
  return rows.map((r) => ({ orgId: r.orgId, month: r.month, cents: Number(r.cents) }));
}
