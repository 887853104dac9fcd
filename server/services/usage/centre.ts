// The centre dashboard for staff: utilisation per partition and day, queue waits, allocated vs
// consumed GPU-hours, the biggest tenants, energy and footprint totals, and revenue by tenant kind;
// and its CSV exports (columns in docs/CSV.md, "Centre dashboard").
//
// Sources. Everything but the queue waits comes from `usage_rollups` (daily sums maintained as jobs
// settle), `allocations` and the catalogue; raw jobs are read only for the wait percentiles, which
// need the individual waits (a date filter on `started_at`).
//
// A rollup holds a job's usage on the UTC days it ran, split by the time in each day
// (server/core/usage/apportion.ts), so a day's utilisation is what ran that day and cannot exceed
// 100 % while the scheduler never runs more GPUs than a partition has (the demo history's test checks
// both). A job is added when it settles: a range's last days lack the jobs still running. Job counts
// are booked on the day a job ended. Utilisation is not clamped, so a fault would show.
// Capacity is the catalogue's nodes × GPUs per node today (no history of capacity changes is kept);
// nodes that were down still count as capacity.
import { and, asc, desc, eq, gt, gte, isNotNull, lt, lte, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, jobs, organisations, resourceClasses, sites, usageRollups, type OrgKind } from '~/db/schema';
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
import { AppError } from '~/server/errors';
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

function rollupWhere(scope: Scope): SQL {
  return and(
    gte(usageRollups.day, scope.from),
    lte(usageRollups.day, scope.to),
    scope.partition ? eq(usageRollups.resourceClassId, scope.partition) : undefined,
    scope.tenantKind ? eq(organisations.kind, scope.tenantKind) : undefined,
  )!;
}

/** The usage figures summed over the rollups in scope (a tenant's line, a kind's). */
const figureColumns = {
  jobs: total(usageRollups.jobs),
  gpuSeconds: total(usageRollups.gpuSeconds),
  energyWh: total(usageRollups.energyWh),
  facilityEnergyWh: total(usageRollups.facilityEnergyWh),
  heatReusedWh: total(usageRollups.heatReusedWh),
  co2eGrams: total(usageRollups.co2eGrams),
  costCents: total(usageRollups.costCents),
};

const tenantColumns = {
  orgId: organisations.id,
  name: organisations.name,
  kind: organisations.kind,
  ...figureColumns,
};

/** tenantUsage sums the rollups per tenant, biggest first by GPU-hours or facility energy. */
function tenantUsage(db: Db, scope: Scope, orderBy: 'gpuSeconds' | 'facilityEnergyWh', limit?: number): Promise<TenantUsage[]> {
  const key = orderBy === 'gpuSeconds' ? usageRollups.gpuSeconds : usageRollups.facilityEnergyWh;
  const query = db
    .select(tenantColumns)
    .from(usageRollups)
    .innerJoin(organisations, eq(organisations.id, usageRollups.orgId))
    .where(rollupWhere(scope))
    .groupBy(organisations.id)
    .orderBy(desc(sql`sum(${key})`), asc(organisations.name), asc(organisations.id));
  return limit === undefined ? query : query.limit(limit);
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
    .select({ day: usageRollups.day, partition: usageRollups.resourceClassId, gpuSeconds: total(usageRollups.gpuSeconds) })
    .from(usageRollups)
    .innerJoin(organisations, eq(organisations.id, usageRollups.orgId))
    .where(rollupWhere(scope))
    .groupBy(usageRollups.day, usageRollups.resourceClassId);
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

/** waitPercentiles reads the waits of jobs that started in the range (p50 / p90 by nearest rank). */
async function waitPercentiles(db: Db, scope: Scope): Promise<CentreDashboard['wait']> {
  // Settled jobs carry wait_seconds; a running job's wait is its start minus its submission, rounded the same way.
  const wait = sql`greatest(0, coalesce(${jobs.waitSeconds}, round(extract(epoch from ${jobs.startedAt} - ${jobs.submittedAt}))::int))`;
  const [row] = await db
    .select({
      startedJobs: sql<number>`count(*)::int`,
      p50: sql<number | null>`percentile_disc(0.5) within group (order by ${wait})`.mapWith(Number),
      p90: sql<number | null>`percentile_disc(0.9) within group (order by ${wait})`.mapWith(Number),
      mean: sql<number | null>`round(avg(${wait}))`.mapWith(Number),
    })
    .from(jobs)
    .innerJoin(organisations, eq(organisations.id, jobs.orgId))
    .where(
      and(
        isNotNull(jobs.startedAt),
        gte(jobs.startedAt, new Date(`${scope.from}T00:00:00Z`)),
        lt(jobs.startedAt, new Date(`${addDays(scope.to, 1)}T00:00:00Z`)),
        // The range on started_at is served by jobs_started_idx; a job starts after it was submitted, so this
        // redundant bound also keeps the (org_id, submitted_at) index usable.
        lt(jobs.submittedAt, new Date(`${addDays(scope.to, 1)}T00:00:00Z`)),
        scope.partition ? eq(jobs.resourceClassId, scope.partition) : undefined,
        scope.tenantKind ? eq(organisations.kind, scope.tenantKind) : undefined,
      ),
    );
  return { startedJobs: row?.startedJobs ?? 0, p50Seconds: row?.p50 ?? null, p90Seconds: row?.p90 ?? null, meanSeconds: row?.mean ?? null };
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
    .select({ id: sites.id, name: sites.name, nameDe: sites.nameDe, energyWh: total(usageRollups.energyWh), facilityEnergyWh: total(usageRollups.facilityEnergyWh) })
    .from(usageRollups)
    .innerJoin(organisations, eq(organisations.id, usageRollups.orgId))
    .innerJoin(resourceClasses, eq(resourceClasses.id, usageRollups.resourceClassId))
    .innerJoin(sites, eq(sites.id, resourceClasses.siteId))
    .where(rollupWhere(scope))
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

  const [use, wait, allocated, topByGpuHours, topByFacilityEnergy, siteRows, kindRows] = await Promise.all([
    dailyUse(db, scope),
    waitPercentiles(db, scope),
    allocationRows(db, scope),
    tenantUsage(db, scope, 'gpuSeconds', TOP_TENANTS),
    tenantUsage(db, scope, 'facilityEnergyWh', TOP_TENANTS),
    siteEnergy(db, scope, locale),
    db
      .select({
        kind: organisations.kind,
        ...figureColumns,
      })
      .from(usageRollups)
      .innerJoin(organisations, eq(organisations.id, usageRollups.orgId))
      .where(rollupWhere(scope))
      .groupBy(organisations.kind),
  ]);

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
    const tenants = await tenantUsage(db, scope, 'gpuSeconds');
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
