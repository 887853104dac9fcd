// Budgets the scheduler enforces itself (defence in depth behind the ledger): the portal derives each
// project's GPU-minutes per resource class from its allocations (server/core/scheduler/budgets.ts) and
// hands them to a BudgetEnforcing scheduler after every change that moves them, and the worker syncs all
// of them every SLURM_BUDGET_SYNC_SECONDS so a missed or failed change heals. Each sync is recorded with
// what the scheduler read back differently (drift), for the staff cluster page.
import { and, desc, eq, gt, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocations, jobs, organisations, projectMembers, projects, resourceClasses, schedulerBudgetSyncs, tariffs, users } from '~/db/schema';
import { budgetMismatches, holdDrift, isUsable, projectBudgets, roomGpuSeconds, type BudgetMismatch, type BudgetProject, type HoldDrift } from '~/server/core/scheduler/budgets';
import { isBudgetEnforcing, isPortalId, type SchedulerBudget, type SchedulerPort } from '~/server/core/scheduler/port';
import { stepAfterCommit, type SchedulerStep } from '~/server/services/transaction';
import type { UsageCheck } from '~/server/core/scheduler/usage-check';

/** Sync records older than this are dropped by the full sync (the page shows the latest). */
const KEEP_SYNCS_DAYS = 30;

interface LoadedProject extends BudgetProject {
  orgId: string;
  title: string;
  orgName: string;
}

/** loadBudgetProjects reads what the budgets of the given projects (all with allocations when unset) are made of. */
async function loadBudgetProjects(db: DbOrTx, projectIds?: string[]): Promise<LoadedProject[]> {
  if (projectIds && projectIds.length === 0) return [];
  const rows = await db
    .select({
      allocation: {
        id: allocations.id,
        projectId: allocations.projectId,
        resourceClassId: allocations.resourceClassId,
        unit: allocations.unit,
        status: allocations.status,
        periodStart: allocations.periodStart,
        periodEnd: allocations.periodEnd,
        granted: allocations.granted,
        charged: allocations.charged,
        reserved: allocations.reserved,
        expired: allocations.expired,
      },
      title: projects.title,
      orgId: organisations.id,
      orgName: organisations.name,
      orgStatus: organisations.status,
      orgKind: organisations.kind,
    })
    .from(allocations)
    .innerJoin(projects, eq(projects.id, allocations.projectId))
    .innerJoin(organisations, eq(organisations.id, allocations.orgId))
    .where(projectIds ? inArray(allocations.projectId, projectIds) : undefined);
  const creditIds = rows.filter((r) => r.allocation.unit === 'cents').map((r) => r.allocation.id);
  // A credit line's use per class in GPU terms: settled jobs' GPU-seconds, open jobs' reserved GPUs × walltime.
  const used = creditIds.length
    ? await db
        .select({
          allocationId: jobs.allocationId,
          resourceClassId: jobs.resourceClassId,
          gpuSeconds: sql<string>`sum(case when ${jobs.settledAt} is null then ${jobs.gpus}::bigint * ${jobs.walltimeSeconds} else coalesce(${jobs.gpuSeconds}, 0) end)`,
        })
        .from(jobs)
        .where(inArray(jobs.allocationId, creditIds))
        .groupBy(jobs.allocationId, jobs.resourceClassId)
    : [];
  const usedOf = new Map<string, Record<string, number>>();
  for (const u of used) usedOf.set(u.allocationId, { ...usedOf.get(u.allocationId), [u.resourceClassId]: Number(u.gpuSeconds) });
  const prices = await db
    .select({ resourceClassId: tariffs.resourceClassId, tenantKind: tariffs.tenantKind, centsPerGpuHour: tariffs.centsPerGpuHour })
    .from(tariffs)
    .innerJoin(resourceClasses, eq(resourceClasses.id, tariffs.resourceClassId))
    .where(eq(resourceClasses.active, true));
  const byProject = new Map<string, LoadedProject>();
  for (const r of rows) {
    let p = byProject.get(r.allocation.projectId);
    if (!p) {
      const centsPerGpuHour = Object.fromEntries(prices.filter((t) => t.tenantKind === r.orgKind).map((t) => [t.resourceClassId, t.centsPerGpuHour]));
      p = { id: r.allocation.projectId, orgId: r.orgId, title: r.title, orgName: r.orgName, tenantActive: r.orgStatus === 'active', centsPerGpuHour, allocations: [] };
      byProject.set(p.id, p);
    }
    (p.allocations as BudgetProject['allocations'][number][]).push({ ...r.allocation, usedGpuSecondsByClass: usedOf.get(r.allocation.id) ?? {} });
  }
  return [...byProject.values()].sort((a, b) => a.id.localeCompare(b.id));
}

