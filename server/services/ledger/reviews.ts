// Panels, scores and conflicts of interest (issue #32). Admins assign reviewers to an application or to a
// round (its panel, assigned each of the round's applications when it closes, or at once when it has);
// a reviewer scores on the call's rubric or declines; the round's ranking sorts by score with a cut line at
// its GPU-hours, and staff decide from it in bulk (./bulk-decisions.ts), each decision in its own transaction. A reviewer of the
// applicant's organisation or on its project is excluded automatically, one may declare a conflict, an
// admin may override either with a reason (audited): an excluded reviewer finds no such application.
// Rules in server/core/reviews.ts.
import { and, asc, eq, inArray, ne } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { applicationLines, applications, callRounds, calls, decisions, memberships, organisations, projectMembers, projects, reviewAssignments, reviewConflicts, roundReviewers, staffRoles, users } from '~/db/schema';
import { checkScores, conflictState, DEFAULT_RUBRIC, rankRound, type RubricCriterion, type ScoreInput } from '~/server/core/reviews';
import { AppError } from '~/server/errors';
import { isStaff, type Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { notify } from '~/server/services/mail/notifications';
import { inTransaction } from '~/server/services/transaction';
import { conflictOf, requireNotExcluded, tiesOf, type AppRef } from './conflicts';

async function applicationRef(db: DbOrTx, applicationId: string) {
  const [app] = await db
    .select({ id: applications.id, orgId: applications.orgId, projectId: applications.projectId, status: applications.status, roundId: applications.roundId, projectTitle: projects.title })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .where(eq(applications.id, applicationId));
  return app;
}

/** The application as a staff member may see it: NOT_FOUND when there is none or they are excluded from it. */
async function visibleApplication(db: DbOrTx, staff: Actor, applicationId: string) {
  if (!isStaff(staff)) throw new AppError('NOT_FOUND', 'error.notFound');
  const app = await applicationRef(db, applicationId);
  if (!app) throw new AppError('NOT_FOUND', 'error.notFound');
  await requireNotExcluded(db, staff, app);
  return app;
}

/** rubricOf is the rubric an application is scored on: its call's, or the default one outside a call. */
export async function rubricOf(db: DbOrTx, roundId: string | null): Promise<RubricCriterion[]> {
  if (!roundId) return [...DEFAULT_RUBRIC];
  const [call] = await db.select({ rubric: calls.rubric }).from(callRounds).innerJoin(calls, eq(calls.id, callRounds.callId)).where(eq(callRounds.id, roundId));
  return call?.rubric ?? [...DEFAULT_RUBRIC];
}

/** staffMembers lists the centre's staff with their roles, for the panel forms. */
export async function staffMembers(db: DbOrTx) {
  const rows = await db.select({ userId: users.id, name: users.name, email: users.email, role: staffRoles.role }).from(staffRoles).innerJoin(users, eq(users.id, staffRoles.userId)).orderBy(asc(users.name));
  const byUser = new Map<string, { userId: string; name: string; email: string; roles: string[] }>();
  for (const r of rows) {
    const seen = byUser.get(r.userId) ?? { userId: r.userId, name: r.name, email: r.email, roles: [] };
    seen.roles.push(r.role);
    byUser.set(r.userId, seen);
  }
  return [...byUser.values()];
}

async function requireReviewer(db: DbOrTx, userId: string) {
  const [row] = await db.select({ userId: staffRoles.userId }).from(staffRoles).where(eq(staffRoles.userId, userId)).limit(1);
  if (!row) throw new AppError('BAD_REQUEST', 'review.notStaff', {}, 'reviewerUserId');
}

/**
 * assignIn assigns a reviewer an application in a transaction: refused (or, for a panel, skipped) when
 * they are excluded; once (a second assignment of the same reviewer keeps the first). Returns whether it assigned.
 */
async function assignIn(tx: Tx, app: AppRef & { projectTitle: string }, reviewerUserId: string, assignedBy: string, now: Date, onConflict: 'refuse' | 'skip'): Promise<boolean> {
  if (conflictOf(await tiesOf(tx, reviewerUserId, [app.id]), app).excluded) {
    if (onConflict === 'skip') return false;
    throw new AppError('PRECONDITION_FAILED', 'review.reviewerExcluded', {}, 'reviewerUserId');
  }
  const inserted = await tx.insert(reviewAssignments).values({ applicationId: app.id, orgId: app.orgId, reviewerUserId, assignedBy, assignedAt: now }).onConflictDoNothing().returning({ id: reviewAssignments.id });
  if (!inserted.length) return false;
  await notify(tx, [reviewerUserId], 'notice.reviewAssigned', { project: app.projectTitle }, `/staff/applications/${app.id}`);
  return true;
}

/** assignReviewer assigns one reviewer one submitted application (admins), audited and told. */
export async function assignReviewer(db: Db, admin: Actor, input: { applicationId: string; reviewerUserId: string }, now: Date) {
  if (!isStaff(admin, 'admin')) throw new AppError('FORBIDDEN', 'error.staffOnly');
  const app = await visibleApplication(db, admin, input.applicationId);
  await requireReviewer(db, input.reviewerUserId);
  if (app.status !== 'submitted') throw new AppError('PRECONDITION_FAILED', 'decision.notSubmitted', { status: app.status });
  return inTransaction(db, async (tx) => {
    const assigned = await assignIn(tx, app, input.reviewerUserId, admin.userId, now, 'refuse');
    if (assigned) await recordAudit(tx, { actorUserId: admin.userId, orgId: app.orgId, action: 'review.assigned', targetType: 'application', targetId: app.id, data: { reviewerUserId: input.reviewerUserId }, isStaffAction: true });
    return { assigned };
  });
}

/** assignPanelIn assigns a round's panel each of its waiting applications (skipping conflicts). */
async function assignPanelIn(tx: Tx, roundId: string, reviewerUserIds: readonly { reviewerUserId: string; assignedBy: string }[], now: Date) {
  const apps = await tx
    .select({ id: applications.id, orgId: applications.orgId, projectId: applications.projectId, projectTitle: projects.title })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .where(and(eq(applications.roundId, roundId), eq(applications.status, 'submitted')));
  let assigned = 0;
  let skipped = 0;
  for (const { reviewerUserId, assignedBy } of reviewerUserIds) {
    for (const app of apps) {
      if (await assignIn(tx, app, reviewerUserId, assignedBy, now, 'skip')) assigned += 1;
      else if (conflictOf(await tiesOf(tx, reviewerUserId, [app.id]), app).excluded) skipped += 1;
    }
  }
  return { assigned, skippedForConflict: skipped };
}

/**
 * assignRoundPanel puts a reviewer on a round's panel (admins): they are assigned every application of the
 * round now if it has closed, else when it closes; never one they are excluded from (counted as skipped).
 */
export async function assignRoundPanel(db: Db, admin: Actor, input: { roundId: string; reviewerUserId: string }, now: Date) {
  if (!isStaff(admin, 'admin')) throw new AppError('FORBIDDEN', 'error.staffOnly');
  await requireReviewer(db, input.reviewerUserId);
  return inTransaction(db, async (tx) => {
    const [round] = await tx.select({ id: callRounds.id, status: callRounds.status, callId: callRounds.callId }).from(callRounds).where(eq(callRounds.id, input.roundId)).for('no key update');
    if (!round) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'roundId');
    await tx.insert(roundReviewers).values({ roundId: round.id, reviewerUserId: input.reviewerUserId, assignedBy: admin.userId, assignedAt: now }).onConflictDoNothing();
    const result = round.status === 'closed' ? await assignPanelIn(tx, round.id, [{ reviewerUserId: input.reviewerUserId, assignedBy: admin.userId }], now) : { assigned: 0, skippedForConflict: 0 };
    await recordAudit(tx, { actorUserId: admin.userId, orgId: null, action: 'review.panel_assigned', targetType: 'call_round', targetId: round.id, data: { callId: round.callId, reviewerUserId: input.reviewerUserId, ...result }, isStaffAction: true });
    return result;
  });
}

