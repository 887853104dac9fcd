// Jobs: submitted from the browser, admitted against every limit, paid for by a reservation made in
// the same transaction that creates the job, handed to the scheduler, and watched until they end.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { and, desc, eq, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { reusable } from '~/db/reusable';
import { allocations, jobEvents, jobs, jobTasks, modelCalls, organisations, projectMembers, projects, resourceClasses, sites, tariffs } from '~/db/schema';
import { admitJob, powerCapShortfall, type SitePowerCap } from '~/server/core/jobs/admission';
import { available } from '~/server/core/ledger/balance';
import { jobEfficiency } from '~/server/core/jobs/efficiency';
import { ASSUMED_GPU_UTIL_PERCENT, chargeFor, jobEnergyEstimateWh, jobReservation, simulatedOutcome, type JobKind } from '~/server/core/jobs/estimates';
import { exitStatus } from '~/server/core/jobs/exit-status';
import { reservationShortfalls, type ReservationRoom } from '~/server/core/jobs/fit';
import { defaultServedModel, GATEWAY_PATH, SERVED_MODEL_PATTERN } from '~/server/core/jobs/inference';
import { connectionFileIn } from '~/server/core/files/paths';
import { roleAtLeast } from '~/server/core/roles';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { clusterNameOf, isBudgetEnforcing, isFinalState, isSchedulerRefused, isSchedulerUnavailable, type JobDependencyType, type SchedulerJobSpec, type SchedulerPort } from '~/server/core/scheduler/port';
import { configuredCatalogue, localName, sitePowerCapW, type Catalogue } from '~/server/catalogue';
import { siteIdleCentiW } from '~/server/core/sim/power';
import { dependencyHolds } from '~/server/core/sim/types';
import { env, portalBaseUrl } from '~/server/env.js';
import { AppError } from '~/server/errors';
import { logger } from '~/server/observability/log';
import { countRefusal, countSubmission } from '~/server/observability/metrics';
import type { Locale, MessageKey } from '~/server/i18n';
import type { TenantActor } from '~/server/services/actor';
import { co2eSavedForJob } from './co2e-saved';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { ensureJobFolder, workspaceOf } from '~/server/services/files/workspace';
import { inputsEnv } from '~/server/services/files/files';
import { overdueInvoicesBlocking } from '~/server/services/billing/payments';
import { listResourceClasses } from '~/server/services/catalogue';
import { isArrayProblem, parseArray, type JobArray } from '~/server/core/jobs/array';
import { IDEMPOTENCY_KEY_HOURS, keyOutcome, releasedKey, requestFingerprint } from '~/server/core/jobs/idempotency';
import { confirmReservation, lockAllocation, lockOrganisation, monthSpendCents, releaseJobReservationInTx, startNewJobReservation } from '~/server/services/ledger/ledger';
import { posixNameOf } from '~/server/services/identity/posix';
import { projectAccess } from '~/server/services/tenants/projects';
import { syncSchedulerBudgets } from '~/server/services/cluster/scheduler-budgets';
import { alertSpending, checkSpendingLimits, spendingFigures, spendingLimitsOf, type SpendingFigures } from '~/server/services/billing/spending-limits';
import { clusterOfSite, noteSchedulerOutcome, readSchedulerStatus } from '~/server/services/cluster/scheduler-status';
import { inTransaction, isTransaction, stepAfterCommit, type SchedulerStep } from '~/server/services/transaction';
import { handingOverHere, markHandover, unmarkHandover } from './handovers-here';

export interface SubmitJobInput {
  allocationId: string;
  resourceClassId: string;
  name: string;
  kind: JobKind;
  gpus: number;
  nodes: number;
  walltimeSeconds: number;
  image: string;
  command: string;
  env: Record<string, string>;
  idempotencyKey: string;
  /** Earliest start, ISO date-time (Slurm's --begin): not more than a minute ago, at most 30 days ahead. */
  begin?: string;
  /** Start only after these jobs of the same project ended as `type` asks (Slurm's --dependency). */
  dependency?: { type: JobDependencyType; jobIds: string[] };
  /** A job array (Slurm's --array, e.g. "0-999%16"): the job runs once per task index; each task reserves as one job. */
  array?: string;
  /** Files and folders of the project's workspace (at the job's site) the job reads: given to it as PORTAL_INPUTS. */
  inputs?: string[];
  /** The estimate shown before submitting, kept with the job. */
  estimate?: Record<string, unknown> & { runtimeSeconds?: number };
  /** An interactive session (kind `interactive`, issue #28): the catalogue's app and the idle time-out. */
  session?: { app: string; idleTimeoutSeconds: number };
  /** An inference service (kind `inference`, issue #29): the model name it serves at the gateway; default: from the job's name. */
  servedModel?: string;
}

export const ACTIVE_STATES = ['SUBMITTING', 'PENDING', 'RUNNING'] as const;

/** keyReused is the refusal of a key used within 24 hours for a different submission (issue #31). */
function keyReused(key: string): AppError {
  return new AppError('UNPROCESSABLE_CONTENT', 'job.idempotencyKeyReused', { key, hours: IDEMPOTENCY_KEY_HOURS }, 'idempotencyKey');
}

async function findByKey(db: DbOrTx, userId: string, key: string): Promise<JobRow | undefined> {
  const [job] = await db.select().from(jobs).where(and(eq(jobs.userId, userId), eq(jobs.idempotencyKey, key)));
  return job;
}

/**
 * jobContext loads what admission and pricing need: the allocation (of the actor's tenant) with the
 * actor's role in its project, its resource class, site and tariff. Both statements go out together.
 */
export async function jobContext(db: DbOrTx, actor: TenantActor, input: { allocationId: string; resourceClassId: string }) {
  const [target, offer] = await Promise.all([allocationOf(db, actor, input.allocationId), resourceClassOf(db, actor, input.resourceClassId)]);
  return jobContextOf(actor, input, target, offer);
}

/**
 * allocationOf reads the allocation a job is for (of the actor's tenant) with its tenant's figures and the
 * actor's role in its project, and, given an idempotency key, the job the actor already submitted with
 * it: one statement for all of them.
 */
async function allocationOf(db: DbOrTx, actor: TenantActor, allocationId: string, idempotencyKey?: string) {
  const values = { allocationId, orgId: actor.org.id, userId: actor.userId };
  const [found] = await (idempotencyKey ? allocationWithKey(db, { ...values, idempotencyKey }) : allocationStatement(db, values));
  if (!found) throw new AppError('NOT_FOUND', 'job.unknownAllocation', {}, 'allocationId');
  return found;
}

const allocationSelect = (db: DbOrTx, knownJobId: SQL<string | null>) =>
  db
    .select({
      allocation: allocations,
      org: { status: organisations.status, residency: organisations.residency, monthlyCapCents: organisations.monthlyCapCents, centre: organisations.centre },
      projectResidency: projects.dataResidency,
      projectRole: projectMembers.role,
      knownJobId,
    })
    .from(allocations)
    .innerJoin(organisations, eq(organisations.id, allocations.orgId))
    .innerJoin(projects, and(eq(projects.id, allocations.projectId), eq(projects.orgId, allocations.orgId)))
    .leftJoin(projectMembers, and(eq(projectMembers.projectId, allocations.projectId), eq(projectMembers.userId, sql.placeholder('userId'))))
    .where(and(eq(allocations.id, sql.placeholder('allocationId')), eq(allocations.orgId, sql.placeholder('orgId'))));
const allocationStatement = reusable('job_allocation', (db) => allocationSelect(db, sql<null>`null`));
const allocationWithKey = reusable('job_allocation_key', (db) =>
  allocationSelect(db, sql<string | null>`(select j.id from jobs j where j.user_id = ${sql.placeholder('userId')} and j.idempotency_key = ${sql.placeholder('idempotencyKey')})`),
);

