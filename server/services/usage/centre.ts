// The centre dashboard for staff: utilisation per partition and day, queue waits, allocated vs
// consumed GPU-hours, the biggest tenants, energy and footprint totals, and revenue by tenant kind;
// and its CSV exports (columns in docs/CSV.md, "Centre dashboard").
//
// Sources (issue #30: a year of a 10-million-job centre in a few hundred ms). Every figure comes from the
// centre's own rollups, maintained as jobs settle (server/services/usage/usage.ts): `centre_days` (day ×
// partition × tenant kind: utilisation, energy, revenue, and the waits of the jobs that started that day,
// counted per wait bucket) and `centre_tenant_days` (day × partition × tenant: the biggest tenants), the
// same by calendar month (`centre_months`, `centre_tenant_months`: a range's whole months are read from
// these, its other days from the day rows, core/usage/periods.ts splitByMonths), plus
// `allocations` and the catalogue. Jobs are read only while they run: a started job not yet settled adds
// its wait (through the index of open jobs). Wait percentiles are read from the buckets
// (core/usage/wait-buckets.ts): exact below 128 s, within 1.6 % above; the mean is exact.
//
// A rollup holds a job's usage on the UTC days it ran, split by the time in each day
// (server/core/usage/apportion.ts), so a day's utilisation is what ran that day and cannot exceed
// 100 % while the scheduler never runs more GPUs than a partition has (the demo history's test checks
// both). A job is added when it settles: a range's last days lack the jobs still running. Job counts
// are booked on the day a job ended. Utilisation is not clamped, so a fault would show.
// Capacity is the catalogue's nodes × GPUs per node today (no history of capacity changes is kept);
// nodes that were down still count as capacity.
import { and, asc, eq, gt, gte, isNotNull, isNull, lt, lte, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, centreDays, centreMonths, centreTenantDays, centreTenantMonths, jobs, organisations, resourceClasses, sites, type OrgKind } from '~/db/schema';
import { csvDocument } from '~/server/core/csv';
import {
  addDays,
  daysOf,
  fixedDecimal,
  kwhPerGpuHour,
  pue,
  rangeDays,
  rangeProblem,
  SECONDS_PER_DAY,
  SECONDS_PER_HOUR,
  utilisation,
  type RangeProblem,
} from '~/server/core/usage/percentiles';
import { splitByMonths, type MonthSplit } from '~/server/core/usage/periods';
import { addCounts, percentileOfCounts, waitBucket } from '~/server/core/usage/wait-buckets';
import { AppError } from '~/server/errors';
import { ROLLUP_FIGURES } from './usage';
import type { Locale, MessageKey } from '~/server/i18n';
import { localName } from '~/server/catalogue';

export interface CentreFilters {
  /** First day, YYYY-MM-DD (UTC). */
  from: string;
  /** Last day, inclusive. */
  to: string;
  /** A resource class id (the scheduler's partition); all when absent. */
  partition?: string;
  tenantKind?: OrgKind;
}

export interface UtilisationPoint {
  day: string;
  usedGpuSeconds: number;
  capacityGpuSeconds: number;
  /** used ÷ capacity as a fraction (not clamped; see above). */
  utilisation: number;
}

export interface PartitionSeries {
  id: string;
  name: string;
  siteId: string;
  capacityGpus: number;
  usedGpuSeconds: number;
  capacityGpuSeconds: number;
  utilisation: number;
  days: UtilisationPoint[];
}

export interface AllocationRow {
  /** Resource class (partition) of the GPU-hour allocations. */
  partition: string;
  name: string;
  allocations: number;
  /** Lifetime figures of the allocations whose period overlaps the range. */
  grantedGpuSeconds: number;
  chargedGpuSeconds: number;
  /** Each grant prorated by the share of its period that falls in the range, summed and rounded. */
  grantedInRangeGpuSeconds: number;
  capacityGpuSeconds: number;
  /** grantedInRange ÷ capacity over the range; above 1 means more was promised than the partition can deliver. */
  oversubscription: number;
}

/** The sums a tenant's row and the centre's totals both carry. */
interface UsageSums {
  jobs: number;
  gpuSeconds: number;
  /** IT energy of the jobs. */
  energyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
  costCents: number;
}

