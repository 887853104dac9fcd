// How often people and addresses may try things (issue #9). Pure: the rules and the lockout maths;
// server/services/rate-limits.ts counts in the database.

export interface RateRule {
  /** Hits allowed per window; the next one is refused (or, with a lockout, locks the key). */
  limit: number;
  windowMs: number;
  /** With a lockout: the first lasts this long, each further one in a row twice as long. */
  lockoutBaseMs?: number;
  lockoutMaxMs?: number;
}

const MINUTE = 60_000;

export const RATE_RULES = {
  /** Wrong passwords for one account: 10 a minute, then locked 1, 2, 4 … 60 minutes. */
  signInAccount: { limit: 10, windowMs: MINUTE, lockoutBaseMs: MINUTE, lockoutMaxMs: 60 * MINUTE },
  /** Wrong passwords from one address (any account): 50 in 10 minutes, then locked likewise. */
  signInAddress: { limit: 50, windowMs: 10 * MINUTE, lockoutBaseMs: MINUTE, lockoutMaxMs: 60 * MINUTE },
  /** Sign-ups from one address, and for one e-mail address. */
  signUpAddress: { limit: 10, windowMs: 60 * MINUTE },
  signUpEmail: { limit: 3, windowMs: 60 * MINUTE },
  /** Invitations opened or accepted by one person or address (tokens must not be guessable by trying). */
  invitation: { limit: 30, windowMs: 10 * MINUTE },
  /** Password changes (each checks the current password): 10 an hour per person. */
  passwordChange: { limit: 10, windowMs: 60 * MINUTE },
  /**
   * Password-reset mails asked for one e-mail address (known or not: counting only known ones would
   * tell which exist), and from one client address.
   */
  passwordResetEmail: { limit: 3, windowMs: 60 * MINUTE },
  passwordResetAddress: { limit: 20, windowMs: 60 * MINUTE },
  /** Reset and verification links tried from one address (tokens must not be guessable by trying). */
  authLink: { limit: 30, windowMs: 10 * MINUTE },
  /** "Send the verification link again", per person. */
  verificationResend: { limit: 3, windowMs: 60 * MINUTE },
  /** Jobs submitted by one person over the web (a script should use the API's own limits, issue #13). */
  jobSubmit: { limit: 120, windowMs: MINUTE },
  /** Personal API tokens made by one person. */
  apiTokenCreate: { limit: 20, windowMs: 60 * MINUTE },
} as const satisfies Record<string, RateRule>;

export type RateRuleName = keyof typeof RATE_RULES;

/** lockoutMs is how long the n-th lockout in a row lasts (n ≥ 1): base × 2^(n−1), at most the maximum. */
export function lockoutMs(rule: RateRule, n: number): number {
  const base = rule.lockoutBaseMs ?? 0;
  const max = rule.lockoutMaxMs ?? base;
  return Math.min(max, base * 2 ** Math.max(0, Math.min(30, n - 1)));
}

/** secondsUntil rounds a wait up to whole seconds (at least 1), as Retry-After wants it. */
export function secondsUntil(until: Date, now: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
}

/**
 * clientAddress is the caller's address as the portal's reverse proxy reports it: the last entry of
 * X-Forwarded-For (the one the proxy added; earlier ones come from the client and may be forged), or
 * X-Real-IP. Only with a trusted proxy (PORTAL_TRUST_PROXY=true): without one the client may send
 * either header itself (the Next server only fills X-Forwarded-For when it is missing), so the
 * address is unknown and only the per-account and per-person limits apply.
 */
export function clientAddress(headers: { get(name: string): string | null }, trustProxy: boolean): string | undefined {
  if (!trustProxy) return undefined;
  const forwarded = headers.get('x-forwarded-for');
  const last = forwarded?.split(',').map((s) => s.trim()).filter(Boolean).pop();
  const address = last ?? headers.get('x-real-ip')?.trim();
  return address && address.length <= 100 ? address : undefined;
}
