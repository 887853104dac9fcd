// Applications for budget: drafted by a project's PI or managers, decided by centre staff.
// Approval creates allocations (or tops one up) with a grant in the ledger, in the same transaction.
import { and, asc, desc, eq, gte, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { accessModes, allocations, applicationLines, applications, callRounds, decisions, organisations, projects, resourceClasses, reviewAssignments, users } from '~/db/schema';
import { checkApplicationRequest, checkDecision, classAllocationLimits, decisionRefusal, reviewRouteFor, reviewTargetWorkingDays, storageOfLine, type DecisionOutcome, type RequestLine, type ReviewRoute } from '~/server/core/applications';
import { workingDaysBetween } from '~/server/core/working-days';
import { decisionDueAt, dueState, workingHoursBetween } from '~/server/core/working-time';
import { workingCalendar } from '~/server/services/calendar';
import { AppError } from '~/server/errors';
import type { Locale, MessageKey } from '~/server/i18n';
import { localName } from '~/server/catalogue';
import { isStaff, type Actor, type TenantActor } from '~/server/services/actor';
import { syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { inTransaction, stepAfterCommit } from '~/server/services/transaction';
import { recordAudit } from '~/server/services/audit';
import { listResourceClasses } from '~/server/services/catalogue';
import { grantBudget } from './ledger';
import { requireClosedRound, roundForSubmission } from './calls';
import { conflictOf, requireNotExcluded, tiesOf } from './conflicts';
import { owedByPisOf, reportStateOf } from './reports';
import { applicantReviews, rubricOf } from './reviews';
import { notify, notifyMembers } from '~/server/services/mail/notifications';
import { projectAccess, projectLeads, requireProjectManager } from '~/server/services/tenants/projects';

export interface ApplicationInput {
  projectId: string;
  accessModeId: string;
  kind: 'new' | 'top_up' | 'renewal';
  baseAllocationId?: string;
  /** Absent for a top-up, which keeps its allocation's period. */
  periodStart?: string;
  periodEnd?: string;
  justification: string;
  lines: RequestLine[];
}

/** A request with its period settled (a top-up's is its allocation's). */
type SettledInput = ApplicationInput & { periodStart: string; periodEnd: string };

const EDITABLE = ['draft', 'changes_requested'] as const;

function firstProblem(problems: { field: string; key: string; params?: Record<string, string | number> }[]): AppError | undefined {
  const p = problems[0];
  return p ? new AppError('BAD_REQUEST', p.key as MessageKey, p.params ?? {}, p.field) : undefined;
}

/**
 * validateRequest checks an application against its access mode, the catalogue the tenant may use and
 * its base allocation, and settles its period: a top-up adds to its allocation's period (a different
 * period asked for is refused, not silently ignored); new requests and renewals give their own.
 */
async function validateRequest(db: DbOrTx, actor: TenantActor, input: ApplicationInput, today: string): Promise<{ mode: typeof accessModes.$inferSelect; request: SettledInput }> {
  const [mode] = await db.select().from(accessModes).where(and(eq(accessModes.id, input.accessModeId), eq(accessModes.active, true)));
  if (!mode) throw new AppError('BAD_REQUEST', 'application.unknownMode', {}, 'accessModeId');
  const [org] = await db.select({ residency: organisations.residency }).from(organisations).where(eq(organisations.id, actor.org.id));
  const offered = await listResourceClasses(db, { kind: actor.org.kind, residency: org!.residency });
  for (const line of input.lines) {
    if (!offered.some((rc) => rc.id === line.resourceClassId)) {
      throw new AppError('BAD_REQUEST', 'application.unknownClass', { resourceClass: line.resourceClassId }, 'lines');
    }
  }
  let period = input.periodStart && input.periodEnd ? { periodStart: input.periodStart, periodEnd: input.periodEnd } : undefined;
  if (input.kind !== 'new') {
    if (!input.baseAllocationId) throw new AppError('BAD_REQUEST', 'application.baseRequired', {}, 'baseAllocationId');
    const [base] = await db
      .select({ projectId: allocations.projectId, resourceClassId: allocations.resourceClassId, unit: allocations.unit, periodStart: allocations.periodStart, periodEnd: allocations.periodEnd })
      .from(allocations)
      .where(eq(allocations.id, input.baseAllocationId));
    if (!base || base.projectId !== input.projectId || base.unit !== 'gpu_seconds') throw new AppError('BAD_REQUEST', 'application.baseRequired', {}, 'baseAllocationId');
    if (input.kind === 'top_up' && input.lines.some((l) => l.resourceClassId !== base.resourceClassId)) {
      throw new AppError('BAD_REQUEST', 'application.topUpSameClass', {}, 'lines');
    }
    if (input.kind === 'top_up') {
      if (period && (period.periodStart !== base.periodStart || period.periodEnd !== base.periodEnd)) {
        throw new AppError('BAD_REQUEST', 'application.topUpKeepsPeriod', { start: base.periodStart, end: base.periodEnd }, 'periodEnd');
      }
      period = { periodStart: base.periodStart, periodEnd: base.periodEnd };
    }
  }
  if (!period) throw new AppError('BAD_REQUEST', 'application.periodRequired', {}, input.periodStart ? 'periodEnd' : 'periodStart');
  // Each line asks for storage beside its GPU-hours: what it says, else its mode's default (a top-up: none).
  const request = { ...input, ...period, lines: input.lines.map((l) => ({ ...l, storageGb: storageOfLine(l, mode, input.kind) })) };
  const error = firstProblem(checkApplicationRequest({ mode, kind: input.kind, lines: request.lines, periodStart: request.periodStart, periodEnd: request.periodEnd, today }));
  if (error) throw error;
  return { mode, request };
}

/** createApplication saves a new draft for a project (PI, project managers and tenant leads only). */
export async function createApplication(db: Db, actor: TenantActor, input: ApplicationInput, today: string) {
  requireProjectManager(await projectAccess(db, actor, input.projectId));
  const { request } = await validateRequest(db, actor, input, today);
  return inTransaction(db, async (tx) => {
    const [app] = await tx
      .insert(applications)
      .values({
        projectId: input.projectId,
        orgId: actor.org.id,
        accessModeId: input.accessModeId,
        kind: input.kind,
        baseAllocationId: input.kind === 'new' ? null : input.baseAllocationId!,
        periodStart: request.periodStart,
        periodEnd: request.periodEnd,
        justification: input.justification,
        createdBy: actor.userId,
      })
      .returning();
    await tx.insert(applicationLines).values(request.lines.map((l) => ({ applicationId: app!.id, resourceClassId: l.resourceClassId, requestedGpuSeconds: l.gpuSeconds, requestedStorageGb: l.storageGb })));
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'application.drafted', targetType: 'application', targetId: app!.id, data: { accessModeId: input.accessModeId, kind: input.kind } });
    return app!;
  });
}