export interface TenantUsage extends UsageSums {
  orgId: string;
  name: string;
  kind: OrgKind;
}

export interface UsageTotals extends UsageSums {
  /** IT kWh per GPU-hour; null without GPU time. */
  itKwhPerGpuHour: number | null;
  facilityKwhPerGpuHour: number | null;
  /** Facility ÷ IT energy of the jobs in the range, all sites together; null without IT energy. */
  pue: number | null;
}

/** The jobs' energy at one site in the range, and its PUE (facility ÷ IT) from them. */
export interface SiteEnergy {
  id: string;
  name: string;
  energyWh: number;
  facilityEnergyWh: number;
  pue: number | null;
}

export interface KindRevenue {
  kind: OrgKind;
  /** What cost_cents means for this kind: invoiced revenue (companies) or the value of the grants used (academic). */
  meaning: 'revenue' | 'grantValue';
  costCents: number;
  gpuSeconds: number;
  jobs: number;
}

export interface CentreDashboard {
  range: { from: string; to: string; days: number };
  filters: { partition: string | null; tenantKind: OrgKind | null };
  partitions: PartitionSeries[];
  /** All shown partitions together. */
  utilisation: { usedGpuSeconds: number; capacityGpuSeconds: number; utilisation: number };
  /** Waits of jobs that started in the range (settled or still running). */
  wait: { startedJobs: number; p50Seconds: number | null; p90Seconds: number | null; meanSeconds: number | null };
  allocations: { rows: AllocationRow[]; total: Omit<AllocationRow, 'partition' | 'name'> };
  topByGpuHours: TenantUsage[];
  topByFacilityEnergy: TenantUsage[];
  totals: UsageTotals;
  /** Sites whose jobs used energy in the range, by id. */
  sites: SiteEnergy[];
  byKind: KindRevenue[];
}

export const TOP_TENANTS = 10;

const RANGE_MESSAGE: Record<RangeProblem['problem'], MessageKey> = {
  invalid: 'validation.invalid',
  toBeforeFrom: 'centre.error.toBeforeFrom',
  tooLong: 'centre.error.rangeTooLong',
};

/** rangeMessageKey is the message key of a range problem (the router's validation uses it too). */
export function rangeMessageKey(problem: RangeProblem['problem']): MessageKey {
  return RANGE_MESSAGE[problem];
}

const KIND_MEANING: Record<OrgKind, KindRevenue['meaning']> = { company: 'revenue', academic: 'grantValue' };

/** A sum of a bigint column as a JS number (sum() is numeric in Postgres, a string on the wire). */
function total(column: AnyColumn | SQL): SQL<number> {
  return sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
}

interface Scope {
  from: string;
  to: string;
  partition?: string;
  tenantKind?: OrgKind;
}

type CentreTable = typeof centreDays | typeof centreTenantDays | typeof centreMonths | typeof centreTenantMonths;

/**
 * The rows of a centre rollup in scope: its days (or months, by their first days) from `span.from` to
 * `span.to`, its partition, its tenants' kind (a per-tenant table is joined with organisations).
 */
function centreWhere(table: CentreTable, scope: Scope, span: { from: string; to: string } = scope): SQL {
  const period = 'day' in table ? table.day : table.month;
  return and(
    gte(period, span.from),
    lte(period, span.to),
    scope.partition ? eq(table.resourceClassId, scope.partition) : undefined,
    scope.tenantKind ? eq('orgKind' in table ? table.orgKind : organisations.kind, scope.tenantKind) : undefined,
  )!;
}

/** The usage figures summed over the rollup rows in scope (a tenant's line, a kind's). */
function figureColumns(table: CentreTable) {
  return {
    jobs: total(table.jobs),
    gpuSeconds: total(table.gpuSeconds),
    energyWh: total(table.energyWh),
    facilityEnergyWh: total(table.facilityEnergyWh),
    heatReusedWh: total(table.heatReusedWh),
    co2eGrams: total(table.co2eGrams),
    costCents: total(table.costCents),
  };
}

/** byName breaks ties of the biggest tenants: name, then id. */
function byName(a: TenantUsage, b: TenantUsage): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0;
}

