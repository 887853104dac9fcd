// Usage rollups: daily sums per tenant × project × user × resource class × job kind, maintained in the
// same transaction that settles a job, so reports never scan raw jobs. `rebuildRollups` recomputes
// them from the jobs and must give identical totals (npm run usage:rebuild).
import { isNotNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { jobs, usageRollups } from '~/db/schema';

export interface SettledJobUsage {
  orgId: string;
  projectId: string;
  userId: string;
  resourceClassId: string;
  kind: 'training' | 'fine_tuning' | 'inference' | 'batch';
  endedAt: Date;
  gpuSeconds: number;
  waitSeconds: number | null;
  costCents: number;
  energyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
}

/** usageDay is the UTC day a settled job's usage is booked on: the day it ended. */
export function usageDay(endedAt: Date): string {
  return endedAt.toISOString().slice(0, 10);
}

/** addToRollup adds one settled job to its day's rollup row (call inside the settling transaction). */
export async function addToRollup(tx: DbOrTx, job: SettledJobUsage): Promise<void> {
  const row = {
    day: usageDay(job.endedAt),
    orgId: job.orgId,
    projectId: job.projectId,
    userId: job.userId,
    resourceClassId: job.resourceClassId,
    kind: job.kind,
    jobs: 1,
    gpuSeconds: job.gpuSeconds,
    waitSeconds: job.waitSeconds ?? 0,
    startedJobs: job.waitSeconds === null ? 0 : 1,
    costCents: job.costCents,
    energyWh: job.energyWh,
    facilityEnergyWh: job.facilityEnergyWh,
    heatReusedWh: job.heatReusedWh,
    co2eGrams: job.co2eGrams,
  };
  await tx
    .insert(usageRollups)
    .values(row)
    .onConflictDoUpdate({
      target: [usageRollups.orgId, usageRollups.day, usageRollups.projectId, usageRollups.userId, usageRollups.resourceClassId, usageRollups.kind],
      set: {
        jobs: sql`${usageRollups.jobs} + 1`,
        gpuSeconds: sql`${usageRollups.gpuSeconds} + ${row.gpuSeconds}`,
        waitSeconds: sql`${usageRollups.waitSeconds} + ${row.waitSeconds}`,
        startedJobs: sql`${usageRollups.startedJobs} + ${row.startedJobs}`,
        costCents: sql`${usageRollups.costCents} + ${row.costCents}`,
        energyWh: sql`${usageRollups.energyWh} + ${row.energyWh}`,
        facilityEnergyWh: sql`${usageRollups.facilityEnergyWh} + ${row.facilityEnergyWh}`,
        heatReusedWh: sql`${usageRollups.heatReusedWh} + ${row.heatReusedWh}`,
        co2eGrams: sql`${usageRollups.co2eGrams} + ${row.co2eGrams}`,
      },
    });
}

/** rebuildRollups recomputes every rollup row from the settled jobs, in one transaction. */
export async function rebuildRollups(db: Db): Promise<{ rows: number }> {
  return db.transaction(async (tx) => {
    await tx.delete(usageRollups).where(sql`true`);
    const day = sql`to_char(${jobs.endedAt} at time zone 'UTC', 'YYYY-MM-DD')::date`;
    await tx.execute(sql`
      insert into ${usageRollups} (day, org_id, project_id, user_id, resource_class_id, kind, jobs, gpu_seconds, wait_seconds, started_jobs, cost_cents, energy_wh, facility_energy_wh, heat_reused_wh, co2e_grams)
      select ${day}, ${jobs.orgId}, ${jobs.projectId}, ${jobs.userId}, ${jobs.resourceClassId}, ${jobs.kind}, count(*)::int,
             coalesce(sum(${jobs.gpuSeconds}), 0), coalesce(sum(${jobs.waitSeconds}), 0), count(${jobs.waitSeconds})::int,
             coalesce(sum(${jobs.costCents}), 0), coalesce(sum(${jobs.energyWh}), 0), coalesce(sum(${jobs.facilityEnergyWh}), 0),
             coalesce(sum(${jobs.heatReusedWh}), 0), coalesce(sum(${jobs.co2eGrams}), 0)
      from ${jobs}
      where ${isNotNull(jobs.settledAt)} and ${isNotNull(jobs.endedAt)}
      group by 1, 2, 3, 4, 5, 6`);
    const [count] = await tx.select({ n: sql<number>`count(*)::int` }).from(usageRollups);
    return { rows: count?.n ?? 0 };
  });
}