async function lockApplication(tx: Tx, applicationId: string, orgId?: string) {
  const [app] = await tx
    .select()
    .from(applications)
    .where(orgId ? and(eq(applications.id, applicationId), eq(applications.orgId, orgId)) : eq(applications.id, applicationId))
    .for('no key update');
  if (!app) throw new AppError('NOT_FOUND', 'error.notFound');
  return app;
}

/** updateApplication changes a draft (or one sent back for changes). */
export async function updateApplication(db: Db, actor: TenantActor, applicationId: string, input: Omit<ApplicationInput, 'projectId'>, today: string) {
  const [existing] = await db.select({ projectId: applications.projectId }).from(applications).where(and(eq(applications.id, applicationId), eq(applications.orgId, actor.org.id)));
  if (!existing) throw new AppError('NOT_FOUND', 'error.notFound');
  requireProjectManager(await projectAccess(db, actor, existing.projectId));
  const { request } = await validateRequest(db, actor, { ...input, projectId: existing.projectId }, today);
  await inTransaction(db, async (tx) => {
    const app = await lockApplication(tx, applicationId, actor.org.id);
    if (!(EDITABLE as readonly string[]).includes(app.status)) throw new AppError('PRECONDITION_FAILED', 'application.notEditable', { status: app.status });
    await tx
      .update(applications)
      .set({ accessModeId: input.accessModeId, kind: input.kind, baseAllocationId: input.kind === 'new' ? null : input.baseAllocationId!, periodStart: request.periodStart, periodEnd: request.periodEnd, justification: input.justification })
      .where(eq(applications.id, applicationId));
    await tx.delete(applicationLines).where(eq(applicationLines.applicationId, applicationId));
    await tx.insert(applicationLines).values(request.lines.map((l) => ({ applicationId, resourceClassId: l.resourceClassId, requestedGpuSeconds: l.gpuSeconds, requestedStorageGb: l.storageGb })));
  });
}