/** assignPanelOnClose assigns a closing round's panel its applications (closeDueRounds, in the round's transaction). */
export async function assignPanelOnClose(tx: Tx, roundId: string, now: Date) {
  const panel = await tx.select({ reviewerUserId: roundReviewers.reviewerUserId, assignedBy: roundReviewers.assignedBy }).from(roundReviewers).where(eq(roundReviewers.roundId, roundId));
  return panel.length ? assignPanelIn(tx, roundId, panel, now) : { assigned: 0, skippedForConflict: 0 };
}

/** The reviewer's own assignment of a waiting application, locked; refused when none or it is decided. */
async function ownAssignment(tx: Tx, reviewer: Actor, applicationId: string) {
  const app = await visibleApplication(tx, reviewer, applicationId);
  const [assignment] = await tx
    .select()
    .from(reviewAssignments)
    .where(and(eq(reviewAssignments.applicationId, applicationId), eq(reviewAssignments.reviewerUserId, reviewer.userId)))
    .for('no key update');
  if (!assignment) throw new AppError('PRECONDITION_FAILED', 'review.notAssigned');
  // Its status read under a share lock, which a decision's lock waits for: no review lands after the decision.
  const [current] = await tx.select({ status: applications.status }).from(applications).where(eq(applications.id, app.id)).for('share');
  if (current!.status !== 'submitted') throw new AppError('PRECONDITION_FAILED', 'review.decided', { status: current!.status });
  return { app, assignment };
}

