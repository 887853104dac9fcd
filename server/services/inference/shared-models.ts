// The centre's shared models (issue #29). A shared model is a catalogue entry (`inference.sharedModels`);
// its replicas are inference services of the centre's own tenant (`organisations.centre`), which staff
// start and stop here. Their GPU time is charged, as any job's, to that tenant's allocation of the class
// (made on first use, a year of GPU-hours at a time): the centre pays for what it serves. Tenants call a
// shared model through the gateway by its id and pay the catalogue's price per token of their kind.
import { randomUUID } from 'node:crypto';
import { and, asc, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, jobs, memberships, modelCalls, organisations, projectMembers, projects } from '~/db/schema';
import { configuredCatalogue, type SharedModel } from '~/server/catalogue';
import { AppError } from '~/server/errors';
import type { Actor, TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { cancelJob, submitJob } from '~/server/services/jobs/jobs';
import { grantBudget } from '~/server/services/ledger/ledger';
import { inTransaction, type SchedulerStep } from '~/server/services/transaction';

/** The centre's tenant and project that run the shared models. */
export const CENTRE_TENANT_NAME = 'AI Factory centre (shared models)';
export const CENTRE_PROJECT_TITLE = 'Shared models';

/** What the centre grants itself per class when a shared model first runs there: a year of 8 GPUs. */
const CENTRE_GPU_SECONDS = 8 * 365 * 24 * 3600;

/** sharedModelOf is a shared model of the catalogue by id, or undefined. */
export function sharedModelOf(id: string): SharedModel | undefined {
  return configuredCatalogue().inference.sharedModels.find((m) => m.id === id);
}

/** isSharedModelId tells whether a model name is one of the centre's shared models (a tenant's service may not take it). */
export function isSharedModelId(id: string): boolean {
  return sharedModelOf(id) !== undefined;
}

/**
 * centreActor finds or makes the centre's tenant with its shared-models project, makes the staff member
 * acting its manager and the project's (so the jobs they start are theirs, as a member's), and makes an
 * allocation of `resourceClassId` usable today. One transaction; concurrent starts make one of each.
 */
async function centreActor(db: Db, staff: Actor, resourceClassId: string, today: string): Promise<{ actor: TenantActor; projectId: string; allocationId: string }> {
  return inTransaction(db, async (tx) => {
    // One centre tenant: the partial unique index decides between two first starts.
    await tx
      .insert(organisations)
      .values({ name: CENTRE_TENANT_NAME, kind: 'academic', country: configuredCatalogue().sites[0]?.country ?? 'DE', residency: 'any', status: 'active', centre: true })
      .onConflictDoNothing();
    const [org] = await tx.select().from(organisations).where(eq(organisations.centre, true)).for('no key update');
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
    let [project] = await tx.select({ id: projects.id }).from(projects).where(and(eq(projects.orgId, org.id), eq(projects.title, CENTRE_PROJECT_TITLE)));
    if (!project) {
      [project] = await tx
        .insert(projects)
        .values({ orgId: org.id, title: CENTRE_PROJECT_TITLE, abstract: 'The models the centre serves to every tenant through the gateway.', workloadKind: 'inference', createdBy: staff.userId })
        .returning({ id: projects.id });
    }
    await tx.insert(memberships).values({ orgId: org.id, userId: staff.userId, role: 'manager' }).onConflictDoNothing();
    await tx.insert(projectMembers).values({ projectId: project!.id, userId: staff.userId, role: 'manager' }).onConflictDoNothing();
    const [usable] = await tx
      .select({ id: allocations.id })
      .from(allocations)
      .where(and(eq(allocations.projectId, project!.id), eq(allocations.resourceClassId, resourceClassId), eq(allocations.status, 'active'), sql`${allocations.periodStart} <= ${today}`, sql`${allocations.periodEnd} > ${today}`, sql`${allocations.granted} - ${allocations.charged} - ${allocations.reserved} - ${allocations.expired} > ${CENTRE_GPU_SECONDS / 100}`));
    let allocationId = usable?.id;
    if (!allocationId) {
      const end = new Date(`${today}T00:00:00Z`);
      end.setUTCFullYear(end.getUTCFullYear() + 1);
      const [created] = await tx
        .insert(allocations)
        .values({ projectId: project!.id, orgId: org.id, resourceClassId, unit: 'gpu_seconds', periodStart: today, periodEnd: end.toISOString().slice(0, 10) })
        .returning({ id: allocations.id });
      allocationId = created!.id;
      await grantBudget(tx, { allocationId, amount: CENTRE_GPU_SECONDS, actorUserId: staff.userId, reason: 'GPU time of the shared models, borne by the centre' });
    }
    const actor: TenantActor = { ...staff, org: { id: org.id, name: org.name, kind: org.kind, status: org.status }, role: 'manager' };
    return { actor, projectId: project!.id, allocationId };
  });
}

/**
 * startSharedModel starts a replica of a shared model on one of its classes (default: its first) as an
 * inference service of the centre's tenant; staff only (the router checks). Returns the job.
 */
export async function startSharedModel(db: Db, step: SchedulerStep, staff: Actor, input: { modelId: string; resourceClassId?: string }, now: Date): Promise<{ jobId: string }> {
  const model = sharedModelOf(input.modelId);
  if (!model) throw new AppError('NOT_FOUND', 'sharedModels.unknown', { model: input.modelId }, 'modelId');
  const resourceClassId = input.resourceClassId ?? model.resourceClassIds[0]!;
  if (!model.resourceClassIds.includes(resourceClassId)) throw new AppError('BAD_REQUEST', 'sharedModels.classNotOffered', { model: model.id, classes: model.resourceClassIds.join(', ') }, 'resourceClassId');
  const rc = configuredCatalogue().resourceClasses.find((c) => c.id === resourceClassId)!;
  const { actor, allocationId } = await centreActor(db, staff, resourceClassId, now.toISOString().slice(0, 10));
  const job = await submitJob(
    db,
    step,
    actor,
    {
      allocationId,
      resourceClassId,
      name: `shared ${model.name}`,
      kind: 'inference',
      servedModel: model.id,
      gpus: model.gpus,
      nodes: 1,
      // A service runs until its walltime: the class's longest; staff start another before it ends.
      walltimeSeconds: rc.maxWalltimeSeconds,
      image: model.image,
      command: model.command,
      env: {},
      idempotencyKey: randomUUID(),
    },
    now,
  );
  await recordAudit(db, { actorUserId: staff.userId, orgId: actor.org.id, action: 'shared_model.started', targetType: 'job', targetId: job.id, data: { model: model.id, resourceClassId }, isStaffAction: true });
  return { jobId: job.id };
}

/** stopSharedModel stops a replica of a shared model (a job of the centre's tenant); staff only. */
export async function stopSharedModel(db: Db, step: SchedulerStep, staff: Actor, input: { jobId: string }, now: Date): Promise<{ state: string }> {
  const [job] = await db
    .select({ id: jobs.id, resourceClassId: jobs.resourceClassId, orgId: jobs.orgId })
    .from(jobs)
    .innerJoin(organisations, and(eq(organisations.id, jobs.orgId), eq(organisations.centre, true)))
    .where(and(eq(jobs.id, input.jobId), eq(jobs.kind, 'inference')));
  if (!job) throw new AppError('NOT_FOUND', 'sharedModels.unknownReplica', {}, 'jobId');
  const { actor } = await centreActor(db, staff, job.resourceClassId, now.toISOString().slice(0, 10));
  const result = await cancelJob(db, step, actor, job.id, now);
  await recordAudit(db, { actorUserId: staff.userId, orgId: job.orgId, action: 'shared_model.stopped', targetType: 'job', targetId: job.id, isStaffAction: true });
  return result;
}

/** A replica of a shared model as the Models page lists it. */
export interface SharedReplica {
  jobId: string;
  siteId: string;
  resourceClassId: string;
  state: (typeof jobs.$inferSelect)['state'];
  startedAt: Date | null;
}

/**
 * sharedModelsOverview lists the catalogue's shared models with their replicas not yet ended and their
 * calls of the last 24 hours (every tenant's together: no tenant's figures on their own).
 */
export async function sharedModelsOverview(db: Db, now: Date) {
  const models = configuredCatalogue().inference.sharedModels;
  const ids = models.map((m) => m.id);
  if (ids.length === 0) return [];
  const since = new Date(now.getTime() - 24 * 3600_000);
  const [replicas, traffic] = await Promise.all([
    db
      .select({ jobId: jobs.id, model: jobs.servedModel, siteId: jobs.siteId, resourceClassId: jobs.resourceClassId, state: jobs.state, startedAt: jobs.startedAt })
      .from(jobs)
      .innerJoin(organisations, and(eq(organisations.id, jobs.orgId), eq(organisations.centre, true)))
      .where(and(eq(jobs.kind, 'inference'), inArray(jobs.state, ['SUBMITTING', 'PENDING', 'RUNNING']), inArray(jobs.servedModel, ids)))
      .orderBy(asc(jobs.submittedAt), asc(jobs.id)),
    db
      .select({ model: modelCalls.model, calls: sql<number>`count(*)::int`, tokens: sql<string>`coalesce(sum(${modelCalls.promptTokens} + ${modelCalls.completionTokens}), 0)` })
      .from(modelCalls)
      .where(and(eq(modelCalls.shared, true), inArray(modelCalls.model, ids), gte(modelCalls.startedAt, since)))
      .groupBy(modelCalls.model),
  ]);
  return models.map((m) => {
    const t = traffic.find((r) => r.model === m.id);
    return {
      ...m,
      replicas: replicas.filter((r) => r.model === m.id).map(({ model: _model, ...r }): SharedReplica => r),
      calls24h: t?.calls ?? 0,
      tokens24h: Number(t?.tokens ?? 0),
    };
  });
}
