// Extending a session (issue #28): more time for a running (or waiting) notebook, within the class's and
// the allocation's walltime limits, reserved from the budget like a job's own time.
//
// 1. After the request's transaction, under the lock order (organisation, allocation, job): the session's
//    new limit is admitted, the added time's cost reserved (ledger: a reserve of extension n, with the
//    company's cap and project and person budgets checked as at submission) and the job's limit and
//    reservation raised.
// 2. After the commit the scheduler raises the job's time limit (SchedulerPort.extendTimeLimit).
// 3. If it did not (the session ended on the way, the scheduler refused or is down), the extension is
//    taken back: its reserve released and the limit lowered again, in one transaction. The job's own
//    settlement releases every extension it still holds with its reservation (ledger.ts jobReservation).
//
// A crash between 2 and 3 leaves the budget reserved until the session ends: never too little.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { jobEvents, jobs, ledgerEntries } from '~/db/schema';
import { jobReservation } from '~/server/core/jobs/estimates';
import { isSchedulerRefused, isSchedulerUnavailable } from '~/server/core/scheduler/port';
import { configuredCatalogue } from '~/server/catalogue';
import { AppError } from '~/server/errors';
import { logger } from '~/server/observability/log';
import type { TenantActor } from '~/server/services/actor';
import { alertSpending, checkSpendingLimits, spendingFigures, spendingLimitsOf } from '~/server/services/billing/spending-limits';
import { lockAllocation, lockOrganisation, monthSpendCents, releaseExtensionInTx, reserveOnLocked } from '~/server/services/ledger/ledger';
import { inTransaction, stepAfterCommit, type SchedulerStep } from '~/server/services/transaction';

export interface ExtendSessionInput {
  jobId: string;
  /** The time to add, in seconds (whole minutes). */
  addSeconds: number;
}

export interface ExtendedSession {
  id: string;
  walltimeSeconds: number;
  /** What the added time holds of the budget, in the allocation's unit. */
  reserved: number;
}

/** hours as the refusals show them (one decimal). */
const hours = (seconds: number) => Math.round(seconds / 360) / 10;

/**
 * extendSession adds time to one of the person's own sessions that has not ended: the session's new
 * limit may not pass its class's or its allocation's longest walltime, and the added time must fit the
 * budget (refusals name `minutes`). Another's session, or no session: NOT_FOUND.
 */