/** resourceClassOf reads an active resource class with its site and the tariff of the actor's kind of tenant. */
async function resourceClassOf(db: DbOrTx, actor: TenantActor, resourceClassId: string) {
  const [offer] = await resourceClassStatement(db, { resourceClassId, tenantKind: actor.org.kind });
  return offer;
}

const resourceClassStatement = reusable('job_resource_class', (db) =>
  db
    .select({ rc: resourceClasses, site: sites, centsPerGpuHour: tariffs.centsPerGpuHour })
    .from(resourceClasses)
    .innerJoin(sites, eq(sites.id, resourceClasses.siteId))
    .innerJoin(tariffs, and(eq(tariffs.resourceClassId, resourceClasses.id), eq(tariffs.tenantKind, sql.placeholder('tenantKind'))))
    .where(and(eq(resourceClasses.id, sql.placeholder('resourceClassId')), eq(resourceClasses.active, true))),
);

/**
 * jobContextOf checks what was read: only the project's members and the tenant's leads submit to its
 * allocations, and only to an active resource class.
 */
function jobContextOf(actor: TenantActor, input: { resourceClassId: string }, { allocation, org, projectResidency, projectRole }: Awaited<ReturnType<typeof allocationOf>>, offer: Awaited<ReturnType<typeof resourceClassOf>>) {
  if (!projectRole && !roleAtLeast(actor.role, 'manager')) throw new AppError('FORBIDDEN', 'job.notInProject', {}, 'allocationId');
  if (!offer) throw new AppError('BAD_REQUEST', 'job.unknownClass', { resourceClass: input.resourceClassId }, 'resourceClassId');
  return { allocation, rc: offer.rc, site: offer.site, centsPerGpuHour: offer.centsPerGpuHour, org, projectResidency };
}

/**
 * sitePowerCapOf is the facility power cap of a class's site as admission needs it, or null without one. The
 * cap, the PUE and the site's classes (its idle draw) are the catalogue's, as the simulated cluster's (`withPowerCap`).
 */
function sitePowerCapOf(catalogue: Catalogue, rc: SitePowerCap['model'] & { siteId: string }): SitePowerCap | null {
  const capW = sitePowerCapW(catalogue, rc.siteId);
  if (capW === null) return null;
  const site = catalogue.sites.find((s) => s.id === rc.siteId)!;
  const model = { gpusPerNode: rc.gpusPerNode, gpuIdlePowerW: rc.gpuIdlePowerW, gpuMaxPowerW: rc.gpuMaxPowerW, nodeBasePowerW: rc.nodeBasePowerW };
  return { capW, pueMilli: site.pueMilli, idleCentiW: siteIdleCentiW(catalogue.resourceClasses.filter((c) => c.siteId === rc.siteId)), model };
}

/**
 * estimateJob returns what a job would reserve, cost and consume, without submitting it, every
 * limit its reservation would break now (budget, monthly cap, GPUs at once) with what would fit, and
 * whether it is too large for its site's power cap: the form warns before submitting. The submission
 * decides again under its locks.
 */
export async function estimateJob(db: DbOrTx, actor: TenantActor, input: Pick<SubmitJobInput, 'allocationId' | 'resourceClassId' | 'gpus' | 'walltimeSeconds' | 'array'> & { runtimeSeconds?: number }, today: string) {
  const array = arrayOf(input.array);
  const tasks = array?.count ?? 1;
  const { allocation, rc, centsPerGpuHour, org } = await jobContext(db, actor, input);
  const runtime = Math.min(input.runtimeSeconds ?? input.walltimeSeconds, input.walltimeSeconds);
  const capped = allocation.unit === 'cents' && org.monthlyCapCents !== null;
  const inUse = allocation.maxGpusAtOnce !== null ? inFlight(allocation) : undefined;
  const [monthSpent, figures, overdueInvoices] = await Promise.all([
    capped ? monthSpendCents(db, actor.org.id, today) : undefined,
    allocation.unit === 'cents' ? spendingFigures(db, { orgId: actor.org.id, projectId: allocation.projectId, userId: actor.userId, today }) : undefined,
    // The overdue-invoice pause, read as the submission reads it, so the form says so before submitting.
    overdueInvoicesBlocking(db, actor.org.id, today, actor.org.kind === 'company' ? (env().INVOICE_OVERDUE_BLOCK_DAYS ?? null) : null),
  ]);
  const room: ReservationRoom = {
    unit: allocation.unit,
    available: available(allocation),
    monthCapLeftCents: capped && monthSpent !== undefined ? Math.max(0, org.monthlyCapCents! - monthSpent) : null,
    gpusAtOnce: allocation.maxGpusAtOnce !== null && inUse ? { limit: allocation.maxGpusAtOnce, inUse: inUse.gpus } : null,
    budgetsLeftCents: figures ? budgetsLeft(figures) : [],
  };
  return {
    room,
    shortfalls: reservationShortfalls(room, { gpus: input.gpus, walltimeSeconds: input.walltimeSeconds, centsPerGpuHour, ...(array ? { array: { tasks, atOnce: Math.min(tasks, array.throttle ?? tasks) } } : {}) }),
    /** Set when the job could never start under its site's power cap (admission refuses it). */
    powerCap: powerCapShortfall(sitePowerCapOf(configuredCatalogue(), rc), input.gpus),
    /** The numbers of the invoices overdue beyond the pause's days (INVOICE_OVERDUE_BLOCK_DAYS): while any, submissions are refused. */
    overdueInvoices,
    unit: allocation.unit,
    // An array's figures are its tasks': each task reserves, costs and draws as one job.
    tasks,
    reservation: tasks * jobReservation({ unit: allocation.unit, gpus: input.gpus, walltimeSeconds: input.walltimeSeconds, centsPerGpuHour }),
    reservedGpuSeconds: tasks * input.gpus * input.walltimeSeconds,
    maxCostCents: tasks * jobReservation({ unit: 'cents', gpus: input.gpus, walltimeSeconds: input.walltimeSeconds, centsPerGpuHour }),
    expectedCostCents: tasks * jobReservation({ unit: 'cents', gpus: input.gpus, walltimeSeconds: runtime, centsPerGpuHour }),
    centsPerGpuHour,
    maxEnergyWh: tasks * jobEnergyEstimateWh(rc, input.gpus, input.walltimeSeconds, ASSUMED_GPU_UTIL_PERCENT),
    expectedEnergyWh: tasks * jobEnergyEstimateWh(rc, input.gpus, runtime, ASSUMED_GPU_UTIL_PERCENT),
    assumedGpuUtilPercent: ASSUMED_GPU_UTIL_PERCENT,
  };
}

/** budgetsLeft is what a project's and a person's budgets leave for the form (the same limits the submission checks). */
function budgetsLeft(figures: SpendingFigures): NonNullable<ReservationRoom['budgetsLeftCents']> {
  return spendingLimitsOf(figures, { capCents: null, spentCents: null }).map((l) => ({ limit: l.kind as Exclude<typeof l.kind, 'monthlyCap'>, leftCents: Math.max(0, l.limitCents - l.spentCents) }));
}

/** What a successful hand-over changes on a job (when another process had moved it on first, nothing). */
type QueuedFields = Partial<Pick<JobRow, 'state' | 'schedulerJobId' | 'runAsUser' | 'runAsGroup' | 'handoverUntil' | 'updatedAt'>>;

/** How long one process may take to hand a job to the scheduler before another may try (jobs.handover_until). */
export const HANDOVER_LEASE_MS = 30_000;

type JobRow = typeof jobs.$inferSelect;

/**
 * inFlight is what an allocation has in flight as its row says: GPUs of its active jobs and jobs still
 * queued, counters the triggers on jobs keep in the statement that changes them (drizzle/0042). Read
 * from the row as locked, before the job being admitted is inserted: the figures without it, however
 * long the queue.
 */
function inFlight(allocation: Pick<typeof allocations.$inferSelect, 'activeGpus' | 'queuedJobs'>): { gpus: number; queuedJobs: number } {
  return { gpus: allocation.activeGpus, queuedJobs: allocation.queuedJobs };
}

