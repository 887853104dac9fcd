// The reconciler keeps job records and their event history in step with the scheduler, and settles
// the ledger exactly once when a job ends. The scheduler is the source of truth for what happened;
// the portal owns the record. One round is idempotent: running it twice, or after a crash, is safe.
import { endIdleSessions } from '~/server/services/sessions/idle';
import { and, eq, getTableColumns, inArray, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '~/db/client';
import { clusterSamples, jobEvents, jobs, jobTasks, sites } from '~/db/schema';
import { chargeFor } from '~/server/core/jobs/estimates';
import { exitStatus } from '~/server/core/jobs/exit-status';
import { notBeforeSubmission } from '~/server/core/jobs/run-times';
import { jobFootprint } from '~/server/core/usage/footprint';
import { translate } from '~/server/i18n';
import { exitWording } from '~/server/i18n/exit-wording';
import { formatEuros, formatGpuHours } from '~/server/i18n/format';
import { isFinalState, isSchedulerUnavailable, type SchedulerJobStatus, type SchedulerPort, type SchedulerTaskStatus } from '~/server/core/scheduler/port';
import { chargeReleasedJobInTx, lockAllocations, settleJobInTx, settleTaskInTx } from '~/server/services/ledger/ledger';
import { cancelSubmitting, claimHandover, handToScheduler } from './jobs';
import { unmarkHandover } from './handovers-here';
import { mailPeople, portalLink } from '~/server/services/mail/notifications';
import { inTransaction } from '~/server/services/transaction';
import { addToRollups, rollupParts, waitPart, type RollupRow, type WaitPart } from '~/server/services/usage/usage';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { jobDirOf, workspaceOf, type SiteRoots } from '~/server/services/files/workspace';
import { logger } from '~/server/observability/log';

type JobRow = typeof jobs.$inferSelect;
/** What following and settling a job needs (not the script, image or environment). */
type OpenJob = Omit<JobRow, 'command' | 'env' | 'image' | 'estimate' | 'simulation'>;

const { command: _command, env: _env, image: _image, estimate: _estimate, simulation: _simulation, ...openJobColumns } = getTableColumns(jobs);

/** Jobs asked of the scheduler at once. */
const STATUS_BATCH = 1000;
/** Jobs settled in one transaction: bounded, so one round never holds locks for long. */
const SETTLE_BATCH = 100;
/** Hand-overs retried per round. */
const HANDOVER_BATCH = 200;

export interface ReconcileOptions {
  /** Follow only the jobs of these sites (one cluster of several, server/adapters/scheduler/router.ts); unset: every job. */
  sites?: readonly string[] | null;
  /** Where the sites' workspaces lie (jobs' output folders); unset: the process's (server/services/files/roots.ts). */
  roots?: SiteRoots;
}

export interface RoundResult {
  submitted: number;
  updated: number;
  settled: number;
  /**
   * Whether the scheduler answered this round: null when it did, the error when it did not (the round
   * then stops asking it; jobs wait, nothing is settled without the scheduler's final record), undefined
   * when it was not asked (nothing open).
   */
  schedulerError?: unknown;
}

/** settleFinishedJob freezes a finished job's usage, energy and cost on its record and settles the ledger, once. */
export async function settleFinishedJob(db: Db, job: OpenJob, status: SchedulerJobStatus, now: Date): Promise<boolean> {
  return (await settleBatch(db, [{ job, status }], now)) === 1;
}

/**
 * settleBatch settles finished jobs in one transaction. Locks follow the lock order: the allocations
 * first, in id order; then each job, in id order; the batch's rollup rows last, in key order, so two
 * batches never wait on each other in a cycle.
 */
async function settleBatch(db: Db, items: { job: OpenJob; status: SchedulerJobStatus }[], now: Date): Promise<number> {
  if (items.length === 0) return 0;
  const sorted = [...items].sort((a, b) => (a.job.id < b.job.id ? -1 : a.job.id > b.job.id ? 1 : 0));
  return inTransaction(db, async (tx) => {
    await lockAllocations(tx, sorted.map((i) => i.job.allocationId));
    const siteIds = [...new Set(sorted.map((i) => i.job.siteId))];
    const siteRows = await tx
      .select({ id: sites.id, pueMilli: sites.pueMilli, heatReusePermille: sites.heatReusePermille, gridGco2PerKwh: sites.gridGco2PerKwh })
      .from(sites)
      .where(inArray(sites.id, siteIds));
    const siteById = new Map(siteRows.map((r) => [r.id, r]));
    const parts: RollupRow[] = [];
    const waits: WaitPart[] = [];
    const done: { job: OpenJob; status: SchedulerJobStatus }[] = [];
    for (const { job, status } of sorted) {
      const settled = await settleInTx(tx, job, status, siteById.get(job.siteId)!, now);
      if (!settled) continue;
      parts.push(...settled.parts);
      if (settled.wait) waits.push(settled.wait);
      done.push({ job, status });
    }
    await addToRollups(tx, parts, waits);
    await mailFinishedJobs(tx, done);
    return done.length;
  });
}

type SiteFigures = Parameters<typeof jobFootprint>[1];

/**
 * mailFinishedJobs mails the submitters who asked for it (job_finished is opt-in) that their jobs ended,
 * in the settling transaction: one statement reads the batch's submitters and their choice. No bell
 * notice: a busy group's bell would fill with one per job; the job list shows them.
 */
async function mailFinishedJobs(tx: Tx, done: readonly { job: OpenJob; status: SchedulerJobStatus }[]): Promise<void> {
  await mailPeople(
    tx,
    'job_finished',
    done.map(({ job, status }) => ({
      userId: job.userId,
      orgId: job.orgId,
      dedupeKey: `job:${job.id}`,
      content: (reader) => {
        const exit = exitWording(exitStatus(status.exitCode, status.signal));
        const params = {
          name: job.name,
          state: translate(reader.locale, `jobState.${status.state}`),
          // The same figures, formatted the same way, as the job page shows once the job is settled.
          gpuHours: formatGpuHours(reader.locale, status.gpuSeconds),
          cost: formatEuros(reader.locale, chargesOf(job, status).costCents),
          // How it ended, in the words and figures the job page uses.
          exit: translate(reader.locale, exit.key, exit.params),
        };
        return {
          subject: ['mail.jobFinished.subject', params],
          paragraphs: [['mail.greeting', { name: reader.name }], [status.state === 'COMPLETED' ? 'mail.jobFinished.completed' : 'mail.jobFinished.ended', params]],
          action: { label: ['mail.jobFinished.action'], url: portalLink(`/jobs/${job.id}`) },
        };
      },
    })),
  );
}

function endOf(status: SchedulerJobStatus, now: Date): Date {
  return status.endedAt ?? now;
}

/**
 * chargesOf is what a finished job costs (cents) and is charged (its allocation's unit): a job array task
 * by task, its cost the sum of its tasks' (each rounded as one job's), as the ledger charges them.
 */
function chargesOf(job: Pick<OpenJob, 'arrayTasks' | 'reservedUnit' | 'centsPerGpuHour'>, status: SchedulerJobStatus): { costCents: number; charged: number } {
  const parts = job.arrayTasks !== null ? (status.tasks ?? []).map((t) => t.gpuSeconds) : [status.gpuSeconds];
  return {
    costCents: parts.reduce((sum, gpuSeconds) => sum + chargeFor({ unit: 'cents', gpuSeconds, centsPerGpuHour: job.centsPerGpuHour }), 0),
    charged: parts.reduce((sum, gpuSeconds) => sum + chargeFor({ unit: job.reservedUnit, gpuSeconds, centsPerGpuHour: job.centsPerGpuHour }), 0),
  };
}

/** settleInTx settles one job; returns its rollup rows and its wait, or null when it was settled already. */
async function settleInTx(tx: Tx, job: OpenJob, status: SchedulerJobStatus, site: SiteFigures, now: Date): Promise<{ parts: RollupRow[]; wait: WaitPart | null } | null> {
  const array = job.arrayTasks !== null;
  const { costCents, charged } = chargesOf(job, status);
  // Tasks that ended since the last round are settled first, each once (the job's row is locked by them).
  const tasksEnded = array ? await settleTasksInTx(tx, job, status.tasks ?? [], now) : null;
  const endedAt = endOf(status, now);
  // A start the portal saw is kept when the final report has none (Slurm reported a service stopped within
  // its first second without a start time, and the job lost it: 0 GPU-seconds, no run on its page).
  const startedAt = status.startedAt ?? job.startedAt;
  const waitSeconds = startedAt ? Math.max(0, Math.round((startedAt.getTime() - job.submittedAt.getTime()) / 1000)) : null;
  const footprint = jobFootprint(status.energyWh, site);
  const done = await tx
    .update(jobs)
    .set({
      state: status.state,
      pendingReason: null,
      startedAt,
      endedAt,
      waitSeconds,
      ...footprint,
      exitCode: status.exitCode,
      exitSignal: status.signal,
      nodeList: status.nodeList,
      gpuSeconds: status.gpuSeconds,
      energyWh: status.energyWh,
      energyMeasured: status.energyMeasured,
      costCents,
      chargedAmount: charged,
      handoverUntil: null,
      ...(tasksEnded !== null ? { tasksRunning: 0, tasksEnded } : {}),
      settledAt: now,
      updatedAt: now,
    })
    .where(and(eq(jobs.id, job.id), isNull(jobs.settledAt)))
    .returning({ id: jobs.id });
  if (done.length === 0) return null;
  const events: (typeof jobEvents.$inferInsert)[] = [];
  // A requeued job's earlier attempts: each ended (a node failed…), was charged what it ran, and the job ran again.
  for (const attempt of status.earlierAttempts ?? []) {
    events.push({ jobId: job.id, at: attempt.endedAt ?? endedAt, state: attempt.state, message: 'job.event.requeued', data: { gpuSeconds: attempt.gpuSeconds } });
  }
  if (status.startedAt && !job.startedAt) events.push({ jobId: job.id, at: status.startedAt, state: 'RUNNING', message: 'job.event.started', data: { nodes: status.nodeList } });
  events.push({ jobId: job.id, at: endedAt, state: status.state, message: 'job.event.finished', data: { exitCode: status.exitCode, exitSignal: status.signal } });
  events.push({ jobId: job.id, at: now, state: status.state, message: 'job.event.settled', data: { gpuSeconds: status.gpuSeconds, charged, unit: job.reservedUnit, costCents, energyWh: status.energyWh } });
  await tx.insert(jobEvents).values(events);
  const settled = await settleJobInTx(tx, { jobId: job.id, actualAmount: charged, at: endedAt, array });
  // Released earlier (queued at expiry, then started before the cancel arrived): still charge what ran.
  if (!settled.settled) await chargeReleasedJobInTx(tx, { jobId: job.id, amount: charged, at: endedAt, array });
  const usage = { ...job, startedAt, endedAt, gpuSeconds: status.gpuSeconds, waitSeconds, costCents, energyWh: status.energyWh, ...footprint };
  return { parts: rollupParts(usage), wait: waitPart(usage) };
}

/**
 * settleTasksInTx stores a job array's ended tasks and settles each once (its usage charged, its share of
 * the reservation released), then the job's counts of tasks running and ended, which its allocation's
 * figures in flight follow (drizzle/0049). The caller holds the allocation's lock; the job's row and then
 * its task rows are locked here, in that order. Returns how many tasks have ended (settled) in all.
 */
async function settleTasksInTx(tx: Tx, job: OpenJob, tasks: readonly SchedulerTaskStatus[], now: Date): Promise<number> {
  await tx.select({ id: jobs.id }).from(jobs).where(eq(jobs.id, job.id)).for('no key update');
  const ended = tasks.filter((t) => isFinalState(t.state));
  const share = Math.floor(job.reservedAmount / job.arrayTasks!);
  if (ended.length) {
    const at = now;
    const values = ended.map((t) => ({
      jobId: job.id,
      taskIndex: t.index,
      schedulerJobId: t.schedulerJobId,
      state: t.state,
      startedAt: t.startedAt,
      endedAt: t.endedAt,
      exitCode: t.exitCode,
      exitSignal: t.signal,
      nodeList: t.nodeList,
      gpuSeconds: t.gpuSeconds,
      energyWh: t.energyWh,
      chargedAmount: chargeFor({ unit: job.reservedUnit, gpuSeconds: t.gpuSeconds, centsPerGpuHour: job.centsPerGpuHour }),
      costCents: chargeFor({ unit: 'cents', gpuSeconds: t.gpuSeconds, centsPerGpuHour: job.centsPerGpuHour }),
      settledAt: at,
      updatedAt: at,
    }));
    // Only tasks not settled before come back: each is settled once, however often it is reported.
    const settledNow = await tx
      .insert(jobTasks)
      .values(values)
      .onConflictDoUpdate({ target: [jobTasks.jobId, jobTasks.taskIndex], set: excludedColumns(Object.keys(values[0]!).filter((c) => c !== 'jobId' && c !== 'taskIndex')), setWhere: isNull(jobTasks.settledAt) })
      .returning({ taskIndex: jobTasks.taskIndex, chargedAmount: jobTasks.chargedAmount, endedAt: jobTasks.endedAt });
    settledNow.sort((a, b) => a.taskIndex - b.taskIndex);
    for (const t of settledNow) {
      await settleTaskInTx(tx, { allocationId: job.allocationId, jobId: job.id, taskIndex: t.taskIndex, share, actualAmount: t.chargedAmount ?? 0, at: t.endedAt ?? now });
    }
  }
  const [counted] = await tx
    .select({ ended: sql<number>`count(*) filter (where ${jobTasks.settledAt} is not null)`.mapWith(Number) })
    .from(jobTasks)
    .where(eq(jobTasks.jobId, job.id));
  return counted?.ended ?? 0;
}

/** An upsert's `set` taking these job_tasks columns from the row it tried to insert. */
function excludedColumns(columns: string[]): Record<string, SQL> {
  const byKey = getTableColumns(jobTasks) as Record<string, { name: string }>;
  return Object.fromEntries(columns.map((c) => [c, sql.raw(`excluded.${byKey[c]!.name}`)]));
}

/**
 * followArrayTasks keeps a job array's tasks in step while it runs: tasks that started appear (and
 * their usage so far follows), ended tasks are settled one by one, and the job's counts of tasks
 * running and ended move with them. Nothing changes for a round that reports nothing new.
 */
async function followArrayTasks(db: Db, job: OpenJob, status: SchedulerJobStatus, known: Map<number, TaskSeen>, now: Date): Promise<void> {
  const tasks = status.tasks ?? [];
  const running = tasks.filter((t) => t.state === 'RUNNING').length;
  const ended = tasks.filter((t) => isFinalState(t.state) && !known.get(t.index)?.settled);
  const live = tasks.filter((t) => !isFinalState(t.state) && taskChanged(known.get(t.index), t));
  if (live.length) {
    const values = live.map((t) => ({
      jobId: job.id,
      taskIndex: t.index,
      schedulerJobId: t.schedulerJobId,
      state: t.state,
      startedAt: t.startedAt,
      nodeList: t.nodeList,
      gpuSeconds: t.gpuSeconds,
      energyWh: t.energyWh,
      updatedAt: now,
    }));
    await db
      .insert(jobTasks)
      .values(values)
      .onConflictDoUpdate({ target: [jobTasks.jobId, jobTasks.taskIndex], set: excludedColumns(['schedulerJobId', 'state', 'startedAt', 'nodeList', 'gpuSeconds', 'energyWh', 'updatedAt']), setWhere: isNull(jobTasks.settledAt) });
  }
  if (ended.length === 0 && running === job.tasksRunning) return;
  await inTransaction(db, async (tx) => {
    await lockAllocations(tx, [job.allocationId]);
    const endedCount = await settleTasksInTx(tx, job, ended, now);
    await tx
      .update(jobs)
      .set({ tasksRunning: Math.min(running, job.arrayTasks! - endedCount), tasksEnded: endedCount, updatedAt: now })
      .where(and(eq(jobs.id, job.id), isNull(jobs.settledAt)));
  });
}

/** What the portal holds of a task already: its state and usage, and whether it was settled. */
interface TaskSeen {
  state: (typeof jobTasks.$inferSelect)['state'];
  gpuSeconds: number;
  settled: boolean;
}

function taskChanged(seen: TaskSeen | undefined, t: SchedulerTaskStatus): boolean {
  return !seen || (!seen.settled && (seen.state !== t.state || seen.gpuSeconds !== t.gpuSeconds));
}

/** tasksSeen reads what the portal holds of these job arrays' tasks, by job. */
async function tasksSeen(db: Db, jobIds: string[]): Promise<Map<string, Map<number, TaskSeen>>> {
  const byJob = new Map<string, Map<number, TaskSeen>>(jobIds.map((id) => [id, new Map()]));
  if (jobIds.length === 0) return byJob;
  const rows = await db
    .select({ jobId: jobTasks.jobId, index: jobTasks.taskIndex, state: jobTasks.state, gpuSeconds: jobTasks.gpuSeconds, settledAt: jobTasks.settledAt })
    .from(jobTasks)
    .where(inArray(jobTasks.jobId, jobIds));
  for (const r of rows) byJob.get(r.jobId)!.set(r.index, { state: r.state, gpuSeconds: r.gpuSeconds, settled: r.settledAt !== null });
  return byJob;
}

/**
 * A job that ran and waits again was requeued by the scheduler (a node failed, it was preempted): it
 * waits "requeued", not for the begin time Slurm gives a requeued job, until it runs again.
 */
function asRequeued(job: OpenJob, status: SchedulerJobStatus): SchedulerJobStatus {
  // (A job array waits between its tasks as it runs: summariseArray says when one of its tasks was requeued.)
  if (job.arrayTasks !== null) return status;
  const requeued = status.state === 'PENDING' && (job.state === 'RUNNING' || job.pendingReason === 'Requeued');
  return requeued ? { ...status, pendingReason: 'Requeued' } : status;
}

/** The scheduler's reason for a job whose dependency can never be met (Slurm keeps it pending for ever). */
const NEVER_SATISFIED = 'DependencyNeverSatisfied';

function liveChange(job: OpenJob, status: SchedulerJobStatus) {
  const stateChanged = status.state !== job.state;
  const reasonChanged = status.pendingReason !== job.pendingReason && status.state === 'PENDING';
  const usageChanged = status.state === 'RUNNING' && (status.gpuSeconds !== job.gpuSeconds || status.energyWh !== job.energyWh);
  return { stateChanged, reasonChanged, any: stateChanged || reasonChanged || usageChanged };
}

/**
 * applyLiveStatuses stores the states, pending reasons and usage so far of jobs still open: one
 * transaction and one UPDATE for the whole batch (after locking the rows in id order), and their events.
 */
async function applyLiveStatuses(db: Db, items: { job: OpenJob; status: SchedulerJobStatus }[], now: Date): Promise<number> {
  const changed = items.filter((i) => liveChange(i.job, i.status).any).sort((a, b) => (a.job.id < b.job.id ? -1 : 1));
  if (changed.length === 0) return 0;
  const events: { job_id: string; at: string; state: string; message: string; data: Record<string, unknown> }[] = [];
  const rows = changed.map(({ job, status }) => {
    const change = liveChange(job, status);
    if (change.stateChanged && status.state === 'RUNNING') {
      events.push({ job_id: job.id, at: (status.startedAt ?? now).toISOString(), state: 'RUNNING', message: 'job.event.started', data: { nodes: status.nodeList } });
    } else if (change.reasonChanged && status.pendingReason === NEVER_SATISFIED) {
      // It can never start: the portal cancels it (step 2 of the next round), nothing is charged.
      events.push({ job_id: job.id, at: now.toISOString(), state: 'PENDING', message: 'job.event.dependencyNeverSatisfied', data: { type: job.dependency?.type ?? '' } });
    } else if (change.reasonChanged && status.pendingReason) {
      events.push({ job_id: job.id, at: now.toISOString(), state: 'PENDING', message: 'job.event.pendingReason', data: { reason: status.pendingReason } });
    }
    return {
      id: job.id,
      state: status.state,
      pending_reason: job.pendingReason === 'AllocationExpired' ? job.pendingReason : status.pendingReason,
      started_at: status.startedAt?.toISOString() ?? null,
      node_list: status.nodeList,
      gpu_seconds: status.gpuSeconds,
      energy_wh: status.energyWh,
      energy_measured: status.energyMeasured,
      scheduler_job_id: status.schedulerJobId,
    };
  });
  const ids = changed.map((c) => c.job.id);
  // A start or a requeue moves a job out of or into its allocation's queued count, which the update's
  // trigger adjusts (allocations.queued_jobs, drizzle/0042): those allocations are locked first, in id
  // order, before the job rows (the lock order), so a submission or settlement holding one never waits
  // for this batch's job rows while the batch waits for its allocation.
  const moved = changed.filter((c) => liveChange(c.job, c.status).stateChanged).map((c) => c.job.allocationId);
  // The batch travels as one JSON parameter: one statement for a thousand jobs, on both drivers.
  await inTransaction(db, async (tx) => {
    await lockAllocations(tx, moved);
    await tx.select({ id: jobs.id }).from(jobs).where(inArray(jobs.id, ids)).orderBy(jobs.id).for('no key update');
    await tx.execute(sql`
      update ${jobs} set state = v.state, pending_reason = v.pending_reason, started_at = v.started_at, node_list = v.node_list,
             gpu_seconds = v.gpu_seconds, energy_wh = v.energy_wh, energy_measured = v.energy_measured,
             scheduler_job_id = v.scheduler_job_id, updated_at = ${now.toISOString()}::timestamptz,
             cancel_requested_at = case when v.pending_reason = ${NEVER_SATISFIED} then coalesce(${jobs.cancelRequestedAt}, ${now.toISOString()}::timestamptz) else ${jobs.cancelRequestedAt} end
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
           as v(id uuid, state job_state, pending_reason text, started_at timestamptz, node_list jsonb, gpu_seconds bigint,
                energy_wh bigint, energy_measured boolean, scheduler_job_id text)
      where ${jobs.id} = v.id and ${jobs.settledAt} is null`);
    if (events.length) {
      await tx.execute(sql`
        insert into ${jobEvents} (job_id, at, state, message, data)
        select e.job_id, e.at, e.state, e.message, e.data
        from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as e(job_id uuid, at timestamptz, state job_state, message text, data jsonb)`);
    }
  });
  return changed.length;
}

/**
 * reconcileOnce runs one round: retries hand-overs (each under its lease), forwards cancellations,
 * asks the scheduler for every open job in large batches, stores what changed and settles finished
 * jobs in bounded batches.
 */
export async function reconcileOnce(db: Db, scheduler: SchedulerPort, now: Date, options: ReconcileOptions = {}): Promise<RoundResult> {
  const result: RoundResult = { submitted: 0, updated: 0, settled: 0 };
  const ofSites = options.sites ? inArray(jobs.siteId, [...options.sites]) : undefined;
  // 1. Jobs created but not yet at the scheduler (a crash or an outage between commit and hand-over),
  //    whose hand-over lease is free: the request that created a job holds it while it hands over.
  const unsubmitted = await db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.state, 'SUBMITTING'), isNull(jobs.settledAt), or(isNull(jobs.handoverUntil), lte(jobs.handoverUntil, now)), ofSites))
    .limit(HANDOVER_BATCH);
  for (const { id } of unsubmitted) {
    const job = await claimHandover(db, id, now);
    if (!job) continue;
    try {
      if (job.cancelRequestedAt) {
        try {
          await cancelSubmitting(db, scheduler, job, now);
        } catch (error) {
          // Nothing decided: the lease runs out and a later round tries again.
          if (!(isSchedulerUnavailable(error))) throw error;
          result.schedulerError = error;
        }
      } else if (await handToScheduler(db, scheduler, job, now)) result.submitted++; // null when it failed
    } finally {
      unmarkHandover(job.id);
    }
  }
  // Sessions idle for their time-out are asked to stop; the next step tells the scheduler.
  await endIdleSessions(db, scheduler, now, ofSites);
  try {
    await followScheduler(db, scheduler, now, result, ofSites, options.roots ?? configuredSiteRoots());
  } catch (error) {
    if (!(isSchedulerUnavailable(error))) throw error;
    result.schedulerError = error;
  }
  return result;
}

