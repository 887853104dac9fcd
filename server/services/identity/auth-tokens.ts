// One-time links mailed to a person (password reset, address check): issued with their mail in one
// transaction, stored only as a SHA-256 hash, used once, and only the newest of a person's links of a
// purpose works. The rules of state and lifetime are in server/core/auth/tokens.ts.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull, ne } from 'drizzle-orm';
import type { DbOrTx, Tx } from '~/db/client';
import { authTokens } from '~/db/schema';
import { AUTH_TOKEN_BYTES, AUTH_TOKEN_PATTERN, authTokenExpiry, authTokenState, type AuthTokenPurpose } from '~/server/core/auth/tokens';
import { AppError } from '~/server/errors';

/** hashAuthToken is what is stored of a token: its SHA-256, hex. */
export function hashAuthToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * issueAuthToken creates a link for a person and purpose inside the caller's transaction and voids
 * their earlier ones of that purpose (only the newest mail's link works); returns the token, which is
 * nowhere stored.
 */
export async function issueAuthToken(tx: DbOrTx, input: { userId: string; email: string; purpose: AuthTokenPurpose; now: Date; requestedFrom?: string | null }): Promise<{ token: string; expiresAt: Date }> {
  await voidAuthTokens(tx, input.userId, input.purpose, input.now);
  const token = randomBytes(AUTH_TOKEN_BYTES).toString('base64url');
  const expiresAt = authTokenExpiry(input.purpose, input.now);
  await tx.insert(authTokens).values({
    userId: input.userId,
    purpose: input.purpose,
    tokenHash: hashAuthToken(token),
    email: input.email,
    expiresAt,
    requestedFrom: input.requestedFrom ?? null,
    createdAt: input.now,
  });
  return { token, expiresAt };
}

/** voidAuthTokens voids a person's open links of a purpose (but `keep`). */
export async function voidAuthTokens(tx: DbOrTx, userId: string, purpose: AuthTokenPurpose, now: Date, keep?: string): Promise<void> {
  await tx
    .update(authTokens)
    .set({ voidedAt: now })
    .where(and(eq(authTokens.userId, userId), eq(authTokens.purpose, purpose), isNull(authTokens.usedAt), isNull(authTokens.voidedAt), keep ? ne(authTokens.id, keep) : undefined));
}

async function findAuthToken(db: DbOrTx, token: string, purpose: AuthTokenPurpose, forUpdate: boolean) {
  // A string that cannot be a token is not looked up (and cannot be told apart from an unknown one).
  if (!AUTH_TOKEN_PATTERN.test(token)) return undefined;
  const query = db
    .select({ id: authTokens.id, userId: authTokens.userId, email: authTokens.email, expiresAt: authTokens.expiresAt, usedAt: authTokens.usedAt, voidedAt: authTokens.voidedAt })
    .from(authTokens)
    .where(and(eq(authTokens.tokenHash, hashAuthToken(token)), eq(authTokens.purpose, purpose)))
    .limit(1);
  const [row] = forUpdate ? await query.for('update') : await query;
  return row;
}

/** authTokenUsable says whether a link would work now (the page shows its form, or says it no longer works). */
export async function authTokenUsable(db: DbOrTx, token: string, purpose: AuthTokenPurpose, now: Date): Promise<boolean> {
  const row = await findAuthToken(db, token, purpose, false);
  return Boolean(row && authTokenState(row, now) === 'usable');
}

/**
 * takeAuthToken uses a link inside the caller's transaction: locks it, refuses it unless usable (the
 * same refusal for unknown, used, voided and expired: which one is nobody's business), marks it used.
 */
export async function takeAuthToken(tx: Tx, token: string, purpose: AuthTokenPurpose, now: Date): Promise<{ id: string; userId: string; email: string }> {
  const row = await findAuthToken(tx, token, purpose, true);
  if (!row || authTokenState(row, now) !== 'usable') throw new AppError('NOT_FOUND', 'auth.link.invalid');
  await tx.update(authTokens).set({ usedAt: now }).where(eq(authTokens.id, row.id));
  return { id: row.id, userId: row.userId, email: row.email };
}
