// Usage around the portal: a job run in a project's scheduler account without the portal (Slurm: `sbatch
// -A <project>` from a member's shell) is read back from the scheduler's accounting once it is final and
// charged to the project's allocation for its class as "submitted outside the portal" — once per
// cluster and job id, so a second run changes nothing. The scheduler counts such jobs against the
// project's limit (GrpTRESMins) all the same: after the import the portal's remaining budget is the
// scheduler's limit minus its usage again. The worker runs it with every full budget sync.
import { and, desc, eq, gte, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db, Tx } from '~/db/client';
import { allocations, jobs, memberships, organisations, outsideJobs, projects, tariffs, users } from '~/db/schema';
import { chargeFor } from '~/server/core/jobs/estimates';
import { isPortalId, isUsageReporting, type OutsideJob, type SchedulerPort } from '~/server/core/scheduler/port';
import { compareUsage, type UsageCheck } from '~/server/core/scheduler/usage-check';
import type { SpendingLimit } from '~/server/core/billing/spending-limits';
import { alertSpending, spendingFigures, spendingLimitsOf } from '~/server/services/billing/spending-limits';
import { chargeOutsideUsageInTx, lockOrganisation, monthSpendCents } from '~/server/services/ledger/ledger';
import { inTransaction } from '~/server/services/transaction';

/** How far back the scheduler's accounting is read: allocations ended longer ago are not charged any more. */
export const OUTSIDE_LOOKBACK_DAYS = 30;
const DAY_MS = 86_400_000;

export interface OutsideImport {
  /** Jobs recorded for the first time this run. */
  imported: number;
  /** Of those, jobs charged to an allocation (the others had none for their class). */
  charged: number;
}

/** The projects whose accounts are read: those with an allocation that ended within the lookback or later. */
async function accountsInReach(db: Db, horizon: Date): Promise<string[]> {
  const rows = await db
    .selectDistinct({ projectId: allocations.projectId })
    .from(allocations)
    .where(gte(allocations.periodEnd, horizon.toISOString().slice(0, 10)));
  return rows.map((r) => r.projectId);
}

/** importOutsideUsage reads the scheduler's final jobs in the portal's projects' accounts and charges the ones the portal did not submit, once. Null for a scheduler that reports none. */
export async function importOutsideUsage(db: Db, scheduler: SchedulerPort, now: Date): Promise<OutsideImport | null> {
  if (!isUsageReporting(scheduler)) return null;
  const horizon = new Date(now.getTime() - OUTSIDE_LOOKBACK_DAYS * DAY_MS);
  const accounts = await accountsInReach(db, horizon);
  if (accounts.length === 0) return { imported: 0, charged: 0 };
  // From a day before the last job imported (records reach slurmdbd late), at most the lookback.
  const [last] = await db.select({ endedAt: sql<Date | null>`max(${outsideJobs.endedAt})` }).from(outsideJobs);
  const lastEnd = last?.endedAt ? new Date(last.endedAt) : null;
  const since = lastEnd && lastEnd.getTime() - DAY_MS > horizon.getTime() ? new Date(lastEnd.getTime() - DAY_MS) : horizon;
  const reported = await scheduler.outsideJobs(accounts, since);
  // The portal's own jobs carry their id as the name.
  const named = reported.filter((j) => isPortalId(j.name)).map((j) => j.name);
  const portal = new Set(named.length ? (await db.select({ id: jobs.id }).from(jobs).where(inArray(jobs.id, named))).map((r) => r.id) : []);
  const known = new Set(accounts);
  const result: OutsideImport = { imported: 0, charged: 0 };
  for (const job of reported) {
    if (portal.has(job.name) || !known.has(job.account)) continue;
    const outcome = await importOne(db, job);
    if (outcome) {
      result.imported++;
      if (outcome.charged) result.charged++;
    }
  }
  return result;
}

/** A job run around the portal has no portal person (only a Unix user): no person's limit applies to it. */
const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/** spendBefore locks the organisation and reads its cap's and the project's budgets' spend, as a submission does. */
async function spendBefore(tx: Tx, orgId: string, projectId: string, userId: string, day: string): Promise<SpendingLimit[]> {
  const org = await lockOrganisation(tx, orgId, 'cents');
  const [figures, spent] = await Promise.all([spendingFigures(tx, { orgId, projectId, userId, today: day }), org.monthlyCapCents !== null ? monthSpendCents(tx, orgId, day) : Promise.resolve(null)]);
  return spendingLimitsOf(figures, { capCents: org.monthlyCapCents, spentCents: spent });
}