/** followScheduler forwards cancellations and follows every open job (steps 2 and 3 of a round). */
async function followScheduler(db: Db, scheduler: SchedulerPort, now: Date, result: RoundResult, ofSites: SQL | undefined, roots: SiteRoots): Promise<void> {
  // 2. Cancellations the scheduler may not have received yet (cancel is idempotent there); a service is stopped.
  const cancelling = await db
    .select({ id: jobs.id, kind: jobs.kind })
    .from(jobs)
    .where(and(isNotNull(jobs.cancelRequestedAt), isNull(jobs.settledAt), inArray(jobs.state, ['PENDING', 'RUNNING']), ofSites));
  for (const { id, kind } of cancelling) await scheduler.cancel(id, { stop: kind === 'inference' || kind === 'interactive' });
  // 3. Follow every open job.
  const open = await db
    .select(openJobColumns)
    .from(jobs)
    .where(and(isNull(jobs.settledAt), inArray(jobs.state, ['PENDING', 'RUNNING']), ofSites));
  for (let i = 0; i < open.length; i += STATUS_BATCH) {
    const batch = open.slice(i, i + STATUS_BATCH);
    const statuses = new Map((await scheduler.jobs(batch.map((j) => j.id))).map((s) => [s.portalJobId, s]));
    result.schedulerError = null;
    const finished: { job: OpenJob; status: SchedulerJobStatus }[] = [];
    const live: { job: OpenJob; status: SchedulerJobStatus }[] = [];
    const arrays = await tasksSeen(db, batch.filter((j) => j.arrayTasks !== null && statuses.has(j.id)).map((j) => j.id));
    for (const job of batch) {
      const reported = statuses.get(job.id);
      if (!reported) continue;
      // Never a start before the portal's own submission, whatever the scheduler's clock grain.
      const status = asRequeued(job, notBeforeSubmission(reported, job.submittedAt));
      // An array's tasks are followed (and settled as they end) before the array itself.
      const seen = arrays.get(job.id);
      if (seen && !isFinalState(status.state)) await followArrayTasks(db, job, status, seen, now);
      (isFinalState(status.state) ? finished : live).push({ job, status });
    }
    if (scheduler.writeOutput) await writeOutputs(db, scheduler, [...live, ...finished], roots, now);
    result.updated += await applyLiveStatuses(db, live, now);
    for (let k = 0; k < finished.length; k += SETTLE_BATCH) result.settled += await settleBatch(db, finished.slice(k, k + SETTLE_BATCH), now);
  }
}