/** The day rows of the range's days outside its whole months (none, one or two runs of days). */
function edgeDaysWhere(table: typeof centreDays | typeof centreTenantDays, scope: Scope, days: MonthSplit['days']): SQL | undefined {
  if (days.length === 0) return undefined;
  return or(...days.map((d) => centreWhere(table, scope, d)));
}

/** tenantUsage sums the rollups per tenant (one row per tenant with rows in scope): whole months from their month rows, the other days from day rows. */
async function tenantUsage(db: Db, scope: Scope): Promise<TenantUsage[]> {
  const split = splitByMonths(scope.from, scope.to);
  const edges = edgeDaysWhere(centreTenantDays, scope, split.days);
  const tenantColumns = { orgId: organisations.id, name: organisations.name, kind: organisations.kind };
  const parts = await Promise.all([
    split.months
      ? db
          .select({ ...tenantColumns, ...figureColumns(centreTenantMonths) })
          .from(centreTenantMonths)
          .innerJoin(organisations, eq(organisations.id, centreTenantMonths.orgId))
          .where(centreWhere(centreTenantMonths, scope, { from: split.months.first, to: split.months.last }))
          .groupBy(organisations.id)
      : [],
    edges
      ? db
          .select({ ...tenantColumns, ...figureColumns(centreTenantDays) })
          .from(centreTenantDays)
          .innerJoin(organisations, eq(organisations.id, centreTenantDays.orgId))
          .where(edges)
          .groupBy(organisations.id)
      : [],
  ]);
  const byOrg = new Map<string, TenantUsage>();
  for (const row of parts.flat()) {
    const seen = byOrg.get(row.orgId);
    if (!seen) byOrg.set(row.orgId, { ...row });
    else for (const f of ROLLUP_FIGURES) seen[f] += row[f];
  }
  return [...byOrg.values()];
}

/** biggest orders tenants by GPU-hours or facility energy, biggest first (ties by name), and keeps `limit`. */
function biggest(tenants: readonly TenantUsage[], by: 'gpuSeconds' | 'facilityEnergyWh', limit?: number): TenantUsage[] {
  const sorted = [...tenants].sort((a, b) => b[by] - a[by] || byName(a, b));
  return limit === undefined ? sorted : sorted.slice(0, limit);
}

/** centrePartitions lists the partitions (resource classes) for the dashboard's filter. */
export async function centrePartitions(db: Db, locale: Locale = 'en'): Promise<{ id: string; name: string; active: boolean }[]> {
  const rows = await db.select({ id: resourceClasses.id, name: resourceClasses.name, nameDe: resourceClasses.nameDe, active: resourceClasses.active }).from(resourceClasses).orderBy(asc(resourceClasses.id));
  return rows.map(({ nameDe, ...r }) => ({ ...r, name: localName(locale, { name: r.name, nameDe }) }));
}

/** checkScope refuses a bad range or an unknown partition, naming the field; returns the partitions to show, named in `locale`. */
async function checkScope(db: Db, input: CentreFilters, locale: Locale = 'en') {
  const problem = rangeProblem(input.from, input.to);
  if (problem) throw new AppError('BAD_REQUEST', RANGE_MESSAGE[problem.problem], {}, problem.field);
  const classes = await db
    .select({ id: resourceClasses.id, name: resourceClasses.name, nameDe: resourceClasses.nameDe, siteId: resourceClasses.siteId, active: resourceClasses.active, capacityGpus: sql<number>`${resourceClasses.nodes} * ${resourceClasses.gpusPerNode}`.mapWith(Number) })
    .from(resourceClasses)
    .orderBy(asc(resourceClasses.id))
    .then((rows) => rows.map(({ nameDe, ...c }) => ({ ...c, name: localName(locale, { name: c.name, nameDe }) })));
  if (input.partition !== undefined && !classes.some((c) => c.id === input.partition)) {
    throw new AppError('BAD_REQUEST', 'centre.error.unknownPartition', { partition: input.partition }, 'partition');
  }
  return classes;
}