/** importOne records one outside job and charges it, in one transaction; null when it was imported before. */
async function importOne(db: Db, job: OutsideJob): Promise<{ charged: boolean } | null> {
  return inTransaction(db, async (tx) => {
    const [project] = await tx
      .select({ orgId: projects.orgId, orgKind: organisations.kind })
      .from(projects)
      .innerJoin(organisations, eq(organisations.id, projects.orgId))
      .where(eq(projects.id, job.account));
    if (!project) return null;
    const day = (job.endedAt ?? job.startedAt ?? new Date()).toISOString().slice(0, 10);
    // The allocation the job's class ran on that day: one for the class, else the project's credit line.
    const [allocation] = await tx
      .select({ id: allocations.id, unit: allocations.unit })
      .from(allocations)
      .where(
        and(
          eq(allocations.projectId, job.account),
          job.resourceClassId ? or(eq(allocations.resourceClassId, job.resourceClassId), isNull(allocations.resourceClassId)) : isNull(allocations.resourceClassId),
          lte(allocations.periodStart, day),
          gte(allocations.periodEnd, day),
        ),
      )
      .orderBy(sql`${allocations.resourceClassId} is null`, sql`${allocations.status} <> 'active'`, desc(allocations.periodStart))
      .limit(1);
    const [tariff] =
      allocation?.unit === 'cents' && job.resourceClassId
        ? await tx
            .select({ centsPerGpuHour: tariffs.centsPerGpuHour })
            .from(tariffs)
            .where(and(eq(tariffs.resourceClassId, job.resourceClassId), eq(tariffs.tenantKind, project.orgKind)))
        : [];
    // Whose job it was: the tenant's person with that POSIX user (their own spending counts it).
    const [person] = job.user
      ? await tx
          .select({ id: users.id })
          .from(users)
          .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.orgId, project.orgId)))
          .where(eq(users.posixName, job.user))
      : [];
    const amount = !allocation ? 0 : allocation.unit === 'gpu_seconds' ? job.gpuSeconds : tariff ? chargeFor({ unit: 'cents', gpuSeconds: job.gpuSeconds, centsPerGpuHour: tariff.centsPerGpuHour }) : 0;
    const inserted = await tx
      .insert(outsideJobs)
      .values({
        cluster: job.cluster,
        schedulerJobId: job.schedulerJobId,
        orgId: project.orgId,
        projectId: job.account,
        allocationId: allocation?.id ?? null,
        name: job.name,
        partition: job.partition,
        resourceClassId: job.resourceClassId,
        schedulerUser: job.user,
        userId: person?.id ?? null,
        state: job.state,
        startedAt: job.startedAt,
        endedAt: job.endedAt,
        gpuSeconds: job.gpuSeconds,
        chargedAmount: amount,
        centsPerGpuHour: allocation?.unit === 'cents' && tariff ? tariff.centsPerGpuHour : null,
      })
      .onConflictDoNothing()
      .returning({ cluster: outsideJobs.cluster });
    if (inserted.length === 0) return null;
    if (allocation && amount > 0) {
      const who = job.user ? ` by ${job.user}` : '';
      // On a credit line the charge counts towards the company's cap and the project's budgets: read the
      // spend before it under the organisation's lock (lock order: organisation, then the allocation), so the
      // owners and managers hear of a threshold it passes as they would of a submission's.
      const spend = allocation.unit === 'cents' ? await spendBefore(tx, project.orgId, job.account, person?.id ?? NO_PERSON, day) : null;
      await chargeOutsideUsageInTx(tx, { allocationId: allocation.id, amount, reason: `Slurm job ${job.schedulerJobId} on ${job.cluster} (${job.name})${who}, submitted outside the portal`, at: job.endedAt ?? undefined });
      if (spend) await alertSpending(tx, { orgId: project.orgId, projectId: job.account, userId: person?.id ?? NO_PERSON, today: day, amountCents: amount, limits: spend });
    }
    return { charged: !!allocation && amount > 0 };
  });
}

/** How far before `since` the scheduler is asked: its accounting finds jobs by when they became eligible, and a job may run up to two days. */
const ELIGIBLE_MARGIN_MS = 2 * DAY_MS;

/**
 * checkSchedulerUsage puts the GPU-seconds the portal holds per project account and class (its own jobs
 * handed to the scheduler, and the jobs imported as run around it) beside what the scheduler's accounting
 * counts for the same accounts, for the jobs that ended in the last OUTSIDE_LOOKBACK_DAYS. Run after the
 * import, every job settled and imported makes the two equal. Null for a scheduler that reports no usage.
 */
export async function checkSchedulerUsage(db: Db, scheduler: SchedulerPort, now: Date): Promise<UsageCheck | null> {
  if (!isUsageReporting(scheduler)) return null;
  const since = new Date(now.getTime() - OUTSIDE_LOOKBACK_DAYS * DAY_MS);
  const accounts = await accountsInReach(db, since);
  if (accounts.length === 0) return { since, rows: [] };
  const [reported, own, outside] = await Promise.all([
    scheduler.outsideJobs(accounts, new Date(since.getTime() - ELIGIBLE_MARGIN_MS)),
    db
      .select({ account: allocations.projectId, partition: jobs.resourceClassId, gpuSeconds: sql<string>`sum(coalesce(${jobs.gpuSeconds}, 0))` })
      .from(jobs)
      .innerJoin(allocations, eq(allocations.id, jobs.allocationId))
      .where(and(inArray(allocations.projectId, accounts), gte(jobs.endedAt, since), isNotNull(jobs.schedulerJobId)))
      .groupBy(allocations.projectId, jobs.resourceClassId),
    db
      .select({ account: outsideJobs.projectId, partition: outsideJobs.partition, gpuSeconds: sql<string>`sum(${outsideJobs.gpuSeconds})` })
      .from(outsideJobs)
      .where(and(inArray(outsideJobs.projectId, accounts), gte(outsideJobs.endedAt, since)))
      .groupBy(outsideJobs.projectId, outsideJobs.partition),
  ]);
  const known = new Set(accounts);
  const schedulerSide = reported.filter((j) => known.has(j.account) && j.endedAt !== null && j.endedAt >= since).map((j) => ({ account: j.account, partition: j.partition, gpuSeconds: j.gpuSeconds }));
  const portalSide = [...own, ...outside].map((r) => ({ account: r.account, partition: r.partition, gpuSeconds: Number(r.gpuSeconds) }));
  return { since, rows: compareUsage(portalSide, schedulerSide) };
}
