// Budgets inside a company (issue #24): owners and managers set a project's monthly and total budget (and its
// cost centre and purchase-order number) and a person's monthly limit; a credit-line submission must fit each
// of them under the organisation's lock, as it must fit the tenant's monthly cap; reaching 50, 80 and 100 %
// alerts the owners and managers once per threshold and period. The rule: server/core/billing/spending-limits.ts.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { budgetAlerts, memberships, memberSpendLimits, organisations, projectBudgets, projects, users } from '~/db/schema';
import { alertPeriod, alertThresholdsReached, spendingRefusal, type SpendingLimit, type SpendingLimitKind } from '~/server/core/billing/spending-limits';
import { roleAtLeast } from '~/server/core/roles';
import { AppError } from '~/server/errors';
import type { MessageKey } from '~/server/i18n';
import type { TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { monthSpendCents } from '~/server/services/ledger/ledger';
import { notify } from '~/server/services/mail/notifications';
import { inTransaction } from '~/server/services/transaction';

/** What a project's and a person's budgets are and what is spent against them, in cents (null: no such budget). */
export interface SpendingFigures {
  projectMonthlyCents: number | null;
  projectTotalCents: number | null;
  personMonthlyCents: number | null;
  projectMonthSpentCents: number;
  projectTotalSpentCents: number;
  personMonthSpentCents: number;
}

/**
 * spendingFigures reads a project's and a person's budgets and, only where one is set, the spend against it
 * (server/core/billing/spending-limits.ts says what counts): one statement, started at once (`.execute()`),
 * so a submission sends it in the batch behind its locks and it reads what the organisation's lock holds still.
 */
export function spendingFigures(db: DbOrTx, input: { orgId: string; projectId: string; userId: string; today: string }): Promise<SpendingFigures> {
  const monthStart = `${input.today.slice(0, 7)}-01`;
  const { orgId, projectId, userId } = input;
  const projectMonthly = sql`(select pb.monthly_cents from project_budgets pb where pb.project_id = ${projectId} and pb.org_id = ${orgId})`;
  const projectTotal = sql`(select pb.total_cents from project_budgets pb where pb.project_id = ${projectId} and pb.org_id = ${orgId})`;
  const personMonthly = sql`(select l.monthly_cents from member_spend_limits l where l.org_id = ${orgId} and l.user_id = ${userId})`;
  // Charged this month (less refunds) + reserved now, on the project's credit lines.
  const projectMonth = sql`(select coalesce(sum(case when le.kind = 'charge' then le.amount when le.kind = 'refund' then -le.amount else 0 end), 0)
      from ledger_entries le join allocations a on a.id = le.allocation_id
      where a.org_id = ${orgId} and a.project_id = ${projectId} and a.unit = 'cents' and le.at >= ${monthStart}::date and le.kind in ('charge', 'refund'))
    + (select coalesce(sum(a.reserved), 0) from allocations a where a.org_id = ${orgId} and a.project_id = ${projectId} and a.unit = 'cents')`;
  const projectEver = sql`(select coalesce(sum(a.charged + a.reserved), 0) from allocations a where a.org_id = ${orgId} and a.project_id = ${projectId} and a.unit = 'cents')`;
  // Charged this month for the person's jobs, through the portal and (their POSIX user's) around it, and their
  // model calls (issue #29), + what their open jobs and calls hold reserved (refunds are the allocation's, not a person's).
  const personMonth = sql`(select coalesce(sum(le.amount), 0)
      from ledger_entries le join allocations a on a.id = le.allocation_id join jobs j on j.id = le.job_id
      where a.org_id = ${orgId} and a.unit = 'cents' and le.at >= ${monthStart}::date and le.kind = 'charge' and j.user_id = ${userId})
    + (select coalesce(sum(o.charged_amount), 0) from outside_jobs o join allocations a on a.id = o.allocation_id
      where o.org_id = ${orgId} and a.unit = 'cents' and o.user_id = ${userId} and o.ended_at >= ${monthStart}::date)
    + (select coalesce(sum(case when mc.status = 'open' then mc.reserved_amount else mc.charged_amount end), 0) from model_calls mc
      where mc.org_id = ${orgId} and mc.user_id = ${userId} and mc.unit = 'cents' and (mc.status = 'open' or mc.ended_at >= ${monthStart}::date))
    + (select coalesce(sum(j.reserved_amount - case when j.array_tasks is null then 0 else
          (select coalesce(sum(t.amount), 0) from ledger_entries t where t.job_id = j.id and t.kind = 'release' and t.task_index is not null) end), 0)
      from jobs j
      where j.org_id = ${orgId} and j.user_id = ${userId} and j.reserved_unit = 'cents' and j.settled_at is null
        and not exists (select 1 from ledger_entries r where r.job_id = j.id and r.kind = 'release' and r.task_index is null))`;
  return db
    .select({
      projectMonthlyCents: sql<string | null>`${projectMonthly}`,
      projectTotalCents: sql<string | null>`${projectTotal}`,
      personMonthlyCents: sql<string | null>`${personMonthly}`,
      // A sub-select inside a CASE runs only when its branch is taken: no budget, no sum.
      projectMonthSpentCents: sql<string>`case when ${projectMonthly} is not null then ${projectMonth} else 0 end`,
      projectTotalSpentCents: sql<string>`case when ${projectTotal} is not null then ${projectEver} else 0 end`,
      personMonthSpentCents: sql<string>`case when ${personMonthly} is not null then ${personMonth} else 0 end`,
    })
    .from(organisations)
    .where(eq(organisations.id, orgId))
    .execute()
    .then(([row]) => ({
      projectMonthlyCents: nullableNumber(row?.projectMonthlyCents),
      projectTotalCents: nullableNumber(row?.projectTotalCents),
      personMonthlyCents: nullableNumber(row?.personMonthlyCents),
      projectMonthSpentCents: Number(row?.projectMonthSpentCents ?? 0),
      projectTotalSpentCents: Number(row?.projectTotalSpentCents ?? 0),
      personMonthSpentCents: Number(row?.personMonthSpentCents ?? 0),
    }));
}

const nullableNumber = (value: string | number | null | undefined) => (value === null || value === undefined ? null : Number(value));

/** spendingLimitsOf turns the figures (and the tenant's cap with its month's spend, when it has one) into the core's limits. */
export function spendingLimitsOf(figures: SpendingFigures, cap: { capCents: number | null; spentCents: number | null }): SpendingLimit[] {
  const limits: SpendingLimit[] = [];
  if (cap.capCents !== null && cap.spentCents !== null) limits.push({ kind: 'monthlyCap', limitCents: cap.capCents, spentCents: cap.spentCents });
  if (figures.projectMonthlyCents !== null) limits.push({ kind: 'projectMonthly', limitCents: figures.projectMonthlyCents, spentCents: figures.projectMonthSpentCents });
  if (figures.projectTotalCents !== null) limits.push({ kind: 'projectTotal', limitCents: figures.projectTotalCents, spentCents: figures.projectTotalSpentCents });
  if (figures.personMonthlyCents !== null) limits.push({ kind: 'personMonthly', limitCents: figures.personMonthlyCents, spentCents: figures.personMonthSpentCents });
  return limits;
}

/** The refusal's text per limit (the tenant's cap keeps the ledger's own, `ledger.monthlyCap`). */
const REFUSAL_KEYS: Record<Exclude<SpendingLimitKind, 'monthlyCap'>, MessageKey> = {
  projectMonthly: 'budget.refused.projectMonthly',
  projectTotal: 'budget.refused.projectTotal',
  personMonthly: 'budget.refused.personMonthly',
};

/**
 * checkSpendingLimits refuses a credit-line reservation of `amountCents` that would pass the project's or the
 * person's budget when one of them binds (the least left; the tenant's cap binding is the ledger's refusal),
 * naming it and what it leaves, on the walltime (what the person shortens). Call it under the organisation's
 * NO KEY UPDATE lock, on figures read under it.
 */
export function checkSpendingLimits(limits: SpendingLimit[], amountCents: number): void {
  const refusal = spendingRefusal(limits, amountCents);
  if (!refusal || refusal.kind === 'monthlyCap') return;
  throw new AppError('PRECONDITION_FAILED', REFUSAL_KEYS[refusal.kind], { needed: amountCents / 100, remaining: refusal.leftCents / 100, limit: refusal.limitCents / 100 }, 'walltimeMinutes');
}

/** The alert's text per limit. */
const ALERT_KEYS: Record<SpendingLimitKind, MessageKey> = {
  monthlyCap: 'notice.spendAlert.monthlyCap',
  projectMonthly: 'notice.spendAlert.projectMonthly',
  projectTotal: 'notice.spendAlert.projectTotal',
  personMonthly: 'notice.spendAlert.personMonthly',
};

/**
 * alertSpending tells the tenant's owners and managers (bell and mail, per their preference for budget
 * thresholds) of each threshold a reservation made the tenant's cap or a project's or person's budget reach:
 * a row in `budget_alerts` per limit, period and threshold makes each alert once, also when two submissions
 * reach it together; the mail's dedupe key makes its mail once whatever happens. In the reserving transaction.
 */
export async function alertSpending(tx: Tx, input: { orgId: string; projectId: string; userId: string; today: string; amountCents: number; limits: SpendingLimit[]; at?: Date }): Promise<void> {
  // The tenant's cap used up has its own notice (server/services/ledger/ledger.ts noticeMonthlyCap, once a month): 50 and 80 % are told here.
  const reached = input.limits.flatMap((limit) => alertThresholdsReached(limit, input.amountCents).filter((p) => !(limit.kind === 'monthlyCap' && p === 100)).map((percent) => ({ limit, percent })));
  if (reached.length === 0) return;
  const subjectOf = (kind: SpendingLimitKind) => (kind === 'monthlyCap' ? input.orgId : kind === 'personMonthly' ? input.userId : input.projectId);
  const inserted = await tx
    .insert(budgetAlerts)
    .values(reached.map(({ limit, percent }) => ({ orgId: input.orgId, scope: limit.kind, subjectId: subjectOf(limit.kind), period: alertPeriod(limit.kind, input.today), thresholdPercent: percent })))
    .onConflictDoNothing()
    .returning({ scope: budgetAlerts.scope, period: budgetAlerts.period, thresholdPercent: budgetAlerts.thresholdPercent });
  if (inserted.length === 0) return;
  const [names] = await tx
    .select({ org: organisations.name, project: sql<string>`(select p.title from projects p where p.id = ${input.projectId})`, person: sql<string>`(select u.name from users u where u.id = ${input.userId})` })
    .from(organisations)
    .where(eq(organisations.id, input.orgId));
  const leads = await tx.select({ userId: memberships.userId }).from(memberships).where(and(eq(memberships.orgId, input.orgId), inArray(memberships.role, ['owner', 'manager'])));
  // Only the highest newly reached threshold of each limit is told (a job passing 50 and 80 at once alerts 80).
  for (const limit of input.limits) {
    const fresh = inserted.filter((r) => r.scope === limit.kind);
    if (fresh.length === 0) continue;
    const percent = Math.max(...fresh.map((r) => r.thresholdPercent));
    const period = fresh[0]!.period;
    const link = limit.kind === 'monthlyCap' ? '/organisation' : '/usage';
    await notify(
      tx,
      leads.map((l) => l.userId),
      ALERT_KEYS[limit.kind],
      { percent, org: names?.org ?? '', project: names?.project ?? '', person: names?.person ?? '', limit: limit.limitCents / 100, spent: (limit.spentCents + input.amountCents) / 100, period },
      link,
      { orgId: input.orgId, dedupeKey: `spend-alert:${limit.kind}:${subjectOf(limit.kind)}:${period}:${percent}` },
    );
  }
}

/** Refuses a caller below manager: budgets are set by the tenant's owners and managers. */
function assertLead(actor: TenantActor, field: string): void {
  if (!roleAtLeast(actor.role, 'manager')) throw new AppError('FORBIDDEN', 'budget.leadsOnly', {}, field);
}

/** Takes the organisation's row as a cap change does (lock order, step 1), so no credit-line submission decides on half a change. */
async function lockTenant(tx: Tx, orgId: string): Promise<{ kind: string }> {
  const [org] = await tx.select({ kind: organisations.kind }).from(organisations).where(eq(organisations.id, orgId)).for('no key update');
  if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
  return org;
}

export interface ProjectBudgetInput {
  projectId: string;
  monthlyCents: number | null;
  totalCents: number | null;
  costCentre: string | null;
  purchaseOrder: string | null;
}

/** setProjectBudget sets a project's budgets, cost centre and purchase-order number (owners and managers of a company), audited with from and to. */
export async function setProjectBudget(db: Db, actor: TenantActor, input: ProjectBudgetInput, now: Date): Promise<ProjectBudgetInput> {
  assertLead(actor, 'monthlyEuros');
  if (input.monthlyCents !== null && input.totalCents !== null && input.monthlyCents > input.totalCents) throw new AppError('BAD_REQUEST', 'budget.monthlyAboveTotal', { total: input.totalCents / 100 }, 'monthlyEuros');
  return inTransaction(db, async (tx) => {
    const org = await lockTenant(tx, actor.org.id);
    const [project] = await tx.select({ id: projects.id, budget: projectBudgets }).from(projects).leftJoin(projectBudgets, eq(projectBudgets.projectId, projects.id)).where(and(eq(projects.id, input.projectId), eq(projects.orgId, actor.org.id)));
    if (!project) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'projectId');
    if (org.kind !== 'company') throw new AppError('BAD_REQUEST', 'budget.companyOnly', {}, 'monthlyEuros');
    const values = { monthlyCents: input.monthlyCents, totalCents: input.totalCents, costCentre: input.costCentre, purchaseOrder: input.purchaseOrder };
    await tx
      .insert(projectBudgets)
      .values({ projectId: input.projectId, orgId: actor.org.id, ...values, updatedAt: now, updatedBy: actor.userId })
      .onConflictDoUpdate({ target: projectBudgets.projectId, set: { ...values, updatedAt: now, updatedBy: actor.userId } });
    const before = project.budget;
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: actor.org.id,
      action: 'project.budget_set',
      targetType: 'project',
      targetId: input.projectId,
      data: {
        from: before ? { monthlyCents: before.monthlyCents, totalCents: before.totalCents, costCentre: before.costCentre, purchaseOrder: before.purchaseOrder } : null,
        to: values,
      },
    });
    return input;
  });
}