/**
 * writeOutputs has the scheduler write its jobs' output files (the simulated cluster), each into its
 * folder in its project's workspace, before their statuses are stored: a finished job's last lines are
 * written before it is settled. A file that cannot be written is logged, never stops the round.
 */
async function writeOutputs(db: Db, scheduler: SchedulerPort, items: readonly { job: OpenJob; status: SchedulerJobStatus }[], roots: SiteRoots, now: Date): Promise<void> {
  const running = items.filter(({ status }) => status.startedAt !== null);
  if (!running.length) return;
  try {
    // The image names the model a fine-tuning job writes, the inputs what it reads (the open rows leave both out).
    const images = await db.select({ id: jobs.id, image: jobs.image, app: jobs.app, servedModel: jobs.servedModel, inputs: sql<string | null>`${jobs.env}->>'PORTAL_INPUTS'` }).from(jobs).where(inArray(jobs.id, running.map(({ job }) => job.id)));
    const kinds = new Map(images.map((r) => [r.id, r]));
    await scheduler.writeOutput!(
      running.flatMap(({ job, status }) => {
        const extra = kinds.get(job.id);
        if (!extra) return [];
        const workspace = workspaceOf(roots, job.siteId, job.projectId);
        const session = extra.app ? { app: extra.app, workspace: workspace.dir } : {};
        return [{ job: { jobId: job.id, workDir: jobDirOf(workspace, job.id), kind: job.kind, image: extra.image, gpus: job.gpus, arrayTasks: job.arrayTasks, ...(extra.inputs ? { inputs: extra.inputs.split(':') } : {}), ...session, ...(extra.servedModel ? { servedModel: extra.servedModel } : {}) }, status }];
      }),
      now,
    );
  } catch (error) {
    logger().error({ err: error }, "the jobs' output could not be written");
  }
}

/** recordClusterSample stores the cluster's load and power per partition, for the staff cluster page. */
export async function recordClusterSample(db: Db, scheduler: SchedulerPort, now: Date): Promise<void> {
  const cluster = await scheduler.describeCluster();
  const at = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const rows = cluster.partitions.map((p) => {
    const nodes = cluster.nodes.filter((n) => n.partition === p.name);
    return {
      at,
      partition: p.name,
      totalGpus: nodes.reduce((s, n) => s + n.gpus, 0),
      allocatedGpus: nodes.reduce((s, n) => s + n.allocatedGpus, 0),
      downGpus: nodes.filter((n) => n.state === 'down').reduce((s, n) => s + n.gpus, 0),
      powerW: Math.round(nodes.reduce((s, n) => s + n.powerW, 0)),
      pendingJobs: cluster.pendingJobs,
    };
  });
  if (rows.length) await db.insert(clusterSamples).values(rows).onConflictDoNothing();
  // Keep eight days of samples.
  await db.delete(clusterSamples).where(lt(clusterSamples.at, new Date(now.getTime() - 8 * 86_400_000)));
}