async function linesOf(db: DbOrTx, applicationId: string): Promise<RequestLine[]> {
  const rows = await db.select().from(applicationLines).where(eq(applicationLines.applicationId, applicationId)).orderBy(asc(applicationLines.resourceClassId));
  return rows.map((r) => ({ resourceClassId: r.resourceClassId, gpuSeconds: r.requestedGpuSeconds, storageGb: r.requestedStorageGb }));
}

/** heldAllocations lists a tenant's allocations with the access mode each was granted under, for the review route. */
async function heldAllocations(db: DbOrTx, orgId: string) {
  return db
    .select({ accessModeId: applications.accessModeId, status: allocations.status, periodStart: allocations.periodStart, periodEnd: allocations.periodEnd })
    .from(allocations)
    .leftJoin(applications, eq(applications.id, allocations.applicationId))
    .where(eq(allocations.orgId, orgId));
}

/**
 * submitApplication sends a draft to review down the route core decides (reviewRouteFor): an instant
 * mode approves at once, once per tenant and period; a second request goes to a reviewer with the reason.
 * An instant approval then hands the project's new budget to the scheduler (`budgets`, after the commit).
 *
 * An approval grants budget, which the tenant role may not write (drizzle/0064). With `budgets` (a tenant's
 * request: its transaction's commit, or staff's step) an instant route therefore writes nothing at first,
 * takes the step after the commit and routes again on the portal's own connection, under the organisation's
 * lock, where the approval is written and audited. Without it (the demo seed, on the portal's connection) it
 * approves at once.
 */
export async function submitApplication(db: Db, actor: TenantActor, applicationId: string, now: Date, budgets?: BudgetSyncStep) {
  const today = now.toISOString().slice(0, 10);
  const [existing] = await db.select().from(applications).where(and(eq(applications.id, applicationId), eq(applications.orgId, actor.org.id)));
  if (!existing) throw new AppError('NOT_FOUND', 'error.notFound');
  requireProjectManager(await projectAccess(db, actor, existing.projectId));
  if (actor.org.status !== 'active') throw new AppError('FORBIDDEN', 'error.tenantNotActive', { org: actor.org.name });
  const lines = await linesOf(db, applicationId);
  const { mode, request } = await validateRequest(db, actor, { ...existing, baseAllocationId: existing.baseAllocationId ?? undefined, lines }, today);
  const submission: Submission = { mode, request, lines, today, now };
  const first = await inTransaction(db, (tx) => routeSubmission(tx, actor, applicationId, { ...submission, approve: budgets === undefined }));
  if (first.status !== 'instant') {
    if (first.status === 'approved') await syncBudgetsAfterCommit(db, budgets, [existing.projectId]);
    return first;
  }
  if (!budgets) throw new Error('submitApplication: an instant route is left for the step after the commit only when there is one');
  const after = await stepAfterCommit(db, budgets.step);
  const second = await inTransaction(after.db, (tx) => routeSubmission(tx, actor, applicationId, { ...submission, approve: true }));
  // Routed again under the lock: a submission of the same tenant meanwhile may have taken the instant approval.
  if (second.status === 'approved') await syncBudgetsAfterCommit(after.db, { step: after.scheduler, now: budgets.now }, [existing.projectId]);
  return second;
}

interface Submission {
  mode: typeof accessModes.$inferSelect;
  request: SettledInput;
  lines: RequestLine[];
  today: string;
  now: Date;
}
type Routed = { status: 'approved' | 'submitted'; route: ReviewRoute };

/**
 * routeSubmission decides a draft's route on the locked organisation and application and records it:
 * submitted to review (reviewers told), or approved at once when `approve` (the portal's own connection);
 * an instant route without it writes nothing and answers `instant`.
 */
