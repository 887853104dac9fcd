// Tenants as centre staff see them: the list, and verify / suspend / reactivate with a reason.
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { memberships, organisations, type OrgStatus } from '~/db/schema';
import { nextTenantStatus, type TenantStatusAction } from '~/server/core/roles';
import type { AuditKind } from '~/server/core/audit';
import { AppError } from '~/server/errors';
import type { Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { notify } from '~/server/services/mail/notifications';
import { projectIdsOfTenant, syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { inTransaction } from '~/server/services/transaction';

/** listTenants lists every tenant (optionally of one status) with its member count. */
export async function listTenants(db: Db, filter: { status?: OrgStatus }) {
  const memberCounts = db
    .select({ orgId: memberships.orgId, n: count().as('n') })
    .from(memberships)
    .groupBy(memberships.orgId)
    .as('member_counts');
  return db
    .select({
      id: organisations.id,
      name: organisations.name,
      kind: organisations.kind,
      country: organisations.country,
      residency: organisations.residency,
      status: organisations.status,
      statusReason: organisations.statusReason,
      createdAt: organisations.createdAt,
      memberCount: sql<number>`coalesce(${memberCounts.n}, 0)::int`,
    })
    .from(organisations)
    .leftJoin(memberCounts, eq(memberCounts.orgId, organisations.id))
    .where(filter.status ? eq(organisations.status, filter.status) : undefined)
    .orderBy(sql`${organisations.status} = 'pending_verification' desc`, asc(organisations.name));
}

/** tenantStatusCounts counts tenants by status, for the staff dashboard. */
export async function tenantStatusCounts(db: Db): Promise<Record<OrgStatus, number>> {
  const rows = await db.select({ status: organisations.status, n: count() }).from(organisations).groupBy(organisations.status);
  const counts: Record<OrgStatus, number> = { pending_verification: 0, active: 0, suspended: 0 };
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

const NOTICE = { verify: 'notice.tenantVerified', suspend: 'notice.tenantSuspended', reactivate: 'notice.tenantReactivated' } as const;

const AUDIT_ACTION: Record<TenantStatusAction, AuditKind> = {
  verify: 'tenant.verified',
  suspend: 'tenant.suspended',
  reactivate: 'tenant.reactivated',
};

/**
 * changeTenantStatus applies a staff action to a tenant, audited with actor and reason; then the
 * scheduler's budgets of its projects follow (`budgets`): frozen at what they used while suspended.
 */
export async function changeTenantStatus(
  db: Db,
  actor: Actor,
  input: { orgId: string; action: TenantStatusAction; reason: string },
  budgets?: BudgetSyncStep,
): Promise<{ status: OrgStatus }> {
  const changed = await inTransaction(db, async (tx) => {
    const [org] = await tx
      .select({ id: organisations.id, status: organisations.status })
      .from(organisations)
      .where(eq(organisations.id, input.orgId))
      .for('no key update');
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
    const next = nextTenantStatus(org.status, input.action);
    if (!next) {
      throw new AppError('PRECONDITION_FAILED', 'error.statusTransition', { from: org.status, action: input.action });
    }
    await tx
      .update(organisations)
      .set({ status: next, statusReason: input.reason })
      .where(eq(organisations.id, org.id));
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: org.id,
      action: AUDIT_ACTION[input.action],
      targetType: 'organisation',
      targetId: org.id,
      reason: input.reason,
      data: { from: org.status, to: next },
      isStaffAction: true,
    });
    // Tell the tenant's owners and managers (the dashboard promises this for verification).
    const [named] = await tx.select({ name: organisations.name }).from(organisations).where(eq(organisations.id, org.id));
    const leads = await tx
      .select({ userId: memberships.userId })
      .from(memberships)
      .where(and(eq(memberships.orgId, org.id), inArray(memberships.role, ['owner', 'manager'])));
    await notify(tx, leads.map((l) => l.userId), NOTICE[input.action], { org: named?.name ?? '', reason: input.reason }, '/dashboard', { orgId: org.id });
    return { status: next };
  });
  if (budgets) await syncBudgetsAfterCommit(db, budgets, await projectIdsOfTenant(db, input.orgId));
  return changed;
}

/** tenantSignIn tells staff how a tenant's members must sign in. */
export async function tenantSignIn(db: Db, orgId: string): Promise<{ requireSso: boolean }> {
  const [org] = await db.select({ requireSso: organisations.requireSso }).from(organisations).where(eq(organisations.id, orgId));
  if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
  return org;
}

/**
 * setRequireSso makes a tenant's members sign in through single sign-on (their password sign-in is
 * refused from then on) or lets passwords in again; audited with the staff member's reason.
 */
export async function setRequireSso(db: Db, actor: Actor, input: { orgId: string; requireSso: boolean; reason: string }): Promise<{ requireSso: boolean }> {
  return inTransaction(db, async (tx) => {
    const [org] = await tx
      .update(organisations)
      .set({ requireSso: input.requireSso })
      .where(eq(organisations.id, input.orgId))
      .returning({ id: organisations.id, requireSso: organisations.requireSso });
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: org.id,
      action: input.requireSso ? 'tenant.sso_required' : 'tenant.sso_optional',
      targetType: 'organisation',
      targetId: org.id,
      reason: input.reason,
      isStaffAction: true,
    });
    return { requireSso: org.requireSso };
  });
}
