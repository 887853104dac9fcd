// Single sign-on (OIDC): who a person signing in through an identity provider is, which memberships
// the provider's entitlements give them, and when an identity may be unlinked. Values in, values out.
import type { MemberRole } from './roles';
import { isPosixName } from './scheduler/identity';

/** What an identity provider told about the person, read from its claims. */
export interface SsoProfile {
  /** The provider's id in OIDC_PROVIDERS. */
  provider: string;
  /** The provider's stable id of the person (`sub`). */
  subject: string;
  email: string | null;
  /** The provider vouches that the person receives mail at `email`. */
  emailVerified: boolean;
  name: string | null;
  /** The entitlement claim's values (empty without one). */
  entitlements: string[];
  /** The person's POSIX user on the cluster from the centre's directory (the claim `claims.posixName` names), when it is a valid name. */
  posixName?: string | null;
}

/** One entitlement mapping of a provider: a claim value that makes its holder a member of an organisation. */
export interface EntitlementMapping {
  value: string;
  /** The organisation's name or id. */
  org: string;
  role: MemberRole;
}

/** The claim names a provider uses. */
export interface ClaimNames {
  email: string;
  name: string;
  entitlements: string;
  /** The claim holding the person's POSIX user name (e.g. `uid` from LDAP); unset: the portal makes one. */
  posixName?: string;
}

/** claimValues reads a claim that may be one string or a list of strings; anything else counts as none. */
export function claimValues(claims: Record<string, unknown>, name: string): string[] {
  const value = claims[name];
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v !== '');
  return [];
}

/** ssoProfileOf reads a provider's claims (ID token merged with userinfo) into the portal's terms; null without a subject. */
export function ssoProfileOf(provider: string, claims: Record<string, unknown>, names: ClaimNames): SsoProfile | null {
  const subject = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : null;
  if (!subject) return null;
  const email = claimValues(claims, names.email)[0]?.trim().toLowerCase() ?? null;
  // Some providers send the flag as the string "true".
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  return {
    provider,
    subject,
    email: email && email.length <= 254 && email.includes('@') ? email : null,
    emailVerified: Boolean(email) && verified,
    name: claimValues(claims, names.name)[0]?.trim().slice(0, 120) ?? null,
    entitlements: claimValues(claims, names.entitlements),
    posixName: names.posixName ? (claimValues(claims, names.posixName).find(isPosixName) ?? null) : null,
  };
}

/** How a sign-in through a provider is resolved. */
export type SsoResolution =
  | { kind: 'known'; userId: string }
  | { kind: 'create' }
  /** An account with the address exists: only its password may link the identity to it (no takeover by address). */
  | { kind: 'confirmLink'; userId: string }
  | { kind: 'refused'; reason: 'noEmail' };

/** ssoResolution decides who signs in: the linked account, a new account, or the same address's account once its password is given. */
export function ssoResolution(input: { linkedUserId: string | null; email: string | null; sameEmailUserId: string | null }): SsoResolution {
  if (input.linkedUserId) return { kind: 'known', userId: input.linkedUserId };
  if (!input.email) return { kind: 'refused', reason: 'noEmail' };
  if (input.sameEmailUserId) return { kind: 'confirmLink', userId: input.sameEmailUserId };
  return { kind: 'create' };
}

/** entitledMemberships returns the mappings the person's entitlement values match, each organisation once (the first mapping wins). */
export function entitledMemberships(values: string[], mappings: EntitlementMapping[]): EntitlementMapping[] {
  const held = new Set(values);
  const seen = new Set<string>();
  const granted: EntitlementMapping[] = [];
  for (const mapping of mappings) {
    const key = mapping.org.toLowerCase();
    if (!held.has(mapping.value) || seen.has(key)) continue;
    seen.add(key);
    granted.push(mapping);
  }
  return granted;
}

/** unlinkRefusal says why an identity may not be removed: it is the last way in of an account without a password. */
export function unlinkRefusal(input: { hasPassword: boolean; identities: number }): 'lastWayIn' | null {
  return !input.hasPassword && input.identities <= 1 ? 'lastWayIn' : null;
}