/** setMemberSpendLimit sets (or clears, with null) a member's monthly limit on the company's credit lines, audited with from and to. */
export async function setMemberSpendLimit(db: Db, actor: TenantActor, input: { userId: string; monthlyCents: number | null }, now: Date): Promise<void> {
  assertLead(actor, 'monthlyEuros');
  await inTransaction(db, async (tx) => {
    const org = await lockTenant(tx, actor.org.id);
    const [member] = await tx
      .select({ userId: memberships.userId, limit: memberSpendLimits.monthlyCents })
      .from(memberships)
      .leftJoin(memberSpendLimits, and(eq(memberSpendLimits.orgId, memberships.orgId), eq(memberSpendLimits.userId, memberships.userId)))
      .where(and(eq(memberships.orgId, actor.org.id), eq(memberships.userId, input.userId)));
    if (!member) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'userId');
    if (org.kind !== 'company') throw new AppError('BAD_REQUEST', 'budget.companyOnly', {}, 'monthlyEuros');
    const where = and(eq(memberSpendLimits.orgId, actor.org.id), eq(memberSpendLimits.userId, input.userId));
    if (input.monthlyCents === null) await tx.delete(memberSpendLimits).where(where);
    else
      await tx
        .insert(memberSpendLimits)
        .values({ orgId: actor.org.id, userId: input.userId, monthlyCents: input.monthlyCents, updatedAt: now, updatedBy: actor.userId })
        .onConflictDoUpdate({ target: [memberSpendLimits.orgId, memberSpendLimits.userId], set: { monthlyCents: input.monthlyCents, updatedAt: now, updatedBy: actor.userId } });
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'member.spend_limit_set', targetType: 'membership', targetId: input.userId, data: { from: member.limit, to: input.monthlyCents } });
  });
}