/**
 * submitJob admits a job, creates it and reserves its budget in one transaction, then hands it to the
 * scheduler. The idempotency key makes a double click or a retried request return the first job.
 * Every limit (tenant status, GPUs at once, queued jobs, budget, monthly cap) is decided inside the
 * transaction, after the organisation and allocation rows are locked, so racing submissions cannot
 * pass a limit together.
 */
export async function submitJob(db: Db, step: SchedulerStep, actor: TenantActor, input: SubmitJobInput, now: Date): Promise<JobRow> {
  let created: { job: JobRow; isNew: boolean };
  try {
    created = await createJob(db, actor, input, now);
  } catch (error) {
    // Refusals by reason for /api/metrics (a domain refusal; contention is retried, not refused).
    if (error instanceof AppError) countRefusal(error.key);
    // Outside a request's transaction, a request racing with its own retry lost on the unique index
    // of (user, key): the first job is the answer. In a request's transaction, the request runs again.
    const first = isTransaction(db) ? undefined : await findByKey(db, actor.userId, input.idempotencyKey);
    const outcome = first ? keyOutcome(first, requestFingerprint(input), now) : undefined;
    if (outcome === 'same') return first!;
    if (outcome === 'reused') throw keyReused(input.idempotencyKey);
    throw error;
  }
  if (!created.isNew) {
    await stepAfterCommit(db, step);
    return created.job;
  }
  try {
    const after = await stepAfterCommit(db, step);
    countSubmission(created.job.kind); // committed: counted once, however often the request was retried
    return await handOverCreated(after.db, after.scheduler, created.job, now);
  } finally {
    unmarkHandover(created.job.id);
  }
}

/**
 * createJob admits and creates a job with its reservation (isNew), or returns the job created before
 * with the same idempotency key as it is now, even if the same request would be refused now.
 */
export async function createJob(db: Db | Tx, actor: TenantActor, input: SubmitJobInput, now: Date): Promise<{ job: JobRow; isNew: boolean }> {
  // The key is looked up with the allocation (the resource class goes out with them): a known key
  // answers with its job before anything is checked.
  // The overdue-invoice policy (off unless INVOICE_OVERDUE_BLOCK_DAYS is set) is read beside them, outside
  // the locks: it is no limit racing submissions could pass together, and a payment may lift it any time.
  const blockDays = actor.org.kind === 'company' ? (env().INVOICE_OVERDUE_BLOCK_DAYS ?? null) : null;
  const [target, offer, overdueInvoices] = await Promise.all([
    allocationOf(db, actor, input.allocationId, input.idempotencyKey),
    resourceClassOf(db, actor, input.resourceClassId),
    overdueInvoicesBlocking(db, actor.org.id, now.toISOString().slice(0, 10), blockDays),
  ]);
  const fingerprint = requestFingerprint(input);
  if (target.knownJobId) {
    const [first] = await db.select().from(jobs).where(eq(jobs.id, target.knownJobId));
    if (first) {
      const outcome = keyOutcome(first, fingerprint, now);
      if (outcome === 'same') return { job: first, isNew: false };
      if (outcome === 'reused') throw keyReused(input.idempotencyKey);
      // Kept 24 hours: the key now makes a new job, its old job keeps it under a name no request can send.
      await db.update(jobs).set({ idempotencyKey: releasedKey(first.idempotencyKey, first.id) }).where(eq(jobs.id, first.id));
    }
  }
  const { allocation, rc, site, centsPerGpuHour, org: tenant, projectResidency } = jobContextOf(actor, input, target, offer);
  const beginAt = beginOf(input.begin, now);
  const array = arrayOf(input.array);
  if (array && (input.kind === 'inference' || input.kind === 'interactive')) throw new AppError('BAD_REQUEST', 'job.arrayNotForServices', {}, 'array');
  // A session is one app on one node, started the way sessions are (services/sessions); no other job has one.
  if ((input.kind === 'interactive') !== (input.session !== undefined)) throw new AppError('BAD_REQUEST', 'session.kindOnly', {}, 'kind');
  // An inference service serves one model under a name callers use at the gateway; no other job has one.
  if (input.servedModel !== undefined && input.kind !== 'inference') throw new AppError('BAD_REQUEST', 'job.servedModelOnlyInference', {}, 'servedModel');
  if (input.servedModel !== undefined && !SERVED_MODEL_PATTERN.test(input.servedModel)) throw new AppError('BAD_REQUEST', 'job.servedModelInvalid', {}, 'servedModel');
  const servedModel = input.kind === 'inference' ? (input.servedModel ?? defaultServedModel(input.name)) : null;
  // The centre's shared models' names are the centre's: another tenant's service may not take one (its callers would reach it instead).
  if (servedModel !== null && !tenant.centre && configuredCatalogue().inference.sharedModels.some((m) => m.id === servedModel)) throw new AppError('BAD_REQUEST', 'job.servedModelShared', { model: servedModel }, 'servedModel');
  if (input.dependency) await checkDependency(db, allocation.projectId, input.dependency);
  // Files and folders picked from the project's workspace at the job's site: checked now, given to the job as PORTAL_INPUTS.
  const inputs = input.inputs?.length ? await inputsEnv(workspaceOf(configuredSiteRoots(), site.id, allocation.projectId), input.inputs) : {};
  const powerCap = sitePowerCapOf(configuredCatalogue(), rc);
  // An array reserves each of its tasks as one job; each task's share is released as it ends.
  const amount = (array?.count ?? 1) * jobReservation({ unit: allocation.unit, gpus: input.gpus, walltimeSeconds: input.walltimeSeconds, centsPerGpuHour });
  const id = randomUUID();
  const simulation = simulatedOutcome({ jobId: id, kind: input.kind, walltimeSeconds: input.walltimeSeconds, estimatedRuntimeSeconds: input.estimate?.runtimeSeconds });
  // Marked before the row exists, so this process's reconciler never sees it as its own to hand over.
  markHandover(id);
  const created = await inTransaction(db, async (tx) => {
    // Inserting the job takes only FOR KEY SHARE on its organisation and allocation, which the NO KEY
    // UPDATE lock neither waits for nor blocks. A refusal below rolls it back.
    const values: NewJobValues = {
      id,
      orgId: actor.org.id,
      projectId: allocation.projectId,
      allocationId: allocation.id,
      userId: actor.userId,
      idempotencyKey: input.idempotencyKey,
      idempotencyFingerprint: fingerprint,
      name: input.name,
      kind: input.kind,
      resourceClassId: rc.id,
      siteId: site.id,
      gpus: input.gpus,
      nodes: input.nodes,
      walltimeSeconds: input.walltimeSeconds,
      image: input.image,
      command: input.command,
      env: { ...input.env, ...inputs },
      estimate: input.estimate ? JSON.stringify(input.estimate) : null,
      simulation,
      reservedAmount: amount,
      reservedUnit: allocation.unit,
      centsPerGpuHour,
      submittedAt: now,
      beginAt: beginAt?.toISOString() ?? null,
      dependency: input.dependency ? JSON.stringify({ type: input.dependency.type, jobIds: [...new Set(input.dependency.jobIds)] }) : null,
      arraySpec: array?.text ?? null,
      arrayTasks: array?.count ?? null,
      arrayThrottle: array?.throttle ?? null,
      app: input.session?.app ?? null,
      idleTimeoutSeconds: input.session?.idleTimeoutSeconds ?? null,
      servedModel,
      // This request hands the job over right after the commit: it holds the lease from the start.
      handoverUntil: new Date(now.getTime() + HANDOVER_LEASE_MS),
    };
    // Statements started one after another without waiting go out in one write and Postgres runs
    // them in that order (see startNewJobReservation): one round trip. Lock order (server/services/ledger/README.md): organisation, then allocation, whose
    // row as locked carries the jobs in flight before this one's insert adds it (inFlight); the job, its
    // event and its reservation follow. The reservation is written before it is decided
    // (confirmReservation below): a refusal rolls it back, and the allocation's lock is held for one round trip less.
    const reserve = { allocationId: allocation.id, orgId: actor.org.id, jobId: id, amount, actorUserId: actor.userId, today: now.toISOString().slice(0, 10), at: now, newJob: true };
    const locked = Promise.all([lockOrganisation(tx, actor.org.id, allocation.unit), lockAllocation(tx, allocation.id)]);
    // A credit line's job must also fit the company's project and person budgets (issue #24): read after the
    // organisation's NO KEY UPDATE lock (which budget changes and the tenant's other credit-line reservations
    // take too) and before this job's rows, so the figures are the spend before it.
    const budgets: Promise<SpendingFigures | null> = allocation.unit === 'cents' ? spendingFigures(tx, { orgId: actor.org.id, projectId: allocation.projectId, userId: actor.userId, today: reserve.today }) : Promise.resolve(null);
    const inserted = Promise.all([insertJobStatement(tx, values), submittedEventStatement(tx, { jobId: id, at: now })]);
    const pending = startNewJobReservation(tx, reserve, allocation.unit, tenant.monthlyCapCents !== null);
    const [[org, row], [[job]], monthSpent, figures] = await Promise.all([locked, inserted, pending.monthSpent, budgets]);
    const inUse = inFlight(row);
    const refusal = admitJob({
      tenant: { status: org.status, residency: tenant.residency },
      project: { residency: projectResidency },
      resourceClass: { id: rc.id, gpusPerNode: rc.gpusPerNode, nodes: rc.nodes, maxWalltimeSeconds: rc.maxWalltimeSeconds, site: { country: site.country, inEu: site.inEu } },
      allocation: row,
      inUse,
      request: { gpus: input.gpus, nodes: input.nodes, walltimeSeconds: input.walltimeSeconds, array: array ? { tasks: array.count, throttle: array.throttle } : null },
      powerCap,
      overdueInvoices,
    });
    if (refusal) throw new AppError(refusal.code, refusal.key as MessageKey, refusal.params, refusal.field ?? undefined);
    const limits = figures ? spendingLimitsOf(figures, { capCents: org.monthlyCapCents, spentCents: monthSpent }) : [];
    if (figures) checkSpendingLimits(limits, amount);
    await confirmReservation(tx, org, row, reserve, pending);
    if (figures) await alertSpending(tx, { orgId: actor.org.id, projectId: allocation.projectId, userId: actor.userId, today: reserve.today, amountCents: amount, limits });
    return job!;
  }).catch((error: unknown) => {
    unmarkHandover(id);
    throw error;
  });
  return { job: created, isNew: true };
}

