// Calls and rounds (issue #32): staff open a call of an access mode that takes requests in rounds, with
// its cut-offs and the GPU-hours per round; a submission joins the round whose cut-off is next
// (routeSubmission in ./applications.ts); the worker closes each round at its cut-off, assigns its panel
// its applications and tells the reviewers; only a closed round's applications are decided. Rules in server/core/calls.ts.
import { and, asc, count, eq, gte, inArray, lt, ne, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { accessModes, applications, callRounds, calls, users } from '~/db/schema';
import { checkCall, roundFor, type CallInput } from '~/server/core/calls';
import { DEFAULT_RUBRIC, rubricFromNames } from '~/server/core/reviews';
import { AppError } from '~/server/errors';
import { isStaff, type Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { notify } from '~/server/services/mail/notifications';
import { inTransaction } from '~/server/services/transaction';
import { assignPanelOnClose } from './reviews';

/** openCall opens a call with its rounds (admins), audited. */
export async function openCall(db: Db, staff: Actor, input: CallInput, now: Date) {
  if (!isStaff(staff, 'admin')) throw new AppError('FORBIDDEN', 'error.staffOnly');
  const [mode] = await db.select({ id: accessModes.id, intake: accessModes.intake }).from(accessModes).where(and(eq(accessModes.id, input.accessModeId), eq(accessModes.active, true)));
  if (!mode) throw new AppError('BAD_REQUEST', 'application.unknownMode', {}, 'accessModeId');
  const problem = checkCall(input, mode, now)[0];
  if (problem) throw new AppError('BAD_REQUEST', problem.key, 'params' in problem ? problem.params : {}, problem.field);
  const cutoffs = [...input.cutoffs].sort((a, b) => a.getTime() - b.getTime());
  // The criteria its reviewers score: those staff named (one per line), else the default rubric.
  const named = input.rubric?.length ? rubricFromNames(input.rubric) : { rubric: [...DEFAULT_RUBRIC] };
  if ('problem' in named) throw new AppError('BAD_REQUEST', named.problem.key, named.problem.params, named.problem.field);
  return inTransaction(db, async (tx) => {
    const [call] = await tx
      .insert(calls)
      .values({ accessModeId: mode.id, title: input.title.trim(), description: input.description.trim(), gpuSecondsPerRound: input.gpuHoursPerRound * 3600, rubric: named.rubric, createdBy: staff.userId, createdAt: now })
      .returning({ id: calls.id });
    const rounds = await tx
      .insert(callRounds)
      .values(cutoffs.map((cutoffAt) => ({ callId: call!.id, cutoffAt })))
      .returning({ id: callRounds.id, cutoffAt: callRounds.cutoffAt });
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: null,
      action: 'call.opened',
      targetType: 'call',
      targetId: call!.id,
      data: { accessModeId: mode.id, title: input.title.trim(), gpuHoursPerRound: input.gpuHoursPerRound, rubric: named.rubric.map((c) => c.name), cutoffs: cutoffs.map((c) => c.toISOString()) },
      isStaffAction: true,
    });
    return { id: call!.id, rounds };
  });
}

/** roundForSubmission is the round a request to `accessModeId` submitted at `now` joins, or null when no call has one open. */
export async function roundForSubmission(tx: DbOrTx, accessModeId: string, now: Date) {
  const rounds = await tx
    .select({ id: callRounds.id, cutoffAt: callRounds.cutoffAt, status: callRounds.status, callId: calls.id, callTitle: calls.title })
    .from(callRounds)
    .innerJoin(calls, eq(calls.id, callRounds.callId))
    .where(and(eq(calls.accessModeId, accessModeId), eq(callRounds.status, 'open'), gte(callRounds.cutoffAt, now)));
  return roundFor(rounds, now);
}

/**
 * requireClosedRound refuses a decision on an application whose round has not closed yet: a round's
 * applications are reviewed together after its cut-off.
 */
export async function requireClosedRound(tx: Tx, roundId: string | null) {
  if (!roundId) return;
  const [round] = await tx.select({ status: callRounds.status, cutoffAt: callRounds.cutoffAt }).from(callRounds).where(eq(callRounds.id, roundId));
  if (round && round.status !== 'closed') throw new AppError('PRECONDITION_FAILED', 'decision.roundOpen', { cutoff: round.cutoffAt.toISOString() });
}