/** submitReview records (or revises, until the decision) a reviewer's scores and comments, audited without their text. */
export async function submitReview(db: Db, reviewer: Actor, applicationId: string, input: ScoreInput, now: Date) {
  return inTransaction(db, async (tx) => {
    const { app, assignment } = await ownAssignment(tx, reviewer, applicationId);
    if (assignment.status === 'declined') throw new AppError('PRECONDITION_FAILED', 'review.declinedAlready');
    const rubric = await rubricOf(tx, app.roundId);
    const problem = checkScores(rubric, input)[0];
    if (problem) throw new AppError('BAD_REQUEST', problem.key, 'params' in problem ? problem.params : {}, problem.field);
    await tx
      .update(reviewAssignments)
      .set({ status: 'scored', scores: input.scores, commentToApplicant: input.commentToApplicant.trim(), internalNote: input.internalNote.trim(), scoredAt: now })
      .where(eq(reviewAssignments.id, assignment.id));
    await recordAudit(tx, { actorUserId: reviewer.userId, orgId: app.orgId, action: 'review.scored', targetType: 'application', targetId: app.id, data: { scores: input.scores, revised: assignment.status === 'scored' }, isStaffAction: true });
    return { id: assignment.id };
  });
}

/** declineReview lets a reviewer decline an assignment with a reason (before scoring it). */
export async function declineReview(db: Db, reviewer: Actor, applicationId: string, reason: string, now: Date) {
  return inTransaction(db, async (tx) => {
    const { app, assignment } = await ownAssignment(tx, reviewer, applicationId);
    if (assignment.status === 'scored') throw new AppError('PRECONDITION_FAILED', 'review.scoredAlready');
    await tx.update(reviewAssignments).set({ status: 'declined', declineReason: reason.trim() }).where(eq(reviewAssignments.id, assignment.id));
    await recordAudit(tx, { actorUserId: reviewer.userId, orgId: app.orgId, action: 'review.declined', targetType: 'application', targetId: app.id, reason: reason.trim(), isStaffAction: true, data: { at: now.toISOString() } });
    return { id: assignment.id };
  });
}