/** dailyUse sums GPU-seconds per partition and day from the rollups. */
async function dailyUse(db: Db, scope: Scope): Promise<Map<string, Map<string, number>>> {
  const rows = await db
    .select({ day: centreDays.day, partition: centreDays.resourceClassId, gpuSeconds: total(centreDays.gpuSeconds) })
    .from(centreDays)
    .where(centreWhere(centreDays, scope))
    .groupBy(centreDays.day, centreDays.resourceClassId);
  const byPartition = new Map<string, Map<string, number>>();
  for (const row of rows) {
    let days = byPartition.get(row.partition);
    if (!days) byPartition.set(row.partition, (days = new Map<string, number>()));
    days.set(row.day, row.gpuSeconds);
  }
  return byPartition;
}

function series(
  classes: { id: string; name: string; siteId: string; active: boolean; capacityGpus: number }[],
  use: Map<string, Map<string, number>>,
  scope: Scope,
  extraPartitions: ReadonlySet<string> = new Set(),
): PartitionSeries[] {
  const days = daysOf(scope.from, scope.to);
  const shown = classes.filter((c) => (scope.partition ? c.id === scope.partition : c.active || use.has(c.id) || extraPartitions.has(c.id)));
  return shown.map((c) => {
    const used = use.get(c.id) ?? new Map<string, number>();
    const capacityPerDay = c.capacityGpus * SECONDS_PER_DAY;
    const points = days.map((day) => {
      const usedGpuSeconds = used.get(day) ?? 0;
      return { day, usedGpuSeconds, capacityGpuSeconds: capacityPerDay, utilisation: utilisation(usedGpuSeconds, c.capacityGpus, SECONDS_PER_DAY) };
    });
    const usedGpuSeconds = points.reduce((s, p) => s + p.usedGpuSeconds, 0);
    const seconds = days.length * SECONDS_PER_DAY;
    return {
      id: c.id,
      name: c.name,
      siteId: c.siteId,
      capacityGpus: c.capacityGpus,
      usedGpuSeconds,
      capacityGpuSeconds: c.capacityGpus * seconds,
      utilisation: utilisation(usedGpuSeconds, c.capacityGpus, seconds),
      days: points,
    };
  });
}

/**
 * waitPercentiles sums the waits of the jobs that started in the range: the settled ones from the centre's
 * rollups (counted per bucket on the day they started), the others — running, or ended and not yet
 * settled — from their jobs. p50 / p90 by nearest rank over the buckets (percentile_disc's rule).
 */
async function waitPercentiles(db: Db, scope: Scope): Promise<CentreDashboard['wait']> {
  // A running job's wait is its start minus its submission, rounded as settlement freezes it.
  const wait = sql<number>`greatest(0, coalesce(${jobs.waitSeconds}, round(extract(epoch from ${jobs.startedAt} - ${jobs.submittedAt}))::int))`.mapWith(Number);
  const split = splitByMonths(scope.from, scope.to);
  const edges = edgeDaysWhere(centreDays, scope, split.days);
  const [months, days, open] = await Promise.all([
    split.months
      ? db.select({ startedJobs: centreMonths.startedJobs, waitSeconds: centreMonths.waitSeconds, waitCounts: centreMonths.waitCounts }).from(centreMonths).where(and(centreWhere(centreMonths, scope, { from: split.months.first, to: split.months.last }), gt(centreMonths.startedJobs, 0)))
      : [],
    edges ? db.select({ startedJobs: centreDays.startedJobs, waitSeconds: centreDays.waitSeconds, waitCounts: centreDays.waitCounts }).from(centreDays).where(and(edges, gt(centreDays.startedJobs, 0))) : [],
    db
      .select({ wait })
      .from(jobs)
      .innerJoin(organisations, eq(organisations.id, jobs.orgId))
      .where(
        and(
          // The open jobs' index (jobs_open_idx): only jobs not settled yet are read.
          isNull(jobs.settledAt),
          isNotNull(jobs.startedAt),
          gte(jobs.startedAt, new Date(`${scope.from}T00:00:00Z`)),
          lt(jobs.startedAt, new Date(`${addDays(scope.to, 1)}T00:00:00Z`)),
          scope.partition ? eq(jobs.resourceClassId, scope.partition) : undefined,
          scope.tenantKind ? eq(organisations.kind, scope.tenantKind) : undefined,
        ),
      ),
  ]);
  const counts = new Map<number, number>();
  let startedJobs = 0;
  let waitSeconds = 0;
  for (const row of [...months, ...days]) {
    startedJobs += row.startedJobs;
    waitSeconds += row.waitSeconds;
    addCounts(counts, row.waitCounts);
  }
  for (const row of open) {
    startedJobs += 1;
    waitSeconds += row.wait;
    addCounts(counts, [[waitBucket(row.wait), 1]]);
  }
  if (startedJobs === 0) return { startedJobs: 0, p50Seconds: null, p90Seconds: null, meanSeconds: null };
  return { startedJobs, p50Seconds: percentileOfCounts(counts, 0.5), p90Seconds: percentileOfCounts(counts, 0.9), meanSeconds: Math.round(waitSeconds / startedJobs) };
}