async function routeSubmission(tx: Tx, actor: TenantActor, applicationId: string, input: Submission & { approve: true }): Promise<Routed>;
async function routeSubmission(tx: Tx, actor: TenantActor, applicationId: string, input: Submission & { approve: boolean }): Promise<Routed | { status: 'instant'; route: ReviewRoute }>;
async function routeSubmission(tx: Tx, actor: TenantActor, applicationId: string, input: Submission & { approve: boolean }): Promise<Routed | { status: 'instant'; route: ReviewRoute }> {
  // The organisation row first (the lock order): two drafts of one tenant submitted at once are
  // routed one after the other, so a second Playground request sees the first one's allocation.
  await tx.select({ id: organisations.id }).from(organisations).where(eq(organisations.id, actor.org.id)).for('no key update');
  const app = await lockApplication(tx, applicationId, actor.org.id);
  if (!(EDITABLE as readonly string[]).includes(app.status)) throw new AppError('PRECONDITION_FAILED', 'application.notEditable', { status: app.status });
  const route = reviewRouteFor({ mode: input.mode, request: input.request, held: await heldAllocations(tx, actor.org.id), today: input.today });
  if (route.path === 'instant' && !input.approve) return { status: 'instant' as const, route };
  // A mode taking requests in rounds (issue #32): the request joins the round whose cut-off is next.
  const round = input.mode.intake === 'rounds' ? await roundForSubmission(tx, input.mode.id, input.now) : null;
  if (input.mode.intake === 'rounds' && !round) throw new AppError('PRECONDITION_FAILED', 'application.noOpenRound', { mode: input.mode.name }, 'accessModeId');
  await tx.update(applications).set({ status: 'submitted', submittedAt: input.now, reviewRoute: route, roundId: round?.id ?? null }).where(eq(applications.id, applicationId));
  await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'application.submitted', targetType: 'application', targetId: applicationId, data: { accessModeId: input.mode.id, route, ...(round ? { roundId: round.id, cutoffAt: round.cutoffAt.toISOString() } : {}) } });
  if (route.path === 'instant') {
    await decideInTx(tx, null, { ...app, status: 'submitted' }, { outcome: 'approved', grantedLines: input.lines, comment: '' }, input.now);
    return { status: 'approved' as const, route };
  }
  // Who is staff is out of a tenant's reach except through this function (drizzle/0018).
  const reviewers = await tx.select({ userId: users.id }).from(users).where(sql`${users.id} in (select portal_staff_ids())`);
  const [project] = await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, app.projectId));
  await notify(tx, reviewers.map((r) => r.userId), 'notice.applicationSubmitted', { project: project!.title, org: actor.org.name }, `/staff/applications/${applicationId}`, { orgId: actor.org.id });
  return { status: 'submitted' as const, route };
}

export interface DecisionInput {
  outcome: DecisionOutcome;
  grantedLines: RequestLine[];
  comment: string;
}

const OUTCOME_STATUS = { approved: 'approved', rejected: 'rejected', changes_requested: 'changes_requested' } as const;
const OUTCOME_NOTICE = { approved: 'notice.applicationApproved', rejected: 'notice.applicationRejected', changes_requested: 'notice.applicationChangesRequested' } as const;

