// Membership roles of a tenant and what each may do to the others. Pure rules.

export const MEMBER_ROLES = ['owner', 'manager', 'member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

const RANK: Record<MemberRole, number> = { member: 1, manager: 2, owner: 3 };

/** roleAtLeast tells whether a role is the given minimum or higher. */
export function roleAtLeast(role: MemberRole, minimum: MemberRole): boolean {
  return RANK[role] >= RANK[minimum];
}

export type RoleChangeRefusal = 'roleTooLow' | 'inviteOwnerOnly' | 'cannotChangeOwner' | 'lastOwner';

/** checkInvite decides whether an actor may invite someone with a role; undefined means allowed. */
export function checkInvite(actorRole: MemberRole, invitedRole: MemberRole): RoleChangeRefusal | undefined {
  if (!roleAtLeast(actorRole, 'manager')) return 'roleTooLow';
  if (invitedRole === 'owner' && actorRole !== 'owner') return 'inviteOwnerOnly';
  return undefined;
}

/** checkRoleChange decides whether an actor may move a member from one role to another (or remove them, newRole null). */
export function checkRoleChange(input: {
  actorRole: MemberRole;
  targetRole: MemberRole;
  newRole: MemberRole | null;
  ownerCount: number;
}): RoleChangeRefusal | undefined {
  const { actorRole, targetRole, newRole, ownerCount } = input;
  if (!roleAtLeast(actorRole, 'manager')) return 'roleTooLow';
  if ((targetRole === 'owner' || newRole === 'owner') && actorRole !== 'owner') {
    return targetRole === 'owner' ? 'cannotChangeOwner' : 'inviteOwnerOnly';
  }
  if (targetRole === 'owner' && newRole !== 'owner' && ownerCount <= 1) return 'lastOwner';
  return undefined;
}

export const ORG_STATUSES = ['pending_verification', 'active', 'suspended'] as const;
export type OrgStatus = (typeof ORG_STATUSES)[number];
export type TenantStatusAction = 'verify' | 'suspend' | 'reactivate';

/** nextTenantStatus returns the status a staff action leads to, or undefined if the action does not apply. */
export function nextTenantStatus(current: OrgStatus, action: TenantStatusAction): OrgStatus | undefined {
  if (action === 'verify') return current === 'pending_verification' ? 'active' : undefined;
  if (action === 'suspend') return current === 'suspended' ? undefined : 'suspended';
  return current === 'suspended' ? 'active' : undefined;
}
