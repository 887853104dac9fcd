// Who may call what: anonymous callers, members of other tenants, plain members, suspended tenants.
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { appRouter } from '~/server/api/root';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (error) {
    return error instanceof TRPCError ? error.code : `not a TRPCError: ${String(error)}`;
  }
}

const PUBLIC_PROCEDURES = new Set(['account.signUp', 'account.requestPasswordReset', 'account.resetLinkUsable', 'account.resetPassword', 'account.verificationLinkUsable', 'account.verifyEmail', 'invitation.preview']);

describe.each(dbTargets())('access rules on %s', (target) => {
  let handle: DbHandle;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let aMember: Awaited<ReturnType<typeof addMember>>;
  let bMember: Awaited<ReturnType<typeof addMember>>;
  let bInvitationId: string;
  let admin: Awaited<ReturnType<typeof createStaff>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    const db = handle.db;
    a = await createTenant(db, { name: 'Tenant A' });
    b = await createTenant(db, { name: 'Tenant B', kind: 'company' });
    aMember = await addMember(db, a, 'member');
    bMember = await addMember(db, b, 'member');
    const invitation = await callerFor(db, { userId: b.userId }).organisation.invite({ email: 'someone@b.example', role: 'member' });
    bInvitationId = invitation.id;
    admin = await createStaff(db, 'admin');
  });
  afterAll(async () => handle?.close());

  it('refuses anonymous callers on every procedure that needs a session', async () => {
    const anonymous = callerFor(handle.db) as unknown as Record<string, Record<string, (input?: unknown) => Promise<unknown>>>;
    const paths = Object.keys(appRouter._def.procedures);
    expect(paths.length).toBeGreaterThan(10);
    for (const path of paths) {
      if (PUBLIC_PROCEDURES.has(path)) continue;
      const [area, name] = path.split('.') as [string, string];
      expect(`${path}: ${await codeOf(anonymous[area]![name]!({}))}`).toBe(`${path}: UNAUTHORIZED`);
    }
  });

  it("keeps tenant A's member away from every record of tenant B", async () => {
    const asAMember = callerFor(handle.db, { userId: aMember.userId });
    const asAMemberPointingAtB = callerFor(handle.db, { userId: aMember.userId, orgId: b.orgId });
    const asAOwner = callerFor(handle.db, { userId: a.userId });
    // Choosing B as the active organisation does not work for a non-member.
    expect(await codeOf(asAMemberPointingAtB.organisation.current())).toBe('FORBIDDEN');
    expect(await codeOf(asAMemberPointingAtB.organisation.members())).toBe('FORBIDDEN');
    expect(await codeOf(asAMemberPointingAtB.organisation.invitations())).toBe('FORBIDDEN');
    expect(await codeOf(asAMemberPointingAtB.organisation.invite({ email: 'x@y.example', role: 'member' }))).toBe('FORBIDDEN');
    // B's records addressed by id from inside A are not found.
    expect(await codeOf(asAOwner.organisation.revokeInvitation({ invitationId: bInvitationId }))).toBe('NOT_FOUND');
    expect(await codeOf(asAOwner.organisation.changeRole({ userId: bMember.userId, role: 'manager' }))).toBe('NOT_FOUND');
    expect(await codeOf(asAOwner.organisation.removeMember({ userId: b.userId }))).toBe('NOT_FOUND');
    // What A's people do see contains nothing of B.
    const members = await asAMember.organisation.members();
    expect(members.map((m) => m.userId).sort()).toEqual([a.userId, aMember.userId].sort());
    expect((await asAMember.organisation.current()).id).toBe(a.orgId);
    expect((await asAMember.account.myOrganisations()).map((o) => o.id)).toEqual([a.orgId]);
    // Staff views are closed to tenants.
    expect(await codeOf(asAOwner.staff.tenants({}))).toBe('FORBIDDEN');
    expect(await codeOf(asAOwner.staff.audit({ limit: 10 }))).toBe('FORBIDDEN');
    expect(await codeOf(asAOwner.staff.changeTenantStatus({ orgId: b.orgId, action: 'suspend', reason: 'because' }))).toBe('FORBIDDEN');
    // B's data is unchanged.
    const bMembers = await callerFor(handle.db, { userId: b.userId }).organisation.members();
    expect(bMembers.find((m) => m.userId === bMember.userId)?.role).toBe('member');
    expect((await callerFor(handle.db, { userId: b.userId }).organisation.invitations()).map((i) => i.id)).toContain(bInvitationId);
  });

  it('gives plain members no management rights', async () => {
    const asMember = callerFor(handle.db, { userId: aMember.userId });
    expect(await codeOf(asMember.organisation.invite({ email: 'new@a.example', role: 'member' }))).toBe('FORBIDDEN');
    expect(await codeOf(asMember.organisation.invitations())).toBe('FORBIDDEN');
    expect(await codeOf(asMember.organisation.changeRole({ userId: a.userId, role: 'member' }))).toBe('FORBIDDEN');
  });

  it('lets a suspended tenant read but not act, and audits suspend and reactivate with actor and reason', async () => {
    const staff = callerFor(handle.db, { userId: admin.userId });
    await staff.staff.changeTenantStatus({ orgId: a.orgId, action: 'suspend', reason: 'Unpaid invoices since March' });
    const asOwner = callerFor(handle.db, { userId: a.userId });
    expect((await asOwner.organisation.current()).status).toBe('suspended');
    expect(await codeOf(asOwner.organisation.invite({ email: 'late@a.example', role: 'member' }))).toBe('FORBIDDEN');
    expect(await codeOf(asOwner.organisation.changeRole({ userId: aMember.userId, role: 'manager' }))).toBe('FORBIDDEN');
    await expect(asOwner.organisation.invite({ email: 'late@a.example', role: 'member' })).rejects.toThrow(/suspended/);
    await staff.staff.changeTenantStatus({ orgId: a.orgId, action: 'reactivate', reason: 'Paid' });
    await expect(asOwner.organisation.invite({ email: 'late@a.example', role: 'member' })).resolves.toMatchObject({ email: 'late@a.example' });
    const audit = await staff.staff.audit({ orgId: a.orgId, actorUserId: admin.userId, limit: 10 });
    expect(audit.map((e) => [e.action, e.reason, e.actorUserId])).toEqual([
      ['tenant.reactivated', 'Paid', admin.userId],
      ['tenant.suspended', 'Unpaid invoices since March', admin.userId],
    ]);
  });

  it('lets only admins change tenant status, and only along allowed transitions', async () => {
    const reviewer = await createStaff(handle.db, 'reviewer');
    const asReviewer = callerFor(handle.db, { userId: reviewer.userId });
    expect(await codeOf(asReviewer.staff.tenants({}))).toBe('OK');
    expect(await codeOf(asReviewer.staff.changeTenantStatus({ orgId: b.orgId, action: 'verify', reason: 'Looks fine' }))).toBe('FORBIDDEN');
    const staff = callerFor(handle.db, { userId: admin.userId });
    expect(await codeOf(staff.staff.changeTenantStatus({ orgId: a.orgId, action: 'verify', reason: 'Already active' }))).toBe('PRECONDITION_FAILED');
    expect(await codeOf(staff.staff.changeTenantStatus({ orgId: b.orgId, action: 'verify', reason: 'Registry entry checked' }))).toBe('OK');
    expect((await callerFor(handle.db, { userId: b.userId }).organisation.current()).status).toBe('active');
    // The owner is told, as the dashboard promised while the tenant waited.
    const notices = await callerFor(handle.db, { userId: b.userId }).notification.list();
    expect(notices.some((n) => n.text.includes('is verified and active'))).toBe(true);
  });

  it('refuses anyone but the invited address to accept an invitation', async () => {
    const invitation = await callerFor(handle.db, { userId: b.userId }).organisation.invite({ email: 'only-this@b.example', role: 'member' });
    const token = invitation.path.split('/').pop()!;
    expect(await codeOf(callerFor(handle.db, { userId: aMember.userId }).invitation.accept({ token }))).toBe('FORBIDDEN');
    expect((await callerFor(handle.db, { userId: b.userId }).organisation.members()).map((m) => m.userId)).not.toContain(aMember.userId);
  });
});