/**
 * How long after its cut-off a round is closed: a submission that joined it at the cut-off commits first
 * (the tenant's transaction cannot lock the centre's round, so the close waits for it instead).
 */
export const ROUND_CLOSE_GRACE_MS = 10_000;

/**
 * closeDueRounds closes every open round whose cut-off passed more than ROUND_CLOSE_GRACE_MS ago (the
 * worker, every 5 s): each in its own transaction, once however many processes try (the row is locked and
 * re-read), audited, and the reviewers told how many applications wait. Returns the rounds it closed.
 */
export async function closeDueRounds(db: Db, now: Date) {
  const due = await db
    .select({ id: callRounds.id })
    .from(callRounds)
    .where(and(eq(callRounds.status, 'open'), lt(callRounds.cutoffAt, new Date(now.getTime() - ROUND_CLOSE_GRACE_MS))))
    .orderBy(asc(callRounds.cutoffAt));
  const closed: { id: string; callId: string; applications: number }[] = [];
  for (const { id } of due) {
    const done = await inTransaction(db, async (tx) => {
      const [round] = await tx.select({ status: callRounds.status, callId: callRounds.callId, cutoffAt: callRounds.cutoffAt }).from(callRounds).where(eq(callRounds.id, id)).for('update');
      if (!round || round.status !== 'open') return null;
      await tx.update(callRounds).set({ status: 'closed', closedAt: now }).where(eq(callRounds.id, id));
      const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(applications).where(and(eq(applications.roundId, id), eq(applications.status, 'submitted')));
      const [call] = await tx.select({ title: calls.title }).from(calls).where(eq(calls.id, round.callId));
      // The round's panel is assigned its applications now that they are known.
      const panel = await assignPanelOnClose(tx, id, now);
      await recordAudit(tx, { actorUserId: null, orgId: null, action: 'call.round_closed', targetType: 'call_round', targetId: id, data: { callId: round.callId, cutoffAt: round.cutoffAt.toISOString(), applications: n, ...panel } });
      if (n > 0) {
        // Who is staff is out of a tenant's reach except through this function (drizzle/0018).
        const reviewers = await tx.select({ userId: users.id }).from(users).where(sql`${users.id} in (select portal_staff_ids())`);
        await notify(tx, reviewers.map((r) => r.userId), 'notice.roundClosed', { call: call!.title, count: n }, `/staff/applications?round=${id}`);
      }
      return { id, callId: round.callId, applications: n };
    });
    if (done) closed.push(done);
  }
  return closed;
}

/** listCalls lists the calls, newest first, each with its rounds and how many applications each round holds. */
export async function listCalls(db: DbOrTx) {
  const rows = await db
    .select({ id: calls.id, accessModeId: calls.accessModeId, modeName: accessModes.name, title: calls.title, description: calls.description, gpuSecondsPerRound: calls.gpuSecondsPerRound, rubric: calls.rubric, createdAt: calls.createdAt })
    .from(calls)
    .innerJoin(accessModes, eq(accessModes.id, calls.accessModeId))
    .orderBy(sql`${calls.createdAt} desc`);
  if (!rows.length) return [];
  const rounds = await db
    .select({ id: callRounds.id, callId: callRounds.callId, cutoffAt: callRounds.cutoffAt, status: callRounds.status, closedAt: callRounds.closedAt })
    .from(callRounds)
    .where(inArray(callRounds.callId, rows.map((r) => r.id)))
    .orderBy(asc(callRounds.cutoffAt));
  const held = rounds.length
    ? await db
        .select({ roundId: applications.roundId, n: count() })
        .from(applications)
        .where(and(inArray(applications.roundId, rounds.map((r) => r.id)), ne(applications.status, 'draft')))
        .groupBy(applications.roundId)
    : [];
  const applicationsIn = (roundId: string) => held.find((h) => h.roundId === roundId)?.n ?? 0;
  return rows.map((call) => ({ ...call, rounds: rounds.filter((r) => r.callId === call.id).map(({ callId: _, ...r }) => ({ ...r, applications: applicationsIn(r.id) })) }));
}