/** The values of a new job's row (an estimate as JSON text or null: a placeholder's null would be written as JSON null; the begin time as ISO text or null). */
type NewJobValues = Omit<typeof jobs.$inferInsert, 'estimate' | 'beginAt' | 'dependency' | 'updatedAt' | 'handoverAttempts' | 'tasksRunning' | 'tasksEnded'> &
  Required<Pick<typeof jobs.$inferInsert, 'id' | 'idempotencyFingerprint' | 'env' | 'simulation' | 'handoverUntil' | 'arraySpec' | 'arrayTasks' | 'arrayThrottle' | 'app' | 'idleTimeoutSeconds' | 'servedModel'>> & { estimate: string | null; submittedAt: Date; beginAt: string | null; dependency: string | null };

/** arrayOf reads a job array's text (refused with the field named), or null for one job. */
function arrayOf(text: string | undefined): JobArray | null {
  if (text === undefined || text.trim() === '') return null;
  const array = parseArray(text);
  if (isArrayProblem(array)) throw new AppError('BAD_REQUEST', array.key, 'params' in array ? array.params : {}, 'array');
  return array;
}

/**
 * checkDependency refuses a dependency on jobs that are not this project's, or that ended already in a
 * way that never lets the new job start (afterok on a failed job, afternotok on a completed one).
 */
async function checkDependency(db: DbOrTx, projectId: string, dependency: NonNullable<SubmitJobInput['dependency']>): Promise<void> {
  const ids = [...new Set(dependency.jobIds)];
  const parents = await db.select({ id: jobs.id, name: jobs.name, state: jobs.state, projectId: jobs.projectId }).from(jobs).where(inArray(jobs.id, ids));
  const known = new Map(parents.filter((p) => p.projectId === projectId).map((p) => [p.id, p]));
  const unknown = ids.find((id) => !known.has(id));
  if (unknown) throw new AppError('BAD_REQUEST', 'job.dependencyUnknown', { id: unknown }, 'dependency.jobIds');
  const never = [...known.values()].find((p) => p.state !== 'SUBMITTING' && p.state !== 'PENDING' && p.state !== 'RUNNING' && !dependencyHolds(dependency.type, p.state));
  if (never) throw new AppError('BAD_REQUEST', 'job.dependencyNeverSatisfied', { name: never.name, state: never.state }, 'dependency.jobIds');
}

/** How far a begin time may lie in the past (a form filled in a minute ago) and in the future. */
const BEGIN_PAST_MS = 60_000;
const BEGIN_FUTURE_MS = 30 * 86_400_000;

/** beginOf checks a requested earliest start against the clock: not more than a minute ago, at most 30 days ahead. */
function beginOf(begin: string | undefined, now: Date): Date | null {
  if (begin === undefined) return null;
  const at = new Date(begin);
  const offset = at.getTime() - now.getTime();
  if (!(offset >= -BEGIN_PAST_MS && offset <= BEGIN_FUTURE_MS)) throw new AppError('BAD_REQUEST', 'job.beginOutOfRange', { days: 30 }, 'begin');
  return at;
}

/** A new job's row: created SUBMITTING by the request that hands it over (its first attempt), updated when submitted. */
const insertJobStatement = reusable<ReturnType<typeof insertJobQuery>, NewJobValues>('job_insert', (db) => insertJobQuery(db));
function insertJobQuery(db: DbOrTx) {
  const p = (name: keyof NewJobValues) => sql.placeholder(name);
  return db
    .insert(jobs)
    .values({
      id: p('id'),
      orgId: p('orgId'),
      projectId: p('projectId'),
      allocationId: p('allocationId'),
      userId: p('userId'),
      idempotencyKey: p('idempotencyKey'),
      idempotencyFingerprint: p('idempotencyFingerprint'),
      name: p('name'),
      kind: p('kind'),
      resourceClassId: p('resourceClassId'),
      siteId: p('siteId'),
      gpus: p('gpus'),
      nodes: p('nodes'),
      walltimeSeconds: p('walltimeSeconds'),
      image: p('image'),
      command: p('command'),
      env: p('env'),
      estimate: sql`${p('estimate')}::jsonb`,
      simulation: p('simulation'),
      reservedAmount: p('reservedAmount'),
      reservedUnit: p('reservedUnit'),
      centsPerGpuHour: p('centsPerGpuHour'),
      submittedAt: p('submittedAt'),
      beginAt: sql`${p('beginAt')}::timestamptz`,
      dependency: sql`${p('dependency')}::jsonb`,
      arraySpec: p('arraySpec'),
      arrayTasks: p('arrayTasks'),
      arrayThrottle: p('arrayThrottle'),
      app: p('app'),
      idleTimeoutSeconds: p('idleTimeoutSeconds'),
      servedModel: p('servedModel'),
      updatedAt: p('submittedAt'),
      handoverUntil: p('handoverUntil'),
      handoverAttempts: 1,
    })
    .returning();
}
const submittedEventStatement = reusable<ReturnType<typeof submittedEventQuery>, { jobId: string; at: Date }>('job_event_submitted', (db) => submittedEventQuery(db));
function submittedEventQuery(db: DbOrTx) {
  return db.insert(jobEvents).values({ jobId: sql.placeholder('jobId'), at: sql.placeholder('at'), state: 'SUBMITTING', message: 'job.event.submitted' });
}

