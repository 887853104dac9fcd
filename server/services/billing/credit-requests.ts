// A company asks for a larger credit line (issue #10): its owner requests it, staff decide it in the
// review queue like applications. An approval raises the line by a grant in the ledger, audited; the
// requester hears the outcome either way.
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocations, creditLineRequests, memberships, organisations, projects, users } from '~/db/schema';
import { capChange, lineChange, suggestedMonthlyCapCents } from '~/server/core/billing/monthly-cap';
import { AppError, isUniqueViolation } from '~/server/errors';
import { isStaff, type Actor, type TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { capFiguresOf } from '~/server/services/billing/cap-figures';
import { grantBudget, lockAllocation } from '~/server/services/ledger/ledger';
import { notify, notifyMembers } from '~/server/services/mail/notifications';
import { projectIdsOfAllocations, syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { inTransaction } from '~/server/services/transaction';

const requestColumns = {
  id: creditLineRequests.id,
  orgId: creditLineRequests.orgId,
  orgName: organisations.name,
  allocationId: creditLineRequests.allocationId,
  projectTitle: projects.title,
  currentCents: creditLineRequests.currentCents,
  requestedCents: creditLineRequests.requestedCents,
  reason: creditLineRequests.reason,
  status: creditLineRequests.status,
  requestedByName: users.name,
  createdAt: creditLineRequests.createdAt,
  decidedAt: creditLineRequests.decidedAt,
  decisionComment: creditLineRequests.decisionComment,
};

function requestsQuery(db: DbOrTx) {
  return db
    .select(requestColumns)
    .from(creditLineRequests)
    .innerJoin(organisations, eq(organisations.id, creditLineRequests.orgId))
    .innerJoin(allocations, eq(allocations.id, creditLineRequests.allocationId))
    .innerJoin(projects, eq(projects.id, allocations.projectId))
    .innerJoin(users, eq(users.id, creditLineRequests.requestedBy));
}

/** creditLinesOf lists a company's active credit lines and its requests for larger ones, newest first. */
export async function creditLinesOf(db: DbOrTx, actor: TenantActor) {
  const [lines, requests] = await Promise.all([
    db
      .select({ allocationId: allocations.id, projectTitle: projects.title, grantedCents: allocations.granted, periodEnd: allocations.periodEnd })
      .from(allocations)
      .innerJoin(projects, eq(projects.id, allocations.projectId))
      .where(and(eq(allocations.orgId, actor.org.id), eq(allocations.unit, 'cents'), eq(allocations.status, 'active')))
      .orderBy(asc(allocations.createdAt)),
    requestsQuery(db).where(eq(creditLineRequests.orgId, actor.org.id)).orderBy(desc(creditLineRequests.createdAt)),
  ]);
  return { lines, requests };
}

/**
 * requestLargerCreditLine lets a company owner ask for a credit line larger than it is now, with a
 * reason; one open request per credit line. The reviewers are told.
 */
export async function requestLargerCreditLine(db: Db, actor: TenantActor, input: { allocationId: string; requestedCents: number; reason: string }, now: Date) {
  if (actor.org.status !== 'active') throw new AppError('FORBIDDEN', 'error.tenantNotActive', { org: actor.org.name });
  return inTransaction(db, async (tx) => {
    const [line] = await tx
      .select({ id: allocations.id, unit: allocations.unit, status: allocations.status, granted: allocations.granted })
      .from(allocations)
      .where(and(eq(allocations.id, input.allocationId), eq(allocations.orgId, actor.org.id)));
    if (!line) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'allocationId');
    if (actor.org.kind !== 'company') throw new AppError('BAD_REQUEST', 'payg.companyOnly');
    if (line.unit !== 'cents' || line.status !== 'active') throw new AppError('BAD_REQUEST', 'creditRequest.noCreditLine', {}, 'allocationId');
    if (input.requestedCents <= line.granted) throw new AppError('BAD_REQUEST', 'creditRequest.notLarger', { current: line.granted / 100 }, 'amountEuros');
    const [open] = await tx
      .select({ id: creditLineRequests.id })
      .from(creditLineRequests)
      .where(and(eq(creditLineRequests.allocationId, line.id), eq(creditLineRequests.status, 'submitted')));
    if (open) throw new AppError('CONFLICT', 'creditRequest.alreadyOpen', {}, 'allocationId');
    const [created] = await tx
      .insert(creditLineRequests)
      .values({ orgId: actor.org.id, allocationId: line.id, currentCents: line.granted, requestedCents: input.requestedCents, reason: input.reason, requestedBy: actor.userId, createdAt: now })
      .returning({ id: creditLineRequests.id });
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'credit.requested', targetType: 'allocation', targetId: line.id, reason: input.reason, data: { requestId: created!.id, currentCents: line.granted, requestedCents: input.requestedCents } });
    // Who is staff is out of a tenant's reach except through this function (drizzle/0018).
    const reviewers = await tx.select({ userId: users.id }).from(users).where(sql`${users.id} in (select portal_staff_ids())`);
    await notify(tx, reviewers.map((r) => r.userId), 'notice.creditRequested', { org: actor.org.name, amount: input.requestedCents / 100 }, '/staff/applications');
    return { id: created!.id };
  }).catch((error: unknown) => {
    // Another request for this line was sent at the same moment and came first.
    if (isUniqueViolation(error, 'credit_line_requests_one_open_idx')) throw new AppError('CONFLICT', 'creditRequest.alreadyOpen', {}, 'allocationId');
    throw error;
  });
}