/** decideInTx records a decision and its effects (allocations and grants on approval), audited and notified. */
async function decideInTx(tx: Tx, reviewer: Actor | null, app: typeof applications.$inferSelect, input: DecisionInput, now: Date) {
  const requested = await linesOf(tx, app.id);
  // A granted line without storage grants the storage its request line asked for.
  const granted = input.outcome === 'approved'
    ? input.grantedLines.filter((l) => l.gpuSeconds > 0).map((l) => ({ ...l, storageGb: l.storageGb ?? requested.find((r) => r.resourceClassId === l.resourceClassId)?.storageGb ?? 0 }))
    : [];
  const [decision] = await tx
    .insert(decisions)
    .values({ applicationId: app.id, reviewerUserId: reviewer?.userId ?? null, outcome: input.outcome, comment: input.comment, decidedAt: now, grantedLines: input.outcome === 'approved' ? granted.map((l) => ({ resourceClassId: l.resourceClassId, gpuSeconds: l.gpuSeconds, storageGb: l.storageGb })) : null })
    .returning({ id: decisions.id });
  await tx.update(applications).set({ status: OUTCOME_STATUS[input.outcome], decidedAt: now }).where(eq(applications.id, app.id));
  const allocationIds: string[] = [];
  if (input.outcome === 'approved') {
    const reason = `application ${app.id} approved`;
    for (const line of granted) {
      let allocationId = app.kind === 'top_up' ? app.baseAllocationId : null;
      if (!allocationId) {
        const [rc] = await tx.select({ maxWalltimeSeconds: resourceClasses.maxWalltimeSeconds, gpus: resourceClasses.gpusPerNode, nodes: resourceClasses.nodes }).from(resourceClasses).where(eq(resourceClasses.id, line.resourceClassId));
        const [created] = await tx
          .insert(allocations)
          .values({
            projectId: app.projectId,
            orgId: app.orgId,
            resourceClassId: line.resourceClassId,
            applicationId: app.id,
            unit: 'gpu_seconds',
            periodStart: app.periodStart,
            periodEnd: app.periodEnd,
            storageGb: line.storageGb,
            ...classAllocationLimits(rc!),
          })
          .returning({ id: allocations.id });
        allocationId = created!.id;
      } else if (line.storageGb > 0) {
        // A top-up that asked for storage adds it to the allocation's line.
        await tx.update(allocations).set({ storageGb: sql`${allocations.storageGb} + ${line.storageGb}` }).where(eq(allocations.id, allocationId));
      }
      await grantBudget(tx, { allocationId, amount: line.gpuSeconds, actorUserId: reviewer?.userId ?? null, reason });
      allocationIds.push(allocationId);
    }
  }
  await recordAudit(tx, {
    actorUserId: reviewer?.userId ?? null,
    orgId: app.orgId,
    action: `application.${input.outcome}`,
    targetType: 'application',
    targetId: app.id,
    reason: input.comment || (reviewer ? null : 'access mode approves instantly'),
    data: { decisionId: decision!.id, requested, granted, allocationIds },
    isStaffAction: reviewer !== null,
  });
  const [project] = await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, app.projectId));
  const recipients = [...(await projectLeads(tx, app.projectId)), app.createdBy];
  await notifyMembers(tx, app.orgId, recipients, OUTCOME_NOTICE[input.outcome], { project: project!.title, comment: input.comment }, `/applications/${app.id}`);
  return { status: OUTCOME_STATUS[input.outcome], allocationIds };
}

/**
 * decideApplication lets a reviewer approve (possibly less), reject or send back a submitted application;
 * an approval (a new grant or a top-up) then hands the project's budget to the scheduler (`budgets`).
 */
export async function decideApplication(db: Db, reviewer: Actor, applicationId: string, input: DecisionInput, now: Date, budgets?: BudgetSyncStep) {
  if (!isStaff(reviewer)) throw new AppError('FORBIDDEN', 'error.staffOnly');
  let projectId = '';
  const decided = await inTransaction(db, async (tx) => {
    const app = await lockApplication(tx, applicationId);
    projectId = app.projectId;
    // A reviewer of the applicant's organisation, on its project or who declared a conflict finds no such
    // application (issue #32), unless an admin overrode the conflict.
    await requireNotExcluded(tx, reviewer, app);
    const [mode] = await tx.select({ reviewPath: accessModes.reviewPath }).from(accessModes).where(eq(accessModes.id, app.accessModeId));
    const refusal = decisionRefusal(app.reviewRoute?.path ?? mode?.reviewPath ?? 'full', isStaff(reviewer, 'admin'));
    if (refusal) throw new AppError('FORBIDDEN', refusal);
    if (app.status !== 'submitted') throw new AppError('PRECONDITION_FAILED', 'decision.notSubmitted', { status: app.status });
    await requireClosedRound(tx, app.roundId);
    const requested = await linesOf(tx, app.id);
    const problem = checkDecision({ outcome: input.outcome, requested, granted: input.grantedLines, comment: input.comment })[0];
    if (problem) throw new AppError('BAD_REQUEST', problem.key, 'params' in problem ? problem.params : {}, problem.field);
    return decideInTx(tx, reviewer, app, input, now);
  });
  if (decided.allocationIds.length) await syncBudgetsAfterCommit(db, budgets, [projectId]);
  return decided;
}

