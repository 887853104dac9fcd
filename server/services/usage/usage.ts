// Usage rollups: daily sums per tenant × project × user × resource class × job kind, maintained in the
// same transaction that settles a job, so reports never scan raw jobs. A job's usage is split over
// the UTC days it ran (server/core/usage/apportion.ts); its count and wait are booked on the day it
// ended. `rebuildRollups` recomputes them from the jobs and must give identical rows (npm run usage:rebuild).
import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { jobs, usageRollups } from '~/db/schema';
import { apportionUsage, type DayPart } from '~/server/core/usage/apportion';

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
export async function addToRollups(tx: DbOrTx, parts: RollupRow[]): Promise<void> {
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
    const [count] = await tx.select({ n: sql<number>`count(*)::int` }).from(usageRollups);
    return { rows: count?.n ?? 0 };
  });
}
