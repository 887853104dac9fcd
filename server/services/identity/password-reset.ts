// Password reset by mail (issue #12). Asking answers the same whether or not the address has an
// account, in about the same time, so nobody learns who has one; a known address gets a one-hour link
// (server/services/identity/auth-tokens.ts). Using the link sets the new password, ends every session of the
// person (whoever knew the old password is signed out), verifies the address (the mail reached them)
// and is audited.
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { users } from '~/db/schema';
import { formatDateTime } from '~/server/i18n/format';
import { hashPassword } from '~/server/auth/password';
import { accountLink, readerLocale, type AccountMail } from './account-mail';
import { recordAudit } from '~/server/services/audit';
import { authTokenUsable, issueAuthToken, takeAuthToken, voidAuthTokens } from './auth-tokens';
import { markEmailVerified } from './email-verification';
import { enqueueMail } from '~/server/services/mail/mail';
import { composeMail } from '~/server/services/mail/mail-compose';
import { endAllSessions } from './sessions';
import { inTransaction } from '~/server/services/transaction';

/**
 * Every answer to "send me a reset link" takes at least this long. Writing the link and its mail costs a
 * transaction that an unknown address does not; padding both to one floor, well above either, keeps the
 * time from telling them apart.
 */
export const RESET_ANSWER_MS = 300;

/**
 * requestPasswordReset mails a reset link to the address if it belongs to an account; the answer is the
 * same either way. An account that so far signs in only through single sign-on sets its first password
 * this way (the link proves the mailbox, as for a reset), so removing a provider never locks it out.
 */
export async function requestPasswordReset(
  db: Db,
  email: string,
  mail: AccountMail & { now: Date; requestedFrom?: string | null; answerAfterMs?: number },
): Promise<{ sent: true }> {
  const started = performance.now();
  try {
    const [person] = await db
      .select({ id: users.id, email: users.email, name: users.name, locale: users.locale, timeZone: users.timeZone })
      .from(users)
      .where(eq(sql`lower(${users.email})`, email.trim().toLowerCase()))
      .limit(1);
    if (person) {
      await inTransaction(db, async (tx) => {
        const { token, expiresAt } = await issueAuthToken(tx, { userId: person.id, email: person.email, purpose: 'password_reset', now: mail.now, requestedFrom: mail.requestedFrom });
        const locale = readerLocale(person.locale, mail);
        const params = { name: person.name, email: person.email, expires: formatDateTime(locale, expiresAt, person.timeZone) };
        const composed = composeMail(locale, {
          subject: ['mail.passwordReset.subject'],
          paragraphs: [['mail.account.greeting', params], ['mail.passwordReset.body', params], ['mail.passwordReset.expiry', params]],
          action: { label: ['mail.passwordReset.action'], url: accountLink(mail, `/reset-password/${token}`) },
        });
        await enqueueMail(tx, [{ kind: 'password_reset', toUserId: person.id, toAddress: person.email, locale, ...composed }], mail.now);
        await recordAudit(tx, { actorUserId: null, orgId: null, action: 'account.password_reset_requested', targetType: 'user', targetId: person.id, data: { from: mail.requestedFrom ?? null } });
      });
    }
  } finally {
    const rest = (mail.answerAfterMs ?? RESET_ANSWER_MS) - (performance.now() - started);
    if (rest > 0) await sleep(rest);
  }
  return { sent: true };
}

/** resetLinkUsable says whether a reset link would still work (the page shows its form or says it does not). */
export function resetLinkUsable(db: Db, token: string, now: Date): Promise<boolean> {
  return authTokenUsable(db, token, 'password_reset', now);
}

/**
 * resetPassword uses a reset link: stores the new password, ends all the person's sessions, voids their
 * other reset links and verifies their address, in one transaction. Returns the address to sign in with.
 */
export async function resetPassword(db: Db, input: { token: string; password: string }, now: Date): Promise<{ email: string; endedSessions: number }> {
  // Hashed before the transaction: scrypt takes tens of milliseconds, the link's row stays locked less.
  const passwordHash = await hashPassword(input.password);
  return inTransaction(db, async (tx) => {
    const link = await takeAuthToken(tx, input.token, 'password_reset', now);
    await tx.update(users).set({ passwordHash }).where(eq(users.id, link.userId));
    await voidAuthTokens(tx, link.userId, 'password_reset', now, link.id);
    const [person] = await tx.select({ email: users.email }).from(users).where(eq(users.id, link.userId));
    // The mail reached them at this address: as good as the verification link.
    const verified = person?.email.toLowerCase() === link.email.toLowerCase() && (await markEmailVerified(tx, link.userId, now));
    const endedSessions = await endAllSessions(tx, link.userId, 'password_reset', undefined, now);
    await recordAudit(tx, { actorUserId: link.userId, orgId: null, action: 'account.password_reset', targetType: 'user', targetId: link.userId, data: { endedSessions, verifiedEmail: verified } });
    return { email: person?.email ?? link.email, endedSessions };
  });
}
