// Allocations as people see them (balance, burn-down, ledger) and what staff do to them.
import { and, asc, desc, eq, inArray, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocations, ledgerEntries, organisations, projectMembers, projects, resourceClasses, users } from '~/db/schema';
import { available } from '~/server/core/ledger/balance';
import { roleAtLeast } from '~/server/core/roles';
import { fillDays, projectExhaustion, unusedAtEnd } from '~/server/core/ledger/burn-down';
import { addDays } from '~/server/core/working-days';
import { AppError } from '~/server/errors';
import { isStaff, type Actor, type TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { capFiguresOf } from '~/server/services/billing/cap-figures';
import { payAsYouGoTerms } from '~/server/services/billing/billing';
import { checkCapChoice, setCapWithLine, tellLineAndCap, type CapChoice } from '~/server/services/billing/credit-line-cap';
import { balanceOfRow, dailyUsage, grantBudget, lockOrganisation } from './ledger';
import { projectAccess } from '~/server/services/tenants/projects';
import { syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { inTransaction } from '~/server/services/transaction';
import { creditLineLimits } from '~/server/core/applications';
import { localName } from '~/server/catalogue';
import type { Locale } from '~/server/i18n';
import { capChange, lineChange } from '~/server/core/billing/monthly-cap';

export const LEDGER_ROWS_SHOWN = 30;

/** getAllocationOverview returns an allocation with its balance, daily usage, projection and latest ledger rows. */
export async function getAllocationOverview(db: DbOrTx, viewer: { tenant?: TenantActor; staff?: Actor }, allocationId: string, today: string, locale: Locale = 'en') {
  const [row] = await db
    .select({ allocation: allocations, projectTitle: projects.title, resourceClassName: resourceClasses.name, resourceClassNameDe: resourceClasses.nameDe, orgName: organisations.name })
    .from(allocations)
    .innerJoin(projects, eq(projects.id, allocations.projectId))
    .innerJoin(organisations, eq(organisations.id, allocations.orgId))
    .leftJoin(resourceClasses, eq(resourceClasses.id, allocations.resourceClassId))
    .where(eq(allocations.id, allocationId));
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound');
  if (viewer.tenant) {
    if (row.allocation.orgId !== viewer.tenant.org.id) throw new AppError('NOT_FOUND', 'error.notFound');
    await projectAccess(db, viewer.tenant, row.allocation.projectId);
  } else if (!viewer.staff || !isStaff(viewer.staff)) throw new AppError('NOT_FOUND', 'error.notFound');
  const a = row.allocation;
  const balance = balanceOfRow(a);
  const chartEnd = today < a.periodEnd ? today : addDays(a.periodEnd, -1);
  const usage = await dailyUsage(db, a.id, a.periodStart);
  const days = chartEnd >= a.periodStart ? fillDays(usage, new Date(`${a.periodStart}T00:00:00Z`), new Date(`${chartEnd}T00:00:00Z`)) : [];
  const remaining = available(balance);
  const projection = a.status === 'active' ? projectExhaustion(remaining, usage, new Date(`${today}T00:00:00Z`)) : { ratePerDay: 0, exhaustsOn: null };
  const entries = await db
    .select({ id: ledgerEntries.id, kind: ledgerEntries.kind, amount: ledgerEntries.amount, overrun: ledgerEntries.overrun, jobId: ledgerEntries.jobId, reason: ledgerEntries.reason, at: ledgerEntries.at, actorName: users.name })
    .from(ledgerEntries)
    .leftJoin(users, eq(users.id, ledgerEntries.actorUserId))
    .where(eq(ledgerEntries.allocationId, a.id))
    .orderBy(desc(ledgerEntries.id))
    .limit(LEDGER_ROWS_SHOWN);
  return {
    ...a,
    projectTitle: row.projectTitle,
    resourceClassName: row.resourceClassName === null ? null : localName(locale, { name: row.resourceClassName, nameDe: row.resourceClassNameDe }),
    orgName: row.orgName,
    balance: { ...balance, available: remaining },
    days,
    projection: {
      ...projection,
      exhaustsBeforeEnd: projection.exhaustsOn !== null && projection.exhaustsOn < a.periodEnd,
      // What would expire unused at the period's end at this rate (with no usage at all: everything left).
      unusedAtEnd: a.status === 'active' ? unusedAtEnd(remaining, projection.ratePerDay, new Date(`${today}T00:00:00Z`), a.periodEnd) : 0,
      lastDay: addDays(a.periodEnd, -1),
    },
    entries,
  };
}

/** staffAllocationOverview is an allocation as staff see it: for a credit line, with its tenant's cap figures, which an adjustment decides with the line. */
export async function staffAllocationOverview(db: DbOrTx, staff: Actor, allocationId: string, today: string, locale: Locale = 'en') {
  const overview = await getAllocationOverview(db, { staff }, allocationId, today, locale);
  const money = overview.unit === 'cents' ? ((await capFiguresOf(db, [overview.orgId], today)).get(overview.orgId) ?? null) : null;
  return { ...overview, money };
}

/** companyProjectsForCredit lists the active companies' projects a credit line can be granted to, each with its tenant's cap figures. */
export async function companyProjectsForCredit(db: DbOrTx, today: string) {
  const rows = await db
    .select({ id: projects.id, title: projects.title, orgId: projects.orgId, orgName: organisations.name })
    .from(projects)
    .innerJoin(organisations, eq(organisations.id, projects.orgId))
    .where(and(eq(organisations.kind, 'company'), eq(organisations.status, 'active')))
    .orderBy(asc(organisations.name), asc(projects.title));
  const figures = await capFiguresOf(db, rows.map((r) => r.orgId), today);
  return rows.map((r) => ({ ...r, money: figures.get(r.orgId)! }));
}

/**
 * listTenantAllocations lists the tenant's allocations the actor may see (managers and owners all,
 * members those of their projects), newest first, each with its balance as the allocation page shows it.
 */
export async function listTenantAllocations(db: DbOrTx, actor: TenantActor) {
  const conditions: SQL[] = [eq(allocations.orgId, actor.org.id)];
  if (!roleAtLeast(actor.role, 'manager')) {
    conditions.push(inArray(allocations.projectId, db.select({ projectId: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, actor.userId))));
  }
  const rows = await db
    .select({ allocation: allocations, projectTitle: projects.title, resourceClassName: resourceClasses.name })
    .from(allocations)
    .innerJoin(projects, eq(projects.id, allocations.projectId))
    .leftJoin(resourceClasses, eq(resourceClasses.id, allocations.resourceClassId))
    .where(and(...conditions))
    .orderBy(desc(allocations.createdAt), desc(allocations.id));
  return rows.map(({ allocation: a, projectTitle, resourceClassName }) => {
    const balance = balanceOfRow(a);
    return { ...a, projectTitle, resourceClassName, balance: { ...balance, available: available(balance) } };
  });
}

/** A credit line staff grant: to a company project, in cents, for a period, with the tenant's monthly cap decided with it. */
export interface CreditLineGrant {
  projectId: string;
  amountCents: number;
  periodStart: string;
  periodEnd: string;
  reason: string;
  /** The tenant's monthly cap with the new line (null: no cap); absent: left as it is (API callers before issue #24). */
  capCents?: CapChoice;
  /** The line's storage at every site, GB; absent: the pay-as-you-go default (issue #27). */
  storageGb?: number;
}

/**
 * grantCreditLine gives a company project a credit line in euro cents for a period (staff admins) and
 * sets the tenant's monthly cap staff chose with it, in one transaction: the audit row has the line's
 * and (if it changed) the cap's from and to; the project's leads and the owners are told both. The
 * scheduler's budgets follow (`budgets`).
 */
export async function grantCreditLine(db: Db, staff: Actor, input: CreditLineGrant, budgets?: BudgetSyncStep) {
  if (input.periodEnd <= input.periodStart) throw new AppError('BAD_REQUEST', 'application.endBeforeStart', {}, 'periodEnd');
  checkCapChoice(input.capCents);
  const granted = await inTransaction(db, async (tx) => {
    const [project] = await tx
      .select({ id: projects.id, title: projects.title, orgId: projects.orgId, kind: organisations.kind })
      .from(projects)
      .innerJoin(organisations, eq(organisations.id, projects.orgId))
      .where(eq(projects.id, input.projectId));
    if (!project) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'projectId');
    if (project.kind !== 'company') throw new AppError('BAD_REQUEST', 'allocation.creditCompanyOnly', {}, 'projectId');
    // Lock order: the organisation (its cap may change), then the new line.
    const org = await lockOrganisation(tx, project.orgId, 'cents');
    const [created] = await tx
      .insert(allocations)
      .values({ projectId: project.id, orgId: project.orgId, resourceClassId: null, unit: 'cents', periodStart: input.periodStart, periodEnd: input.periodEnd, storageGb: input.storageGb ?? payAsYouGoTerms().storageGb, ...creditLineLimits() })
      .returning({ id: allocations.id });
    await grantBudget(tx, { allocationId: created!.id, amount: input.amountCents, actorUserId: staff.userId, reason: input.reason });
    const cap = await setCapWithLine(tx, org, input.capCents);
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: project.orgId,
      action: 'allocation.credit_granted',
      targetType: 'allocation',
      targetId: created!.id,
      reason: input.reason,
      data: { amountCents: input.amountCents, periodStart: input.periodStart, periodEnd: input.periodEnd, storageGb: input.storageGb ?? payAsYouGoTerms().storageGb, ...lineChange(0, input.amountCents), ...cap.audit },
      isStaffAction: true,
    });
    await tellLineAndCap(tx, { id: created!.id, orgId: project.orgId, projectId: project.id, projectTitle: project.title, grantedCents: input.amountCents }, cap.capCents, 'granted');
    return { id: created!.id };
  });
  await syncBudgetsAfterCommit(db, budgets, [input.projectId]);
  return granted;
}