/** getApplication returns an application with its lines and decisions, for its tenant (PI, managers, leads) or staff. */
export async function getApplication(db: DbOrTx, viewer: { tenant?: TenantActor; staff?: Actor }, applicationId: string, locale: Locale = 'en', now: Date = new Date()) {
  const [app] = await db
    .select({
      application: applications,
      projectTitle: projects.title,
      purpose: { fieldOfScience: projects.fieldOfScience, workloadKind: projects.workloadKind, dataResidency: projects.dataResidency },
      orgName: organisations.name,
      orgKind: organisations.kind,
      modeName: accessModes.name,
      reviewPath: accessModes.reviewPath,
      targetDays: accessModes.targetDecisionWorkingDays,
      maxGpuSeconds: accessModes.maxGpuSeconds,
      applicantName: users.name,
      roundCutoffAt: callRounds.cutoffAt,
    })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .innerJoin(organisations, eq(organisations.id, applications.orgId))
    .innerJoin(accessModes, eq(accessModes.id, applications.accessModeId))
    .innerJoin(users, eq(users.id, applications.createdBy))
    .leftJoin(callRounds, eq(callRounds.id, applications.roundId))
    .where(eq(applications.id, applicationId));
  if (!app) throw new AppError('NOT_FOUND', 'error.notFound');
  let canEdit = false;
  let canManage = false;
  if (viewer.tenant) {
    if (app.application.orgId !== viewer.tenant.org.id) throw new AppError('NOT_FOUND', 'error.notFound');
    const access = await projectAccess(db, viewer.tenant, app.application.projectId);
    canManage = access.canManage;
    canEdit = access.canManage && (EDITABLE as readonly string[]).includes(app.application.status);
  } else if (!viewer.staff || !isStaff(viewer.staff)) throw new AppError('NOT_FOUND', 'error.notFound');
  else await requireNotExcluded(db, viewer.staff, app.application);
  const reviewer = users;
  const [lines, history] = await Promise.all([
    db
      .select({ resourceClassId: applicationLines.resourceClassId, gpuSeconds: applicationLines.requestedGpuSeconds, storageGb: applicationLines.requestedStorageGb, name: resourceClasses.name, nameDe: resourceClasses.nameDe })
      .from(applicationLines)
      .innerJoin(resourceClasses, eq(resourceClasses.id, applicationLines.resourceClassId))
      .where(eq(applicationLines.applicationId, applicationId))
      .orderBy(asc(applicationLines.resourceClassId)),
    db
      .select({ id: decisions.id, outcome: decisions.outcome, comment: decisions.comment, grantedLines: decisions.grantedLines, decidedAt: decisions.decidedAt, reviewerName: reviewer.name })
      .from(decisions)
      .leftJoin(reviewer, eq(reviewer.id, decisions.reviewerUserId))
      .where(eq(decisions.applicationId, applicationId))
      .orderBy(desc(decisions.decidedAt), desc(decisions.seq)),
  ]);
  const today = now.toISOString().slice(0, 10);
  const [resulting, rubric, reviews, report, owedByPi] = await Promise.all([
    db.select({ id: allocations.id, resourceClassId: allocations.resourceClassId }).from(allocations).where(eq(allocations.applicationId, applicationId)),
    rubricOf(db, app.application.roundId),
    applicantReviews(db, applicationId),
    reportStateOf(db, app.application, today),
    // Reviewers are told of reports the project's PI owes elsewhere (issue #32); applicants see their own on each request.
    viewer.staff ? owedByPisOf(db, [app.application], today).then((m) => m.get(app.application.id) ?? []) : Promise.resolve([]),
  ]);
  const route = routeOf(app.application.reviewRoute, app.reviewPath);
  return {
    ...app.application,
    projectTitle: app.projectTitle,
    purpose: app.purpose,
    orgName: app.orgName,
    orgKind: app.orgKind,
    modeName: app.modeName,
    reviewPath: route.path,
    reviewNote: route.reason === 'instantOnceActive' ? { reason: route.reason, activeUntil: route.activeUntil } : null,
    targetDays: reviewTargetWorkingDays(route, app.targetDays),
    // When the decision is due: the target in the centre's working time from the submission, or from its
    // round's cut-off (issue #32).
    decisionDueAt: app.application.status === 'submitted' && app.application.submittedAt ? decisionDueAt(workingCalendar(), clockStart(app.application.submittedAt, app.roundCutoffAt), reviewTargetWorkingDays(route, app.targetDays)) : null,
    roundCutoffAt: app.roundCutoffAt,
    applicantName: app.applicantName,
    lines: lines.map(({ nameDe, ...line }) => ({ ...line, name: localName(locale, { name: line.name, nameDe }) })),
    decisions: history,
    allocations: resulting,
    reviews: { rubric, items: reviews.map((r) => ({ id: r.id, scores: r.scores ?? {}, commentToApplicant: r.commentToApplicant, scoredAt: r.scoredAt! })) },
    /** Its end-of-allocation report (approved new and renewed requests): owed once the period has ended. */
    report: report ? { ...report, canFile: canManage } : null,
    /** Staff only: reports the project's PI owes on other requests. */
    missingReportsOfPi: owedByPi,
    canEdit,
  };
}

