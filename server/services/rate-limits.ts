// Rate limits and sign-in lockouts, counted in the database so every process of the portal shares
// them (and PGlite, which is Postgres too, keeps them across restarts). One statement per hit: an
// upsert on the key's row that restarts the window when it has passed. The rules are in
// server/core/rate-limits.ts. (rate-limiter-flexible's Postgres store needs the `pg` driver; a second
// driver for one table was not worth it, and this is one statement.)
import { and, eq, gt, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { reusable } from '~/db/reusable';
import { rateLimits } from '~/db/schema';
import { lockoutMs, RATE_RULES, secondsUntil, type RateRule, type RateRuleName } from '~/server/core/rate-limits';
import { AppError } from '~/server/errors';
import type { Actor } from './actor';
import { recordAudit } from './audit';

export interface Verdict {
  allowed: boolean;
  /** Seconds until the next try may succeed (when not allowed). */
  retryAfterSeconds: number;
}

/**
 * The count of one try (or `amount`) against a key, as one statement built once (db/reusable.ts): every
 * signed-in call, every REST and model call counts at least once, so drizzle does not build it each time.
 * A window older than the rule's starts afresh at this try.
 */
const hitStatement = reusable<ReturnType<typeof hitQuery>, { key: string; amount: number; at: string; cutoff: string }>('rate_limit_hit', (db) => hitQuery(db));
function hitQuery(db: DbOrTx) {
  const at = sql`${sql.placeholder('at')}::timestamptz`;
  const cutoff = sql`${sql.placeholder('cutoff')}::timestamptz`;
  const amount = sql`${sql.placeholder('amount')}::integer`;
  return db
    .insert(rateLimits)
    .values({ key: sql`${sql.placeholder('key')}::text`, windowStart: at, hits: amount, updatedAt: at })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: {
        hits: sql`case when ${rateLimits.windowStart} <= ${cutoff} then ${amount} else least(${rateLimits.hits}::bigint + ${amount}, 2000000000)::integer end`,
        windowStart: sql`case when ${rateLimits.windowStart} <= ${cutoff} then ${at} else ${rateLimits.windowStart} end`,
        updatedAt: at,
      },
    })
    .returning({ hits: rateLimits.hits, windowStart: rateLimits.windowStart, lockouts: rateLimits.lockouts });
}

/** hit counts one try (or `amount`, e.g. a model call's tokens) against a key and says whether it is within the rule. */
export async function hit(db: DbOrTx, key: string, rule: RateRule, now: Date, amount = 1): Promise<Verdict & { hits: number; lockouts: number }> {
  amount = Math.min(Math.max(1, Math.floor(amount)), 2_000_000_000);
  const [row] = await hitStatement(db, { key, amount, at: now.toISOString(), cutoff: new Date(now.getTime() - rule.windowMs).toISOString() });
  const hits = row?.hits ?? 1;
  const windowEnd = new Date((row?.windowStart ?? now).getTime() + rule.windowMs);
  return { allowed: hits <= rule.limit, retryAfterSeconds: secondsUntil(windowEnd, now), hits, lockouts: row?.lockouts ?? 0 };
}

/** limit counts a try of a named rule and refuses it with 429 (TOO_MANY_REQUESTS) beyond the rule. */
export async function limit(db: DbOrTx, name: RateRuleName, subject: string, now: Date): Promise<void> {
  const verdict = await hit(db, `${name}:${subject}`, RATE_RULES[name], now);
  if (!verdict.allowed) {
    throw new AppError('TOO_MANY_REQUESTS', 'error.rateLimited', { minutes: Math.ceil(verdict.retryAfterSeconds / 60), seconds: verdict.retryAfterSeconds });
  }
}

// ---- sign-in ------------------------------------------------------------------------------------

export interface SignInKeys {
  account: string;
  address?: string;
}

const accountKey = (email: string) => `signin:account:${email.trim().toLowerCase()}`;
const addressKey = (address: string) => `signin:address:${address}`;

function keysOf(keys: SignInKeys): { key: string; rule: RateRule; target: string }[] {
  return [
    { key: accountKey(keys.account), rule: RATE_RULES.signInAccount, target: keys.account.trim().toLowerCase() },
    ...(keys.address ? [{ key: addressKey(keys.address), rule: RATE_RULES.signInAddress, target: keys.address }] : []),
  ];
}

/** signInBlocked says whether the account or the address is locked out now, and for how long. */
export async function signInBlocked(db: DbOrTx, keys: SignInKeys, now: Date): Promise<Verdict> {
  const rows = await db
    .select({ blockedUntil: rateLimits.blockedUntil })
    .from(rateLimits)
    .where(and(inArray(rateLimits.key, keysOf(keys).map((k) => k.key)), gt(rateLimits.blockedUntil, now)));
  const until = rows.reduce<Date | undefined>((latest, r) => (r.blockedUntil && (!latest || r.blockedUntil > latest) ? r.blockedUntil : latest), undefined);
  return until ? { allowed: false, retryAfterSeconds: secondsUntil(until, now) } : { allowed: true, retryAfterSeconds: 0 };
}

/**
 * recordSignInFailure counts a wrong password against the account and the address; the try that
 * reaches a rule's limit locks the key (1, 2, 4 … 60 minutes for lockouts in a row) and writes the
 * lockout to the audit log.
 */
export async function recordSignInFailure(db: DbOrTx, keys: SignInKeys, now: Date): Promise<void> {
  for (const { key, rule, target } of keysOf(keys)) {
    const counted = await hit(db, key, rule, now);
    if (counted.hits < rule.limit) continue;
    const lockouts = counted.lockouts + 1;
    const until = new Date(now.getTime() + lockoutMs(rule, lockouts));
    await db.update(rateLimits).set({ lockouts, blockedUntil: until, hits: 0, windowStart: now, updatedAt: now }).where(eq(rateLimits.key, key));
    await recordAudit(db, {
      actorUserId: null,
      orgId: null,
      action: 'auth.locked_out',
      targetType: key.startsWith('signin:account:') ? 'account' : 'address',
      targetId: target,
      data: { failures: counted.hits, lockoutInARow: lockouts, until: until.toISOString() },
    });
  }
}

/** recordSignInSuccess forgets an account's failures and lockouts (the address keeps its count). */
export async function recordSignInSuccess(db: DbOrTx, email: string): Promise<void> {
  await db.delete(rateLimits).where(eq(rateLimits.key, accountKey(email)));
}

/** liftSignInLockout lets staff end an account's lockout at once (audited). */
export async function liftSignInLockout(db: DbOrTx, actor: Actor, email: string, reason: string): Promise<{ wasLocked: boolean }> {
  const [row] = await db.delete(rateLimits).where(eq(rateLimits.key, accountKey(email))).returning({ blockedUntil: rateLimits.blockedUntil });
  const wasLocked = Boolean(row?.blockedUntil && row.blockedUntil > new Date());
  await recordAudit(db, {
    actorUserId: actor.userId,
    orgId: null,
    action: 'auth.lockout_lifted',
    targetType: 'account',
    targetId: email.trim().toLowerCase(),
    reason,
    data: { wasLocked },
    isStaffAction: true,
  });
  return { wasLocked };
}