/**
 * creditRequestQueue lists the requests waiting for a decision, oldest first (staff), each with what
 * the decision needs: the line and the tenant's monthly cap as they are now, this month's spend
 * (charges and open reservations, as the cap counts it) and the last three months' spend, and the cap
 * suggested with the line asked for.
 */
export async function creditRequestQueue(db: DbOrTx, now: Date) {
  const rows = await requestsQuery(db)
    .where(eq(creditLineRequests.status, 'submitted'))
    .orderBy(asc(creditLineRequests.createdAt));
  const [live, figures] = await Promise.all([
    rows.length
      ? db
          .select({ id: creditLineRequests.id, lineCents: allocations.granted, kind: organisations.kind, country: organisations.country })
          .from(creditLineRequests)
          .innerJoin(allocations, eq(allocations.id, creditLineRequests.allocationId))
          .innerJoin(organisations, eq(organisations.id, creditLineRequests.orgId))
          .where(inArray(creditLineRequests.id, rows.map((r) => r.id)))
      : Promise.resolve([]),
    capFiguresOf(db, rows.map((r) => r.orgId), now.toISOString().slice(0, 10)),
  ]);
  const liveById = new Map(live.map((l) => [l.id, l]));
  return rows.map((r) => {
    const now = liveById.get(r.id)!;
    const money = figures.get(r.orgId)!;
    return {
      ...r,
      orgKind: now.kind,
      orgCountry: now.country,
      lineCents: now.lineCents,
      capCents: money.capCents,
      suggestedCapCents: suggestedMonthlyCapCents({ capCents: money.capCents, lineCents: now.lineCents, newLineCents: r.requestedCents }),
      spentThisMonthCents: money.spentThisMonthCents,
      spentByMonth: money.spentByMonth,
    };
  });
}

export interface CreditDecisionInput {
  requestId: string;
  outcome: 'approved' | 'rejected';
  /** The new credit line; absent: as asked. A different amount needs a comment. */
  grantedCents?: number;
  /** The tenant's monthly cap with the raised line (null: no cap); required to approve. */
  capCents?: number | null;
  comment: string;
}

/**
 * decideCreditLineRequest lets a staff admin approve a request or reject it with a comment. Approving
 * is one decision over the line and the monthly cap: the line is raised by a grant in the ledger to the
 * amount granted (as asked, or another amount with a comment) and the cap set to what staff chose, both
 * audited with from and to in one row; the requester and the owners are told the new line and cap.
 */