/**
 * modelServerEnv tells an inference service's model server (issue #29) what to serve and where to say it
 * listens: the model name callers use, the job folder's connection file (the gateway reads host, port
 * and secret there, services/inference/replicas.ts), all of the node's addresses. The portal's own
 * server (bin/portal-model-server.mjs) reads these as they are; a vLLM or TGI job wraps its server so.
 */
function modelServerEnv(servedModel: string, workDir: string): Record<string, string> {
  return { PORTAL_MODEL_ID: servedModel, PORTAL_MODEL_CONNECTION_FILE: connectionFileIn(workDir), PORTAL_MODEL_HOST: '0.0.0.0' };
}

/**
 * dependencyAtHandover decides what it can of a job's dependency from the portal's own records: jobs that
 * ended here (settled, or final) satisfy it or never will; the others go to the scheduler by id, and one
 * not at the scheduler yet makes the hand-over wait.
 */
async function dependencyAtHandover(db: DbOrTx, dependency: { type: JobDependencyType; jobIds: string[] }): Promise<{ kind: 'wait' } | { kind: 'never' } | { kind: 'submit'; portalJobIds: string[] }> {
  const parents = await db.select({ id: jobs.id, state: jobs.state, settledAt: jobs.settledAt }).from(jobs).where(inArray(jobs.id, dependency.jobIds));
  const live: string[] = [];
  for (const p of parents) {
    const ended = p.settledAt !== null || (p.state !== 'SUBMITTING' && isFinalState(p.state));
    if (ended && !dependencyHolds(dependency.type, p.state)) return { kind: 'never' };
    if (ended) continue;
    if (p.state === 'SUBMITTING') return { kind: 'wait' };
    live.push(p.id);
  }
  return { kind: 'submit', portalJobIds: live };
}

/** handOverCreated hands a job this process just created (and holds the lease of) to the scheduler and returns it as it is then. */
async function handOverCreated(db: Db, scheduler: SchedulerPort, created: JobRow, now: Date): Promise<JobRow> {
  const queued = await handToScheduler(db, scheduler, created, now);
  // Queued as expected: the row is known without reading it back; otherwise read what it became.
  return queued?.state ? { ...created, ...queued } : ((await db.select().from(jobs).where(eq(jobs.id, created.id)))[0] ?? created);
}

/**
 * claimHandover takes the hand-over lease of a SUBMITTING job for this process, or returns undefined
 * when another process holds it (the request that created the job, or another reconciler) or this
 * process is handing it over already (handovers-here.ts): exactly one hand-over of a job at a time. The
 * port's idempotency is the second guard. The caller ends a claim it got with unmarkHandover.
 */
export async function claimHandover(db: Db, jobId: string, now: Date): Promise<JobRow | undefined> {
  if (handingOverHere(jobId)) return undefined;
  markHandover(jobId);
  try {
    const [job] = await db
      .update(jobs)
      .set({ handoverUntil: new Date(now.getTime() + HANDOVER_LEASE_MS), handoverAttempts: sql`${jobs.handoverAttempts} + 1` })
      .where(and(eq(jobs.id, jobId), eq(jobs.state, 'SUBMITTING'), isNull(jobs.settledAt), or(isNull(jobs.handoverUntil), lte(jobs.handoverUntil, now))))
      .returning();
    if (!job) unmarkHandover(jobId);
    return job;
  } catch (error) {
    unmarkHandover(jobId);
    throw error;
  }
}

/**
 * handToScheduler submits a created job whose hand-over lease the caller holds and returns what changed
 * on the job (null when the hand-over failed: the lease is given back, the job stays SUBMITTING and
 * the reconciler retries).
 */
export async function handToScheduler(db: Db, scheduler: SchedulerPort, job: JobRow, now: Date): Promise<QueuedFields | null> {
  let runAs: { user: string; group: string };
  try {
    runAs = { user: job.runAsUser ?? (await posixNameOf(db, job.userId)), group: job.runAsGroup ?? projectGroupName(job.projectId) };
  } catch (error) {
    logger().error({ jobId: job.id, err: error }, 'the job has no user to run as yet; the reconciler will retry');
    await releaseHandover(db, job.id);
    return null;
  }
  let dependency: SchedulerJobSpec['dependency'];
  if (job.dependency) {
    const decided = await dependencyAtHandover(db, job.dependency);
    if (decided.kind === 'wait') {
      // A job it depends on is not at the scheduler yet: the reconciler hands this one over after it.
      await releaseHandover(db, job.id);
      return null;
    }
    if (decided.kind === 'never') {
      await endUnsubmitted(db, job.id, now, 'CANCELLED', 'job.event.dependencyNeverSatisfied', { type: job.dependency.type });
      return {};
    }
    if (decided.portalJobIds.length) dependency = { type: job.dependency.type, portalJobIds: decided.portalJobIds };
  }
  // The job's working folder in its project's workspace: its output lands there on every backend.
  let workDir: string | undefined;
  try {
    workDir = await ensureJobFolder(workspaceOf(configuredSiteRoots(), job.siteId, job.projectId), job.id);
  } catch (error) {
    logger().error({ jobId: job.id, err: error }, "the job's folder cannot be made in its workspace; it runs in the scheduler's own folder");
  }
  const submit = () =>
    scheduler.submit({
      portalJobId: job.id,
      attempt: job.handoverAttempts,
      name: job.name,
      partition: job.resourceClassId,
      gpus: job.gpus,
      nodes: job.nodes,
      walltimeSeconds: job.walltimeSeconds,
      account: job.projectId,
      user: runAs.user,
      group: runAs.group,
      image: job.image,
      command: job.command,
      // Where it runs, for its script: its folder and its project's workspace (inputs and results there).
      env: { ...job.env, PORTAL_JOB_ID: job.id, ...(workDir ? { PORTAL_JOB_DIR: workDir, PORTAL_WORKSPACE: path.dirname(path.dirname(workDir)) } : {}), ...(job.servedModel && workDir ? modelServerEnv(job.servedModel, workDir) : {}) },
      // A session's launcher runs on the node itself, outside any container (issue #28).
      ...(job.app ? { session: { app: job.app } } : {}),
      ...(job.beginAt ? { begin: job.beginAt } : {}),
      ...(dependency ? { dependency } : {}),
      ...(job.arraySpec ? { array: { text: job.arraySpec } } : {}),
      simulation: job.simulation ?? undefined,
      ...(workDir ? { workDir } : {}),
    });
  try {
    let schedulerJobId: string;
    try {
      ({ schedulerJobId } = await submit());
    } catch (error) {
      // A project's account is made in the scheduler when its budget is synced; if that sync has not
      // happened yet (it failed, or the grant predates it), sync now and try once more.
      if (!(isSchedulerRefused(error) && error.reason === 'account' && isBudgetEnforcing(scheduler))) throw error;
      const sync = await syncSchedulerBudgets(db, scheduler, { projectIds: [job.projectId], now });
      if (!sync?.ok) throw error;
      ({ schedulerJobId } = await submit());
    }
    // One statement (one commit): the job moves to PENDING and its event is written, or neither.
    const updated = await queuedStatement(db, { jobId: job.id, schedulerJobId, runAsUser: runAs.user, runAsGroup: runAs.group, at: now.toISOString(), data: JSON.stringify({ schedulerJobId }) });
    if (updated.length === 0) {
      // Someone else moved it on (a cancellation, or a lease that ran out): only a cancelled job must not run.
      const [current] = await db.select({ cancelRequestedAt: jobs.cancelRequestedAt }).from(jobs).where(eq(jobs.id, job.id));
      if (current?.cancelRequestedAt) await scheduler.cancel(job.id);
      return {};
    }
    return { state: 'PENDING', schedulerJobId, runAsUser: runAs.user, runAsGroup: runAs.group, handoverUntil: null, updatedAt: now };
  } catch (error) {
    if (isSchedulerRefused(error)) {
      // Refused for good (no such partition, more than a node has, a hard limit): the job can never run
      // as asked, so it ends FAILED with nothing used and its reservation released.
      logger().warn({ jobId: job.id, reason: error.reason, code: error.code, err: error }, 'the scheduler refused the job');
      await endUnsubmitted(db, job.id, now, 'FAILED', 'job.event.refusedByScheduler', { reason: error.message });
      return {};
    }
    if (isSchedulerUnavailable(error)) {
      logger().warn({ jobId: job.id, err: error }, 'the scheduler is unreachable; the job waits to be handed over');
      // Staff see the outage from this first failed hand-over, not from the worker's next probe.
      await noteSchedulerOutcome(db, now, error, clusterNameOf(scheduler, job.siteId)).catch((e: unknown) => logger().warn({ err: e }, 'could not record the scheduler outage'));
    } else logger().error({ jobId: job.id, err: error }, 'handing the job to the scheduler failed; the reconciler will retry');
    await releaseHandover(db, job.id);
    return null;
  }
}

