// In-app notifications: a message key and parameters, rendered in the reader's language. A notice of a
// kind people get by mail too (NOTICE_MAILS) is also written to the mail outbox, in the same
// transaction, to each recipient whose preference allows it (server/core/mail/kinds.ts): every event
// that rings the bell mails through this one place, never through a second copy of its call site.
import { and, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { memberships, notificationPreferences, notifications, projectMembers, users } from '~/db/schema';
import type { MailAttachmentRef } from '~/server/core/mail/delivery';
import { effectivePreferences, isMailKind, MAIL_KINDS, wantsEmail, type MailKind } from '~/server/core/mail/kinds';
import { linkBase } from '~/server/portal-url';
import { isLocale, type Locale, type MessageKey, type MessageParams } from '~/server/i18n';
import type { Actor } from '~/server/services/actor';
import { enqueueMail, type OutgoingMail } from './mail';
import { composeMail, type MailContent } from './mail-compose';
import { replayedTime, stampCreatedAt } from '~/server/services/replay-clock';

/** The notices that are mailed too: their kind (for the preference) and the mail's subject. */
const NOTICE_MAILS: Partial<Record<MessageKey, { kind: MailKind; subject: MessageKey }>> = {
  'notice.applicationSubmitted': { kind: 'application_submitted', subject: 'mail.applicationSubmitted.subject' },
  // A call's round closed at its cut-off (issue #32): its applications wait for review together.
  'notice.roundClosed': { kind: 'application_submitted', subject: 'mail.roundClosed.subject' },
  // A reviewer assigned an application, alone or as a round's panel (issue #32).
  'notice.reviewAssigned': { kind: 'application_submitted', subject: 'mail.reviewAssigned.subject' },
  // An allocation's period ended: its PI and managers are asked for the report (ledger/reports.ts).
  'notice.reportDue': { kind: 'report_due', subject: 'mail.reportDue.subject' },
  'notice.applicationApproved': { kind: 'application_decided', subject: 'mail.applicationApproved.subject' },
  'notice.applicationRejected': { kind: 'application_decided', subject: 'mail.applicationRejected.subject' },
  'notice.applicationChangesRequested': { kind: 'application_decided', subject: 'mail.applicationChangesRequested.subject' },
  'notice.budget80': { kind: 'budget_threshold', subject: 'mail.budget80.subject' },
  'notice.budgetExhausted': { kind: 'budget_threshold', subject: 'mail.budgetExhausted.subject' },
  'notice.monthlyCapReached': { kind: 'monthly_cap_reached', subject: 'mail.monthlyCapReached.subject' },
  'notice.spendAlert.monthlyCap': { kind: 'budget_threshold', subject: 'mail.spendAlert.subject' },
  'notice.spendAlert.projectMonthly': { kind: 'budget_threshold', subject: 'mail.spendAlert.subject' },
  'notice.spendAlert.projectTotal': { kind: 'budget_threshold', subject: 'mail.spendAlert.subject' },
  'notice.spendAlert.personMonthly': { kind: 'budget_threshold', subject: 'mail.spendAlert.subject' },
  // A workspace's storage passing 80 % or 100 % of its quota (issue #27): a budget of its own, the same preference.
  'notice.storage80': { kind: 'budget_threshold', subject: 'mail.storage80.subject' },
  'notice.storageFull': { kind: 'budget_threshold', subject: 'mail.storageFull.subject' },
  'notice.invoiceIssued': { kind: 'invoice_issued', subject: 'mail.invoiceIssued.subject' },
  'notice.invoiceReminder1': { kind: 'invoice_issued', subject: 'mail.invoiceReminder1.subject' },
  'notice.invoiceReminder2': { kind: 'invoice_issued', subject: 'mail.invoiceReminder2.subject' },
  'notice.tenantVerified': { kind: 'tenant_status', subject: 'mail.tenantVerified.subject' },
  'notice.tenantSuspended': { kind: 'tenant_status', subject: 'mail.tenantSuspended.subject' },
  'notice.tenantReactivated': { kind: 'tenant_status', subject: 'mail.tenantReactivated.subject' },
  // A credit-line request is decided in the review queue like an application.
  'notice.creditRaised': { kind: 'application_decided', subject: 'mail.creditRaised.subject' },
  'notice.creditRaisedNoCap': { kind: 'application_decided', subject: 'mail.creditRaised.subject' },
  'notice.creditRejected': { kind: 'application_decided', subject: 'mail.creditRejected.subject' },
  // Staff grant or adjust a line with its cap outside a request: the company hears it the same way.
  'notice.creditGranted': { kind: 'application_decided', subject: 'mail.creditGranted.subject' },
  'notice.creditGrantedNoCap': { kind: 'application_decided', subject: 'mail.creditGranted.subject' },
  'notice.creditAdjusted': { kind: 'application_decided', subject: 'mail.creditAdjusted.subject' },
  'notice.creditAdjustedNoCap': { kind: 'application_decided', subject: 'mail.creditAdjusted.subject' },
};

export interface NoticeMailOptions {
  /** The tenant the notice is about: required when a tenant's own transaction notifies (its mails must name it, drizzle/0030). */
  orgId?: string | null;
  /** Makes the mail once per occasion: the recipient's id is appended (a budget threshold per allocation). */
  dedupeKey?: string;
  /** Files the mail carries, rendered when it is sent (an invoice's PDF), per the recipient's language. */
  attachments?: (locale: Locale) => MailAttachmentRef[];
  /** Words the mail adds after the notice's own (that a PDF is attached). */
  paragraphs?: readonly (readonly [MessageKey, MessageParams?])[];
  /** When the mail is due; default now. */
  at?: Date;
}

/**
 * notify sends one notification to each of several people (duplicates removed) and, for a notice that
 * is mailed too, the mail to those who want it; call it inside the changing transaction.
 */
export async function notify(
  db: DbOrTx,
  userIds: readonly string[],
  messageKey: MessageKey,
  params: MessageParams,
  link?: string,
  mail: NoticeMailOptions = {},
): Promise<void> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return;
  await db.insert(notifications).values(unique.map((userId) => ({ userId, messageKey, params, link: link ?? null, ...stampCreatedAt() })));
  const mailed = NOTICE_MAILS[messageKey];
  if (!mailed) return;
  await mailPeople(
    db,
    mailed.kind,
    unique.map((userId) => ({
      userId,
      orgId: mail.orgId ?? null,
      dedupeKey: mail.dedupeKey ? `${mail.dedupeKey}:${userId}` : undefined,
      attachments: mail.attachments,
      content: (person) => ({
        subject: [mailed.subject, params],
        paragraphs: [['mail.greeting', { name: person.name }], [messageKey, params], ...(mail.paragraphs ?? [])],
        action: link ? { label: ['mail.notice.action'], url: portalLink(link) } : undefined,
      }),
    })),
    mail.at,
  );
}