/** projectBudgetOf reads a project of the tenant's budget settings for its page (null: none set). */
export async function projectBudgetOf(db: DbOrTx, actor: TenantActor, projectId: string) {
  const [row] = await db
    .select({ id: projects.id, monthlyCents: projectBudgets.monthlyCents, totalCents: projectBudgets.totalCents, costCentre: projectBudgets.costCentre, purchaseOrder: projectBudgets.purchaseOrder })
    .from(projects)
    .leftJoin(projectBudgets, eq(projectBudgets.projectId, projects.id))
    .where(and(eq(projects.id, projectId), eq(projects.orgId, actor.org.id)));
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'projectId');
  if (row.monthlyCents === null && row.totalCents === null && row.costCentre === null && row.purchaseOrder === null) return null;
  return { monthlyCents: row.monthlyCents, totalCents: row.totalCents, costCentre: row.costCentre, purchaseOrder: row.purchaseOrder };
}

/**
 * spendingOverview is what the usage page shows: the tenant's cap, each project's and each person's budget,
 * with this month's (and the project's total) spend against it, as the submission counts it.
 */
export async function spendingOverview(db: DbOrTx, actor: TenantActor, today: string) {
  const [org] = await db.select({ capCents: organisations.monthlyCapCents }).from(organisations).where(eq(organisations.id, actor.org.id));
  const [budgets, limits] = await Promise.all([
    db.select({ projectId: projectBudgets.projectId, title: projects.title }).from(projectBudgets).innerJoin(projects, eq(projects.id, projectBudgets.projectId)).where(eq(projectBudgets.orgId, actor.org.id)).orderBy(projects.title),
    // A member sees their own limit; owners and managers everyone's.
    db
      .select({ userId: memberSpendLimits.userId, name: users.name })
      .from(memberSpendLimits)
      .innerJoin(users, eq(users.id, memberSpendLimits.userId))
      .where(and(eq(memberSpendLimits.orgId, actor.org.id), roleAtLeast(actor.role, 'manager') ? undefined : eq(memberSpendLimits.userId, actor.userId)))
      .orderBy(users.name),
  ]);
  // One statement per budget and per limit, sent together (a tenant has a handful of each).
  const [capSpent, projectFigures, peopleFigures] = await Promise.all([
    org?.capCents != null ? monthSpendCents(db, actor.org.id, today) : null,
    Promise.all(budgets.map((b) => spendingFigures(db, { orgId: actor.org.id, projectId: b.projectId, userId: actor.userId, today }))),
    // A person's figures span every project; the nil project id asks for no project's budget.
    Promise.all(limits.map((l) => spendingFigures(db, { orgId: actor.org.id, projectId: '00000000-0000-0000-0000-000000000000', userId: l.userId, today }))),
  ]);
  const projectsOut = budgets
    .map((b, i) => ({ b, f: projectFigures[i]! }))
    .filter(({ f }) => f.projectMonthlyCents !== null || f.projectTotalCents !== null)
    .map(({ b, f }) => ({ projectId: b.projectId, title: b.title, monthlyCents: f.projectMonthlyCents, monthSpentCents: f.projectMonthSpentCents, totalCents: f.projectTotalCents, totalSpentCents: f.projectTotalSpentCents }));
  const peopleOut = limits.map((l, i) => ({ userId: l.userId, name: l.name, monthlyCents: peopleFigures[i]!.personMonthlyCents ?? 0, monthSpentCents: peopleFigures[i]!.personMonthSpentCents }));
  return { month: today.slice(0, 7), cap: org?.capCents != null ? { capCents: org.capCents, spentCents: capSpent ?? 0 } : null, projects: projectsOut, people: peopleOut };
}

/** listSpendLimits lists each person's monthly limit in the tenant. */
export async function listSpendLimits(db: DbOrTx, actor: TenantActor) {
  return db.select({ userId: memberSpendLimits.userId, monthlyCents: memberSpendLimits.monthlyCents }).from(memberSpendLimits).where(eq(memberSpendLimits.orgId, actor.org.id));
}
