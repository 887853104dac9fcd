// The pending link of a provider identity to an existing account, carried from the provider's callback
// to /sign-in/link as a signed, short-lived value: the page and the link step trust only what the
// portal itself signed after the provider's ID token was checked, never what the browser sends.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SsoProfile } from '~/server/core/identities';

/** How long a person has to give the account's password after signing in at the provider. */
export const LINK_TOKEN_SECONDS = 10 * 60;

export interface PendingLink {
  userId: string;
  profile: SsoProfile;
  /** Where the sign-in was headed (a local path). */
  callbackUrl: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

// A key of its own, derived from the auth secret, so a link token can never pass as anything else.
const keyOf = (secret: string) => createHmac('sha256', secret).update('portal sso-link v1').digest();

/** signLinkToken signs a pending link that expires LINK_TOKEN_SECONDS after `now`. */
export function signLinkToken(secret: string, link: Omit<PendingLink, 'exp'>, now: Date): string {
  const body = Buffer.from(JSON.stringify({ ...link, exp: Math.floor(now.getTime() / 1000) + LINK_TOKEN_SECONDS })).toString('base64url');
  const mac = createHmac('sha256', keyOf(secret)).update(body).digest('base64url');
  return `${body}.${mac}`;
}

/** verifyLinkToken returns the pending link of a token this portal signed and that has not expired, else null. */
export function verifyLinkToken(secret: string, token: string, now: Date): PendingLink | null {
  const [body, mac] = token.split('.');
  if (!body || !mac || token.length > 8000) return null;
  const expected = createHmac('sha256', keyOf(secret)).update(body).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const link = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as PendingLink;
    return typeof link.exp === 'number' && link.exp > now.getTime() / 1000 ? link : null;
  } catch {
    return null;
  }
}
