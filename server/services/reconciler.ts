// The reconciler keeps job records and their event history in step with the scheduler, and settles
// the ledger exactly once when a job ends. The scheduler is the source of truth for what happened;
// the portal owns the record. One round is idempotent: running it twice, or after a crash, is safe.
import { and, eq, inArray, isNotNull, isNull, lt } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { clusterSamples, jobEvents, jobs, sites } from '~/db/schema';
import { chargeFor } from '~/server/core/jobs/estimates';
import { jobFootprint } from '~/server/core/usage/footprint';
import { isFinalState, type SchedulerJobStatus, type SchedulerPort } from '~/server/core/scheduler/port';
import { chargeReleasedJobInTx, settleJobInTx } from './ledger';
import { cancelSubmitting, handToScheduler } from './jobs';
import { addToRollup } from './usage';

type JobRow = typeof jobs.$inferSelect;

export interface RoundResult {
  submitted: number;
  updated: number;
  settled: number;
}

/** settleFinishedJob freezes a finished job's usage, energy and cost on its record and settles the ledger, once. */
export async function settleFinishedJob(db: Db, job: JobRow, status: SchedulerJobStatus, now: Date): Promise<boolean> {
  const costCents = chargeFor({ unit: 'cents', gpuSeconds: status.gpuSeconds, centsPerGpuHour: job.centsPerGpuHour });
  const charged = chargeFor({ unit: job.reservedUnit, gpuSeconds: status.gpuSeconds, centsPerGpuHour: job.centsPerGpuHour });
  const endedAt = status.endedAt ?? now;
  const waitSeconds = status.startedAt ? Math.max(0, Math.round((status.startedAt.getTime() - job.submittedAt.getTime()) / 1000)) : null;
  return db.transaction(async (tx) => {
    const [site] = await tx.select({ pueMilli: sites.pueMilli, heatReusePermille: sites.heatReusePermille, gridGco2PerKwh: sites.gridGco2PerKwh }).from(sites).where(eq(sites.id, job.siteId));
    const footprint = jobFootprint(status.energyWh, site!);
    const done = await tx
      .update(jobs)
      .set({
        state: status.state,
        pendingReason: null,
        startedAt: status.startedAt,
        endedAt,
        waitSeconds,
        ...footprint,
        exitCode: status.exitCode,
        nodeList: status.nodeList,
        gpuSeconds: status.gpuSeconds,
        energyWh: status.energyWh,
        energyMeasured: status.energyMeasured,
        costCents,
        chargedAmount: charged,
        settledAt: now,
        updatedAt: now,
      })
      .where(and(eq(jobs.id, job.id), isNull(jobs.settledAt)))
      .returning({ id: jobs.id });
    if (done.length === 0) return false;
    const events: (typeof jobEvents.$inferInsert)[] = [];
    if (status.startedAt && !job.startedAt) events.push({ jobId: job.id, at: status.startedAt, state: 'RUNNING', message: 'job.event.started', data: { nodes: status.nodeList } });
    events.push({ jobId: job.id, at: status.endedAt ?? now, state: status.state, message: 'job.event.finished', data: { exitCode: status.exitCode } });
    events.push({ jobId: job.id, at: now, state: status.state, message: 'job.event.settled', data: { gpuSeconds: status.gpuSeconds, charged, unit: job.reservedUnit, costCents, energyWh: status.energyWh } });
    await tx.insert(jobEvents).values(events);
    const settled = await settleJobInTx(tx, { jobId: job.id, actualAmount: charged, at: endedAt });
    // Released earlier (queued at expiry, then started before the cancel arrived): still charge what ran.
    if (!settled.settled) await chargeReleasedJobInTx(tx, { jobId: job.id, amount: charged, at: endedAt });
    await addToRollup(tx, { ...job, endedAt, gpuSeconds: status.gpuSeconds, waitSeconds, costCents, energyWh: status.energyWh, ...footprint });
    return true;
  });
}

async function applyLiveStatus(db: Db, job: JobRow, status: SchedulerJobStatus, now: Date): Promise<boolean> {
  const stateChanged = status.state !== job.state;
  const reasonChanged = status.pendingReason !== job.pendingReason && status.state === 'PENDING';
  const usageChanged = status.state === 'RUNNING' && (status.gpuSeconds !== job.gpuSeconds || status.energyWh !== job.energyWh);
  if (!stateChanged && !reasonChanged && !usageChanged) return false;
  await db.transaction(async (tx) => {
    await tx
      .update(jobs)
      .set({
        state: status.state,
        pendingReason: job.pendingReason === 'AllocationExpired' ? job.pendingReason : status.pendingReason,
        startedAt: status.startedAt,
        nodeList: status.nodeList,
        gpuSeconds: status.gpuSeconds,
        energyWh: status.energyWh,
        energyMeasured: status.energyMeasured,
        schedulerJobId: status.schedulerJobId,
        updatedAt: now,
      })
      .where(and(eq(jobs.id, job.id), isNull(jobs.settledAt)));
    if (stateChanged && status.state === 'RUNNING') {
      await tx.insert(jobEvents).values({ jobId: job.id, at: status.startedAt ?? now, state: 'RUNNING', message: 'job.event.started', data: { nodes: status.nodeList } });
    } else if (reasonChanged && status.pendingReason) {
      await tx.insert(jobEvents).values({ jobId: job.id, at: now, state: 'PENDING', message: 'job.event.pendingReason', data: { reason: status.pendingReason } });
    }
  });
  return true;
}

/** reconcileOnce runs one round: retries hand-overs, forwards cancellations, follows states and settles finished jobs. */
export async function reconcileOnce(db: Db, scheduler: SchedulerPort, now: Date): Promise<RoundResult> {
  const result: RoundResult = { submitted: 0, updated: 0, settled: 0 };
  // 1. Jobs created but not yet at the scheduler (a crash or an outage between commit and hand-over).
  const unsubmitted = await db.select().from(jobs).where(and(eq(jobs.state, 'SUBMITTING'), isNull(jobs.settledAt)));
  for (const job of unsubmitted) {
    if (job.cancelRequestedAt) await cancelSubmitting(db, scheduler, job, now);
    else if (await handToScheduler(db, scheduler, job, now)) result.submitted++;
  }
  // 2. Cancellations the scheduler may not have received yet (cancel is idempotent there).
  const cancelling = await db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(isNotNull(jobs.cancelRequestedAt), isNull(jobs.settledAt), inArray(jobs.state, ['PENDING', 'RUNNING'])));
  for (const { id } of cancelling) await scheduler.cancel(id);
  // 3. Follow every open job.
  const open = await db.select().from(jobs).where(and(isNull(jobs.settledAt), inArray(jobs.state, ['PENDING', 'RUNNING'])));
  for (let i = 0; i < open.length; i += 500) {
    const batch = open.slice(i, i + 500);
    const statuses = new Map((await scheduler.jobs(batch.map((j) => j.id))).map((s) => [s.portalJobId, s]));
    for (const job of batch) {
      const status = statuses.get(job.id);
      if (!status) continue;
      if (isFinalState(status.state)) {
        if (await settleFinishedJob(db, job, status, now)) result.settled++;
      } else if (await applyLiveStatus(db, job, status, now)) result.updated++;
    }
  }
  return result;
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