/** allocationRows compares GPU-hour allocations whose period overlaps the range with each partition's capacity. */
async function allocationRows(db: Db, scope: Scope) {
  const toExclusive = addDays(scope.to, 1);
  // allocations.period_end is exclusive; the overlap with [from, to] in days, over the period's days.
  const overlap = sql`(least(${allocations.periodEnd}, ${toExclusive}::date) - greatest(${allocations.periodStart}, ${scope.from}::date))`;
  const periodDays = sql`(${allocations.periodEnd} - ${allocations.periodStart})`;
  return db
    .select({
      partition: allocations.resourceClassId,
      allocations: sql<number>`count(*)::int`,
      granted: total(allocations.granted),
      charged: total(allocations.charged),
      grantedInRange: sql<number>`coalesce(round(sum(${allocations.granted}::numeric * ${overlap} / ${periodDays})), 0)`.mapWith(Number),
    })
    .from(allocations)
    .innerJoin(organisations, eq(organisations.id, allocations.orgId))
    .where(
      and(
        eq(allocations.unit, 'gpu_seconds'),
        isNotNull(allocations.resourceClassId),
        lte(allocations.periodStart, scope.to),
        gt(allocations.periodEnd, scope.from),
        scope.partition ? eq(allocations.resourceClassId, scope.partition) : undefined,
        scope.tenantKind ? eq(organisations.kind, scope.tenantKind) : undefined,
      ),
    )
    .groupBy(allocations.resourceClassId);
}

/** siteEnergy sums the rollups' IT and facility energy per site (a partition's site is its resource class's). */
async function siteEnergy(db: Db, scope: Scope, locale: Locale): Promise<SiteEnergy[]> {
  const rows = await db
    .select({ id: sites.id, name: sites.name, nameDe: sites.nameDe, energyWh: total(centreDays.energyWh), facilityEnergyWh: total(centreDays.facilityEnergyWh) })
    .from(centreDays)
    .innerJoin(resourceClasses, eq(resourceClasses.id, centreDays.resourceClassId))
    .innerJoin(sites, eq(sites.id, resourceClasses.siteId))
    .where(centreWhere(centreDays, scope))
    .groupBy(sites.id)
    .orderBy(asc(sites.id));
  return rows.filter((r) => r.energyWh > 0 || r.facilityEnergyWh > 0).map(({ nameDe, ...r }) => ({ ...r, name: localName(locale, { name: r.name, nameDe }), pue: pue(r.facilityEnergyWh, r.energyWh) }));
}

function withTotals(kinds: KindRevenue[], energy: Omit<UsageTotals, 'itKwhPerGpuHour' | 'facilityKwhPerGpuHour' | 'pue' | 'jobs' | 'gpuSeconds' | 'costCents'>): UsageTotals {
  const jobsTotal = kinds.reduce((s, k) => s + k.jobs, 0);
  const gpuSeconds = kinds.reduce((s, k) => s + k.gpuSeconds, 0);
  return {
    jobs: jobsTotal,
    gpuSeconds,
    ...energy,
    costCents: kinds.reduce((s, k) => s + k.costCents, 0),
    itKwhPerGpuHour: kwhPerGpuHour(energy.energyWh, gpuSeconds),
    facilityKwhPerGpuHour: kwhPerGpuHour(energy.facilityEnergyWh, gpuSeconds),
    pue: pue(energy.facilityEnergyWh, energy.energyWh),
  };
}

