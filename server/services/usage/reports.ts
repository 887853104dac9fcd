// Tenant usage reports: GPU-hours, jobs, waits, euros, energy, heat and CO2e for a period, grouped by
// project, user, resource class or job kind — from the daily rollups, never by scanning raw jobs
// (except the per-job table, which reads one tenant's jobs of the period through an index).
import { and, asc, desc, eq, gte, inArray, isNotNull, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { jobs, projectMembers, projects, usageRollups, users } from '~/db/schema';
import { roleAtLeast } from '~/server/core/roles';
import { csvDocument } from '~/server/core/csv';
import { AppError } from '~/server/errors';
import type { Locale } from '~/server/i18n';
import type { TenantActor } from '~/server/services/actor';
import { resourceClassNames } from '~/server/services/catalogue';

export const GROUP_BY = ['project', 'user', 'resourceClass', 'kind'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export interface Figures {
  jobs: number;
  gpuSeconds: number;
  avgWaitSeconds: number | null;
  costCents: number;
  energyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
}

/** reportScope returns the projects an actor may report on: all of the tenant's for owners and managers, else the ones they lead. */
export async function reportScope(db: DbOrTx, actor: TenantActor): Promise<{ all: true } | { all: false; projectIds: string[] }> {
  if (roleAtLeast(actor.role, 'manager')) return { all: true };
  const led = await db
    .select({ projectId: projectMembers.projectId })
    .from(projectMembers)
    .innerJoin(projects, eq(projects.id, projectMembers.projectId))
    .where(and(eq(projectMembers.userId, actor.userId), eq(projects.orgId, actor.org.id), inArray(projectMembers.role, ['pi', 'manager'])));
  if (led.length === 0) throw new AppError('FORBIDDEN', 'report.notAllowed');
  return { all: false, projectIds: led.map((r) => r.projectId) };
}

/** The sums every usage figure is made of, as SQL over the rollups (also used by bench/reports.ts for EXPLAIN). */
export const rollupSums = {
  jobs: sql<string>`coalesce(sum(${usageRollups.jobs}), 0)`,
  gpuSeconds: sql<string>`coalesce(sum(${usageRollups.gpuSeconds}), 0)`,
  waitSeconds: sql<string>`coalesce(sum(${usageRollups.waitSeconds}), 0)`,
  startedJobs: sql<string>`coalesce(sum(${usageRollups.startedJobs}), 0)`,
  costCents: sql<string>`coalesce(sum(${usageRollups.costCents}), 0)`,
  energyWh: sql<string>`coalesce(sum(${usageRollups.energyWh}), 0)`,
  facilityEnergyWh: sql<string>`coalesce(sum(${usageRollups.facilityEnergyWh}), 0)`,
  heatReusedWh: sql<string>`coalesce(sum(${usageRollups.heatReusedWh}), 0)`,
  co2eGrams: sql<string>`coalesce(sum(${usageRollups.co2eGrams}), 0)`,
};

type SumRow = { [K in keyof typeof rollupSums]: string };

function figures(row: SumRow | undefined): Figures {
  const n = (v: string | undefined) => Number(v ?? 0);
  const started = n(row?.startedJobs);
  return {
    jobs: n(row?.jobs),
    gpuSeconds: n(row?.gpuSeconds),
    avgWaitSeconds: started > 0 ? Math.round(n(row?.waitSeconds) / started) : null,
    costCents: n(row?.costCents),
    energyWh: n(row?.energyWh),
    facilityEnergyWh: n(row?.facilityEnergyWh),
    heatReusedWh: n(row?.heatReusedWh),
    co2eGrams: n(row?.co2eGrams),
  };
}

export interface ReportInput {
  from: string;
  to: string;
  groupBy: GroupBy;
}

/** usageReport returns totals, groups and the daily series (stacked by project) of a tenant's usage in a period. */
export async function usageReport(db: DbOrTx, actor: TenantActor, input: ReportInput, locale: Locale = 'en') {
  return organisationUsage(db, actor.org.id, await reportScope(db, actor), input, locale);
}

/** organisationUsage reports on one tenant (all its projects, or some): for the tenant's own people and for staff; classes are named in `locale`. */
export async function organisationUsage(db: DbOrTx, orgId: string, scope: { all: true } | { all: false; projectIds: string[] }, input: ReportInput, locale: Locale = 'en') {
  const where: SQL[] = [eq(usageRollups.orgId, orgId), gte(usageRollups.day, input.from), lte(usageRollups.day, input.to)];
  if (!scope.all) where.push(inArray(usageRollups.projectId, scope.projectIds));
  const groupColumn = { project: usageRollups.projectId, user: usageRollups.userId, resourceClass: usageRollups.resourceClassId, kind: usageRollups.kind }[input.groupBy];
  const [totalsRow, groupRows, seriesRows] = await Promise.all([
    db.select(rollupSums).from(usageRollups).where(and(...where)),
    db
      .select({ key: groupColumn, ...rollupSums })
      .from(usageRollups)
      .where(and(...where))
      .groupBy(groupColumn)
      .orderBy(desc(rollupSums.gpuSeconds)),
    db
      .select({ day: usageRollups.day, projectId: usageRollups.projectId, gpuSeconds: rollupSums.gpuSeconds, costCents: rollupSums.costCents, energyWh: rollupSums.energyWh })
      .from(usageRollups)
      .where(and(...where))
      .groupBy(usageRollups.day, usageRollups.projectId)
      .orderBy(asc(usageRollups.day)),
  ]);
  const labels = await groupLabels(db, input.groupBy, groupRows.map((r) => String(r.key)), locale);
  const projectIds = [...new Set(seriesRows.map((r) => r.projectId))];
  const projectNames = await groupLabels(db, 'project', projectIds, locale);
  return {
    period: { from: input.from, to: input.to },
    groupBy: input.groupBy,
    totals: figures(totalsRow[0]),
    groups: groupRows.map((r) => ({ key: String(r.key), label: labels.get(String(r.key)) ?? String(r.key), ...figures(r) })),
    series: seriesRows.map((r) => ({ day: r.day, projectId: r.projectId, gpuSeconds: Number(r.gpuSeconds), costCents: Number(r.costCents), energyWh: Number(r.energyWh) })),
    projects: projectIds.map((id) => ({ id, title: projectNames.get(id) ?? id })),
  };
}

async function groupLabels(db: DbOrTx, groupBy: GroupBy, keys: string[], locale: Locale): Promise<Map<string, string>> {
  if (keys.length === 0 || groupBy === 'kind') return new Map(keys.map((k) => [k, k]));
  if (groupBy === 'project') {
    const rows = await db.select({ id: projects.id, label: projects.title }).from(projects).where(inArray(projects.id, keys));
    return new Map(rows.map((r) => [r.id, r.label]));
  }
  if (groupBy === 'user') {
    const rows = await db.select({ id: users.id, label: users.name }).from(users).where(inArray(users.id, keys));
    return new Map(rows.map((r) => [r.id, r.label]));
  }
  return resourceClassNames(db, keys, locale);
}

/** reportJobs lists the settled jobs that ended in a period (the rollups' job counts book them so too) with their frozen figures. */
export async function reportJobs(db: DbOrTx, actor: TenantActor, input: { from: string; to: string; limit: number }) {
  const scope = await reportScope(db, actor);
  const end = new Date(Date.parse(`${input.to}T00:00:00Z`) + 86_400_000);
  const where: SQL[] = [eq(jobs.orgId, actor.org.id), isNotNull(jobs.settledAt), gte(jobs.endedAt, new Date(`${input.from}T00:00:00Z`)), lt(jobs.endedAt, end)];
  if (!scope.all) where.push(inArray(jobs.projectId, scope.projectIds));
  return db
    .select({
      id: jobs.id,
      name: jobs.name,
      projectId: jobs.projectId,
      projectTitle: projects.title,
      userName: users.name,
      resourceClassId: jobs.resourceClassId,
      siteId: jobs.siteId,
      kind: jobs.kind,
      state: jobs.state,
      submittedAt: jobs.submittedAt,
      startedAt: jobs.startedAt,
      endedAt: jobs.endedAt,
      waitSeconds: jobs.waitSeconds,
      gpus: jobs.gpus,
      gpuSeconds: jobs.gpuSeconds,
      costCents: jobs.costCents,
      energyWh: jobs.energyWh,
      energyMeasured: jobs.energyMeasured,
      facilityEnergyWh: jobs.facilityEnergyWh,
      heatReusedWh: jobs.heatReusedWh,
      co2eGrams: jobs.co2eGrams,
    })
    .from(jobs)
    .innerJoin(projects, eq(projects.id, jobs.projectId))
    .innerJoin(users, eq(users.id, jobs.userId))
    .where(and(...where))
    .orderBy(desc(jobs.endedAt))
    .limit(input.limit);
}

/** The per-job CSV's columns, in order; documented in docs/CSV.md. Integers are in the smallest unit. */
export const JOB_CSV_COLUMNS = [
  'job_id', 'job_name', 'project', 'user', 'resource_class', 'site', 'kind', 'state',
  'submitted_at', 'started_at', 'ended_at', 'wait_seconds', 'gpus', 'gpu_seconds', 'cost_cents',
  'it_energy_wh', 'energy_measured', 'facility_energy_wh', 'heat_reused_wh', 'co2e_grams',
] as const;

/** usageCsv renders the per-job table of a period as CSV (server/core/csv.ts: header + one line per job). */
export async function usageCsv(db: DbOrTx, actor: TenantActor, input: { from: string; to: string }): Promise<string> {
  const rows = await reportJobs(db, actor, { ...input, limit: 1_000_000 });
  return csvDocument(
    JOB_CSV_COLUMNS,
    rows.map((r) => [
      r.id, r.name, r.projectTitle, r.userName, r.resourceClassId, r.siteId, r.kind, r.state,
      r.submittedAt.toISOString(), r.startedAt?.toISOString() ?? null, r.endedAt?.toISOString() ?? null, r.waitSeconds, r.gpus,
      r.gpuSeconds, r.costCents, r.energyWh, r.energyMeasured, r.facilityEnergyWh, r.heatReusedWh, r.co2eGrams,
    ]),
  );
}