/** setAllocationLimits sets the concurrent limits of an allocation (staff), audited. */
export async function setAllocationLimits(db: Db, staff: Actor, input: { allocationId: string; maxGpusAtOnce: number; maxWalltimeSeconds: number; maxQueuedJobs: number; storageGb?: number; reason: string }) {
  await inTransaction(db, async (tx) => {
    const [before] = await tx.select().from(allocations).where(eq(allocations.id, input.allocationId)).for('no key update');
    if (!before) throw new AppError('NOT_FOUND', 'error.notFound');
    const { reason, allocationId, storageGb, ...rest } = input;
    // The storage line (issue #27) is one of the limits staff set; absent: left as it is.
    const limits = { ...rest, storageGb: storageGb ?? before.storageGb };
    await tx.update(allocations).set(limits).where(eq(allocations.id, allocationId));
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: before.orgId,
      action: 'allocation.limits_set',
      targetType: 'allocation',
      targetId: allocationId,
      reason,
      data: { before: { maxGpusAtOnce: before.maxGpusAtOnce, maxWalltimeSeconds: before.maxWalltimeSeconds, maxQueuedJobs: before.maxQueuedJobs, storageGb: before.storageGb }, after: limits },
      isStaffAction: true,
    });
  });
}

/** setMonthlyCap sets (or clears, with null) a company tenant's monthly spending cap in cents. */
export async function setMonthlyCap(db: Db, actor: Actor, input: { orgId: string; capCents: number | null; reason: string; asStaff: boolean }) {
  await inTransaction(db, async (tx) => {
    const [org] = await tx.select({ kind: organisations.kind, cap: organisations.monthlyCapCents }).from(organisations).where(eq(organisations.id, input.orgId)).for('no key update');
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
    if (org.kind !== 'company') throw new AppError('BAD_REQUEST', 'allocation.capCompanyOnly', {}, 'capEuros'); // the field of the form and the API
    await tx.update(organisations).set({ monthlyCapCents: input.capCents }).where(eq(organisations.id, input.orgId));
    await recordAudit(tx, { actorUserId: actor.userId, orgId: input.orgId, action: 'tenant.cap_set', targetType: 'organisation', targetId: input.orgId, reason: input.reason, data: capChange(org.cap, input.capCents), isStaffAction: input.asStaff });
  });
}

/** listAllocations lists allocations for staff (optionally of one tenant), each class named in the reader's language. */
export async function listAllocations(db: DbOrTx, filter: { orgId?: string }, locale: Locale = 'en') {
  const rows = await db
    .select({ allocation: allocations, projectTitle: projects.title, orgName: organisations.name, resourceClassName: resourceClasses.name, resourceClassNameDe: resourceClasses.nameDe })
    .from(allocations)
    .innerJoin(projects, eq(projects.id, allocations.projectId))
    .innerJoin(organisations, eq(organisations.id, allocations.orgId))
    .leftJoin(resourceClasses, eq(resourceClasses.id, allocations.resourceClassId))
    .where(filter.orgId ? and(eq(allocations.orgId, filter.orgId)) : undefined)
    .orderBy(desc(allocations.createdAt));
  return rows.map(({ resourceClassNameDe, ...r }) => ({ ...r, resourceClassName: r.resourceClassName === null ? null : localName(locale, { name: r.resourceClassName, nameDe: resourceClassNameDe }) }));
}
