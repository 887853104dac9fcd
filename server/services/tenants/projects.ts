// Projects of a tenant: a PI, members with project roles, and what the project may spend.
import { and, asc, desc, eq, inArray, or } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocations, applications, memberships, organisations, projectMembers, projects, resourceClasses, users } from '~/db/schema';
import { checkProjectPurpose, storedPurpose, type ProjectPurpose } from '~/server/core/projects';
import { roleAtLeast } from '~/server/core/roles';
import { AppError } from '~/server/errors';
import type { TenantActor } from '~/server/services/actor';
import { inTransaction } from '~/server/services/transaction';
import { recordAudit } from '~/server/services/audit';
import { syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { localName } from '~/server/catalogue';
import type { Locale } from '~/server/i18n';

export type ProjectRole = 'pi' | 'manager' | 'member';

export interface ProjectAccess {
  project: typeof projects.$inferSelect;
  /** The actor's role in the project, if they are in it. */
  projectRole: ProjectRole | null;
  /** PI, project manager, or tenant owner/manager: may apply, add members. */
  canManage: boolean;
}

/** projectAccess loads a project of the actor's tenant and says what the actor may do; NOT_FOUND for others' projects. */
export async function projectAccess(db: DbOrTx, actor: TenantActor, projectId: string): Promise<ProjectAccess> {
  const [row] = await db
    .select({ project: projects, role: projectMembers.role })
    .from(projects)
    .leftJoin(projectMembers, and(eq(projectMembers.projectId, projects.id), eq(projectMembers.userId, actor.userId)))
    .where(and(eq(projects.id, projectId), eq(projects.orgId, actor.org.id)));
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound');
  const { project } = row;
  const projectRole = row.role ?? null;
  const tenantLead = roleAtLeast(actor.role, 'manager');
  if (!projectRole && !tenantLead) throw new AppError('NOT_FOUND', 'error.notFound');
  return { project, projectRole, canManage: tenantLead || projectRole === 'pi' || projectRole === 'manager' };
}

/** requireProjectManager refuses actors who may only read the project. */
export function requireProjectManager(access: ProjectAccess): void {
  if (!access.canManage) throw new AppError('FORBIDDEN', 'project.leadsOnly');
}

export interface CreateProjectInput extends ProjectPurpose {
  title: string;
  abstract: string;
  members: { userId: string; role: ProjectRole }[];
}

async function assertTenantMembers(db: DbOrTx, orgId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  const rows = await db.select({ userId: memberships.userId }).from(memberships).where(and(eq(memberships.orgId, orgId), inArray(memberships.userId, userIds)));
  if (rows.length !== new Set(userIds).size) throw new AppError('BAD_REQUEST', 'project.memberNotInTenant', {}, 'members');
}

/**
 * createProject creates a project in the actor's tenant with the actor as PI and the chosen colleagues.
 * It says what it is for as its tenant kind is asked (core checkProjectPurpose): research its field of
 * science, a company its kind of workload and data residency need.
 */
export async function createProject(db: Db, actor: TenantActor, input: CreateProjectInput) {
  const [org] = await db.select({ residency: organisations.residency }).from(organisations).where(eq(organisations.id, actor.org.id));
  const tenant = { kind: actor.org.kind, residency: org!.residency };
  const problem = checkProjectPurpose(tenant, input)[0];
  if (problem) throw new AppError('BAD_REQUEST', problem.key, 'params' in problem ? problem.params : {}, problem.field);
  return insertProject(db, actor, { ...input, ...storedPurpose(tenant.kind, tenant.residency, input) });
}

/** insertProject writes a project and its members, audited (the pay-as-you-go start's own project comes here directly). */
export async function insertProject(db: Db, actor: TenantActor, input: CreateProjectInput) {
  const others = input.members.filter((m) => m.userId !== actor.userId);
  if (others.some((m) => m.role === 'pi')) throw new AppError('BAD_REQUEST', 'project.onePi', {}, 'members');
  await assertTenantMembers(db, actor.org.id, others.map((m) => m.userId));
  return inTransaction(db, async (tx) => {
    const [project] = await tx
      .insert(projects)
      .values({ orgId: actor.org.id, title: input.title, abstract: input.abstract, fieldOfScience: input.fieldOfScience ?? null, workloadKind: input.workloadKind ?? null, dataResidency: input.dataResidency ?? null, createdBy: actor.userId })
      .returning();
    if (!project) throw new Error('project insert returned nothing');
    await tx.insert(projectMembers).values([{ projectId: project.id, userId: actor.userId, role: 'pi' as const }, ...others.map((m) => ({ projectId: project.id, userId: m.userId, role: m.role }))]);
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'project.created', targetType: 'project', targetId: project.id, data: { title: input.title } });
    return project;
  });
}