/**
 * partitionUtilisation is the dashboard's utilisation per partition for a range (no other filter),
 * the very figures of `centreDashboard(...).partitions`; the TCO page reads it (server/services/planning/tco.ts).
 */
export async function partitionUtilisation(db: Db, range: { from: string; to: string }, locale: Locale = 'en'): Promise<PartitionSeries[]> {
  const classes = await checkScope(db, range, locale);
  const scope: Scope = { from: range.from, to: range.to };
  return series(classes, await dailyUse(db, scope), scope);
}

/** centreDashboard gathers every figure of the staff centre dashboard for a range of days and optional filters. */
export async function centreDashboard(db: Db, input: CentreFilters, locale: Locale = 'en'): Promise<CentreDashboard> {
  const classes = await checkScope(db, input, locale);
  const scope: Scope = { from: input.from, to: input.to, partition: input.partition, tenantKind: input.tenantKind };
  const days = rangeDays(scope.from, scope.to);

  const [use, wait, allocated, tenants, siteRows, kindRows] = await Promise.all([
    dailyUse(db, scope),
    waitPercentiles(db, scope),
    allocationRows(db, scope),
    tenantUsage(db, scope),
    siteEnergy(db, scope, locale),
    db
      .select({ kind: centreDays.orgKind, ...figureColumns(centreDays) })
      .from(centreDays)
      .where(centreWhere(centreDays, scope))
      .groupBy(centreDays.orgKind),
  ]);
  const topByGpuHours = biggest(tenants, 'gpuSeconds', TOP_TENANTS);
  const topByFacilityEnergy = biggest(tenants, 'facilityEnergyWh', TOP_TENANTS);

  const partitions = series(classes, use, scope, new Set(allocated.map((a) => a.partition!)));
  const usedAll = partitions.reduce((s, p) => s + p.usedGpuSeconds, 0);
  const capacityAll = partitions.reduce((s, p) => s + p.capacityGpuSeconds, 0);

  const kinds: OrgKind[] = scope.tenantKind ? [scope.tenantKind] : ['company', 'academic'];
  const byKind = kinds.map((kind): KindRevenue => {
    const row = kindRows.find((r) => r.kind === kind);
    return { kind, meaning: KIND_MEANING[kind], costCents: row?.costCents ?? 0, gpuSeconds: row?.gpuSeconds ?? 0, jobs: row?.jobs ?? 0 };
  });
  const energy = {
    energyWh: kindRows.reduce((s, r) => s + r.energyWh, 0),
    facilityEnergyWh: kindRows.reduce((s, r) => s + r.facilityEnergyWh, 0),
    heatReusedWh: kindRows.reduce((s, r) => s + r.heatReusedWh, 0),
    co2eGrams: kindRows.reduce((s, r) => s + r.co2eGrams, 0),
  };

  const rangeSeconds = days * SECONDS_PER_DAY;
  const allocationRowsOut: AllocationRow[] = partitions
    .filter((p) => allocated.some((a) => a.partition === p.id))
    .map((p) => {
      const a = allocated.find((r) => r.partition === p.id)!;
      return {
        partition: p.id,
        name: p.name,
        allocations: a.allocations,
        grantedGpuSeconds: a.granted,
        chargedGpuSeconds: a.charged,
        grantedInRangeGpuSeconds: a.grantedInRange,
        capacityGpuSeconds: p.capacityGpus * rangeSeconds,
        oversubscription: utilisation(a.grantedInRange, p.capacityGpus, rangeSeconds),
      };
    });
  const capacityGpus = partitions.reduce((s, p) => s + p.capacityGpus, 0);
  const grantedInRange = allocationRowsOut.reduce((s, r) => s + r.grantedInRangeGpuSeconds, 0);

  return {
    range: { from: scope.from, to: scope.to, days },
    filters: { partition: scope.partition ?? null, tenantKind: scope.tenantKind ?? null },
    partitions,
    utilisation: { usedGpuSeconds: usedAll, capacityGpuSeconds: capacityAll, utilisation: capacityAll > 0 ? usedAll / capacityAll : 0 },
    wait,
    allocations: {
      rows: allocationRowsOut,
      total: {
        allocations: allocationRowsOut.reduce((s, r) => s + r.allocations, 0),
        grantedGpuSeconds: allocationRowsOut.reduce((s, r) => s + r.grantedGpuSeconds, 0),
        chargedGpuSeconds: allocationRowsOut.reduce((s, r) => s + r.chargedGpuSeconds, 0),
        grantedInRangeGpuSeconds: grantedInRange,
        capacityGpuSeconds: capacityGpus * rangeSeconds,
        oversubscription: utilisation(grantedInRange, capacityGpus, rangeSeconds),
      },
    },
    topByGpuHours,
    topByFacilityEnergy,
    totals: withTotals(byKind, energy),
    sites: siteRows,
    byKind,
  };
}