export async function decideCreditLineRequest(db: Db, staff: Actor, input: CreditDecisionInput, now: Date, budgets?: BudgetSyncStep) {
  if (!isStaff(staff, 'admin')) throw new AppError('FORBIDDEN', 'error.staffOnly');
  const comment = input.comment.trim();
  if (input.outcome === 'rejected' && !comment) throw new AppError('BAD_REQUEST', 'decision.commentRequired', {}, 'comment');
  if (input.outcome === 'approved' && input.capCents === undefined) throw new AppError('BAD_REQUEST', 'creditRequest.capRequired', {}, 'capEuros');
  let raisedLine: string | null = null;
  const decided = await inTransaction(db, async (tx) => {
    const [request] = await tx.select().from(creditLineRequests).where(eq(creditLineRequests.id, input.requestId)).for('no key update');
    if (!request) throw new AppError('NOT_FOUND', 'error.notFound');
    const [ownTenant] = await tx.select({ orgId: memberships.orgId }).from(memberships).where(and(eq(memberships.orgId, request.orgId), eq(memberships.userId, staff.userId)));
    if (ownTenant) throw new AppError('FORBIDDEN', 'decision.ownTenant');
    if (request.status !== 'submitted') throw new AppError('PRECONDITION_FAILED', 'decision.notSubmitted', { status: request.status });
    const owners = await tx.select({ userId: memberships.userId }).from(memberships).where(and(eq(memberships.orgId, request.orgId), eq(memberships.role, 'owner')));
    const told = [request.requestedBy, ...owners.map((o) => o.userId)];
    await tx.update(creditLineRequests).set({ status: input.outcome, decidedBy: staff.userId, decidedAt: now, decisionComment: comment || null }).where(eq(creditLineRequests.id, request.id));
    if (input.outcome === 'rejected') {
      await recordAudit(tx, {
        actorUserId: staff.userId,
        orgId: request.orgId,
        action: 'credit.request_rejected',
        targetType: 'allocation',
        targetId: request.allocationId,
        reason: comment,
        data: { requestId: request.id, currentCents: request.currentCents, requestedCents: request.requestedCents, raisedByCents: 0 },
        isStaffAction: true,
      });
      await notifyMembers(tx, request.orgId, told, 'notice.creditRejected', { amount: request.requestedCents / 100, comment }, `/allocations/${request.allocationId}`);
      return { status: input.outcome, raisedByCents: 0 };
    }
    const grantedCents = input.grantedCents ?? request.requestedCents;
    const capCents = input.capCents ?? null;
    if (grantedCents !== request.requestedCents && !comment) throw new AppError('BAD_REQUEST', 'creditRequest.commentForOtherAmount', { requested: request.requestedCents / 100 }, 'comment');
    // Lock order: the organisation (its cap changes), then the allocation.
    const [org] = await tx.select({ cap: organisations.monthlyCapCents }).from(organisations).where(eq(organisations.id, request.orgId)).for('no key update');
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
    const line = await lockAllocation(tx, request.allocationId);
    if (line.status !== 'active') throw new AppError('PRECONDITION_FAILED', 'creditRequest.lineNotActive');
    // A raise never lowers a line (it may have grown since it was asked, by another grant).
    if (grantedCents < line.granted) throw new AppError('BAD_REQUEST', 'creditRequest.grantBelowLine', { current: line.granted / 100 }, 'grantedEuros');
    const raisedByCents = grantedCents - line.granted;
    raisedLine = raisedByCents > 0 ? line.id : null;
    if (raisedByCents > 0) await grantBudget(tx, { allocationId: line.id, amount: raisedByCents, actorUserId: staff.userId, reason: `credit line raised on request: ${request.reason}` });
    if (capCents !== org.cap) await tx.update(organisations).set({ monthlyCapCents: capCents }).where(eq(organisations.id, request.orgId));
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: request.orgId,
      action: 'credit.raised',
      targetType: 'allocation',
      targetId: request.allocationId,
      reason: comment || null,
      data: { requestId: request.id, currentCents: request.currentCents, requestedCents: request.requestedCents, raisedByCents, ...lineChange(line.granted, grantedCents), ...capChange(org.cap, capCents) },
      isStaffAction: true,
    });
    await notifyMembers(
      tx,
      request.orgId,
      told,
      // New keys: notices written before carry the old parameters and keep their old text.
      capCents === null ? 'notice.creditRaisedNoCap' : 'notice.creditRaised',
      { line: grantedCents / 100, cap: (capCents ?? 0) / 100, comment },
      `/allocations/${request.allocationId}`,
    );
    return { status: input.outcome, raisedByCents };
  });
  if (raisedLine) await syncBudgetsAfterCommit(db, budgets, await projectIdsOfAllocations(db, [raisedLine]));
  return decided;
}