/**
 * declareConflict records a staff member's declared conflict with an application: from then on they are
 * excluded from it (their assignment, if any, declined, its scores dropped from the ranking).
 */
export async function declareConflict(db: Db, staff: Actor, applicationId: string, reason: string, now: Date) {
  return inTransaction(db, async (tx) => {
    const app = await visibleApplication(tx, staff, applicationId);
    await tx.insert(reviewConflicts).values({ applicationId: app.id, reviewerUserId: staff.userId, kind: 'declared', reason: reason.trim(), createdBy: staff.userId, createdAt: now });
    await tx
      .update(reviewAssignments)
      .set({ status: 'declined', declineReason: reason.trim(), scores: null, scoredAt: null })
      .where(and(eq(reviewAssignments.applicationId, app.id), eq(reviewAssignments.reviewerUserId, staff.userId)));
    await recordAudit(tx, { actorUserId: staff.userId, orgId: app.orgId, action: 'review.conflict_declared', targetType: 'application', targetId: app.id, reason: reason.trim(), isStaffAction: true });
  });
}

/**
 * overrideConflict lets an admin lift a reviewer's conflict with an application (automatic or declared),
 * audited with its reason; never their own. A review their declaration withdrew is theirs again.
 */
export async function overrideConflict(db: Db, admin: Actor, input: { applicationId: string; reviewerUserId: string; reason: string }, now: Date) {
  if (!isStaff(admin, 'admin')) throw new AppError('FORBIDDEN', 'error.staffOnly');
  if (input.reviewerUserId === admin.userId) throw new AppError('FORBIDDEN', 'review.overrideOwn', {}, 'reviewerUserId');
  return inTransaction(db, async (tx) => {
    const app = await visibleApplication(tx, admin, input.applicationId);
    const state = conflictOf(await tiesOf(tx, input.reviewerUserId, [app.id]), app);
    if (!state.excluded) throw new AppError('PRECONDITION_FAILED', 'review.noConflict', {}, 'reviewerUserId');
    await tx.insert(reviewConflicts).values({ applicationId: app.id, reviewerUserId: input.reviewerUserId, kind: 'override', reason: input.reason.trim(), createdBy: admin.userId, createdAt: now });
    // A review the declaration withdrew is theirs again to score while the application waits.
    const restored = app.status === 'submitted'
      ? await tx
          .update(reviewAssignments)
          .set({ status: 'assigned', declineReason: null })
          .where(and(eq(reviewAssignments.applicationId, app.id), eq(reviewAssignments.reviewerUserId, input.reviewerUserId), eq(reviewAssignments.status, 'declined')))
          .returning({ id: reviewAssignments.id })
      : [];
    if (restored.length) await notify(tx, [input.reviewerUserId], 'notice.reviewAssigned', { project: app.projectTitle }, `/staff/applications/${app.id}`);
    await recordAudit(tx, { actorUserId: admin.userId, orgId: app.orgId, action: 'review.conflict_overridden', targetType: 'application', targetId: app.id, reason: input.reason.trim(), data: { reviewerUserId: input.reviewerUserId, conflict: state.reason, reviewRestored: restored.length > 0 }, isStaffAction: true });
  });
}

/**
 * reviewsOf is an application's panel as a staff member sees it: the rubric, every assignment with its
 * scores and notes, the viewer's own, and who on the staff is excluded and why (for the admins' override).
 */
