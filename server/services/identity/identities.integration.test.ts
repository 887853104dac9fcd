// Single sign-on's resolution rules on a real database: a known identity, a new account, an address
// with an account that links only with its password (and its lockout), entitlement memberships, a
// tenant requiring single sign-on, and the last way in that cannot be removed.
import { TRPCError } from '@trpc/server';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { auditEvents, memberships, userIdentities, users } from '~/db/schema';
import type { SsoProfile } from '~/server/core/identities';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD, type TargetName } from '~/server/testing/harness';
import { linkWithPassword, resolveSsoSignIn, ssoRequiredBy } from './identities';

let serial = 0;
function profile(overrides: Partial<SsoProfile> = {}): SsoProfile {
  serial += 1;
  return { provider: 'uni', subject: `subject-${serial}-${Date.now()}`, email: `sso-${serial}-${Date.now()}@idp.example`, emailVerified: true, name: 'Sam Sso', entitlements: [], ...overrides };
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => (e instanceof TRPCError ? e.code : String(e)),
  );
}

describe.each(dbTargets())('single sign-on on %s', (target: TargetName) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  const auditOf = (userId: string) => handle.db.select({ action: auditEvents.action, orgId: auditEvents.orgId, data: auditEvents.data }).from(auditEvents).where(eq(auditEvents.targetId, userId));

  it('creates an account without a password for a new address and signs the same identity in again', async () => {
    const person = profile();
    const first = await resolveSsoSignIn(handle.db, person, []);
    expect(first).toMatchObject({ kind: 'signedIn', created: true, user: { email: person.email, name: 'Sam Sso' } });
    if (first.kind !== 'signedIn') throw new Error('expected a sign-in');
    const [account] = await handle.db.select().from(users).where(eq(users.id, first.user.id));
    expect(account?.passwordHash).toBeNull();
    expect(account?.emailVerifiedAt).toBeInstanceOf(Date);
    expect((await auditOf(first.user.id)).map((a) => a.action).sort()).toEqual(['account.created_by_sso', 'account.identity_linked']);

    // The same (provider, subject) is the same person, even if the provider now says another address.
    const later = new Date(Date.now() + 60_000);
    const again = await resolveSsoSignIn(handle.db, { ...person, email: 'renamed@idp.example' }, [], later);
    expect(again).toMatchObject({ kind: 'signedIn', created: false, user: { id: first.user.id } });
    const identities = await callerFor(handle.db, { userId: first.user.id }).account.identities();
    expect(identities).toEqual([expect.objectContaining({ provider: 'uni', providerName: 'uni', email: person.email, lastUsedAt: later })]);
    // The same subject at another provider is someone else.
    const elsewhere = await resolveSsoSignIn(handle.db, { ...profile(), subject: person.subject, provider: 'other' }, []);
    expect(elsewhere.kind === 'signedIn' && elsewhere.user.id).not.toBe(first.user.id);
  });

  it('leaves the address unverified when the provider does not vouch for it, and refuses a sign-in without an address', async () => {
    const unverified = await resolveSsoSignIn(handle.db, profile({ emailVerified: false }), []);
    if (unverified.kind !== 'signedIn') throw new Error('expected a sign-in');
    const [account] = await handle.db.select({ verified: users.emailVerifiedAt }).from(users).where(eq(users.id, unverified.user.id));
    expect(account?.verified).toBeNull();
    await expect(resolveSsoSignIn(handle.db, profile({ email: null }), [])).rejects.toThrow('signIn.ssoNoEmail');
  });

  it('lets a new account from a provider accept an invitation to its address, which proves the address', async () => {
    const owner = await createTenant(handle.db);
    const invited = `invited-${Date.now()}@idp.example`;
    const invitation = await callerFor(handle.db, { userId: owner.userId, orgId: owner.orgId }).organisation.invite({ email: invited, role: 'member' });
    const outcome = await resolveSsoSignIn(handle.db, profile({ email: invited, emailVerified: false }), []);
    if (outcome.kind !== 'signedIn') throw new Error('expected a sign-in');
    const verifiedAt = async () => (await handle.db.select({ at: users.emailVerifiedAt }).from(users).where(eq(users.id, outcome.user.id)))[0]?.at;
    expect(await verifiedAt()).toBeNull();
    expect(await callerFor(handle.db, { userId: outcome.user.id }).invitation.accept({ token: invitation.path.split('/').pop()! })).toEqual({ orgId: owner.orgId, orgName: owner.orgName });
    expect(await verifiedAt()).toBeInstanceOf(Date);
  });

  it('does not link an address that has an account until that account’s password is given; wrong ones count towards the lockout', async () => {
    const owner = await createTenant(handle.db);
    const person = profile({ email: owner.email.toLowerCase() });
    const outcome = await resolveSsoSignIn(handle.db, person, []);
    expect(outcome).toEqual({ kind: 'confirmLink', userId: owner.userId, email: owner.email.toLowerCase() });
    expect(await handle.db.select().from(userIdentities).where(eq(userIdentities.userId, owner.userId))).toHaveLength(0);

    const pending = { userId: owner.userId, profile: person };
    expect(await linkWithPassword(handle.db, pending, 'not-the-password', { address: '198.51.100.7' }, [])).toEqual({ refused: 'wrongPassword' });
    expect(await handle.db.select().from(userIdentities).where(eq(userIdentities.userId, owner.userId))).toHaveLength(0);

    const linked = await linkWithPassword(handle.db, pending, TEST_PASSWORD, { address: '198.51.100.7' }, []);
    expect(linked).toMatchObject({ user: { id: owner.userId, email: owner.email } });
    expect((await auditOf(owner.userId)).map((a) => a.action)).toContain('account.identity_linked');
    // From now on the provider signs the account in directly.
    expect(await resolveSsoSignIn(handle.db, person, [])).toMatchObject({ kind: 'signedIn', user: { id: owner.userId } });
    // A pending link for an identity another account holds meanwhile is refused.
    const other = await createTenant(handle.db);
    await expect(linkWithPassword(handle.db, { userId: other.userId, profile: { ...person, email: other.email } }, TEST_PASSWORD, {}, [])).rejects.toThrow('signIn.ssoLinkedElsewhere');

    // Ten wrong passwords lock the account: then even the right one is refused until the lock ends.
    const victim = await createTenant(handle.db);
    const attack = { userId: victim.userId, profile: profile({ email: victim.email }) };
    const now = new Date();
    for (let i = 0; i < 10; i += 1) await linkWithPassword(handle.db, attack, `guess-${i}`, {}, [], now);
    expect(await linkWithPassword(handle.db, attack, TEST_PASSWORD, {}, [], now)).toMatchObject({ refused: 'lockedOut' });
    expect(await handle.db.select().from(userIdentities).where(eq(userIdentities.userId, victim.userId))).toHaveLength(0);
  });

  it('adds the memberships the entitlement claim maps to, by organisation name or id, and keeps a role already held', async () => {
    const lab = await createTenant(handle.db);
    const institute = await createTenant(handle.db);
    const mappings = [
      { value: 'urn:geant:example.org:group:lab#idp', org: lab.orgName.toUpperCase(), role: 'member' as const },
      { value: 'urn:geant:example.org:group:institute#idp', org: institute.orgId, role: 'manager' as const },
      { value: 'urn:geant:example.org:group:gone#idp', org: 'No Such Organisation', role: 'owner' as const },
    ];
    const person = profile({ entitlements: ['urn:geant:example.org:group:lab#idp', 'urn:geant:example.org:group:gone#idp', 'urn:unrelated'] });
    const outcome = await resolveSsoSignIn(handle.db, person, mappings);
    if (outcome.kind !== 'signedIn') throw new Error('expected a sign-in');
    const rolesOf = async () => (await handle.db.select({ orgId: memberships.orgId, role: memberships.role }).from(memberships).where(eq(memberships.userId, outcome.user.id))).sort((a, b) => a.orgId.localeCompare(b.orgId));
    expect(await rolesOf()).toEqual([{ orgId: lab.orgId, role: 'member' }]);
    const entitled = (await auditOf(outcome.user.id)).filter((a) => a.action === 'member.entitled');
    expect(entitled).toHaveLength(1);
    expect(entitled[0]).toMatchObject({ orgId: lab.orgId, data: { role: 'member', provider: 'uni' } });

    // The lab's owner makes them a manager; the next sign-in, now entitled to the institute too, keeps that.
    await handle.db.update(memberships).set({ role: 'manager' }).where(and(eq(memberships.userId, outcome.user.id), eq(memberships.orgId, lab.orgId)));
    await resolveSsoSignIn(handle.db, { ...person, entitlements: ['urn:geant:example.org:group:lab#idp', 'urn:geant:example.org:group:institute#idp'] }, mappings);
    expect(await rolesOf()).toEqual(
      [
        { orgId: lab.orgId, role: 'manager' },
        { orgId: institute.orgId, role: 'manager' },
      ].sort((a, b) => a.orgId.localeCompare(b.orgId)),
    );
    // Without a mapping configured the claim gives nothing.
    const unmapped = await resolveSsoSignIn(handle.db, profile({ entitlements: ['urn:geant:example.org:group:lab#idp'] }), []);
    if (unmapped.kind !== 'signedIn') throw new Error('expected a sign-in');
    expect(await handle.db.select().from(memberships).where(eq(memberships.userId, unmapped.user.id))).toHaveLength(0);
  });

  it('lets an admin require single sign-on for one tenant only, audited; its members are named the organisation', async () => {
    const a = await createTenant(handle.db);
    const b = await createTenant(handle.db);
    const admin = await createStaff(handle.db, 'admin');
    const reviewer = await createStaff(handle.db, 'reviewer');
    const asAdmin = callerFor(handle.db, { userId: admin.userId });
    expect(await asAdmin.staff.tenantSignIn({ orgId: a.orgId })).toEqual({ requireSso: false });
    expect(await code(callerFor(handle.db, { userId: reviewer.userId }).staff.setRequireSso({ orgId: a.orgId, requireSso: true, reason: 'Not mine to decide' }))).toBe('FORBIDDEN');
    expect(await code(callerFor(handle.db, { userId: a.userId, orgId: a.orgId }).staff.setRequireSso({ orgId: a.orgId, requireSso: true, reason: 'Own tenant' }))).toBe('FORBIDDEN');
    expect(await ssoRequiredBy(handle.db, a.userId)).toBeNull();

    expect(await asAdmin.staff.setRequireSso({ orgId: a.orgId, requireSso: true, reason: 'University login only' })).toEqual({ requireSso: true });
    expect(await ssoRequiredBy(handle.db, a.userId)).toBe(a.orgName);
    expect(await ssoRequiredBy(handle.db, b.userId)).toBeNull();
    const [audit] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, a.orgId), eq(auditEvents.action, 'tenant.sso_required')));
    expect(audit).toMatchObject({ actorUserId: admin.userId, reason: 'University login only', isStaffAction: true });

    await asAdmin.staff.setRequireSso({ orgId: a.orgId, requireSso: false, reason: 'Back to passwords' });
    expect(await ssoRequiredBy(handle.db, a.userId)).toBeNull();
  });

  it('refuses removing the last way in of an account without a password, and another person’s identity', async () => {
    const person = profile();
    const outcome = await resolveSsoSignIn(handle.db, person, []);
    if (outcome.kind !== 'signedIn') throw new Error('expected a sign-in');
    const asPerson = callerFor(handle.db, { userId: outcome.user.id });
    const [only] = await asPerson.account.identities();
    await expect(asPerson.account.unlinkIdentity({ identityId: only!.id })).rejects.toThrow(/only way to sign in/);
    expect(await asPerson.account.identities()).toHaveLength(1);

    // Someone else cannot remove it either: to them it does not exist.
    const stranger = await createTenant(handle.db);
    expect(await code(callerFor(handle.db, { userId: stranger.userId }).account.unlinkIdentity({ identityId: only!.id }))).toBe('NOT_FOUND');

    // With a second provider linked, the first may go; the second is again the last way in.
    // (An account without a password cannot link by password: verifyPassword(…, null) is false.)
    expect(await linkWithPassword(handle.db, { userId: outcome.user.id, profile: { ...profile({ provider: 'other' }), email: outcome.user.email } }, 'anything', {}, [])).toEqual({ refused: 'wrongPassword' });
    await handle.db.insert(userIdentities).values({ userId: outcome.user.id, provider: 'other', subject: `second-${Date.now()}`, email: outcome.user.email });
    await asPerson.account.unlinkIdentity({ identityId: only!.id });
    const [second] = await asPerson.account.identities();
    expect(second?.provider).toBe('other');
    await expect(asPerson.account.unlinkIdentity({ identityId: second!.id })).rejects.toThrow(/only way to sign in/);
    expect((await auditOf(outcome.user.id)).map((a) => a.action)).toContain('account.identity_unlinked');

    // An account with a password may remove its only identity: the password still lets it in.
    const owner = await createTenant(handle.db);
    await handle.db.insert(userIdentities).values({ userId: owner.userId, provider: 'uni', subject: `owner-${Date.now()}`, email: owner.email });
    const asOwner = callerFor(handle.db, { userId: owner.userId });
    const [ownersOnly] = await asOwner.account.identities();
    await asOwner.account.unlinkIdentity({ identityId: ownersOnly!.id });
    expect(await asOwner.account.identities()).toEqual([]);
  });
});
