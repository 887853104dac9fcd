// Usage rollups: daily sums per tenant × project × user × resource class × job kind, maintained in the
// same transaction that settles a job, so reports never scan raw jobs. A job's usage is split over
// the UTC days it ran (server/core/usage/apportion.ts); its count and wait are booked on the day it
// ended. `rebuildRollups` recomputes them from the jobs and must give identical rows (npm run usage:rebuild).
//
// The centre dashboard's own rollups (issue #30) are written from the same parts in the same transaction:
// per day × partition × tenant (`centre_tenant_days`, its biggest tenants) and per day × partition × tenant
// kind (`centre_days`, everything else, with the waits of the jobs that started that day in buckets,
// core/usage/wait-buckets.ts), and both again by calendar month (`centre_tenant_months`, `centre_months`),
// so a year of a large centre is read from a few thousand rows.
import { inArray, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { centreDays, centreMonths, centreTenantDays, centreTenantMonths, jobs, organisations, usageRollups, type OrgKind } from '~/db/schema';
import { apportionUsage, type DayPart } from '~/server/core/usage/apportion';
import { waitBucket } from '~/server/core/usage/wait-buckets';

export interface SettledJobUsage {
  orgId: string;
  projectId: string;
  userId: string;
  resourceClassId: string;
  kind: 'training' | 'fine_tuning' | 'inference' | 'batch' | 'interactive';
  startedAt: Date | null;
  endedAt: Date;
  gpuSeconds: number;
  waitSeconds: number | null;
  costCents: number;
  energyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
}

export type RollupRow = typeof usageRollups.$inferInsert;

/** rollupParts are a settled job's rollup rows: one per UTC day it ran, and the day it ended. */
export function rollupParts(job: SettledJobUsage): RollupRow[] {
  return apportionUsage(job).map((part: DayPart) => ({
    orgId: job.orgId,
    projectId: job.projectId,
    userId: job.userId,
    resourceClassId: job.resourceClassId,
    kind: job.kind,
    ...part,
  }));
}

/** A settled job's wait, for the centre's waits: booked on the UTC day it started. */
export interface WaitPart {
  day: string;
  orgId: string;
  resourceClassId: string;
  waitSeconds: number;
}

/** waitPart is a settled job's wait on the day it started; null when it never started. */
export function waitPart(job: SettledJobUsage): WaitPart | null {
  if (!job.startedAt || job.waitSeconds === null) return null;
  return { day: job.startedAt.toISOString().slice(0, 10), orgId: job.orgId, resourceClassId: job.resourceClassId, waitSeconds: job.waitSeconds };
}

function keyOf(r: RollupRow): string[] {
  return [r.orgId, r.day, r.projectId, r.userId, r.resourceClassId, r.kind];
}

/** compareRollupKeys orders rollup rows by their primary key (the lock order of rollup rows). */
export function compareRollupKeys(a: RollupRow, b: RollupRow): number {
  const ka = keyOf(a);
  const kb = keyOf(b);
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! < kb[i]! ? -1 : 1;
  return 0;
}

/**
 * addToRollups adds settled jobs' parts to their days' rollup rows (call inside the settling
 * transaction): parts with one key are summed first, and the rows are written in key order, so
 * two settling transactions never wait on each other's rollup rows in a cycle.
 */
export async function addToRollups(tx: DbOrTx, parts: RollupRow[], waits: readonly WaitPart[] = []): Promise<void> {
  await addToUsageRollups(tx, parts);
  await addToCentreRollups(tx, parts, waits);
}

async function addToUsageRollups(tx: DbOrTx, parts: RollupRow[]): Promise<void> {
  const merged = new Map<string, RollupRow>();
  for (const p of parts) {
    const key = keyOf(p).join('|');
    const seen = merged.get(key);
    if (!seen) {
      merged.set(key, { ...p });
      continue;
    }
    seen.jobs += p.jobs;
    seen.gpuSeconds += p.gpuSeconds;
    seen.waitSeconds += p.waitSeconds;
    seen.startedJobs += p.startedJobs;
    seen.costCents += p.costCents;
    seen.energyWh += p.energyWh;
    seen.facilityEnergyWh += p.facilityEnergyWh;
    seen.heatReusedWh += p.heatReusedWh;
    seen.co2eGrams += p.co2eGrams;
  }
  const rows = [...merged.values()].sort(compareRollupKeys);
  if (rows.length === 0) return;
  const add = (name: string) => sql`${sql.identifier('usage_rollups')}.${sql.identifier(name)} + excluded.${sql.identifier(name)}`;
  // One statement; Postgres takes the row locks of a multi-row upsert in the order of its VALUES.
  await tx
    .insert(usageRollups)
    .values(rows)
    .onConflictDoUpdate({
      target: [usageRollups.orgId, usageRollups.day, usageRollups.projectId, usageRollups.userId, usageRollups.resourceClassId, usageRollups.kind],
      set: {
        jobs: add('jobs'),
        gpuSeconds: add('gpu_seconds'),
        waitSeconds: add('wait_seconds'),
        startedJobs: add('started_jobs'),
        costCents: add('cost_cents'),
        energyWh: add('energy_wh'),
        facilityEnergyWh: add('facility_energy_wh'),
        heatReusedWh: add('heat_reused_wh'),
        co2eGrams: add('co2e_grams'),
      },
    });
}

type Figures = Pick<RollupRow, 'jobs' | 'gpuSeconds' | 'costCents' | 'energyWh' | 'facilityEnergyWh' | 'heatReusedWh' | 'co2eGrams'>;
/** The figures every rollup row sums (the centre's tables and a tenant's line on the dashboard). */
export const ROLLUP_FIGURES = ['jobs', 'gpuSeconds', 'costCents', 'energyWh', 'facilityEnergyWh', 'heatReusedWh', 'co2eGrams'] as const;

function zeroFigures(): Figures {
  return { jobs: 0, gpuSeconds: 0, costCents: 0, energyWh: 0, facilityEnergyWh: 0, heatReusedWh: 0, co2eGrams: 0 };
}

function addFigures(into: Figures, from: Figures): void {
  for (const f of ROLLUP_FIGURES) into[f] += from[f];
}

/** The upsert's additions, column by column, for a table of figures. */
function addedFigures(table: CentreTable) {
  const add = (name: string) => sql`${sql.identifier(table)}.${sql.identifier(name)} + excluded.${sql.identifier(name)}`;
  return {
    jobs: add('jobs'),
    gpuSeconds: add('gpu_seconds'),
    costCents: add('cost_cents'),
    energyWh: add('energy_wh'),
    facilityEnergyWh: add('facility_energy_wh'),
    heatReusedWh: add('heat_reused_wh'),
    co2eGrams: add('co2e_grams'),
  };
}

type CentreTable = 'centre_days' | 'centre_months' | 'centre_tenant_days' | 'centre_tenant_months';

/** The additions of a per-kind table: its figures, and its waits (the bucket counts added key by key). */
function addedKindFigures(table: 'centre_days' | 'centre_months') {
  return {
    ...addedFigures(table),
    startedJobs: sql`${sql.identifier(table)}.started_jobs + excluded.started_jobs`,
    waitSeconds: sql`${sql.identifier(table)}.wait_seconds + excluded.wait_seconds`,
    waitCounts: sql`portal_add_counts(${sql.identifier(table)}.wait_counts, excluded.wait_counts)`,
  };
}

interface TenantRow extends Figures {
  period: string;
  resourceClassId: string;
  orgId: string;
}

interface KindRow extends Figures {
  period: string;
  resourceClassId: string;
  orgKind: OrgKind;
  startedJobs: number;
  waitSeconds: number;
  waitCounts: Record<string, number>;
}

/** byKey orders a centre table's rows by its primary key (period, partition, tenant or kind): the lock order. */
function byKey<T extends { period: string; resourceClassId: string }>(third: (r: T) => string) {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return (a: T, b: T) => cmp(a.period, b.period) || cmp(a.resourceClassId, b.resourceClassId) || cmp(third(a), third(b));
}

/**
 * centreRows sums a settling batch's parts and waits into the rows of one granularity of the centre's
 * rollups (`periodOf` maps a day to its day or its month), each list in key order.
 */
function centreRows(parts: readonly RollupRow[], waits: readonly WaitPart[], kindOf: ReadonlyMap<string, OrgKind>, periodOf: (day: string) => string): { tenants: TenantRow[]; kinds: KindRow[] } {
  const tenants = new Map<string, TenantRow>();
  const kinds = new Map<string, KindRow>();
  const kindRow = (period: string, resourceClassId: string, orgKind: OrgKind) => {
    const key = `${period}|${resourceClassId}|${orgKind}`;
    let row = kinds.get(key);
    if (!row) kinds.set(key, (row = { period, resourceClassId, orgKind, ...zeroFigures(), startedJobs: 0, waitSeconds: 0, waitCounts: {} }));
    return row;
  };
  for (const p of parts) {
    const period = periodOf(p.day);
    const key = `${period}|${p.resourceClassId}|${p.orgId}`;
    let row = tenants.get(key);
    if (!row) tenants.set(key, (row = { period, resourceClassId: p.resourceClassId, orgId: p.orgId, ...zeroFigures() }));
    addFigures(row, p);
    addFigures(kindRow(period, p.resourceClassId, kindOf.get(p.orgId)!), p);
  }
  for (const w of waits) {
    const row = kindRow(periodOf(w.day), w.resourceClassId, kindOf.get(w.orgId)!);
    row.startedJobs += 1;
    row.waitSeconds += w.waitSeconds;
    const bucket = String(waitBucket(w.waitSeconds));
    row.waitCounts[bucket] = (row.waitCounts[bucket] ?? 0) + 1;
  }
  return { tenants: [...tenants.values()].sort(byKey((r) => r.orgId)), kinds: [...kinds.values()].sort(byKey((r) => r.orgKind)) };
}

/** Tenants' kinds seen by this process: a tenant's kind never changes, so a settling batch reads only new ones. */
const KINDS_KEPT = 100_000;
const kindsSeen = new Map<string, OrgKind>();

/** orgKinds gives the kind of each tenant named, reading from the database only those this process has not seen. */
async function orgKinds(tx: DbOrTx, orgIds: readonly string[]): Promise<ReadonlyMap<string, OrgKind>> {
  if (kindsSeen.size >= KINDS_KEPT) kindsSeen.clear();
  const unseen = [...new Set(orgIds)].filter((id) => !kindsSeen.has(id));
  if (unseen.length > 0) {
    const rows = await tx.select({ id: organisations.id, kind: organisations.kind }).from(organisations).where(inArray(organisations.id, unseen));
    for (const o of rows) kindsSeen.set(o.id, o.kind);
  }
  return kindsSeen;
}

/**
 * addToCentreRollups adds a settling batch's parts and waits to the centre's rollups, by day and by month:
 * per partition × tenant, then per partition × tenant kind (after usage_rollups; each table in key order,
 * the tables in this order: the lock order).
 */
async function addToCentreRollups(tx: DbOrTx, parts: readonly RollupRow[], waits: readonly WaitPart[]): Promise<void> {
  if (parts.length === 0 && waits.length === 0) return;
  const kindOf = await orgKinds(tx, [...parts.map((p) => p.orgId), ...waits.map((w) => w.orgId)]);
  const days = centreRows(parts, waits, kindOf, (day) => day);
  const months = centreRows(parts, waits, kindOf, (day) => `${day.slice(0, 7)}-01`);
  if (days.tenants.length > 0) {
    await tx
      .insert(centreTenantDays)
      .values(days.tenants.map(({ period, ...r }) => ({ day: period, ...r })))
      .onConflictDoUpdate({ target: [centreTenantDays.day, centreTenantDays.resourceClassId, centreTenantDays.orgId], set: addedFigures('centre_tenant_days') });
    await tx
      .insert(centreTenantMonths)
      .values(months.tenants.map(({ period, ...r }) => ({ month: period, ...r })))
      .onConflictDoUpdate({ target: [centreTenantMonths.month, centreTenantMonths.resourceClassId, centreTenantMonths.orgId], set: addedFigures('centre_tenant_months') });
  }
  await tx
    .insert(centreDays)
    .values(days.kinds.map(({ period, ...r }) => ({ day: period, ...r })))
    .onConflictDoUpdate({ target: [centreDays.day, centreDays.resourceClassId, centreDays.orgKind], set: addedKindFigures('centre_days') });
  await tx
    .insert(centreMonths)
    .values(months.kinds.map(({ period, ...r }) => ({ month: period, ...r })))
    .onConflictDoUpdate({ target: [centreMonths.month, centreMonths.resourceClassId, centreMonths.orgKind], set: addedKindFigures('centre_months') });
}

/** The largest-remainder split of one job column over its days, in SQL (the same rule as largestRemainder). */
function split(column: string): ReturnType<typeof sql.raw> {
  // base: floor of the exact share; the job's units left over go to the days with the largest
  // remainders, the earlier day on a tie. numeric: quantity × milliseconds can pass bigint.
  const share = `(${column}::numeric * ms)`;
  return sql.raw(`(div(${share}, total_ms) + case when row_number() over (partition by id order by mod(${share}, total_ms) desc, day) <= ${column} - sum(div(${share}, total_ms)) over (partition by id) then 1 else 0 end)::bigint`);
}

/** rebuildRollups recomputes every rollup row from the settled jobs, in one transaction, as addToRollups would. */
export async function rebuildRollups(db: Db): Promise<{ rows: number }> {
  return db.transaction(async (tx) => {
    await tx.delete(usageRollups).where(sql`true`);
    await tx.execute(sql`
      with settled as (
        select id, org_id, project_id, user_id, resource_class_id, kind, started_at, ended_at, wait_seconds,
               gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams,
               (ended_at at time zone 'UTC')::date as end_day,
               (started_at is not null and ended_at > started_at) as ran
        from ${jobs}
        where settled_at is not null and ended_at is not null
      ),
      days as (
        -- A run's UTC days with the milliseconds it ran in each; a job that never ran: its end day, weight 1.
        select s.*, d.day::date as day,
               round(extract(epoch from least(s.ended_at, (d.day + interval '1 day') at time zone 'UTC') - greatest(s.started_at, d.day at time zone 'UTC')) * 1000)::bigint as ms
        from settled s
        cross join lateral generate_series((s.started_at at time zone 'UTC')::date::timestamp, (s.ended_at at time zone 'UTC')::date::timestamp, interval '1 day') as d(day)
        where s.ran
        union all
        select s.*, s.end_day, 1::bigint from settled s where not s.ran
      ),
      weighted as (
        select *, sum(ms) over (partition by id) as total_ms from days where ms > 0
      ),
      parts as (
        select org_id, day, project_id, user_id, resource_class_id, kind, 0 as jobs, 0::bigint as wait_seconds, 0 as started_jobs,
               ${split('gpu_seconds')} as gpu_seconds, ${split('cost_cents')} as cost_cents, ${split('energy_wh')} as energy_wh,
               ${split('facility_energy_wh')} as facility_energy_wh, ${split('heat_reused_wh')} as heat_reused_wh, ${split('co2e_grams')} as co2e_grams
        from weighted
        union all
        -- The job itself, on the day it ended.
        select org_id, end_day, project_id, user_id, resource_class_id, kind, 1, coalesce(wait_seconds, 0), case when wait_seconds is null then 0 else 1 end,
               0, 0, 0, 0, 0, 0
        from settled
      )
      insert into ${usageRollups} (day, org_id, project_id, user_id, resource_class_id, kind, jobs, gpu_seconds, wait_seconds, started_jobs, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams)
      select day, org_id, project_id, user_id, resource_class_id, kind, sum(jobs)::int, sum(gpu_seconds), sum(wait_seconds), sum(started_jobs)::int,
             sum(cost_cents), sum(energy_wh), sum(facility_energy_wh), sum(heat_reused_wh), sum(co2e_grams)
      from parts
      group by 1, 2, 3, 4, 5, 6`);
    await rebuildCentreRollups(tx);
    const [count] = await tx.select({ n: sql<number>`count(*)::int` }).from(usageRollups);
    return { rows: count?.n ?? 0 };
  });
}

/**
 * rebuildCentreRollups recomputes the centre's rollups (call after usage_rollups is rebuilt, in its
 * transaction): the figures summed from usage_rollups, the waits from the settled jobs by the day they
 * started, bucketed by portal_wait_bucket (the same rule as waitBucket). drizzle/0061 fills them so once.
 */
export async function rebuildCentreRollups(tx: DbOrTx): Promise<void> {
  for (const table of [centreTenantDays, centreTenantMonths, centreDays, centreMonths]) await tx.delete(table).where(sql`true`);
  await tx.execute(sql`
    insert into ${centreTenantDays} (day, resource_class_id, org_id, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams)
    select day, resource_class_id, org_id, sum(jobs)::int, sum(gpu_seconds), sum(cost_cents), sum(energy_wh), sum(facility_energy_wh), sum(heat_reused_wh), sum(co2e_grams)
    from ${usageRollups} group by 1, 2, 3`);
  await tx.execute(sql`
    insert into ${centreDays} (day, resource_class_id, org_kind, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams, started_jobs, wait_seconds, wait_counts)
    select r.day, r.resource_class_id, o.kind, sum(r.jobs)::int, sum(r.gpu_seconds), sum(r.cost_cents), sum(r.energy_wh), sum(r.facility_energy_wh), sum(r.heat_reused_wh), sum(r.co2e_grams), 0, 0, '{}'::jsonb
    from ${usageRollups} r join ${organisations} o on o.id = r.org_id group by 1, 2, 3`);
  await tx.execute(sql`
    with waits as (
      select (j.started_at at time zone 'UTC')::date as day, j.resource_class_id, o.kind, portal_wait_bucket(j.wait_seconds) as bucket, count(*) as n, sum(j.wait_seconds) as seconds
      from ${jobs} j join ${organisations} o on o.id = j.org_id
      where j.settled_at is not null and j.started_at is not null and j.wait_seconds is not null
      group by 1, 2, 3, 4
    )
    insert into ${centreDays} (day, resource_class_id, org_kind, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams, started_jobs, wait_seconds, wait_counts)
    select day, resource_class_id, kind, 0, 0, 0, 0, 0, 0, 0, sum(n)::int, sum(seconds), jsonb_object_agg(bucket::text, n)
    from waits group by 1, 2, 3
    on conflict (day, resource_class_id, org_kind) do update set started_jobs = excluded.started_jobs, wait_seconds = excluded.wait_seconds, wait_counts = excluded.wait_counts`);
  // By month, from the days (drizzle/0062 the same).
  await tx.execute(sql`
    insert into ${centreTenantMonths} (month, resource_class_id, org_id, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams)
    select date_trunc('month', day)::date, resource_class_id, org_id, sum(jobs)::int, sum(gpu_seconds), sum(cost_cents), sum(energy_wh), sum(facility_energy_wh), sum(heat_reused_wh), sum(co2e_grams)
    from ${centreTenantDays} group by 1, 2, 3`);
  await tx.execute(sql`
    with sums as (
      select date_trunc('month', day)::date as month, resource_class_id, org_kind, sum(jobs)::int as jobs, sum(gpu_seconds) as gpu_seconds, sum(cost_cents) as cost_cents, sum(energy_wh) as energy_wh,
             sum(facility_energy_wh) as facility_energy_wh, sum(heat_reused_wh) as heat_reused_wh, sum(co2e_grams) as co2e_grams, sum(started_jobs)::int as started_jobs, sum(wait_seconds) as wait_seconds
      from ${centreDays} group by 1, 2, 3
    ), counts as (
      select date_trunc('month', d.day)::date as month, d.resource_class_id, d.org_kind, e.key, sum(e.value::bigint) as n
      from ${centreDays} d cross join lateral jsonb_each_text(d.wait_counts) e group by 1, 2, 3, 4
    ), merged as (
      select month, resource_class_id, org_kind, jsonb_object_agg(key, n) as wait_counts from counts group by 1, 2, 3
    )
    insert into ${centreMonths} (month, resource_class_id, org_kind, jobs, gpu_seconds, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams, started_jobs, wait_seconds, wait_counts)
    select s.month, s.resource_class_id, s.org_kind, s.jobs, s.gpu_seconds, s.cost_cents, s.energy_wh, s.facility_energy_wh, s.heat_reused_wh, s.co2e_grams, s.started_jobs, s.wait_seconds, coalesce(m.wait_counts, '{}'::jsonb)
    from sums s left join merged m using (month, resource_class_id, org_kind)`);
}
