// One-time links mailed to a person: a password reset and an e-mail address check (issue #12). Pure:
// what each link is for, how long it lasts, and whether a stored link may still be used.
// server/services/identity/auth-tokens.ts issues and takes them.

/** What a mailed link does. */
export const AUTH_TOKEN_PURPOSES = ['password_reset', 'email_verification'] as const;
export type AuthTokenPurpose = (typeof AUTH_TOKEN_PURPOSES)[number];

const HOUR_MS = 3_600_000;

/**
 * How long a link works. A reset link lets whoever holds it take the account, so it is short; a
 * verification link only confirms an address the person already signed up with, and people open
 * that mail days later.
 */
export const AUTH_TOKEN_LIFETIME_MS: Record<AuthTokenPurpose, number> = {
  password_reset: HOUR_MS,
  email_verification: 7 * 24 * HOUR_MS,
};

/** Random bytes per token: 256 bits, beyond guessing even without the rate limits. */
export const AUTH_TOKEN_BYTES = 32;

/** The shape of a token in a link (base64url of AUTH_TOKEN_BYTES bytes). */
export const AUTH_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type AuthTokenState = 'usable' | 'used' | 'voided' | 'expired';

/** authTokenState says whether a stored link may be used at `now`, or why not. */
export function authTokenState(token: { expiresAt: Date; usedAt: Date | null; voidedAt: Date | null }, now: Date): AuthTokenState {
  if (token.usedAt) return 'used';
  if (token.voidedAt) return 'voided';
  // The instant of expiry is already too late: a link valid "for one hour" is not valid at 60:00.
  if (token.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'usable';
}

/** authTokenExpiry is when a link issued at `now` for a purpose stops working. */
export function authTokenExpiry(purpose: AuthTokenPurpose, now: Date): Date {
  return new Date(now.getTime() + AUTH_TOKEN_LIFETIME_MS[purpose]);
}