/**
 * decisionClock is a waiting request's decision clock: it starts at the submission, or at its round's
 * cut-off (issue #32), and the decision is due its target in the centre's working time (its hours,
 * weekends and public holidays) later; overdue once that has passed.
 */
export function decisionClock(
  calendar: ReturnType<typeof workingCalendar>,
  r: { submittedAt: Date | null; roundCutoffAt: Date | null; reviewRoute: ReviewRoute | null; reviewPath: ReviewRoute['path']; targetDays: number },
  now: Date,
) {
  const clock = clockStart(r.submittedAt ?? now, r.roundCutoffAt);
  const route = routeOf(r.reviewRoute, r.reviewPath);
  const targetDays = reviewTargetWorkingDays(route, r.targetDays);
  return { clock, route, targetDays, dueAt: decisionDueAt(calendar, clock, targetDays) };
}

/** clockStart is when a request's decision clock starts: at its round's cut-off when it joined one (issue #32), else at its submission. */
function clockStart(submittedAt: Date, roundCutoffAt: Date | null): Date {
  return roundCutoffAt && roundCutoffAt.getTime() > submittedAt.getTime() ? roundCutoffAt : submittedAt;
}

/** routeOf is the route a request was sent down, or (a draft) the one its access mode names. */
function routeOf(stored: ReviewRoute | null, modePath: ReviewRoute['path']): ReviewRoute {
  return stored ?? { path: modePath, reason: 'accessMode' };
}

/**
 * decisionTimes is how the centre keeps its decision targets, per access mode (issue #32): the requests
 * decided from `from` to `to` (days, UTC), the median working days each took from submission to decision
 * in the centre's working time, how many came within their target (the same due time the applicant was
 * shown); and the requests waiting now, with how many are past their due time. Instant approvals count
 * with no time taken. A request sent back for changes counts again when it is decided anew.
 */
export async function decisionTimes(db: DbOrTx, range: { from: string; to: string }, now: Date) {
  const start = new Date(`${range.from}T00:00:00Z`);
  const end = new Date(Date.parse(`${range.to}T00:00:00Z`) + 86_400_000);
  const [modes, rows] = await Promise.all([
    db.select({ id: accessModes.id, name: accessModes.name, reviewPath: accessModes.reviewPath, targetDays: accessModes.targetDecisionWorkingDays }).from(accessModes).where(eq(accessModes.active, true)).orderBy(asc(accessModes.sortOrder)),
    db
      .select({ accessModeId: applications.accessModeId, status: applications.status, reviewRoute: applications.reviewRoute, submittedAt: applications.submittedAt, decidedAt: applications.decidedAt, reviewPath: accessModes.reviewPath, targetDays: accessModes.targetDecisionWorkingDays, roundCutoffAt: callRounds.cutoffAt })
      .from(applications)
      .innerJoin(accessModes, eq(accessModes.id, applications.accessModeId))
      .leftJoin(callRounds, eq(callRounds.id, applications.roundId))
      .where(and(isNotNull(applications.submittedAt), or(eq(applications.status, 'submitted'), and(isNotNull(applications.decidedAt), gte(applications.decidedAt, start), lt(applications.decidedAt, end))))),
  ]);
  const calendar = workingCalendar();
  const dayHours = calendar.endHour - calendar.startHour;
  return modes.map((mode) => {
    const mine = rows.filter((r) => r.accessModeId === mode.id);
    const waiting = mine.filter((r) => r.status === 'submitted');
    const decided = mine.filter((r) => r.status !== 'submitted' && r.decidedAt !== null);
    const dueOf = (r: (typeof mine)[number]) => decisionDueAt(calendar, clockStart(r.submittedAt!, r.roundCutoffAt), reviewTargetWorkingDays(routeOf(r.reviewRoute, r.reviewPath), r.targetDays));
    const days = decided.map((r) => workingHoursBetween(calendar, clockStart(r.submittedAt!, r.roundCutoffAt), r.decidedAt!) / dayHours).sort((a, b) => a - b);
    return {
      accessModeId: mode.id,
      name: mode.name,
      targetDays: mode.targetDays,
      decided: decided.length,
      /** Working days to a decision, the middle one (one decimal); null with none decided. */
      medianWorkingDays: days.length ? Math.round(median(days) * 10) / 10 : null,
      withinTarget: decided.filter((r) => r.decidedAt!.getTime() <= dueOf(r).getTime()).length,
      waiting: waiting.length,
      overdue: waiting.filter((r) => dueOf(r).getTime() <= now.getTime()).length,
    };
  });
}