/** listProjects lists the tenant's projects the actor may see (all of them for owners and managers). */
export async function listProjects(db: DbOrTx, actor: TenantActor) {
  const mine = db.select({ projectId: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, actor.userId));
  const visible = roleAtLeast(actor.role, 'manager') ? eq(projects.orgId, actor.org.id) : and(eq(projects.orgId, actor.org.id), inArray(projects.id, mine));
  const rows = await db.select().from(projects).where(visible).orderBy(desc(projects.createdAt));
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [allocs, pis] = await Promise.all([
    db
      .select({ projectId: allocations.projectId, unit: allocations.unit, status: allocations.status, granted: allocations.granted, charged: allocations.charged, reserved: allocations.reserved, expired: allocations.expired })
      .from(allocations)
      .where(inArray(allocations.projectId, ids)),
    db
      .select({ projectId: projectMembers.projectId, name: users.name })
      .from(projectMembers)
      .innerJoin(users, eq(users.id, projectMembers.userId))
      .where(and(inArray(projectMembers.projectId, ids), eq(projectMembers.role, 'pi'))),
  ]);
  return rows.map((p) => ({
    ...p,
    piName: pis.find((x) => x.projectId === p.id)?.name ?? '',
    activeAllocations: allocs.filter((a) => a.projectId === p.id && a.status === 'active'),
  }));
}

/** getProject returns a project with members, allocations and applications, for someone allowed to see it. */
export async function getProject(db: DbOrTx, actor: TenantActor, projectId: string, locale: Locale = 'en') {
  const access = await projectAccess(db, actor, projectId);
  const [members, allocs, apps] = await Promise.all([
    db
      .select({ userId: users.id, name: users.name, email: users.email, role: projectMembers.role })
      .from(projectMembers)
      .innerJoin(users, eq(users.id, projectMembers.userId))
      .where(eq(projectMembers.projectId, projectId))
      .orderBy(asc(users.name)),
    db
      .select({ allocation: allocations, resourceClassName: resourceClasses.name, resourceClassNameDe: resourceClasses.nameDe })
      .from(allocations)
      .leftJoin(resourceClasses, eq(resourceClasses.id, allocations.resourceClassId))
      .where(eq(allocations.projectId, projectId))
      .orderBy(desc(allocations.createdAt)),
    db.select().from(applications).where(eq(applications.projectId, projectId)).orderBy(desc(applications.createdAt)),
  ]);
  return {
    ...access,
    members,
    allocations: allocs.map((a) => ({ ...a.allocation, resourceClassName: a.resourceClassName === null ? null : localName(locale, { name: a.resourceClassName, nameDe: a.resourceClassNameDe }) })),
    applications: apps,
  };
}

/** setProjectMember adds a tenant colleague to a project or changes their role (PI, managers, tenant leads). */
export async function setProjectMember(db: Db, actor: TenantActor, input: { projectId: string; userId: string; role: ProjectRole }, budgets?: BudgetSyncStep) {
  const access = await projectAccess(db, actor, input.projectId);
  requireProjectManager(access);
  if (input.role === 'pi') throw new AppError('BAD_REQUEST', 'project.onePi', {}, 'role');
  await assertTenantMembers(db, actor.org.id, [input.userId]);
  await inTransaction(db, async (tx) => {
    const [current] = await tx
      .select({ role: projectMembers.role })
      .from(projectMembers)
      .where(and(eq(projectMembers.projectId, input.projectId), eq(projectMembers.userId, input.userId)));
    if (current?.role === 'pi') throw new AppError('PRECONDITION_FAILED', 'project.piStays', {}, 'role');
    await tx
      .insert(projectMembers)
      .values({ projectId: input.projectId, userId: input.userId, role: input.role })
      .onConflictDoUpdate({ target: [projectMembers.projectId, projectMembers.userId], set: { role: input.role } });
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'project.member_set', targetType: 'project', targetId: input.projectId, data: { userId: input.userId, role: input.role, from: current?.role ?? null } });
  });
  // A new member may run jobs in the project's account (where jobs run as their people).
  await syncBudgetsAfterCommit(db, budgets, [input.projectId]);
}

/** removeProjectMember takes someone off a project (not the PI). */
export async function removeProjectMember(db: Db, actor: TenantActor, input: { projectId: string; userId: string }, budgets?: BudgetSyncStep) {
  const access = await projectAccess(db, actor, input.projectId);
  requireProjectManager(access);
  await inTransaction(db, async (tx) => {
    const [removed] = await tx
      .delete(projectMembers)
      .where(and(eq(projectMembers.projectId, input.projectId), eq(projectMembers.userId, input.userId), or(eq(projectMembers.role, 'manager'), eq(projectMembers.role, 'member'))))
      .returning({ role: projectMembers.role });
    if (!removed) throw new AppError('NOT_FOUND', 'error.notFound');
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: 'project.member_removed', targetType: 'project', targetId: input.projectId, data: { userId: input.userId } });
  });
  // One who left can no longer submit into the project's account.
  await syncBudgetsAfterCommit(db, budgets, [input.projectId]);
}

/** projectLeads returns the ids of a project's PI and managers, who receive its notices. */
export async function projectLeads(db: DbOrTx, projectId: string): Promise<string[]> {
  const rows = await db
    .select({ userId: projectMembers.userId })
    .from(projectMembers)
    .where(and(eq(projectMembers.projectId, projectId), inArray(projectMembers.role, ['pi', 'manager'])));
  return rows.map((r) => r.userId);
}