/** releaseHandover gives a SUBMITTING job's hand-over lease back so the reconciler's next round tries again; if even this fails, the lease runs out by itself. */
async function releaseHandover(db: Db, jobId: string): Promise<void> {
  await db
    .update(jobs)
    .set({ handoverUntil: null })
    .where(and(eq(jobs.id, jobId), eq(jobs.state, 'SUBMITTING')))
    .catch(() => undefined);
}

/**
 * A job handed over: PENDING with its scheduler's id, and the event that says so. Its commit does not
 * wait for the disk (synchronous_commit off for this one transaction): should the database crash before
 * the write reaches it, the job is SUBMITTING again and the reconciler's next hand-over finds the
 * scheduler's job by name instead of submitting again (the port's retry rule), so nothing is lost that
 * the scheduler does not still know. The job, its reservation and its ledger row were committed durably.
 */
const queuedStatement = reusable('job_queued', (db) => {
  const queued = db
    .$with('queued')
    .as(
      db
        .update(jobs)
        .set({
          state: 'PENDING',
          schedulerJobId: sql`${sql.placeholder('schedulerJobId')}::text`,
          runAsUser: sql`${sql.placeholder('runAsUser')}::text`,
          runAsGroup: sql`${sql.placeholder('runAsGroup')}::text`,
          handoverUntil: null,
          updatedAt: sql`${sql.placeholder('at')}::timestamptz`,
        })
        .where(and(eq(jobs.id, sql.placeholder('jobId')), eq(jobs.state, 'SUBMITTING')))
        .returning({ id: jobs.id }),
    );
  return db
    .with(queued)
    .insert(jobEvents)
    .select(
      db
        .select({
          id: sql<number>`nextval(pg_get_serial_sequence('job_events', 'id'))`.as('id'),
          jobId: queued.id,
          at: sql`${sql.placeholder('at')}::timestamptz`.as('at'),
          state: sql`'PENDING'::job_state`.as('state'),
          message: sql`'job.event.queued'`.as('message'),
          data: sql`${sql.placeholder('data')}::jsonb`.as('data'),
        })
        .from(queued)
        .where(sql`set_config('synchronous_commit', 'off', true) = 'off'`),
    )
    .returning({ id: jobEvents.id });
});

/** canActOnJob tells whether the actor may cancel a job: its submitter, the project's PI or managers, or tenant leads. */
function canActOnJob(job: typeof jobs.$inferSelect, actor: TenantActor, projectRole: string | null): boolean {
  return job.userId === actor.userId || projectRole === 'pi' || projectRole === 'manager' || roleAtLeast(actor.role, 'manager');
}

/**
 * cancelJob stops a job: the request is recorded in the caller's transaction, then the scheduler is told
 * after the commit; a job not yet at the scheduler is cancelled at once and its reservation released.
 */
export async function cancelJob(db: Db, step: SchedulerStep, actor: TenantActor, jobId: string, now: Date) {
  const job = await loadJob(db, actor, jobId);
  const access = await projectAccess(db, actor, job.projectId);
  if (!canActOnJob(job, actor, access.projectRole)) throw new AppError('FORBIDDEN', 'job.cancelNotAllowed');
  if (job.settledAt || !(ACTIVE_STATES as readonly string[]).includes(job.state)) return { state: job.state };
  // A service or a session is stopped, not cancelled: it ends COMPLETED, charged for the time it ran.
  const stop = job.kind === 'inference' || job.kind === 'interactive';
  await db.update(jobs).set({ cancelRequestedAt: now, updatedAt: now }).where(and(eq(jobs.id, jobId), isNull(jobs.cancelRequestedAt)));
  await db.insert(jobEvents).values({ jobId, at: now, state: job.state, message: stop && job.state === 'RUNNING' ? 'job.event.stopRequested' : 'job.event.cancelRequested', data: { by: actor.name } });
  const after = await stepAfterCommit(db, step);
  if (job.state === 'SUBMITTING') {
    // Only the holder of the hand-over lease may decide; if another process is handing it over right
    // now, it (or the reconciler, which forwards every requested cancellation) stops the job.
    const claimed = await claimHandover(after.db, jobId, now);
    if (!claimed) return { state: job.state };
    try {
      return { state: await cancelSubmitting(after.db, after.scheduler, claimed, now) };
    } finally {
      unmarkHandover(jobId);
    }
  }
  await after.scheduler.cancel(jobId, { stop });
  return { state: job.state };
}

/**
 * cancelSubmitting cancels a job (whose hand-over lease the caller holds) that did not reach PENDING: the scheduler may have it after all
 * (a lost reply), so it is told to cancel; if it knows the job, the reconciler settles it from the
 * scheduler's final status, else the job is cancelled here with nothing used.
 */
export async function cancelSubmitting(db: Db, scheduler: SchedulerPort, job: typeof jobs.$inferSelect, now: Date): Promise<'CANCELLED' | 'PENDING'> {
  await scheduler.cancel(job.id);
  const [status] = await scheduler.jobs([job.id]);
  if (!status) {
    await cancelUnsubmitted(db, job.id, now, 'job.event.cancelled');
    return 'CANCELLED';
  }
  const updated = await db
    .update(jobs)
    .set({ state: 'PENDING', schedulerJobId: status.schedulerJobId, cancelRequestedAt: job.cancelRequestedAt ?? now, handoverUntil: null, updatedAt: now })
    .where(and(eq(jobs.id, job.id), eq(jobs.state, 'SUBMITTING')))
    .returning({ id: jobs.id });
  if (updated.length) await db.insert(jobEvents).values({ jobId: job.id, at: now, state: 'PENDING', message: 'job.event.queued', data: { schedulerJobId: status.schedulerJobId } });
  return 'PENDING';
}

/** cancelUnsubmitted ends a job the scheduler never got: CANCELLED, settled with no usage, reservation released. */
export async function cancelUnsubmitted(db: Db, jobId: string, now: Date, message: MessageKey): Promise<void> {
  await endUnsubmitted(db, jobId, now, 'CANCELLED', message);
}

/** endUnsubmitted ends a job the scheduler never got (cancelled, or refused by it): settled with no usage, reservation released. */
async function endUnsubmitted(db: Db, jobId: string, now: Date, state: 'CANCELLED' | 'FAILED', message: MessageKey, data?: Record<string, string>): Promise<void> {
  await inTransaction(db, async (tx) => {
    const [target] = await tx.select({ allocationId: jobs.allocationId }).from(jobs).where(eq(jobs.id, jobId));
    if (!target) return;
    await lockAllocation(tx, target.allocationId); // allocation before the job row: the lock order
    const done = await tx
      .update(jobs)
      .set({ state, endedAt: now, gpuSeconds: 0, energyWh: 0, energyMeasured: false, costCents: 0, chargedAmount: 0, settledAt: now, updatedAt: now })
      .where(and(eq(jobs.id, jobId), eq(jobs.state, 'SUBMITTING'), isNull(jobs.settledAt)))
      .returning({ id: jobs.id });
    if (!done.length) return;
    await releaseJobReservationInTx(tx, { jobId, reason: state === 'CANCELLED' ? 'cancelled before it reached the scheduler' : 'refused by the scheduler' });
    await tx.insert(jobEvents).values({ jobId, at: now, state, message, data: data ?? null });
  });
}

