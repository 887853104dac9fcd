// Checking that a person receives mail at the address they signed up with (issue #12). A new password
// account starts unverified and gets a link by mail; until it is opened, the person's tenant mutations
// are refused (server/api/trpc.ts tenantProcedure) while reads work. Accepting an invitation mailed to
// the address, or resetting the password by mail, proves the same and verifies too.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { users } from '~/db/schema';
import { DEFAULT_TIME_ZONE, formatDateTime } from '~/server/i18n/format';
import type { Actor } from '~/server/services/actor';
import { accountLink, readerLocale, type AccountMail } from './account-mail';
import { recordAudit } from '~/server/services/audit';
import { authTokenUsable, issueAuthToken, takeAuthToken, voidAuthTokens } from './auth-tokens';
import { enqueueMail } from '~/server/services/mail/mail';
import { composeMail } from '~/server/services/mail/mail-compose';
import { inTransaction } from '~/server/services/transaction';

/**
 * mailVerificationLink issues a person's verification link (voiding earlier ones) and writes its mail,
 * inside the caller's transaction.
 */
export async function mailVerificationLink(
  tx: DbOrTx,
  person: { userId: string; email: string; name: string; locale?: string | null; timeZone?: string },
  mail: AccountMail,
  now: Date,
  requestedFrom?: string | null,
): Promise<void> {
  const { token, expiresAt } = await issueAuthToken(tx, { userId: person.userId, email: person.email, purpose: 'email_verification', now, requestedFrom });
  const locale = readerLocale(person.locale, mail);
  const params = { name: person.name, email: person.email, expires: formatDateTime(locale, expiresAt, person.timeZone ?? DEFAULT_TIME_ZONE) };
  const composed = composeMail(locale, {
    subject: ['mail.verifyEmail.subject'],
    paragraphs: [['mail.account.greeting', params], ['mail.verifyEmail.body', params], ['mail.verifyEmail.expiry', params]],
    action: { label: ['mail.verifyEmail.action'], url: accountLink(mail, `/verify-email/${token}`) },
  });
  await enqueueMail(tx, [{ kind: 'email_verification', toUserId: person.userId, toAddress: person.email, locale, ...composed }], now);
}

/** markEmailVerified records that a person proved their address (once: a later proof keeps the first date). */
export async function markEmailVerified(tx: DbOrTx, userId: string, now: Date): Promise<boolean> {
  const changed = await tx
    .update(users)
    .set({ emailVerifiedAt: now })
    .where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)))
    .returning({ id: users.id });
  if (changed.length > 0) await voidAuthTokens(tx, userId, 'email_verification', now);
  return changed.length > 0;
}

/** verificationLinkUsable says whether a verification link would still work (its page offers the button, or says it does not). */
export function verificationLinkUsable(db: Db, token: string, now: Date): Promise<boolean> {
  return authTokenUsable(db, token, 'email_verification', now);
}

/** verifyEmail uses a verification link: the address it was mailed to is the person's, verified now. */
export async function verifyEmail(db: Db, token: string, now: Date): Promise<{ email: string }> {
  return inTransaction(db, async (tx) => {
    const link = await takeAuthToken(tx, token, 'email_verification', now);
    // The link proves the address it was mailed to; should the account's address have changed since, it proves nothing.
    const [person] = await tx.select({ email: users.email }).from(users).where(eq(users.id, link.userId));
    if (person && person.email.toLowerCase() === link.email.toLowerCase() && (await markEmailVerified(tx, link.userId, now))) {
      await recordAudit(tx, { actorUserId: link.userId, orgId: null, action: 'account.email_verified', targetType: 'user', targetId: link.userId, data: { email: link.email } });
    }
    return { email: link.email };
  });
}

/**
 * resendVerification mails the signed-in person a new link (the old one stops working), unless their
 * address is verified already.
 */
export async function resendVerification(db: Db, actor: Actor, mail: AccountMail, now: Date, requestedFrom?: string | null): Promise<{ sent: boolean; email: string }> {
  return inTransaction(db, async (tx) => {
    const [person] = await tx
      .select({ email: users.email, name: users.name, locale: users.locale, timeZone: users.timeZone, verified: sql<boolean>`${users.emailVerifiedAt} is not null` })
      .from(users)
      .where(eq(users.id, actor.userId));
    if (!person || person.verified) return { sent: false, email: actor.email };
    await mailVerificationLink(tx, { userId: actor.userId, email: person.email, name: person.name, locale: person.locale, timeZone: person.timeZone }, mail, now, requestedFrom);
    return { sent: true, email: person.email };
  });
}
