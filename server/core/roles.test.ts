import { describe, expect, it } from 'vitest';
import { checkInvite, checkRoleChange, nextTenantStatus, roleAtLeast } from './roles';

describe('roleAtLeast', () => {
  it.each([
    ['owner', 'manager', true],
    ['manager', 'manager', true],
    ['member', 'manager', false],
    ['member', 'member', true],
    ['manager', 'owner', false],
  ] as const)('%s ≥ %s is %s', (role, min, expected) => {
    expect(roleAtLeast(role, min)).toBe(expected);
  });
});

describe('checkInvite', () => {
  it.each([
    ['owner', 'owner', undefined],
    ['owner', 'member', undefined],
    ['manager', 'manager', undefined],
    ['manager', 'owner', 'inviteOwnerOnly'],
    ['member', 'member', 'roleTooLow'],
  ] as const)('%s inviting a %s → %s', (actor, invited, expected) => {
    expect(checkInvite(actor, invited)).toBe(expected);
  });
});

describe('checkRoleChange', () => {
  it('refuses to demote the last owner', () => {
    expect(checkRoleChange({ actorRole: 'owner', targetRole: 'owner', newRole: 'member', ownerCount: 1 })).toBe('lastOwner');
    expect(checkRoleChange({ actorRole: 'owner', targetRole: 'owner', newRole: null, ownerCount: 1 })).toBe('lastOwner');
  });
  it('lets an owner demote one of two owners', () => {
    expect(checkRoleChange({ actorRole: 'owner', targetRole: 'owner', newRole: 'manager', ownerCount: 2 })).toBeUndefined();
  });
  it('keeps managers away from owners', () => {
    expect(checkRoleChange({ actorRole: 'manager', targetRole: 'owner', newRole: 'member', ownerCount: 2 })).toBe('cannotChangeOwner');
    expect(checkRoleChange({ actorRole: 'manager', targetRole: 'member', newRole: 'owner', ownerCount: 1 })).toBe('inviteOwnerOnly');
  });
  it('lets a manager promote a member to manager and refuses plain members', () => {
    expect(checkRoleChange({ actorRole: 'manager', targetRole: 'member', newRole: 'manager', ownerCount: 1 })).toBeUndefined();
    expect(checkRoleChange({ actorRole: 'member', targetRole: 'member', newRole: null, ownerCount: 1 })).toBe('roleTooLow');
  });
});

describe('nextTenantStatus', () => {
  it.each([
    ['pending_verification', 'verify', 'active'],
    ['active', 'verify', undefined],
    ['active', 'suspend', 'suspended'],
    ['pending_verification', 'suspend', 'suspended'],
    ['suspended', 'suspend', undefined],
    ['suspended', 'reactivate', 'active'],
    ['active', 'reactivate', undefined],
  ] as const)('%s + %s → %s', (from, action, to) => {
    expect(nextTenantStatus(from, action)).toBe(to);
  });
});