/** loadJob returns a job of the actor's tenant that the actor may see (own, their projects', or all for tenant leads). */
export async function loadJob(db: DbOrTx, actor: TenantActor, jobId: string) {
  const [job] = await db.select().from(jobs).where(and(eq(jobs.id, jobId), eq(jobs.orgId, actor.org.id)));
  if (!job) throw new AppError('NOT_FOUND', 'error.notFound');
  if (job.userId !== actor.userId) await projectAccess(db, actor, job.projectId);
  return job;
}

/** servedTraffic is what a service answered through the gateway: its settled calls and their tokens in and out. */
async function servedTraffic(db: DbOrTx, jobId: string): Promise<{ requests: number; tokens: number }> {
  const [row] = await db
    .select({ requests: sql<number>`count(*)::int`, tokens: sql<string>`coalesce(sum(${modelCalls.promptTokens} + ${modelCalls.completionTokens}), 0)` })
    .from(modelCalls)
    .where(and(eq(modelCalls.serviceJobId, jobId), eq(modelCalls.status, 'settled')));
  return { requests: row?.requests ?? 0, tokens: Number(row?.tokens ?? 0) };
}

/**
 * getJob returns a job with its event history and its project's title, as its viewer may see it: the
 * environment's values only to the person who submitted it and the project's PI (colleagues see the
 * names; values may hold tokens), and nothing of the portal's own bookkeeping (the simulated
 * cluster's planned outcome, the idempotency key, the hand-over lease).
 */
export async function getJob(db: DbOrTx, actor: TenantActor, jobId: string, locale: Locale = 'en') {
  const [job] = await db.select().from(jobs).where(and(eq(jobs.id, jobId), eq(jobs.orgId, actor.org.id)));
  if (!job) throw new AppError('NOT_FOUND', 'error.notFound');
  const [events, access, [where]] = await Promise.all([
    db.select().from(jobEvents).where(eq(jobEvents.jobId, jobId)).orderBy(jobEvents.id),
    // As loadJob: others' jobs only to the project's people and the tenant's leads; one's own always.
    projectAccess(db, actor, job.projectId).catch((error: unknown) => {
      if (job.userId !== actor.userId) throw error;
      return undefined;
    }),
    db
      .select({
        resourceClassName: resourceClasses.name,
        resourceClassNameDe: resourceClasses.nameDe,
        gpuModel: resourceClasses.gpuModel,
        gpusPerNode: resourceClasses.gpusPerNode,
        gpuIdlePowerW: resourceClasses.gpuIdlePowerW,
        gpuMaxPowerW: resourceClasses.gpuMaxPowerW,
        nodeBasePowerW: resourceClasses.nodeBasePowerW,
        siteName: sites.name,
        siteNameDe: sites.nameDe,
        country: sites.country,
        pueMilli: sites.pueMilli,
        heatReusePermille: sites.heatReusePermille,
        gridGco2PerKwh: sites.gridGco2PerKwh,
      })
      .from(resourceClasses)
      .innerJoin(sites, eq(sites.id, job.siteId))
      .where(eq(resourceClasses.id, job.resourceClassId)),
  ]);
  const mayReadEnv = job.userId === actor.userId || access?.projectRole === 'pi';
  // The jobs it starts after (its own project's, so the tenant's): their names and states for the page.
  const after = job.dependency
    ? await db.select({ id: jobs.id, name: jobs.name, state: jobs.state }).from(jobs).where(and(inArray(jobs.id, job.dependency.jobIds), eq(jobs.orgId, actor.org.id)))
    : [];
  const { simulation: _simulation, idempotencyKey: _key, handoverUntil: _lease, handoverAttempts: _attempts, env, arraySpec, arrayTasks, arrayThrottle, tasksRunning: _running, tasksEnded: _ended, ...shown } = job;
  const array = arraySpec !== null && arrayTasks !== null ? { text: arraySpec, tasks: arrayTasks, throttle: arrayThrottle, ...(await arrayTasksOf(db, job)) } : null;
  // The cluster of its site when the configuration names clusters, else every cluster together.
  const schedulerAway = job.state === 'SUBMITTING' && ((await readSchedulerStatus(db, clusterOfSite(job.siteId))) ?? (await readSchedulerStatus(db)))?.reachable === false;
  // Run time and utilisation from the figures the job is charged for (cluster time, not the wall clock).
  // (An array's GPU time is its tasks' sum: the walltime used and the utilisation are per task, not shown for the whole.)
  // A service's traffic: the calls the gateway settled on it (issue #29), counted as each ended.
  const traffic = job.kind === 'inference' ? await servedTraffic(db, job.id) : null;
  const efficiency = where && job.gpuSeconds !== null && job.startedAt && !array ? jobEfficiency({ power: where, gpus: job.gpus, walltimeSeconds: job.walltimeSeconds, gpuSeconds: job.gpuSeconds, energyWh: job.energyWh ?? 0 }) : null;
  return {
    ...shown,
    resourceClassName: where ? localName(locale, { name: where.resourceClassName, nameDe: where.resourceClassNameDe }) : job.resourceClassId,
    gpuModel: where?.gpuModel ?? '',
    siteName: where ? localName(locale, { name: where.siteName, nameDe: where.siteNameDe }) : job.siteId,
    site: where ? { pueMilli: where.pueMilli, heatReusePermille: where.heatReusePermille, gridGco2PerKwh: where.gridGco2PerKwh } : null,
    efficiency,
    /** A job asked to wait for a cleaner hour (`begin`): what that saved against starting at once, once it ran. */
    co2eSaved: where
      ? co2eSavedForJob(
          { id: job.siteId, country: where.country, gridGco2PerKwh: where.gridGco2PerKwh },
          { begin: job.beginAt, submittedAt: job.submittedAt, startedAt: job.startedAt, facilityEnergyWh: job.facilityEnergyWh, runSeconds: efficiency?.runSeconds ?? null },
        )
      : null,
    /** How it ended as Slurm reports it (exit code, signal, `0:15`), once settled. */
    exitStatus: exitStatus(job.exitCode, job.exitSignal),
    /** What the job has cost so far at its tariff (the settled cost once it ended). */
    costSoFarCents: job.costCents ?? (job.gpuSeconds !== null ? chargeFor({ unit: 'cents', gpuSeconds: job.gpuSeconds, centsPerGpuHour: job.centsPerGpuHour }) : null),
    // The service's model at the portal's gateway: the `baseURL` of an OpenAI client and the model name.
    inference:
      job.kind === 'inference'
        ? { endpointUrl: `${portalBaseUrl()}${GATEWAY_PATH}`, model: job.servedModel ?? defaultServedModel(job.name), requests: traffic?.requests ?? 0, tokens: traffic?.tokens ?? 0 }
        : null,
    env: Object.entries(env)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .map(([name, value]) => ({ name, value: mayReadEnv ? value : null })),
    events,
    dependencyJobs: job.dependency ? job.dependency.jobIds.flatMap((id) => after.filter((a) => a.id === id)) : [],
    array,
    projectTitle: access?.project.title ?? '',
    canCancel: access ? canActOnJob(job, actor, access.projectRole) : job.userId === actor.userId,
    waitingForScheduler: schedulerAway,
  };
}