function dayOf(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** schedulerBudgets returns the budgets of the given projects (all when unset), per project and resource class. */
export async function schedulerBudgets(db: DbOrTx, options: { projectIds?: string[]; now?: Date } = {}): Promise<SchedulerBudget[]> {
  const today = dayOf(options.now ?? new Date());
  const loaded = await loadBudgetProjects(db, options.projectIds);
  const users = await memberPosixNames(db, loaded.map((p) => p.id));
  return loaded.flatMap((p) => projectBudgets(p, today).map((b) => ({ ...b, parent: p.orgId, users: users.get(p.id) ?? [] })));
}

/** The POSIX users of each project's members who have one (they are given one when they first run a job). */
async function memberPosixNames(db: DbOrTx, projectIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (projectIds.length === 0) return out;
  const rows = await db
    .select({ projectId: projectMembers.projectId, posixName: users.posixName })
    .from(projectMembers)
    .innerJoin(users, eq(users.id, projectMembers.userId))
    .where(and(inArray(projectMembers.projectId, projectIds), isNotNull(users.posixName)))
    .orderBy(users.posixName);
  for (const r of rows) out.set(r.projectId, [...(out.get(r.projectId) ?? []), r.posixName!]);
  return out;
}

export interface BudgetSyncResult {
  at: Date;
  ok: boolean;
  budgets: number;
  mismatches: BudgetMismatch[];
  error: string | null;
}

/**
 * syncSchedulerBudgets hands the budgets of the given projects (all when unset) to the scheduler when it
 * enforces budgets (null otherwise, or when there is nothing to sync) and records the sync: what the
 * scheduler read back differently is drift. A scheduler's failure is recorded and answered, not thrown.
 */
export async function syncSchedulerBudgets(db: Db, scheduler: SchedulerPort, options: { projectIds?: string[]; now?: Date; usage?: UsageCheck | null } = {}): Promise<BudgetSyncResult | null> {
  if (!isBudgetEnforcing(scheduler)) return null;
  const now = options.now ?? new Date();
  const budgets = await schedulerBudgets(db, { projectIds: options.projectIds, now });
  if (options.projectIds && budgets.length === 0) return null;
  let result: BudgetSyncResult;
  try {
    const read = await scheduler.syncBudgets(budgets);
    result = { at: now, ok: true, budgets: budgets.length, mismatches: budgetMismatches(budgets, read), error: null };
  } catch (error) {
    result = { at: now, ok: false, budgets: budgets.length, mismatches: [], error: error instanceof Error ? error.message : String(error) };
  }
  const usage = options.usage ? { since: options.usage.since.toISOString(), rows: options.usage.rows } : null;
  await db.insert(schedulerBudgetSyncs).values({ at: now, projectIds: options.projectIds ?? null, ok: result.ok, budgets: result.budgets, mismatches: result.mismatches, error: result.error, usage });
  if (!options.projectIds) await db.delete(schedulerBudgetSyncs).where(lt(schedulerBudgetSyncs.at, new Date(now.getTime() - KEEP_SYNCS_DAYS * 86_400_000)));
  return result;
}

/** What a service needs to bring the scheduler's budgets up to date once its change is committed. */
export interface BudgetSyncStep {
  /** The request's commit (tenant mutations) or the scheduler itself, as for a job's hand-over. */
  step: SchedulerStep;
  now: Date;
}

/**
 * syncBudgetsAfterCommit syncs the budgets of projects whose allocations just changed, after the change
 * committed. Best effort: a failure is logged (and recorded) and the worker's full sync heals it. The
 * commit itself is not caught: a request whose commit failed must fail.
 */
export async function syncBudgetsAfterCommit(db: Db, sync: BudgetSyncStep | undefined, projectIds: string[]): Promise<void> {
  if (!sync || projectIds.length === 0) return;
  const after = await stepAfterCommit(db, sync.step);
  try {
    const result = await syncSchedulerBudgets(after.db, after.scheduler, { projectIds: [...new Set(projectIds)], now: sync.now });
    if (result && !result.ok) console.warn(`[budgets] syncing the scheduler's budgets failed; the worker's full sync retries: ${result.error}`);
  } catch (error) {
    console.warn("[budgets] syncing the scheduler's budgets failed; the worker's full sync retries:", error);
  }
}

/**
 * budgetSyncDue tells whether the worker's full sync is due: none succeeded in the last `everySeconds`,
 * or a sync failed since the last full one that succeeded (a trigger missed its change).
 */
export async function budgetSyncDue(db: DbOrTx, now: Date, everySeconds: number): Promise<boolean> {
  const [lastFull] = await db
    .select({ id: schedulerBudgetSyncs.id, at: schedulerBudgetSyncs.at })
    .from(schedulerBudgetSyncs)
    .where(and(eq(schedulerBudgetSyncs.ok, true), isNull(schedulerBudgetSyncs.projectIds)))
    .orderBy(desc(schedulerBudgetSyncs.id))
    .limit(1);
  if (!lastFull || now.getTime() - lastFull.at.getTime() >= everySeconds * 1000) return true;
  const [failed] = await db.select({ id: schedulerBudgetSyncs.id }).from(schedulerBudgetSyncs).where(and(eq(schedulerBudgetSyncs.ok, false), gt(schedulerBudgetSyncs.id, lastFull.id))).limit(1);
  return failed !== undefined;
}

/** projectIdsOfAllocations returns the projects of some allocations (what a change to them moves). */
export async function projectIdsOfAllocations(db: DbOrTx, allocationIds: string[]): Promise<string[]> {
  if (allocationIds.length === 0) return [];
  const rows = await db.selectDistinct({ projectId: allocations.projectId }).from(allocations).where(inArray(allocations.id, allocationIds));
  return rows.map((r) => r.projectId);
}

/** projectIdsOfTenant returns a tenant's projects that have allocations (a status change moves all their budgets). */
export async function projectIdsOfTenant(db: DbOrTx, orgId: string): Promise<string[]> {
  const rows = await db.selectDistinct({ projectId: allocations.projectId }).from(allocations).where(eq(allocations.orgId, orgId));
  return rows.map((r) => r.projectId);
}

export interface BudgetHoldView {
  schedulerJobId: string;
  portalJobId: string | null;
  account: string;
  projectTitle: string | null;
  orgName: string | null;
  partition: string;
  gpus: number;
  timeLimitSeconds: number;
  reason: string;
  submittedAt: Date | null;
  /** The portal would run this job: it holds the portal job's budget, or has room for one submitted around it. */
  portalHasBudget: boolean;
  drift: HoldDrift;
}

/** A row of the ledger beside the scheduler's accounting, with the project's names. */
export interface UsageCheckRowView {
  account: string;
  projectTitle: string | null;
  orgName: string | null;
  partition: string;
  portalGpuSeconds: number;
  schedulerGpuSeconds: number;
  differenceGpuSeconds: number;
}

export interface SchedulerBudgetsView {
  enforcing: boolean;
  /** The last full sync's ledger beside the scheduler's accounting (null: none yet, or a scheduler that reports no usage). */
  usage: { at: Date; since: Date; rows: UsageCheckRowView[] } | null;
  lastSync: (BudgetSyncResult & { projects: number | null; mismatches: (BudgetMismatch & { projectTitle: string | null })[] }) | null;
  /** The scheduler's holds now; null when it could not be asked (`unreachable`). */
  holds: BudgetHoldView[] | null;
  unreachable: boolean;
}

/** usageView names the projects of a stored usage check (an account that is no project keeps its name). */
async function usageView(db: DbOrTx, at: Date, usage: NonNullable<typeof schedulerBudgetSyncs.$inferSelect.usage>) {
  const ids = [...new Set(usage.rows.map((r) => r.account))].filter((a) => isPortalId(a));
  const named = ids.length
    ? await db.select({ id: projects.id, title: projects.title, orgName: organisations.name }).from(projects).innerJoin(organisations, eq(organisations.id, projects.orgId)).where(inArray(projects.id, ids))
    : [];
  const byId = new Map(named.map((p) => [p.id, p]));
  return { at, since: new Date(usage.since), rows: usage.rows.map((r) => ({ ...r, projectTitle: byId.get(r.account)?.title ?? null, orgName: byId.get(r.account)?.orgName ?? null })) };
}

/**
 * schedulerBudgetsView is the staff page's section on the scheduler's own budgets: the last sync and the
 * jobs the scheduler holds on a budget limit, each with whether the portal would run it (drift). An
 * unreachable scheduler is reported, not thrown, so the page still renders.
 */
export async function schedulerBudgetsView(db: Db, scheduler: SchedulerPort, now: Date): Promise<SchedulerBudgetsView> {
  if (!isBudgetEnforcing(scheduler)) return { enforcing: false, usage: null, lastSync: null, holds: null, unreachable: false };
  const [[last], [checked]] = await Promise.all([
    db.select().from(schedulerBudgetSyncs).orderBy(desc(schedulerBudgetSyncs.id)).limit(1),
    db.select({ at: schedulerBudgetSyncs.at, usage: schedulerBudgetSyncs.usage }).from(schedulerBudgetSyncs).where(isNotNull(schedulerBudgetSyncs.usage)).orderBy(desc(schedulerBudgetSyncs.id)).limit(1),
  ]);
  const usage = checked?.usage ? await usageView(db, checked.at, checked.usage) : null;
  let holds: Awaited<ReturnType<typeof scheduler.budgetHolds>> | null = null;
  try {
    holds = await scheduler.budgetHolds();
  } catch (error) {
    console.warn('[budgets] asking the scheduler for its budget holds failed:', error);
  }
  const accounts = [...new Set([...(holds ?? []).map((h) => h.account), ...(last?.mismatches ?? []).map((m) => m.account)])].filter((a) => isPortalId(a));
  const loaded = new Map((await loadBudgetProjects(db, accounts)).map((p) => [p.id, p]));
  const titled = accounts.length ? await db.select({ id: projects.id, title: projects.title }).from(projects).where(inArray(projects.id, accounts)) : [];
  const titleOf = new Map(titled.map((p) => [p.id, p.title]));
  const lastSync = last
    ? {
        at: last.at,
        ok: last.ok,
        budgets: last.budgets,
        error: last.error,
        projects: last.projectIds?.length ?? null,
        mismatches: last.mismatches.map((m) => ({ ...m, projectTitle: titleOf.get(m.account) ?? null })),
      }
    : null;
  if (!holds) return { enforcing: true, usage, lastSync, holds: null, unreachable: true };
  const portalJobIds = holds.map((h) => h.portalJobId).filter((id): id is string => id !== null && isPortalId(id));
  const openJobs = portalJobIds.length
    ? await db
        .select({ id: jobs.id, allocation: { status: allocations.status, periodStart: allocations.periodStart, periodEnd: allocations.periodEnd }, orgStatus: organisations.status })
        .from(jobs)
        .innerJoin(allocations, eq(allocations.id, jobs.allocationId))
        .innerJoin(organisations, eq(organisations.id, jobs.orgId))
        .where(and(inArray(jobs.id, portalJobIds), isNull(jobs.settledAt), isNull(jobs.cancelRequestedAt)))
    : [];
  const today = dayOf(now);
  // A portal job the portal still holds budget for and would keep: its reservation is open on a usable allocation.
  const runnable = new Set(openJobs.filter((j) => isUsable(j.allocation, j.orgStatus === 'active', today)).map((j) => j.id));
  const views = holds.map((h): BudgetHoldView => {
    const project = loaded.get(h.account);
    const portalHasBudget = h.portalJobId !== null ? runnable.has(h.portalJobId) : project !== undefined && roomGpuSeconds(project, h.partition, today) >= h.gpus * h.timeLimitSeconds;
    return {
      schedulerJobId: h.schedulerJobId,
      portalJobId: h.portalJobId,
      account: h.account,
      projectTitle: project?.title ?? titleOf.get(h.account) ?? null,
      orgName: project?.orgName ?? null,
      partition: h.partition,
      gpus: h.gpus,
      timeLimitSeconds: h.timeLimitSeconds,
      reason: h.reason,
      submittedAt: h.submittedAt,
      portalHasBudget,
      drift: holdDrift(h, portalHasBudget),
    };
  });
  return { enforcing: true, usage, lastSync, holds: views, unreachable: false };
}