/**
 * notifyMembers notifies those of several people who are members of a tenant (a project's PI who has
 * left the tenant hears nothing more of it); the database refuses a tenant's notice to anyone else.
 */
export async function notifyMembers(
  db: DbOrTx,
  orgId: string,
  userIds: readonly string[],
  messageKey: MessageKey,
  params: MessageParams,
  link?: string,
  mail: Omit<NoticeMailOptions, 'orgId'> = {},
): Promise<void> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return;
  const members = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), inArray(memberships.userId, unique)));
  await notify(db, members.map((m) => m.userId), messageKey, params, link, { ...mail, orgId });
}

/** budgetKeepers lists who hears about an allocation's budget: its project's PI and managers and the tenant's owners. */
export async function budgetKeepers(tx: DbOrTx, allocation: { orgId: string; projectId: string }): Promise<string[]> {
  const [leads, owners] = await Promise.all([
    tx
      .select({ userId: projectMembers.userId })
      .from(projectMembers)
      .where(and(eq(projectMembers.projectId, allocation.projectId), inArray(projectMembers.role, ['pi', 'manager']))),
    tx.select({ userId: memberships.userId }).from(memberships).where(and(eq(memberships.orgId, allocation.orgId), eq(memberships.role, 'owner'))),
  ]);
  return [...leads, ...owners].map((r) => r.userId);
}

/** portalLink makes a path inside the portal an absolute link for a mail. */
export function portalLink(path: string): string {
  return `${linkBase()}${path.startsWith('/') ? path : `/${path}`}`;
}

/** A recipient as a mail is written for them. */
export interface MailReader {
  id: string;
  name: string;
  locale: Locale;
}