// ---- CSV -------------------------------------------------------------------------------------

export const CENTRE_CSV_TABLES = ['partitions', 'tenants'] as const;
export type CentreCsvTable = (typeof CENTRE_CSV_TABLES)[number];

export const PARTITION_CSV_COLUMNS = ['day', 'partition', 'gpu_hours', 'capacity_gpu_hours', 'utilisation_percent'] as const;
export const TENANT_CSV_COLUMNS = ['tenant', 'kind', 'gpu_hours', 'jobs', 'it_kwh', 'facility_kwh', 'heat_reused_kwh', 'co2e_kg', 'cost_eur'] as const;

/** centreCsvFilename is the download name of a centre export: centre-<from>-<to>.csv, centre-tenants-<from>-<to>.csv. */
export function centreCsvFilename(input: Pick<CentreFilters, 'from' | 'to'>, table: CentreCsvTable = 'partitions'): string {
  return table === 'tenants' ? `centre-tenants-${input.from}-${input.to}.csv` : `centre-${input.from}-${input.to}.csv`;
}

/**
 * centreDashboardCsv exports the dashboard as CSV (server/core/csv.ts; `.` decimals):
 * `partitions` (default) is the utilisation series, one row per day × partition; `tenants` is one
 * row per tenant with usage in the range, biggest first. Same filters and refusals as the dashboard.
 */
export async function centreDashboardCsv(db: Db, input: CentreFilters, table: CentreCsvTable = 'partitions'): Promise<{ filename: string; body: string }> {
  const classes = await checkScope(db, input);
  const scope: Scope = { from: input.from, to: input.to, partition: input.partition, tenantKind: input.tenantKind };
  const filename = centreCsvFilename(scope, table);
  if (table === 'tenants') {
    const tenants = biggest(await tenantUsage(db, scope), 'gpuSeconds');
    const rows = tenants.map((t) => [
      t.name,
      t.kind,
      fixedDecimal(t.gpuSeconds, SECONDS_PER_HOUR, 2),
      String(t.jobs),
      fixedDecimal(t.energyWh, 1000, 3),
      fixedDecimal(t.facilityEnergyWh, 1000, 3),
      fixedDecimal(t.heatReusedWh, 1000, 3),
      fixedDecimal(t.co2eGrams, 1000, 3),
      fixedDecimal(t.costCents, 100, 2),
    ]);
    return { filename, body: csvDocument(TENANT_CSV_COLUMNS, rows) };
  }
  const partitions = series(classes, await dailyUse(db, scope), scope);
  const rows: string[][] = [];
  daysOf(scope.from, scope.to).forEach((day, i) => {
    for (const p of partitions) {
      const point = p.days[i]!;
      rows.push([
        day,
        p.id,
        fixedDecimal(point.usedGpuSeconds, SECONDS_PER_HOUR, 2),
        fixedDecimal(point.capacityGpuSeconds, SECONDS_PER_HOUR, 2),
        point.capacityGpuSeconds > 0 ? fixedDecimal(point.usedGpuSeconds * 100, point.capacityGpuSeconds, 2) : '0.00',
      ]);
    }
  });
  return { filename, body: csvDocument(PARTITION_CSV_COLUMNS, rows) };
}