/** A jsonb value read through raw SQL: parsed by one driver (PGlite), text from the other (postgres.js). */
function parseJsonb<T>(value: T | string | null): T | null {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

/** Tasks of an array shown on its page at once (the counts cover all). */
const TASKS_SHOWN = 500;

/**
 * arrayCounts is how many of an array's tasks are in each state: those that started by their state as
 * reported, the others PENDING (waiting to start) while the array is open, else CANCELLED (never ran).
 */
function arrayCounts(job: Pick<JobRow, 'arrayTasks' | 'settledAt' | 'state'>, started: Record<string, number>): Record<string, number> {
  const counts = { ...started };
  const seen = Object.values(started).reduce((s, n) => s + n, 0);
  const rest = (job.arrayTasks ?? 0) - seen;
  if (rest > 0) {
    const state = job.settledAt !== null || !ACTIVE_STATES.includes(job.state as (typeof ACTIVE_STATES)[number]) ? 'CANCELLED' : 'PENDING';
    counts[state] = (counts[state] ?? 0) + rest;
  }
  return counts;
}

/** arrayTasksOf reads an array's tasks for its page: counts per state and the first tasks that started. */
async function arrayTasksOf(db: DbOrTx, job: JobRow) {
  const [byState, list] = await Promise.all([
    db.select({ state: jobTasks.state, n: sql<number>`count(*)`.mapWith(Number) }).from(jobTasks).where(eq(jobTasks.jobId, job.id)).groupBy(jobTasks.state),
    db
      .select({
        index: jobTasks.taskIndex,
        state: jobTasks.state,
        startedAt: jobTasks.startedAt,
        endedAt: jobTasks.endedAt,
        exitCode: jobTasks.exitCode,
        exitSignal: jobTasks.exitSignal,
        nodeList: jobTasks.nodeList,
        gpuSeconds: jobTasks.gpuSeconds,
        costCents: jobTasks.costCents,
      })
      .from(jobTasks)
      .where(eq(jobTasks.jobId, job.id))
      .orderBy(jobTasks.taskIndex)
      .limit(TASKS_SHOWN),
  ]);
  const started = Object.fromEntries(byState.map((r) => [r.state, r.n]));
  return { counts: arrayCounts(job, started), started: byState.reduce((s, r) => s + r.n, 0), list };
}

export interface JobFilter {
  status: 'active' | 'finished' | 'all';
  projectId?: string;
  kind?: JobKind;
  /** One state only (the REST API's `state=`). */
  state?: (typeof jobs.$inferSelect)['state'];
  /** Only jobs after this one in the list's order (newest first): a page's cursor. */
  after?: { submittedAt: Date; id: string };
  limit: number;
}

/** listJobs lists the tenant's jobs the actor may see, newest first (ties by id, so pages never skip or repeat one). */
export async function listJobs(db: DbOrTx, actor: TenantActor, filter: JobFilter, locale: Locale = 'en') {
  const conditions: SQL[] = [eq(jobs.orgId, actor.org.id)];
  if (!roleAtLeast(actor.role, 'manager')) {
    const mine = db.select({ projectId: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, actor.userId));
    conditions.push(sql`(${jobs.userId} = ${actor.userId} or ${jobs.projectId} in ${mine})`);
  }
  if (filter.status === 'active') conditions.push(inArray(jobs.state, [...ACTIVE_STATES]));
  if (filter.status === 'finished') conditions.push(sql`${jobs.state} not in ('SUBMITTING', 'PENDING', 'RUNNING')`);
  if (filter.projectId) conditions.push(eq(jobs.projectId, filter.projectId));
  if (filter.kind) conditions.push(eq(jobs.kind, filter.kind));
  if (filter.state) conditions.push(eq(jobs.state, filter.state));
  if (filter.after) conditions.push(sql`(${jobs.submittedAt}, ${jobs.id}) < (${filter.after.submittedAt.toISOString()}::timestamptz, ${filter.after.id}::uuid)`);
  const rows = await db
    .select({
      id: jobs.id,
      name: jobs.name,
      kind: jobs.kind,
      state: jobs.state,
      pendingReason: jobs.pendingReason,
      projectId: jobs.projectId,
      resourceClassId: jobs.resourceClassId,
      resourceClassName: resourceClasses.name,
      resourceClassNameDe: resourceClasses.nameDe,
      siteId: jobs.siteId,
      gpus: jobs.gpus,
      nodes: jobs.nodes,
      walltimeSeconds: jobs.walltimeSeconds,
      submittedAt: jobs.submittedAt,
      startedAt: jobs.startedAt,
      endedAt: jobs.endedAt,
      gpuSeconds: jobs.gpuSeconds,
      costCents: jobs.costCents,
      energyWh: jobs.energyWh,
      reservedAmount: jobs.reservedAmount,
      reservedUnit: jobs.reservedUnit,
      centsPerGpuHour: jobs.centsPerGpuHour,
      settledAt: jobs.settledAt,
      arraySpec: jobs.arraySpec,
      arrayTasks: jobs.arrayTasks,
      // An array's tasks that started, by state (one grouped read per array on the page; none for a job).
      taskStates: sql<Record<string, number> | null>`case when ${jobs.arrayTasks} is null then null else
        (select coalesce(jsonb_object_agg(s.state, s.n), '{}'::jsonb) from (select t.state, count(*)::int as n from ${jobTasks} t where t.job_id = "jobs"."id" group by t.state) s) end`,
    })
    .from(jobs)
    .innerJoin(resourceClasses, eq(resourceClasses.id, jobs.resourceClassId))
    .where(and(...conditions))
    .orderBy(desc(jobs.submittedAt), desc(jobs.id))
    .limit(filter.limit);
  return rows.map(({ resourceClassNameDe, settledAt, arraySpec, arrayTasks, taskStates, ...r }) => ({
    ...r,
    resourceClassName: localName(locale, { name: r.resourceClassName, nameDe: resourceClassNameDe }),
    array: arraySpec !== null && arrayTasks !== null ? { text: arraySpec, tasks: arrayTasks, counts: arrayCounts({ arrayTasks, settledAt, state: r.state }, parseJsonb(taskStates) ?? {}) } : null,
  }));
}

/** jobTargets lists the active allocations the actor may run jobs on and the resource classes their tenant may use. */
export async function jobTargets(db: DbOrTx, actor: TenantActor, today: string, locale: Locale = 'en') {
  const [org] = await db.select({ residency: organisations.residency }).from(organisations).where(eq(organisations.id, actor.org.id));
  const conditions: SQL[] = [eq(allocations.orgId, actor.org.id), eq(allocations.status, 'active'), sql`${allocations.periodStart} <= ${today}::date`, sql`${allocations.periodEnd} > ${today}::date`];
  if (!roleAtLeast(actor.role, 'manager')) {
    conditions.push(inArray(allocations.projectId, db.select({ projectId: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, actor.userId))));
  }
  const rows = await db
    .select({ id: allocations.id, projectId: allocations.projectId, projectTitle: projects.title, projectResidency: projects.dataResidency, unit: allocations.unit, resourceClassId: allocations.resourceClassId, granted: allocations.granted, charged: allocations.charged, reserved: allocations.reserved, expired: allocations.expired, maxGpusAtOnce: allocations.maxGpusAtOnce, maxWalltimeSeconds: allocations.maxWalltimeSeconds, periodEnd: allocations.periodEnd })
    .from(allocations)
    .innerJoin(projects, eq(projects.id, allocations.projectId))
    .where(and(...conditions))
    .orderBy(projects.title);
  const classes = await listResourceClasses(db, { kind: actor.org.kind, residency: org!.residency }, locale);
  const details = await db.select({ id: resourceClasses.id, gpuIdlePowerW: resourceClasses.gpuIdlePowerW, gpuMaxPowerW: resourceClasses.gpuMaxPowerW, nodeBasePowerW: resourceClasses.nodeBasePowerW, peakTflops: resourceClasses.peakTflops }).from(resourceClasses);
  return {
    allocations: rows.map((r) => ({ ...r, available: r.granted - r.charged - r.reserved - r.expired })),
    resourceClasses: classes.map((c) => ({ ...c, ...details.find((d) => d.id === c.id)! })),
  };
}