export async function reviewsOf(db: DbOrTx, staff: Actor, applicationId: string) {
  const app = await visibleApplication(db, staff, applicationId);
  const reviewer = users;
  const [rubric, rows, team, conflictRows] = await Promise.all([
    rubricOf(db, app.roundId),
    db
      .select({
        id: reviewAssignments.id,
        reviewerUserId: reviewAssignments.reviewerUserId,
        reviewerName: reviewer.name,
        status: reviewAssignments.status,
        scores: reviewAssignments.scores,
        commentToApplicant: reviewAssignments.commentToApplicant,
        internalNote: reviewAssignments.internalNote,
        declineReason: reviewAssignments.declineReason,
        assignedAt: reviewAssignments.assignedAt,
        scoredAt: reviewAssignments.scoredAt,
      })
      .from(reviewAssignments)
      .innerJoin(reviewer, eq(reviewer.id, reviewAssignments.reviewerUserId))
      .where(eq(reviewAssignments.applicationId, app.id))
      .orderBy(asc(reviewAssignments.assignedAt), asc(reviewAssignments.id)),
    staffMembers(db),
    db
      .select({ reviewerUserId: reviewConflicts.reviewerUserId, kind: reviewConflicts.kind, seq: reviewConflicts.seq, reason: reviewConflicts.reason, createdAt: reviewConflicts.createdAt, byName: users.name })
      .from(reviewConflicts)
      .innerJoin(users, eq(users.id, reviewConflicts.createdBy))
      .where(eq(reviewConflicts.applicationId, app.id))
      .orderBy(asc(reviewConflicts.seq)),
  ]);
  const [orgMembers, projectPeople] = await Promise.all([
    db.select({ userId: memberships.userId }).from(memberships).where(eq(memberships.orgId, app.orgId)),
    db.select({ userId: projectMembers.userId }).from(projectMembers).where(eq(projectMembers.projectId, app.projectId)),
  ]);
  const staffState = team.map((person) => {
    const automatic = orgMembers.some((m) => m.userId === person.userId) ? 'organisation' : projectPeople.some((m) => m.userId === person.userId) ? 'project' : null;
    return { ...person, conflict: conflictState(automatic, conflictRows.filter((r) => r.reviewerUserId === person.userId)) };
  });
  return {
    applicationId: app.id,
    status: app.status,
    rubric,
    reviews: rows,
    mine: rows.find((r) => r.reviewerUserId === staff.userId) ?? null,
    staff: staffState.map((p) => ({ userId: p.userId, name: p.name, roles: p.roles, assigned: rows.some((r) => r.reviewerUserId === p.userId), excluded: p.conflict.excluded, conflict: p.conflict.reason, overridden: p.conflict.overridden })),
    conflictLog: conflictRows.map((r) => ({ reviewerUserId: r.reviewerUserId, reviewerName: team.find((p) => p.userId === r.reviewerUserId)?.name ?? '', kind: r.kind, reason: r.reason, at: r.createdAt, byName: r.byName })),
  };
}

/** applicantReviews are the scored reviews of a decided application as its tenant reads them: scores and the comment, no reviewer. */
export async function applicantReviews(db: DbOrTx, applicationId: string) {
  return db
    .select({ id: reviewAssignments.id, scores: reviewAssignments.scores, commentToApplicant: reviewAssignments.commentToApplicant, scoredAt: reviewAssignments.scoredAt })
    .from(reviewAssignments)
    .innerJoin(applications, eq(applications.id, reviewAssignments.applicationId))
    .where(and(eq(reviewAssignments.applicationId, applicationId), eq(reviewAssignments.status, 'scored'), inArray(applications.status, ['approved', 'rejected', 'changes_requested'])))
    .orderBy(asc(reviewAssignments.scoredAt), asc(reviewAssignments.id));
}

/**
 * roundRanking is a round's ranking table (staff): its applications by mean score with the cut line at the
 * call's GPU-hours per round. Rows the viewer is excluded from keep their place and their GPU-hours (the line
 * depends on them) but show neither project, tenant nor scores.
 */
