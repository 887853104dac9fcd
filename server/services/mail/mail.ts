// E-mail through a transactional outbox. A service writes a mail into `mail_outbox` in the same
// transaction as what the mail tells of (a rolled-back change sends nothing); the worker then sends
// what is due (deliverDueMails): each mail is taken under a lease, sent, and marked sent — or, when the
// SMTP server is away, tried again later with back-off (server/core/mail/delivery.ts). Without an SMTP
// server configured nothing is sent and the outbox is kept, for staff to see. Two workers never take
// the same mail at once (SKIP LOCKED and the lease); a worker that dies after sending and before
// marking leaves the mail to be sent again when its lease runs out (at least once, never lost).
import { and, count, desc, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { mailOutbox } from '~/db/schema';
import { afterFailure, type MailAttachment, type MailAttachmentRef, type MailTransport } from '~/server/core/mail/delivery';
import type { Locale } from '~/server/i18n';
import { replayedTime } from '~/server/services/replay-clock';

/** A worker holds a mail it is sending this long; one that dies lets it go when it runs out. */
export const MAIL_LEASE_MS = 120_000;

export interface OutgoingMail {
  kind: string;
  /** The tenant the mail is about (required when a tenant's own transaction writes it). */
  orgId?: string | null;
  toUserId?: string | null;
  toAddress: string;
  locale: Locale;
  subject: string;
  text: string;
  html: string;
  /** A mail with a key is written once: another with the same key is dropped (a reminder per person and day). */
  dedupeKey?: string;
  /** Files rendered at send time (deliverDueMails' renderAttachment). */
  attachments?: MailAttachmentRef[];
}

/** renders an attachment named in the outbox when its mail is sent (the composition root supplies it: the invoice PDF code). */
export type AttachmentRenderer = (ref: MailAttachmentRef) => Promise<MailAttachment>;

/**
 * enqueueMail writes mails into the outbox in the caller's transaction (a keyed one already there is not
 * written again), due at once: `at` (default now) is when they were written. Nothing is read back, so a
 * tenant's transaction, which may add mails but read none, can write them too.
 */
export async function enqueueMail(db: DbOrTx, mails: readonly OutgoingMail[], at?: Date): Promise<void> {
  // A replayed history (the demo seed) mails nothing: it would tell of months past, to made-up addresses.
  if (mails.length === 0 || replayedTime()) return;
  await db
    .insert(mailOutbox)
    .values(
      mails.map((m) => ({
        kind: m.kind,
        orgId: m.orgId ?? null,
        toUserId: m.toUserId ?? null,
        toAddress: m.toAddress,
        locale: m.locale,
        subject: m.subject,
        textBody: m.text,
        htmlBody: m.html,
        dedupeKey: m.dedupeKey ?? null,
        attachments: m.attachments?.length ? m.attachments : null,
        ...(at ? { createdAt: at, nextAttemptAt: at } : {}),
      })),
    )
    // No conflict target: with one, Postgres would check the existing row against SELECT policies, which
    // a tenant's transaction has none of here; the only unique key besides the id is dedupe_key.
    .onConflictDoNothing();
}

export interface DeliveryRound {
  sent: number;
  retrying: number;
  failed: number;
}

/**
 * deliverDueMails sends up to `limit` mails that are due, one at a time, and records each outcome. It
 * takes them under a lease first (its own short transaction), so a second worker at the same moment
 * takes other mails or none.
 */
export async function deliverDueMails(db: Db, transport: MailTransport, options: { from: string; now?: () => Date; limit?: number; renderAttachment?: AttachmentRenderer }): Promise<DeliveryRound> {
  const now = options.now ?? (() => new Date());
  const at = now();
  const due = db
    .select({ id: mailOutbox.id })
    .from(mailOutbox)
    .where(and(eq(mailOutbox.status, 'pending'), lte(mailOutbox.nextAttemptAt, at), or(isNull(mailOutbox.leaseUntil), lte(mailOutbox.leaseUntil, at))))
    .orderBy(mailOutbox.nextAttemptAt, mailOutbox.id)
    .limit(options.limit ?? 20)
    .for('update', { skipLocked: true });
  const leaseUntil = new Date(at.getTime() + MAIL_LEASE_MS);
  const taken = await db
    .update(mailOutbox)
    .set({ leaseUntil, attempts: sql`${mailOutbox.attempts} + 1` })
    .where(inArray(mailOutbox.id, due))
    .returning();
  const round: DeliveryRound = { sent: 0, retrying: 0, failed: 0 };
  for (const mail of taken.sort((a, b) => a.id - b.id)) {
    // Only the holder of this lease records the outcome (a lease that ran out may have passed to another worker).
    const mine = and(eq(mailOutbox.id, mail.id), eq(mailOutbox.leaseUntil, leaseUntil), eq(mailOutbox.status, 'pending'));
    try {
      const attachments = await renderAttachments(mail.attachments, options.renderAttachment);
      const { messageId } = await transport.send({ from: options.from, to: mail.toAddress, subject: mail.subject, text: mail.textBody, html: mail.htmlBody, ...(attachments ? { attachments } : {}) });
      await db.update(mailOutbox).set({ status: 'sent', sentAt: now(), messageId, leaseUntil: null, lastError: null }).where(mine);
      round.sent++;
    } catch (error) {
      const next = afterFailure(mail.attempts, error, now());
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      await db.update(mailOutbox).set({ status: next.status, nextAttemptAt: next.nextAttemptAt, leaseUntil: null, lastError: message }).where(mine);
      if (next.status === 'failed') round.failed++;
      else round.retrying++;
    }
  }
  return round;
}

/** Renders a mail's attachments; a mail that names some while no renderer is given fails its attempt (and is tried again later). */
async function renderAttachments(refs: MailAttachmentRef[] | null, render: AttachmentRenderer | undefined): Promise<MailAttachment[] | undefined> {
  if (!refs?.length) return undefined;
  if (!render) throw new Error('this mail carries attachments, but the sender was given no way to render them');
  return Promise.all(refs.map(render));
}

/** outboxCounts counts the outbox's mails by state (staff). */
export async function outboxCounts(db: DbOrTx): Promise<Record<'pending' | 'sent' | 'failed', number>> {
  const rows = await db.select({ status: mailOutbox.status, n: count() }).from(mailOutbox).groupBy(mailOutbox.status);
  const counts = { pending: 0, sent: 0, failed: 0 };
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}

/** listOutbox lists the newest mails with their state (staff), and their text when asked to. */
export async function listOutbox(db: DbOrTx, limit = 100, options: { withText?: boolean } = {}) {
  const rows = await db
    .select({
      id: mailOutbox.id,
      kind: mailOutbox.kind,
      toAddress: mailOutbox.toAddress,
      locale: mailOutbox.locale,
      subject: mailOutbox.subject,
      textBody: mailOutbox.textBody,
      status: mailOutbox.status,
      attempts: mailOutbox.attempts,
      nextAttemptAt: mailOutbox.nextAttemptAt,
      lastError: mailOutbox.lastError,
      sentAt: mailOutbox.sentAt,
      createdAt: mailOutbox.createdAt,
    })
    .from(mailOutbox)
    .orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id))
    .limit(limit);
  return rows.map(({ textBody, ...mail }) => (options.withText ? { ...mail, text: textBody } : mail));
}
