// Storage used, as TB-months (issue #27): for a tenant's usage page and its CSV, the month's invoice and the
// centre dashboard, all from the same days (`storage_days`, each workspace's daily high-water mark) and the
// same maths (server/core/usage/storage.ts), so an invoice line and the usage page say the same.
//
// The days: every measurement books its day and fills the days since the one before with what that one
// said (server/services/files/storage.ts); the days after a workspace's last measurement, up to the end of
// what is read (never past today), count what it said too. So a month whose last days the worker did not
// measure (it was down) reads the same before and after the next measurement fills them in.
import { and, asc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { allocations, organisations, projects, resourceClasses, sites, storageDays, storageUsage, type OrgKind } from '~/db/schema';
import { localName } from '~/server/catalogue';
import { csvDocument } from '~/server/core/csv';
import { addDays } from '~/server/core/working-days';
import { byteDaysByMonth, milliTbMonths, daysInMonth, periodMilliTbMonths, periodStorageCents, type StorageDay } from '~/server/core/usage/storage';
import type { Locale } from '~/server/i18n';
import type { TenantActor } from '~/server/services/actor';
import { reportScope } from './reports';

/** One workspace's high-water mark on one day. */
export interface WorkspaceDay extends StorageDay {
  orgId: string;
  projectId: string;
  siteId: string;
  bytes: number;
}

export interface StorageDaysFilter {
  orgId?: string;
  projectIds?: readonly string[];
  siteId?: string;
  /** First and last day read, inclusive (UTC). */
  from: string;
  to: string;
  /** The last day a workspace's last measurement may be carried to (today, or an invoice's last day). */
  through: string;
}

/** storageDaysIn reads the workspaces' days in a range, with the days after each one's last measurement carried. */
export async function storageDaysIn(db: DbOrTx, filter: StorageDaysFilter): Promise<WorkspaceDay[]> {
  if (filter.projectIds && filter.projectIds.length === 0) return [];
  const where: SQL[] = [gte(storageDays.day, filter.from), lte(storageDays.day, filter.to)];
  const current: SQL[] = [];
  if (filter.orgId) {
    where.push(eq(storageDays.orgId, filter.orgId));
    current.push(eq(storageUsage.orgId, filter.orgId));
  }
  if (filter.projectIds) {
    where.push(inArray(storageDays.projectId, [...filter.projectIds]));
    current.push(inArray(storageUsage.projectId, [...filter.projectIds]));
  }
  if (filter.siteId) {
    where.push(eq(storageDays.siteId, filter.siteId));
    current.push(eq(storageUsage.siteId, filter.siteId));
  }
  const [rows, last] = await Promise.all([
    db
      .select({ orgId: storageDays.orgId, projectId: storageDays.projectId, siteId: storageDays.siteId, day: storageDays.day, bytes: storageDays.bytes })
      .from(storageDays)
      .where(and(...where))
      .orderBy(asc(storageDays.day)),
    db
      .select({ orgId: storageUsage.orgId, projectId: storageUsage.projectId, siteId: storageUsage.siteId, bytes: storageUsage.bytes, measuredAt: storageUsage.measuredAt })
      .from(storageUsage)
      .where(current.length ? and(...current) : undefined),
  ]);
  const days: WorkspaceDay[] = [...rows];
  const end = filter.to < filter.through ? filter.to : filter.through;
  for (const workspace of last) {
    if (workspace.bytes === 0) continue;
    const lastDay = workspace.measuredAt.toISOString().slice(0, 10);
    for (let day = lastDay < filter.from ? filter.from : addDays(lastDay, 1); day <= end; day = addDays(day, 1)) {
      days.push({ orgId: workspace.orgId, projectId: workspace.projectId, siteId: workspace.siteId, day, bytes: workspace.bytes });
    }
  }
  return days;
}

/** siteShortName is a site's name as a line or message says it: "Jena, Germany (warm-water cooled)" → "Jena". */
export function siteShortName(name: string): string {
  return name.split(',')[0]!.trim();
}

/** The storage price of each site, cents per TB-month, and its name. */
export async function siteStoragePrices(db: DbOrTx, locale: Locale = 'en') {
  const rows = await db.select({ id: sites.id, name: sites.name, nameDe: sites.nameDe, centsPerTbMonth: sites.storageCentsPerTbMonth }).from(sites).orderBy(asc(sites.id));
  return new Map(rows.map((s) => [s.id, { name: localName(locale, s), nameDe: localName('de', s), nameEn: s.name, centsPerTbMonth: s.centsPerTbMonth }]));
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export interface StorageReport {
  /** Whether the tenant pays for storage (companies) or only sees its use (research). */
  charged: boolean;
  /** Per project and site: TB-months (thousandths) in the period, and (companies) what they cost. */
  rows: { projectId: string; projectTitle: string; siteId: string; siteName: string; milliTbMonths: number; costCents: number | null }[];
  /** Per site, all the projects together, each month rounded once: the figure the month's invoice line bills. */
  sites: { siteId: string; siteName: string; centsPerTbMonth: number; milliTbMonths: number; costCents: number | null }[];
  totals: { milliTbMonths: number; costCents: number | null };
}

/**
 * storageReport is a tenant's storage in a period (inclusive UTC days), per project and site and per site,
 * read up to `today` (a workspace's last measurement carried to it). Companies see the price at each
 * site's current tariff — for a month that has ended, what its invoice bills.
 */
export async function storageReport(db: DbOrTx, org: { id: string; kind: OrgKind }, scope: { all: true } | { all: false; projectIds: string[] }, period: { from: string; to: string }, today: string, locale: Locale = 'en'): Promise<StorageReport> {
  const days = await storageDaysIn(db, { orgId: org.id, projectIds: scope.all ? undefined : scope.projectIds, from: period.from, to: period.to, through: today });
  const prices = await siteStoragePrices(db, locale);
  const charged = org.kind === 'company';
  const projectIds = [...new Set(days.map((d) => d.projectId))];
  const titles = projectIds.length ? new Map((await db.select({ id: projects.id, title: projects.title }).from(projects).where(inArray(projects.id, projectIds))).map((p) => [p.id, p.title])) : new Map<string, string>();
  const cost = (ds: readonly StorageDay[], siteId: string) => (charged ? periodStorageCents(ds, prices.get(siteId)?.centsPerTbMonth ?? 0) : null);
  const rows = [...groupBy(days, (d) => `${d.projectId} ${d.siteId}`).values()]
    .map((ds) => {
      const { projectId, siteId } = ds[0]!;
      return { projectId, projectTitle: titles.get(projectId) ?? projectId, siteId, siteName: prices.get(siteId)?.name ?? siteId, milliTbMonths: periodMilliTbMonths(ds), costCents: cost(ds, siteId) };
    })
    .sort((a, b) => a.projectTitle.localeCompare(b.projectTitle) || a.siteId.localeCompare(b.siteId));
  const siteRows = [...groupBy(days, (d) => d.siteId).entries()]
    .map(([siteId, ds]) => ({ siteId, siteName: prices.get(siteId)?.name ?? siteId, centsPerTbMonth: prices.get(siteId)?.centsPerTbMonth ?? 0, milliTbMonths: periodMilliTbMonths(ds), costCents: cost(ds, siteId) }))
    .sort((a, b) => a.siteId.localeCompare(b.siteId));
  return {
    charged,
    rows,
    sites: siteRows,
    totals: { milliTbMonths: siteRows.reduce((s, r) => s + r.milliTbMonths, 0), costCents: charged ? siteRows.reduce((s, r) => s + (r.costCents ?? 0), 0) : null },
  };
}

/** tenantStorageReport is the storage report of the acting tenant, for the projects its usage report covers (owners and managers all, leads theirs). */
export async function tenantStorageReport(db: DbOrTx, actor: TenantActor, period: { from: string; to: string }, today: string, locale: Locale = 'en'): Promise<StorageReport> {
  return storageReport(db, actor.org, await reportScope(db, actor), period, today, locale);
}

/** The storage CSV's columns, in order; documented in docs/CSV.md. */
export const STORAGE_CSV_COLUMNS = ['project', 'site', 'tb_months', 'cost_eur'] as const;

/** storageCsv renders a storage report as CSV: a line per project and site, then one per site for all projects (project empty). */
export function storageCsv(report: StorageReport): string {
  const tb = (milli: number) => (milli / 1000).toFixed(3);
  const eur = (cents: number | null) => (cents === null ? null : (cents / 100).toFixed(2));
  return csvDocument(STORAGE_CSV_COLUMNS, [
    ...report.rows.map((r) => [r.projectTitle, r.siteId, tb(r.milliTbMonths), eur(r.costCents)]),
    ...report.sites.map((s) => [null, s.siteId, tb(s.milliTbMonths), eur(s.costCents)]),
  ]);
}

/** A storage line of an invoice before it is numbered: a site's byte-days in the covered days of one month. */
export interface StorageUse {
  siteId: string;
  byteDays: bigint;
  daysInMonth: number;
  centsPerTbMonth: number;
  /** The site's name in both languages, frozen on the line. */
  nameEn: string;
  nameDe: string;
}

/**
 * storageToInvoice is what a company's workspaces held in the covered days of a month ([firstDay, lastDay],
 * within one month), per site with a price: byte-days at the site's current tariff. Sites that charge
 * nothing, and days without usage, give no line.
 */
export async function storageToInvoice(db: DbOrTx, orgId: string, days: { firstDay: string; lastDay: string }): Promise<StorageUse[]> {
  if (days.lastDay < days.firstDay) return [];
  const month = days.firstDay.slice(0, 7);
  const read = await storageDaysIn(db, { orgId, from: days.firstDay, to: days.lastDay, through: days.lastDay });
  const prices = await siteStoragePrices(db, 'en');
  const uses: StorageUse[] = [];
  for (const [siteId, ds] of groupBy(read, (d) => d.siteId)) {
    const price = prices.get(siteId);
    const byteDays = byteDaysByMonth(ds).get(month) ?? 0n;
    if (!price || price.centsPerTbMonth === 0 || byteDays === 0n) continue;
    uses.push({ siteId, byteDays, daysInMonth: daysInMonth(month), centsPerTbMonth: price.centsPerTbMonth, nameEn: price.nameEn, nameDe: price.nameDe });
  }
  return uses.sort((a, b) => a.siteId.localeCompare(b.siteId));
}

/** What one tenant stores at the centre: now, granted, and TB-months in a range. */
export interface TenantStorage {
  orgId: string;
  name: string;
  kind: OrgKind;
  usedBytes: number;
  grantedGb: number;
  milliTbMonths: number;
}

/**
 * centreStorage is the staff dashboard's storage: per tenant what its workspaces hold now (as last
 * measured), the storage its active allocations grant (a credit line's counting once per site a class
 * is at) and its TB-months in the range (each tenant's sites and months rounded once, as its invoices);
 * and the centre's totals.
 */
export async function centreStorage(db: DbOrTx, range: { from: string; to: string }, today: string, filter: { tenantKind?: OrgKind } = {}) {
  const kindFilter = filter.tenantKind ? eq(organisations.kind, filter.tenantKind) : undefined;
  const [used, granted, siteCount, orgs, days] = await Promise.all([
    db.select({ orgId: storageUsage.orgId, bytes: sql<string>`sum(${storageUsage.bytes})` }).from(storageUsage).groupBy(storageUsage.orgId),
    db
      .select({ orgId: allocations.orgId, perClass: sql<string>`coalesce(sum(${allocations.storageGb}) filter (where ${allocations.resourceClassId} is not null), 0)`, creditLines: sql<string>`coalesce(sum(${allocations.storageGb}) filter (where ${allocations.resourceClassId} is null), 0)` })
      .from(allocations)
      .where(eq(allocations.status, 'active'))
      .groupBy(allocations.orgId),
    db.select({ n: sql<number>`count(distinct ${resourceClasses.siteId})::int` }).from(resourceClasses).where(eq(resourceClasses.active, true)),
    db.select({ id: organisations.id, name: organisations.name, kind: organisations.kind }).from(organisations).where(kindFilter),
    storageDaysIn(db, { from: range.from, to: range.to, through: today }),
  ]);
  const sitesWithClasses = siteCount[0]?.n ?? 0;
  const usedBy = new Map(used.map((r) => [r.orgId, Number(r.bytes)]));
  const grantedBy = new Map(granted.map((r) => [r.orgId, Number(r.perClass) + Number(r.creditLines) * sitesWithClasses]));
  const daysBy = groupBy(days, (d) => d.orgId);
  const tenants: TenantStorage[] = orgs
    .map((o) => {
      const ds = daysBy.get(o.id) ?? [];
      const milli = [...groupBy(ds, (d) => d.siteId).values()].reduce((s, siteDays) => s + periodMilliTbMonths(siteDays), 0);
      return { orgId: o.id, name: o.name, kind: o.kind, usedBytes: usedBy.get(o.id) ?? 0, grantedGb: grantedBy.get(o.id) ?? 0, milliTbMonths: milli };
    })
    .filter((t) => t.usedBytes > 0 || t.grantedGb > 0 || t.milliTbMonths > 0)
    .sort((a, b) => b.usedBytes - a.usedBytes || b.milliTbMonths - a.milliTbMonths || a.name.localeCompare(b.name));
  return {
    tenants,
    totals: {
      usedBytes: tenants.reduce((s, t) => s + t.usedBytes, 0),
      grantedGb: tenants.reduce((s, t) => s + t.grantedGb, 0),
      milliTbMonths: tenants.reduce((s, t) => s + t.milliTbMonths, 0),
    },
  };
}

/** monthMilliTbMonths is one month's byte-days as thousandths of a TB-month (the invoice line's quantity). */
export function monthMilliTbMonths(use: Pick<StorageUse, 'byteDays' | 'daysInMonth'>): number {
  return milliTbMonths(use.byteDays, use.daysInMonth);
}