export async function roundRanking(db: DbOrTx, staff: Actor, roundId: string) {
  if (!isStaff(staff)) throw new AppError('NOT_FOUND', 'error.notFound');
  const [round] = await db
    .select({ id: callRounds.id, cutoffAt: callRounds.cutoffAt, status: callRounds.status, callId: calls.id, callTitle: calls.title, gpuSecondsPerRound: calls.gpuSecondsPerRound, rubric: calls.rubric, accessModeId: calls.accessModeId })
    .from(callRounds)
    .innerJoin(calls, eq(calls.id, callRounds.callId))
    .where(eq(callRounds.id, roundId));
  if (!round) throw new AppError('NOT_FOUND', 'error.notFound');
  const apps = await db
    .select({ id: applications.id, orgId: applications.orgId, projectId: applications.projectId, status: applications.status, submittedAt: applications.submittedAt, projectTitle: projects.title, orgName: organisations.name })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .innerJoin(organisations, eq(organisations.id, applications.orgId))
    .where(and(eq(applications.roundId, roundId), ne(applications.status, 'draft')));
  const ids = apps.map((a) => a.id);
  const [lines, reviews, ties, panel] = await Promise.all([
    ids.length ? db.select({ applicationId: applicationLines.applicationId, gpuSeconds: applicationLines.requestedGpuSeconds }).from(applicationLines).where(inArray(applicationLines.applicationId, ids)) : [],
    ids.length ? db.select({ applicationId: reviewAssignments.applicationId, status: reviewAssignments.status, scores: reviewAssignments.scores }).from(reviewAssignments).where(inArray(reviewAssignments.applicationId, ids)) : [],
    tiesOf(db, staff.userId, ids),
    db.select({ reviewerUserId: roundReviewers.reviewerUserId, name: users.name }).from(roundReviewers).innerJoin(users, eq(users.id, roundReviewers.reviewerUserId)).where(eq(roundReviewers.roundId, roundId)).orderBy(asc(users.name)),
  ]);
  const approvals = ids.length ? await db.select({ applicationId: decisions.applicationId, grantedLines: decisions.grantedLines }).from(decisions).where(and(inArray(decisions.applicationId, ids), eq(decisions.outcome, 'approved'))) : [];
  const rows = apps.map((a) => {
    const requested = lines.filter((l) => l.applicationId === a.id).reduce((s, l) => s + l.gpuSeconds, 0);
    const approved = approvals.filter((d) => d.applicationId === a.id).flatMap((d) => d.grantedLines ?? []).reduce((sum, l) => sum + l.gpuSeconds, 0);
    const scored = reviews.filter((r) => r.applicationId === a.id && r.status === 'scored' && r.scores).map((r) => r.scores!);
    return {
      ...a,
      status: a.status as 'submitted' | 'approved' | 'rejected' | 'changes_requested',
      submittedAt: a.submittedAt ?? new Date(0),
      requestedGpuSeconds: requested,
      gpuSeconds: a.status === 'approved' ? approved : requested,
      reviews: scored,
      assigned: reviews.filter((r) => r.applicationId === a.id && r.status !== 'declined').length,
      excluded: conflictOf(ties, a).excluded,
    };
  });
  const ranked = rankRound(rows, round.gpuSecondsPerRound);
  return {
    round: { id: round.id, cutoffAt: round.cutoffAt, status: round.status, callId: round.callId, callTitle: round.callTitle, gpuSecondsPerRound: round.gpuSecondsPerRound, rubric: round.rubric, accessModeId: round.accessModeId },
    panel,
    rows: ranked.map(({ row, rank, scoreHundredths, cumulativeGpuSeconds, aboveLine }) => ({
      rank,
      aboveLine,
      cumulativeGpuSeconds,
      gpuSeconds: row.gpuSeconds,
      requestedGpuSeconds: row.requestedGpuSeconds,
      status: row.status,
      excluded: row.excluded,
      // What the viewer may not see of an application they are excluded from.
      applicationId: row.excluded ? null : row.id,
      projectTitle: row.excluded ? null : row.projectTitle,
      orgName: row.excluded ? null : row.orgName,
      scoreHundredths: row.excluded ? null : scoreHundredths,
      scoredReviews: row.excluded ? null : row.reviews.length,
      assignedReviews: row.excluded ? null : row.assigned,
    })),
  };
}