function median(sorted: readonly number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * reviewQueue lists submitted applications, oldest first, with their age in working days against the mode's
 * target, as `viewer` may see them: none they are excluded from by a conflict of interest (issue #32).
 */
export async function reviewQueue(db: DbOrTx, viewer: Actor, now: Date) {
  const all = await db
    .select({ id: applications.id, submittedAt: applications.submittedAt, kind: applications.kind, reviewRoute: applications.reviewRoute, projectTitle: projects.title, projectId: applications.projectId, orgName: organisations.name, orgId: organisations.id, modeName: accessModes.name, reviewPath: accessModes.reviewPath, targetDays: accessModes.targetDecisionWorkingDays, roundId: applications.roundId, roundCutoffAt: callRounds.cutoffAt, roundStatus: callRounds.status })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .innerJoin(organisations, eq(organisations.id, applications.orgId))
    .innerJoin(accessModes, eq(accessModes.id, applications.accessModeId))
    .leftJoin(callRounds, eq(callRounds.id, applications.roundId))
    .where(eq(applications.status, 'submitted'))
    .orderBy(asc(applications.submittedAt));
  const ties = await tiesOf(db, viewer.userId, all.map((r) => r.id));
  const rows = all.filter((r) => !conflictOf(ties, r).excluded);
  const ids = rows.map((r) => r.id);
  const [lines, panels, owed] = ids.length
    ? await Promise.all([
        db.select().from(applicationLines).where(inArray(applicationLines.applicationId, ids)),
        db.select({ applicationId: reviewAssignments.applicationId, reviewerUserId: reviewAssignments.reviewerUserId, status: reviewAssignments.status }).from(reviewAssignments).where(inArray(reviewAssignments.applicationId, ids)),
        owedByPisOf(db, rows, now.toISOString().slice(0, 10)),
      ])
    : [[], [], new Map<string, unknown[]>()];
  const calendar = workingCalendar();
  return rows.map(({ reviewRoute, projectId: _, ...r }) => {
    const missingReportsOfPi = owed.get(r.id)?.length ?? 0;
    const panel = panels.filter((p) => p.applicationId === r.id && p.status !== 'declined');
    const mine = panel.find((p) => p.reviewerUserId === viewer.userId);
    const { clock, route, targetDays, dueAt } = decisionClock(calendar, { ...r, reviewRoute }, now);
    // Aged from the decision clock's start: the submission, or the round's cut-off (none before it).
    const ageWorkingDays = clock.getTime() < now.getTime() ? workingDaysBetween(clock, now) : 0;
    const due = dueState(calendar, dueAt, now);
    return {
      ...r,
      reviewPath: route.path,
      reviewReason: route.reason,
      targetDays,
      requestedGpuSeconds: lines.filter((l) => l.applicationId === r.id).reduce((s, l) => s + l.requestedGpuSeconds, 0),
      ageWorkingDays,
      /** Its panel: reviewers assigned (not declined), how many have scored, and the viewer's own review. */
      reviews: { assigned: panel.length, scored: panel.filter((p) => p.status === 'scored').length, mine: mine ? mine.status : null },
      /** Reports its project's PI owes on earlier requests (issue #32): flagged to reviewers. */
      missingReportsOfPi,
      dueAt,
      due,
      overdue: due === 'overdue',
    };
  });
}
