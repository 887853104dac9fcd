// Single sign-on (issue #12): identities at OIDC providers linked to accounts. A known (provider,
// subject) signs in as its account; a new address gets a new account without a password; an address
// that already has an account is linked only when that account's password is given (a provider that
// merely says an address must not take over the account behind it). The rules are server/core/identities.ts.
import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { memberships, organisations, userIdentities, users } from '~/db/schema';
import { verifyPassword } from '~/server/auth/password';
import { entitledMemberships, ssoResolution, unlinkRefusal, type EntitlementMapping, type SsoProfile } from '~/server/core/identities';
import { AppError, isUniqueViolation } from '~/server/errors';
import type { Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { logger } from '~/server/observability/log';
import { recordSignInFailure, recordSignInSuccess, signInBlocked, type SignInKeys } from '~/server/services/rate-limits';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The account a sign-in resolved to. */
export interface SignedInPerson {
  id: string;
  email: string;
  name: string;
}

export type SsoOutcome =
  | { kind: 'signedIn'; user: SignedInPerson; created: boolean }
  /** The address has an account: its password must be given before the identity is linked (/sign-in/link). */
  | { kind: 'confirmLink'; userId: string; email: string };

/** resolveSsoSignIn finds or creates the account of a person the provider vouched for, in one transaction. */
export async function resolveSsoSignIn(db: Db, profile: SsoProfile, mappings: EntitlementMapping[], now = new Date()): Promise<SsoOutcome> {
  try {
    return await resolveOnce(db, profile, mappings, now);
  } catch (error) {
    // Two first sign-ins of one new person at once: the other made the account; resolve again.
    if (isUniqueViolation(error, 'user_identities_provider_subject_idx') || isUniqueViolation(error, 'users_email_lower_idx') || isUniqueViolation(error, 'users_posix_name_idx')) {
      return resolveOnce(db, profile, mappings, now);
    }
    throw error;
  }
}

async function resolveOnce(db: Db, profile: SsoProfile, mappings: EntitlementMapping[], now: Date): Promise<SsoOutcome> {
  return db.transaction(async (tx) => {
    const [linked] = await tx
      .select({ id: userIdentities.id, userId: userIdentities.userId })
      .from(userIdentities)
      .where(and(eq(userIdentities.provider, profile.provider), eq(userIdentities.subject, profile.subject)));
    const [sameEmail] =
      linked || !profile.email ? [] : await tx.select({ id: users.id }).from(users).where(eq(sql`lower(${users.email})`, profile.email));
    const resolution = ssoResolution({ linkedUserId: linked?.userId ?? null, email: profile.email, sameEmailUserId: sameEmail?.id ?? null });
    switch (resolution.kind) {
      case 'refused':
        throw new AppError('FORBIDDEN', 'signIn.ssoNoEmail');
      case 'confirmLink':
        return { kind: 'confirmLink', userId: resolution.userId, email: profile.email! };
      case 'known': {
        await tx.update(userIdentities).set({ lastUsedAt: now }).where(eq(userIdentities.id, linked!.id));
        await grantEntitlements(tx, resolution.userId, profile, mappings);
        await takeDirectoryPosixName(tx, resolution.userId, profile);
        return { kind: 'signedIn', user: await personOf(tx, resolution.userId), created: false };
      }
      case 'create': {
        const email = profile.email!;
        const [user] = await tx
          .insert(users)
          // No password: this account signs in through its provider until the person sets one.
          .values({ email, name: profile.name ?? email.split('@')[0]!, passwordHash: null, emailVerifiedAt: profile.emailVerified ? now : null })
          .returning({ id: users.id, email: users.email, name: users.name });
        if (!user) throw new Error('user insert returned nothing');
        await recordAudit(tx, { actorUserId: user.id, orgId: null, action: 'account.created_by_sso', targetType: 'user', targetId: user.id, data: { provider: profile.provider, emailVerified: profile.emailVerified } });
        await linkIdentity(tx, user.id, profile, now);
        await grantEntitlements(tx, user.id, profile, mappings);
        await takeDirectoryPosixName(tx, user.id, profile);
        return { kind: 'signedIn', user, created: true };
      }
    }
  });
}

/**
 * takeDirectoryPosixName sets the person's POSIX user to the one the centre's directory names (the
 * provider's posixName claim): the directory decides, also over a name the portal made earlier (jobs keep
 * the user they ran as). A name another person holds is left alone and logged, never taken from them.
 */
async function takeDirectoryPosixName(tx: Tx, userId: string, profile: SsoProfile): Promise<void> {
  const name = profile.posixName;
  if (!name) return;
  const updated = await tx
    .update(users)
    .set({ posixName: name })
    .where(and(eq(users.id, userId), sql`${users.posixName} is distinct from ${name}`, sql`not exists (select 1 from ${users} u where u.posix_name = ${name} and u.id <> ${userId})`))
    .returning({ id: users.id });
  if (updated.length === 0) {
    const [holder] = await tx.select({ id: users.id }).from(users).where(and(eq(users.posixName, name), sql`${users.id} <> ${userId}`));
    if (holder) logger().warn({ userId, posixName: name, heldBy: holder.id }, 'the directory names a POSIX user another person holds in the portal; left unchanged');
  }
}

async function personOf(tx: DbOrTx, userId: string): Promise<SignedInPerson> {
  const [user] = await tx.select({ id: users.id, email: users.email, name: users.name }).from(users).where(eq(users.id, userId));
  if (!user) throw new AppError('NOT_FOUND', 'error.notFound');
  return user;
}

async function linkIdentity(tx: Tx, userId: string, profile: SsoProfile, now: Date): Promise<void> {
  const [identity] = await tx
    .insert(userIdentities)
    .values({ userId, provider: profile.provider, subject: profile.subject, email: profile.email, createdAt: now, lastUsedAt: now })
    .returning({ id: userIdentities.id });
  await recordAudit(tx, { actorUserId: userId, orgId: null, action: 'account.identity_linked', targetType: 'user', targetId: userId, data: { provider: profile.provider, identityId: identity?.id, email: profile.email } });
}

/**
 * grantEntitlements adds the memberships the provider's entitlement claim gives (a role already held
 * is left alone: staff or an owner may have changed it since); each new one is audited.
 */
async function grantEntitlements(tx: Tx, userId: string, profile: SsoProfile, mappings: EntitlementMapping[]): Promise<void> {
  const granted = entitledMemberships(profile.entitlements, mappings);
  if (granted.length === 0) return;
  const ids = granted.map((g) => g.org).filter((org) => UUID.test(org));
  const names = granted.map((g) => g.org.toLowerCase());
  const orgs = await tx
    .select({ id: organisations.id, name: organisations.name })
    .from(organisations)
    .where(or(ids.length > 0 ? inArray(organisations.id, ids) : undefined, inArray(sql`lower(${organisations.name})`, names)));
  for (const grant of granted) {
    const org = orgs.find((o) => o.id === grant.org || o.name.toLowerCase() === grant.org.toLowerCase());
    // A mapping naming no organisation is a configuration slip; signing in must still work.
    if (!org) continue;
    const added = await tx.insert(memberships).values({ orgId: org.id, userId, role: grant.role }).onConflictDoNothing().returning({ orgId: memberships.orgId });
    if (added.length === 0) continue;
    await recordAudit(tx, { actorUserId: userId, orgId: org.id, action: 'member.entitled', targetType: 'membership', targetId: userId, data: { role: grant.role, provider: profile.provider, entitlement: grant.value } });
  }
}

/**
 * linkWithPassword links a provider identity to the account with its address once that account's
 * password is given, then signs in as it. The same lockouts as the password sign-in count wrong tries
 * (server/services/rate-limits.ts); a wrong password is refused with `null`.
 */
export async function linkWithPassword(
  db: Db,
  pending: { userId: string; profile: SsoProfile },
  password: string,
  keys: Omit<SignInKeys, 'account'>,
  mappings: EntitlementMapping[],
  now = new Date(),
): Promise<{ user: SignedInPerson } | { refused: 'wrongPassword' | 'lockedOut'; retryAfterSeconds?: number }> {
  const [account] = await db.select({ id: users.id, email: users.email, passwordHash: users.passwordHash }).from(users).where(eq(users.id, pending.userId));
  // The link was asked for this address: an account renamed since is not linked by the old promise.
  if (!account || account.email.toLowerCase() !== pending.profile.email) return { refused: 'wrongPassword' };
  const signInKeys = { ...keys, account: account.email };
  const blocked = await signInBlocked(db, signInKeys, now);
  if (!blocked.allowed) return { refused: 'lockedOut', retryAfterSeconds: blocked.retryAfterSeconds };
  if (!(await verifyPassword(password, account.passwordHash))) {
    await recordSignInFailure(db, signInKeys, now);
    return { refused: 'wrongPassword' };
  }
  await recordSignInSuccess(db, account.email);
  try {
    const user = await db.transaction(async (tx) => {
      await linkIdentity(tx, account.id, pending.profile, now);
      await grantEntitlements(tx, account.id, pending.profile, mappings);
      return personOf(tx, account.id);
    });
    return { user };
  } catch (error) {
    // Linked in the meantime (a second tab): to this account it is fine, to another it is refused.
    if (!isUniqueViolation(error, 'user_identities_provider_subject_idx')) throw error;
    const [linked] = await db
      .select({ userId: userIdentities.userId })
      .from(userIdentities)
      .where(and(eq(userIdentities.provider, pending.profile.provider), eq(userIdentities.subject, pending.profile.subject)));
    if (linked?.userId !== account.id) throw new AppError('CONFLICT', 'signIn.ssoLinkedElsewhere');
    return { user: await personOf(db, account.id) };
  }
}

/** ssoRequiredBy names an organisation of the person that requires single sign-on, or null if none does. */
export async function ssoRequiredBy(db: DbOrTx, userId: string): Promise<string | null> {
  const [org] = await db
    .select({ name: organisations.name })
    .from(memberships)
    .innerJoin(organisations, eq(organisations.id, memberships.orgId))
    .where(and(eq(memberships.userId, userId), eq(organisations.requireSso, true)))
    .orderBy(asc(organisations.name))
    .limit(1);
  return org?.name ?? null;
}

/** listIdentities lists the person's linked identities, the oldest link first, with each provider's display name. */
export async function listIdentities(db: DbOrTx, userId: string, providerName: (id: string) => string) {
  const rows = await db
    .select({ id: userIdentities.id, provider: userIdentities.provider, email: userIdentities.email, createdAt: userIdentities.createdAt, lastUsedAt: userIdentities.lastUsedAt })
    .from(userIdentities)
    .where(eq(userIdentities.userId, userId))
    .orderBy(asc(userIdentities.createdAt), asc(userIdentities.id));
  return rows.map((r) => ({ ...r, providerName: providerName(r.provider) }));
}

/** unlinkIdentity removes one of the person's identities, unless it is their last way in; audited. */
export async function unlinkIdentity(db: Db, actor: Actor, identityId: string): Promise<void> {
  await db.transaction(async (tx) => {
    // The account row is locked so two removals at once cannot both leave the other as "not the last".
    const [user] = await tx.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, actor.userId)).for('no key update');
    const identities = await tx.select({ id: userIdentities.id, provider: userIdentities.provider }).from(userIdentities).where(eq(userIdentities.userId, actor.userId));
    const target = identities.find((i) => i.id === identityId);
    if (!user || !target) throw new AppError('NOT_FOUND', 'error.notFound');
    if (unlinkRefusal({ hasPassword: user.passwordHash !== null, identities: identities.length })) {
      throw new AppError('PRECONDITION_FAILED', 'profile.identityLastWayIn');
    }
    await tx.delete(userIdentities).where(and(eq(userIdentities.id, identityId), eq(userIdentities.userId, actor.userId)));
    await recordAudit(tx, { actorUserId: actor.userId, orgId: null, action: 'account.identity_unlinked', targetType: 'user', targetId: actor.userId, data: { provider: target.provider, identityId } });
  });
}