export async function extendSession(db: Db, step: SchedulerStep, actor: TenantActor, input: ExtendSessionInput, now: Date): Promise<ExtendedSession> {
  const today = now.toISOString().slice(0, 10);
  // Whose session it is is read as the tenant (the request's transaction, behind row-level security);
  // the rest runs on the portal's own connection after it, as the scheduler's steps do.
  const [target] = await db
    .select({ allocationId: jobs.allocationId, unit: jobs.reservedUnit })
    .from(jobs)
    .where(and(eq(jobs.id, input.jobId), eq(jobs.orgId, actor.org.id), eq(jobs.userId, actor.userId), eq(jobs.kind, 'interactive')));
  if (!target) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'jobId');
  const after = await stepAfterCommit(db, step);
  const held = await inTransaction(after.db, async (tx) => {
    // The lock order: organisation, allocation, then the job.
    const org = await lockOrganisation(tx, actor.org.id, target.unit);
    const allocation = await lockAllocation(tx, target.allocationId);
    const [job] = await tx.select().from(jobs).where(eq(jobs.id, input.jobId)).for('no key update');
    if (!job) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'jobId');
    // A session being handed over right now is extended once it is queued (its hand-over carries the old limit).
    if (job.settledAt || job.cancelRequestedAt || (job.state !== 'PENDING' && job.state !== 'RUNNING')) {
      throw new AppError('PRECONDITION_FAILED', 'session.notExtendable', { state: job.state }, 'jobId');
    }
    const walltimeSeconds = job.walltimeSeconds + input.addSeconds;
    const rc = configuredCatalogue().resourceClasses.find((c) => c.id === job.resourceClassId);
    if (rc && walltimeSeconds > rc.maxWalltimeSeconds) {
      throw new AppError('BAD_REQUEST', 'session.extendOverClass', { requested: hours(walltimeSeconds), max: hours(rc.maxWalltimeSeconds), left: hours(Math.max(0, rc.maxWalltimeSeconds - job.walltimeSeconds)) }, 'minutes');
    }
    if (allocation.maxWalltimeSeconds !== null && walltimeSeconds > allocation.maxWalltimeSeconds) {
      throw new AppError('PRECONDITION_FAILED', 'session.extendOverAllocation', { requested: hours(walltimeSeconds), max: hours(allocation.maxWalltimeSeconds), left: hours(Math.max(0, allocation.maxWalltimeSeconds - job.walltimeSeconds)) }, 'minutes');
    }
    const price = { unit: job.reservedUnit, gpus: job.gpus, centsPerGpuHour: job.centsPerGpuHour };
    const amount = jobReservation({ ...price, walltimeSeconds }) - jobReservation({ ...price, walltimeSeconds: job.walltimeSeconds });
    const [last] = await tx
      .select({ n: sql<number>`coalesce(max(${ledgerEntries.extension}), 0)`.mapWith(Number) })
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.jobId, job.id), eq(ledgerEntries.kind, 'reserve')));
    const extension = (last?.n ?? 0) + 1;
    if (amount > 0) {
      // A credit line's time must also fit the company's project and person budgets, as at submission.
      if (job.reservedUnit === 'cents') {
        const figures = await spendingFigures(tx, { orgId: org.id, projectId: job.projectId, userId: job.userId, today });
        const spent = org.monthlyCapCents !== null ? await monthSpendCents(tx, org.id, today) : null;
        const limits = spendingLimitsOf(figures, { capCents: org.monthlyCapCents, spentCents: spent });
        checkSpendingLimits(limits, amount);
        await reserveOnLocked(tx, org, allocation, { allocationId: allocation.id, orgId: org.id, jobId: job.id, amount, actorUserId: actor.userId, today, at: now, extension });
        await alertSpending(tx, { orgId: org.id, projectId: job.projectId, userId: job.userId, today, amountCents: amount, limits });
      } else {
        await reserveOnLocked(tx, org, allocation, { allocationId: allocation.id, orgId: org.id, jobId: job.id, amount, actorUserId: actor.userId, today, at: now, extension });
      }
    }
    await tx
      .update(jobs)
      .set({ walltimeSeconds, reservedAmount: sql`${jobs.reservedAmount} + ${amount}`, updatedAt: now })
      .where(eq(jobs.id, job.id));
    return { job, walltimeSeconds, amount, extension };
  });

  const { job, walltimeSeconds, amount, extension } = held;
  let failure: AppError | null = null;
  try {
    if (!after.scheduler.extendTimeLimit) failure = new AppError('PRECONDITION_FAILED', 'session.extendNotOffered', {}, 'jobId');
    else if (!(await after.scheduler.extendTimeLimit(job.id, walltimeSeconds))) failure = new AppError('PRECONDITION_FAILED', 'session.endedMeanwhile', {}, 'jobId');
  } catch (error) {
    if (isSchedulerRefused(error)) failure = new AppError('PRECONDITION_FAILED', 'session.extendRefused', { reason: error.message }, 'minutes');
    else if (isSchedulerUnavailable(error)) failure = new AppError('SERVICE_UNAVAILABLE', 'session.extendUnavailable', {}, 'jobId');
    else throw error;
  }
  if (failure) {
    logger().warn({ jobId: job.id, err: failure }, 'the session was not extended; the extension is taken back');
    await inTransaction(after.db, async (tx) => {
      // (Settled meanwhile: the job's release took the extension back with its reservation; nothing is left to release.)
      const { released } = amount > 0 ? await releaseExtensionInTx(tx, { jobId: job.id, extension, reason: 'the scheduler did not extend the session' }) : { released: 0 };
      if (released > 0) await tx.update(jobs).set({ reservedAmount: sql`${jobs.reservedAmount} - ${released}` }).where(eq(jobs.id, job.id));
      // The limit goes back only if no later extension raised it further meanwhile.
      await tx
        .update(jobs)
        .set({ walltimeSeconds: job.walltimeSeconds, updatedAt: now })
        .where(and(eq(jobs.id, job.id), eq(jobs.walltimeSeconds, walltimeSeconds)));
    });
    throw failure;
  }
  await after.db.insert(jobEvents).values({ jobId: job.id, at: now, state: job.state, message: 'session.event.extended', data: { hours: hours(input.addSeconds), total: hours(walltimeSeconds), by: actor.name } });
  return { id: job.id, walltimeSeconds, reserved: amount };
}