/** One mail to one person, written only if their preference for its kind allows it. */
export interface Letter {
  userId: string;
  orgId?: string | null;
  dedupeKey?: string;
  attachments?: (locale: Locale) => MailAttachmentRef[];
  content: (reader: MailReader) => MailContent;
}

/**
 * mailPeople writes mails of one kind to people, each in their language (users.locale, else English),
 * to those whose preference (or the kind's default) wants it. One statement reads every recipient and
 * their choice, so a settlement batch costs one read whatever its size. Reads only what a tenant's
 * transaction may: users' id, e-mail, name and locale, and the preferences of its members and of staff.
 */
export async function mailPeople(db: DbOrTx, kind: MailKind, letters: readonly Letter[], at?: Date): Promise<number> {
  // A replayed history (the demo seed) mails nothing (enqueueMail would drop it): skip the read too.
  if (letters.length === 0 || replayedTime()) return 0;
  const ids = [...new Set(letters.map((l) => l.userId))];
  const people = await db
    .select({ id: users.id, email: users.email, name: users.name, locale: users.locale, chosen: notificationPreferences.email })
    .from(users)
    .leftJoin(notificationPreferences, and(eq(notificationPreferences.userId, users.id), eq(notificationPreferences.kind, kind)))
    .where(inArray(users.id, ids));
  const byId = new Map(people.map((p) => [p.id, p]));
  const mails: OutgoingMail[] = [];
  for (const letter of letters) {
    const person = byId.get(letter.userId);
    if (!person || !wantsEmail(kind, person.chosen ?? undefined)) continue;
    const locale: Locale = isLocale(person.locale) ? person.locale : 'en';
    const composed = composeMail(locale, letter.content({ id: person.id, name: person.name, locale }));
    mails.push({
      kind,
      orgId: letter.orgId ?? null,
      toUserId: person.id,
      toAddress: person.email,
      locale,
      ...composed,
      dedupeKey: letter.dedupeKey,
      attachments: letter.attachments?.(locale),
    });
  }
  await enqueueMail(db, mails, at);
  return mails.length;
}

/** notificationPreferencesOf lists every kind of mail with whether the person gets it (their choice, else the default). */
export async function notificationPreferencesOf(db: DbOrTx, actor: Actor) {
  const rows = await db
    .select({ kind: notificationPreferences.kind, email: notificationPreferences.email })
    .from(notificationPreferences)
    .where(eq(notificationPreferences.userId, actor.userId));
  return effectivePreferences(new Map(rows.map((r) => [r.kind, r.email])));
}

/** setNotificationPreferences stores the person's own choices (kinds that cannot be turned off are left out). */
export async function setNotificationPreferences(db: DbOrTx, actor: Actor, choices: readonly { kind: MailKind; email: boolean }[], now: Date) {
  const adjustable = choices.filter((c) => isMailKind(c.kind) && MAIL_KINDS.some((k) => k.kind === c.kind && k.adjustable));
  if (adjustable.length > 0) {
    await db
      .insert(notificationPreferences)
      .values(adjustable.map((c) => ({ userId: actor.userId, kind: c.kind, email: c.email, updatedAt: now })))
      .onConflictDoUpdate({ target: [notificationPreferences.userId, notificationPreferences.kind], set: { email: sql`excluded.email`, updatedAt: now } });
  }
  return notificationPreferencesOf(db, actor);
}

/** listNotifications returns a person's newest notifications. */
export async function listNotifications(db: DbOrTx, userId: string, limit = 50) {
  return db.select().from(notifications).where(eq(notifications.userId, userId)).orderBy(desc(notifications.createdAt)).limit(limit);
}

/** unreadCount counts a person's unread notifications. */
export async function unreadCount(db: DbOrTx, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(notifications).where(and(eq(notifications.userId, userId), isNull(notifications.readAt)));
  return row?.n ?? 0;
}

/** markRead marks some (or all) of a person's notifications read. */
export async function markRead(db: DbOrTx, userId: string, ids?: string[]): Promise<void> {
  const mine = and(eq(notifications.userId, userId), isNull(notifications.readAt));
  await db
    .update(notifications)
    .set({ readAt: new Date() })
    .where(ids ? and(mine, inArray(notifications.id, ids)) : mine);
}
