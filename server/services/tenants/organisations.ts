// Tenants as their members see them: which ones a person belongs to, members and roles.
import { and, asc, count, eq } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, memberships, organisations, users, type MemberRole } from '~/db/schema';
import { checkRoleChange, type RoleChangeRefusal } from '~/server/core/roles';
import { AppError } from '~/server/errors';
import type { Membership, TenantActor, TenantRef } from '~/server/services/actor';
import { inTransaction } from '~/server/services/transaction';
import { recordAudit } from '~/server/services/audit';
import { endSessionsIfUnattached } from '~/server/services/identity/sessions';

/** refusalError turns a role-rule refusal into the error the caller sees. */
export function refusalError(refusal: RoleChangeRefusal, actor: TenantActor, field?: string): AppError {
  switch (refusal) {
    case 'roleTooLow':
      return new AppError('FORBIDDEN', 'error.roleTooLow', { role: 'manager', org: actor.org.name });
    case 'inviteOwnerOnly':
      return new AppError('FORBIDDEN', 'error.inviteOwnerOnly', {}, field);
    case 'cannotChangeOwner':
      return new AppError('FORBIDDEN', 'error.cannotChangeOwner');
    case 'lastOwner':
      return new AppError('PRECONDITION_FAILED', 'error.lastOwner', {}, field);
  }
}

/** listMyOrganisations lists the tenants a user belongs to, with their role. */
export async function listMyOrganisations(db: Db, userId: string) {
  return db
    .select({ id: organisations.id, name: organisations.name, kind: organisations.kind, status: organisations.status, role: memberships.role })
    .from(memberships)
    .innerJoin(organisations, eq(organisations.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(organisations.name), asc(organisations.id));
}

/** The tenant a user acts for and their role in it, or why there is none. */
export type ResolvedTenant = { org: TenantRef; role: MemberRole } | { org: undefined; requestedButNotMember: boolean };

/** chooseTenant picks from a user's tenants (in listMyOrganisations' order) the one they act for: the requested one, else their first. */
export function chooseTenant(mine: Membership[], requestedOrgId: string | undefined): ResolvedTenant {
  const chosen = requestedOrgId ? mine.find((o) => o.id === requestedOrgId) : mine[0];
  if (!chosen) return { org: undefined, requestedButNotMember: Boolean(requestedOrgId) };
  return { org: { id: chosen.id, name: chosen.name, kind: chosen.kind, status: chosen.status }, role: chosen.role };
}

/** getOrganisation returns the actor's tenant with its details. */
export async function getOrganisation(db: Db, actor: TenantActor) {
  const [org] = await db.select().from(organisations).where(eq(organisations.id, actor.org.id)).limit(1);
  if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
  const [[members], [line]] = await Promise.all([
    db.select({ n: count() }).from(memberships).where(eq(memberships.orgId, org.id)),
    // Any credit line, as startPayAsYouGo asks: one from staff makes the starter line not apply.
    db.select({ id: allocations.id }).from(allocations).where(and(eq(allocations.orgId, org.id), eq(allocations.unit, 'cents'))).limit(1),
  ]);
  return { ...org, memberCount: members?.n ?? 0, myRole: actor.role, hasCreditLine: line !== undefined };
}

/** listMembers lists the people of the actor's tenant. */
export async function listMembers(db: Db, actor: TenantActor) {
  return db
    .select({ userId: users.id, name: users.name, email: users.email, role: memberships.role, since: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.orgId, actor.org.id))
    .orderBy(asc(users.name));
}

/** changeMemberRole moves a member of the actor's tenant to a new role, or removes them (newRole null). */
export async function changeMemberRole(db: Db, actor: TenantActor, userId: string, newRole: MemberRole | null): Promise<void> {
  await inTransaction(db, async (tx) => {
    // Lock the tenant's memberships so two owners cannot demote each other at once.
    const rows = await tx
      .select({ userId: memberships.userId, role: memberships.role })
      .from(memberships)
      .where(eq(memberships.orgId, actor.org.id))
      .for('update');
    const target = rows.find((r) => r.userId === userId);
    if (!target) throw new AppError('NOT_FOUND', 'error.notFound');
    const refusal = checkRoleChange({
      actorRole: actor.role,
      targetRole: target.role,
      newRole,
      ownerCount: rows.filter((r) => r.role === 'owner').length,
    });
    if (refusal) throw refusalError(refusal, actor, 'role');
    const where = and(eq(memberships.orgId, actor.org.id), eq(memberships.userId, userId));
    if (newRole === null) {
      await tx.delete(memberships).where(where);
      // Removed from their last tenant (and not staff): their sessions end at once.
      await endSessionsIfUnattached(tx, userId);
    } else await tx.update(memberships).set({ role: newRole }).where(where);
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: actor.org.id,
      action: newRole === null ? 'member.removed' : 'member.role_changed',
      targetType: 'membership',
      targetId: userId,
      data: { from: target.role, to: newRole },
    });
  });
}
