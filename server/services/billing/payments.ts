// Payments on invoices, their status, reminders and the overdue block (issue #24).
//
// One source of truth: an invoice's status and open balance are derived, on every read, from its
// gross, its payments (append-only rows, a correction is a reversal row), its credit notes' gross
// and its due date (server/core/billing/payments.ts). Nothing stores a status that could disagree.
// A payment, a reversal and a credit note each lock the invoice row (NO KEY UPDATE; the invoice never
// changes) so concurrent ones see each other's amounts; that lock is outside the tenant lock order
// (no organisation or allocation is locked here).
import { and, asc, eq, gte, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { creditNotes, dailyTaskRuns, invoicePayments, invoiceReminders, invoices, memberships, organisations, overdueBlockLifts, users } from '~/db/schema';
import { daysOverdue, invoiceStatus, openCents, overdueBeyond, paymentRefusal, reminderLevelDue, type InvoiceStatus } from '~/server/core/billing/payments';
import { csvDocument } from '~/server/core/csv';
import { AppError } from '~/server/errors';
import type { Locale } from '~/server/i18n';
import { formatDay } from '~/server/i18n/format';
import { isStaff, type Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { enqueueMail } from '~/server/services/mail/mail';
import { composeMail } from '~/server/services/mail/mail-compose';
import { notify, portalLink } from '~/server/services/mail/notifications';
import { inTransaction } from '~/server/services/transaction';

export type InvoicePayment = typeof invoicePayments.$inferSelect;

/** What an invoice's status needs besides its own row: what was paid and what credit notes took back. */
export interface SettlementSums {
  paidCents: number;
  creditedGrossCents: number;
}

/** The derived payment figures of an invoice on a day. */
export interface PaymentState {
  paidCents: number;
  openCents: number;
  status: InvoiceStatus;
  daysOverdue: number;
}

/** paymentState derives an invoice's status and balance on a day from its row and sums. */
export function paymentState(invoice: { grossCents: number; dueDate: string | null }, sums: SettlementSums, today: string): PaymentState {
  const s = { grossCents: invoice.grossCents, dueDate: invoice.dueDate, ...sums };
  const open = openCents(s);
  return { paidCents: sums.paidCents, openCents: open, status: invoiceStatus(s, today), daysOverdue: open > 0 ? daysOverdue(invoice.dueDate, today) : 0 };
}

/** paidSums is a subquery of what was paid per invoice (reversals subtracted), to join on invoices. */
export function paidSums(db: DbOrTx) {
  return db
    .select({ invoiceId: invoicePayments.invoiceId, paid: sql<string>`sum(${invoicePayments.amountCents})`.as('paid_cents') })
    .from(invoicePayments)
    .groupBy(invoicePayments.invoiceId)
    .as('paid');
}

async function sumsOf(db: DbOrTx, invoiceId: string): Promise<SettlementSums> {
  const [[paid], [credited]] = await Promise.all([
    db.select({ cents: sql<string>`coalesce(sum(${invoicePayments.amountCents}), 0)` }).from(invoicePayments).where(eq(invoicePayments.invoiceId, invoiceId)),
    db.select({ cents: sql<string>`coalesce(sum(${creditNotes.grossCents}), 0)` }).from(creditNotes).where(eq(creditNotes.invoiceId, invoiceId)),
  ]);
  return { paidCents: Number(paid?.cents ?? 0), creditedGrossCents: Number(credited?.cents ?? 0) };
}

/** paymentsOf lists an invoice's payments and reversals in the order they were recorded, with who recorded them. */
export function paymentsOf(db: DbOrTx, invoiceId: string) {
  return db
    .select({
      id: invoicePayments.id,
      paidOn: invoicePayments.paidOn,
      amountCents: invoicePayments.amountCents,
      reference: invoicePayments.reference,
      reversesId: invoicePayments.reversesId,
      recordedAt: invoicePayments.recordedAt,
      recordedByName: users.name,
    })
    .from(invoicePayments)
    .innerJoin(users, eq(users.id, invoicePayments.recordedBy))
    .where(eq(invoicePayments.invoiceId, invoiceId))
    .orderBy(asc(invoicePayments.recordedAt), asc(invoicePayments.id));
}

export interface RecordPaymentInput {
  invoiceId: string;
  /** The day the money arrived, YYYY-MM-DD (not in the future). */
  paidOn: string;
  amountCents: number;
  reference: string;
  now: Date;
}

/**
 * recordPayment records money received on an invoice (staff admins): partial payments add up; more
 * than is open is refused on the amount (no credit is kept: see paymentRefusal). Audited.
 */
export async function recordPayment(db: Db, staff: Actor, input: RecordPaymentInput): Promise<InvoicePayment & PaymentState> {
  if (!isStaff(staff, 'admin')) throw new AppError('FORBIDDEN', 'error.adminOnly');
  const today = input.now.toISOString().slice(0, 10);
  if (input.paidOn > today) throw new AppError('BAD_REQUEST', 'payment.error.paidOnFuture', {}, 'paidOn');
  return inTransaction(db, async (tx) => {
    const [invoice] = await tx.select().from(invoices).where(eq(invoices.id, input.invoiceId)).for('no key update');
    if (!invoice) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'invoiceId');
    if (input.paidOn < invoice.issuedAt.toISOString().slice(0, 10)) {
      throw new AppError('BAD_REQUEST', 'payment.error.paidOnBeforeIssue', { issued: invoice.issuedAt.toISOString().slice(0, 10) }, 'paidOn');
    }
    const sums = await sumsOf(tx, invoice.id);
    const before = paymentState(invoice, sums, today);
    const refusal = paymentRefusal(before.openCents, input.amountCents);
    if (refusal?.reason === 'notPositive') throw new AppError('BAD_REQUEST', 'payment.error.notPositive', {}, 'amountCents');
    if (refusal) throw new AppError('BAD_REQUEST', 'payment.error.exceedsOpen', { number: invoice.number, open: refusal.openCents / 100 }, 'amountCents');
    const [payment] = await tx
      .insert(invoicePayments)
      .values({ invoiceId: invoice.id, orgId: invoice.orgId, paidOn: input.paidOn, amountCents: input.amountCents, reference: input.reference, recordedBy: staff.userId, recordedAt: input.now })
      .returning();
    if (!payment) throw new Error('payment insert returned nothing');
    const after = paymentState(invoice, { ...sums, paidCents: sums.paidCents + input.amountCents }, today);
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: invoice.orgId,
      action: 'invoice.payment_recorded',
      targetType: 'invoice',
      targetId: invoice.id,
      data: { invoice: invoice.number, paymentId: payment.id, paidOn: input.paidOn, amountCents: input.amountCents, reference: input.reference, openBeforeCents: before.openCents, openAfterCents: after.openCents, status: after.status },
      isStaffAction: true,
    });
    return { ...payment, ...after };
  });
}

/**
 * reversePayment undoes a recorded payment (a bounced transfer, a payment booked on the wrong
 * invoice) by a reversal row with its negative amount, once per payment; audited with the reason.
 */
export async function reversePayment(db: Db, staff: Actor, input: { paymentId: string; reason: string; now: Date }): Promise<InvoicePayment & PaymentState> {
  if (!isStaff(staff, 'admin')) throw new AppError('FORBIDDEN', 'error.adminOnly');
  const today = input.now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    const [original] = await tx.select().from(invoicePayments).where(eq(invoicePayments.id, input.paymentId));
    if (!original || original.amountCents <= 0) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'paymentId');
    const [invoice] = await tx.select().from(invoices).where(eq(invoices.id, original.invoiceId)).for('no key update');
    if (!invoice) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'paymentId');
    const [already] = await tx.select({ id: invoicePayments.id }).from(invoicePayments).where(eq(invoicePayments.reversesId, original.id));
    if (already) throw new AppError('CONFLICT', 'payment.error.alreadyReversed', {}, 'paymentId');
    const [reversal] = await tx
      .insert(invoicePayments)
      .values({ invoiceId: invoice.id, orgId: invoice.orgId, paidOn: today, amountCents: -original.amountCents, reference: input.reason, reversesId: original.id, recordedBy: staff.userId, recordedAt: input.now })
      .returning();
    if (!reversal) throw new Error('reversal insert returned nothing');
    const after = paymentState(invoice, await sumsOf(tx, invoice.id), today);
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: invoice.orgId,
      action: 'invoice.payment_reversed',
      targetType: 'invoice',
      targetId: invoice.id,
      reason: input.reason,
      data: { invoice: invoice.number, paymentId: original.id, reversalId: reversal.id, amountCents: original.amountCents, openAfterCents: after.openCents, status: after.status },
      isStaffAction: true,
    });
    return { ...reversal, ...after };
  });
}

// ---- Open items -------------------------------------------------------------------------------

export interface OpenItem {
  invoiceId: string;
  number: string;
  orgId: string;
  orgName: string;
  issuedOn: string;
  dueDate: string | null;
  grossCents: number;
  paidCents: number;
  creditedGrossCents: number;
  openCents: number;
  daysOverdue: number;
  status: InvoiceStatus;
}

/** openItems lists every invoice with something still open on a day (staff; optionally of one tenant), most overdue first. */
export async function openItems(db: DbOrTx, today: string, filter: { orgId?: string } = {}): Promise<OpenItem[]> {
  const paid = paidSums(db);
  const credited = db
    .select({ invoiceId: creditNotes.invoiceId, gross: sql<string>`sum(${creditNotes.grossCents})`.as('credited_gross') })
    .from(creditNotes)
    .groupBy(creditNotes.invoiceId)
    .as('credited');
  const rows = await db
    .select({
      invoiceId: invoices.id,
      number: invoices.number,
      orgId: invoices.orgId,
      orgName: organisations.name,
      issuedAt: invoices.issuedAt,
      dueDate: invoices.dueDate,
      grossCents: invoices.grossCents,
      paidCents: sql<number>`coalesce(${paid.paid}, 0)`.mapWith(Number),
      creditedGrossCents: sql<number>`coalesce(${credited.gross}, 0)`.mapWith(Number),
    })
    .from(invoices)
    .innerJoin(organisations, eq(organisations.id, invoices.orgId))
    .leftJoin(paid, eq(paid.invoiceId, invoices.id))
    .leftJoin(credited, eq(credited.invoiceId, invoices.id))
    .where(and(sql`${invoices.grossCents} - coalesce(${paid.paid}, 0) - coalesce(${credited.gross}, 0) > 0`, filter.orgId ? eq(invoices.orgId, filter.orgId) : undefined))
    .orderBy(asc(invoices.dueDate), asc(invoices.number));
  return rows.map((r) => ({
    invoiceId: r.invoiceId,
    number: r.number,
    orgId: r.orgId,
    orgName: r.orgName,
    issuedOn: r.issuedAt.toISOString().slice(0, 10),
    dueDate: r.dueDate,
    grossCents: r.grossCents,
    creditedGrossCents: r.creditedGrossCents,
    ...paymentState(r, r, today),
  }));
}

/** openItemsCsv is the open items for a finance system: one row per open invoice, amounts in cents, days overdue, status. */
export async function openItemsCsv(db: DbOrTx, today: string): Promise<string> {
  const items = await openItems(db, today);
  return csvDocument(
    ['invoice_number', 'tenant', 'issue_date', 'due_date', 'gross_cents', 'paid_cents', 'credited_cents', 'open_cents', 'days_overdue', 'status'],
    items.map((i) => [i.number, i.orgName, i.issuedOn, i.dueDate, i.grossCents, i.paidCents, i.creditedGrossCents, i.openCents, i.daysOverdue, i.status]),
  );
}

// ---- Reminders (daily) ------------------------------------------------------------------------

const REMINDER_TASK = 'invoice-reminders';

export interface InvoiceReminderRun {
  day: string;
  /** False when this day's reminders were sent already (by this or another worker). */
  ran: boolean;
  sent: { invoiceId: string; number: string; level: number }[];
}

/**
 * sendInvoiceReminders sends the day's payment reminders, once per UTC day (claim row in
 * daily_task_runs, written in the same transaction): each open invoice gets the reminder its days
 * overdue have reached (reminderLevelDue), once per level (invoice_reminders' key), as a bell notice
 * and mail to the tenant's owners and a mail to the billing address on the invoice.
 */
export async function sendInvoiceReminders(db: Db, now: Date, reminderDays: readonly number[]): Promise<InvoiceReminderRun> {
  const today = now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    const claimed = await tx.insert(dailyTaskRuns).values({ task: REMINDER_TASK, day: today, doneAt: now }).onConflictDoNothing().returning({ day: dailyTaskRuns.day });
    if (claimed.length === 0) return { day: today, ran: false, sent: [] };
    const run: InvoiceReminderRun = { day: today, ran: true, sent: [] };
    if (reminderDays.length === 0) return run;
    // Due before today minus the first reminder's days: nothing younger can be due a reminder.
    const latestDue = new Date(Date.parse(`${today}T00:00:00Z`) - reminderDays[0]! * 86_400_000).toISOString().slice(0, 10);
    const candidates = (await openItems(tx, today)).filter((i) => i.dueDate !== null && i.dueDate <= latestDue);
    if (candidates.length === 0) return run;
    const ids = candidates.map((c) => c.invoiceId);
    const [sent, recipients, owners] = await Promise.all([
      tx.select({ invoiceId: invoiceReminders.invoiceId, level: invoiceReminders.level }).from(invoiceReminders).where(inArray(invoiceReminders.invoiceId, ids)),
      tx.select({ id: invoices.id, recipient: invoices.recipient }).from(invoices).where(inArray(invoices.id, ids)),
      tx
        .select({ orgId: memberships.orgId, userId: memberships.userId, email: users.email })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(and(inArray(memberships.orgId, [...new Set(candidates.map((c) => c.orgId))]), eq(memberships.role, 'owner'))),
    ]);
    for (const item of candidates) {
      const level = reminderLevelDue(item.daysOverdue, reminderDays, sent.filter((s) => s.invoiceId === item.invoiceId).map((s) => s.level));
      if (level === null) continue;
      const inserted = await tx.insert(invoiceReminders).values({ invoiceId: item.invoiceId, level, orgId: item.orgId, sentOn: today }).onConflictDoNothing().returning({ level: invoiceReminders.level });
      if (inserted.length === 0) continue;
      const params = { number: item.number, open: item.openCents / 100, due: item.dueDate ?? '', days: item.daysOverdue };
      const notice = level === 1 ? 'notice.invoiceReminder1' : 'notice.invoiceReminder2';
      const ownersOf = owners.filter((o) => o.orgId === item.orgId);
      await notify(tx, ownersOf.map((o) => o.userId), notice, params, `/invoices/${item.invoiceId}`, { orgId: item.orgId, dedupeKey: `invoice-reminder:${item.invoiceId}:${level}` });
      // The accounts department named on the invoice, when it is not one of the owners (who are mailed above).
      const recipient = recipients.find((r) => r.id === item.invoiceId)?.recipient;
      const billingEmail = recipient?.billingEmail?.toLowerCase();
      if (billingEmail && !ownersOf.some((o) => o.email.toLowerCase() === billingEmail)) {
        const locale: Locale = recipient?.country === 'DE' || recipient?.country === 'AT' ? 'de' : 'en';
        const mail = composeMail(locale, {
          subject: [level === 1 ? 'mail.invoiceReminder1.subject' : 'mail.invoiceReminder2.subject', params],
          paragraphs: [[notice, { ...params, due: formatDay(locale, params.due) }]],
          action: { label: ['mail.invoiceReminder.action'], url: portalLink(`/invoices/${item.invoiceId}`) },
        });
        await enqueueMail(tx, [{ kind: 'invoice_issued', orgId: item.orgId, toAddress: billingEmail, locale, ...mail, dedupeKey: `invoice-reminder:${item.invoiceId}:${level}:billing` }], now);
      }
      await recordAudit(tx, { actorUserId: null, orgId: item.orgId, action: 'invoice.reminder_sent', targetType: 'invoice', targetId: item.invoiceId, data: { invoice: item.number, level, daysOverdue: item.daysOverdue, openCents: item.openCents } });
      run.sent.push({ invoiceId: item.invoiceId, number: item.number, level });
    }
    return run;
  });
}

/** remindersOf lists the reminders sent for an invoice (level and day). */
export function remindersOf(db: DbOrTx, invoiceId: string) {
  return db.select({ level: invoiceReminders.level, sentOn: invoiceReminders.sentOn }).from(invoiceReminders).where(eq(invoiceReminders.invoiceId, invoiceId)).orderBy(asc(invoiceReminders.level));
}

// ---- The overdue block ------------------------------------------------------------------------

/**
 * overdueInvoicesBlocking lists the tenant's invoices that block new submissions on a day: open more
 * than `blockDays` after their due date, unless staff lifted the block until that day or later.
 * Empty when the policy is off (null). Read in the submitting transaction (the tenant role reads its
 * own invoices, payments, credit notes and lifts).
 */
export async function overdueInvoicesBlocking(db: DbOrTx, orgId: string, today: string, blockDays: number | null): Promise<string[]> {
  if (blockDays === null) return [];
  // Overdue more than blockDays ⇔ due before today − blockDays.
  const dueBefore = new Date(Date.parse(`${today}T00:00:00Z`) - blockDays * 86_400_000).toISOString().slice(0, 10);
  const [lift] = await db.select({ untilDay: overdueBlockLifts.untilDay }).from(overdueBlockLifts).where(and(eq(overdueBlockLifts.orgId, orgId), gte(overdueBlockLifts.untilDay, today))).limit(1);
  if (lift) return [];
  const paid = paidSums(db);
  const rows = await db
    .select({
      number: invoices.number,
      grossCents: invoices.grossCents,
      dueDate: invoices.dueDate,
      paidCents: sql<number>`coalesce(${paid.paid}, 0)`.mapWith(Number),
      creditedGrossCents: sql<number>`coalesce((select sum(${creditNotes.grossCents}) from ${creditNotes} where ${creditNotes.invoiceId} = ${invoices.id}), 0)`.mapWith(Number),
    })
    .from(invoices)
    .leftJoin(paid, eq(paid.invoiceId, invoices.id))
    .where(and(eq(invoices.orgId, orgId), isNotNull(invoices.dueDate), lt(invoices.dueDate, dueBefore)))
    .orderBy(asc(invoices.number));
  return overdueBeyond(rows, blockDays, today);
}

/** liftOverdueBlock lets a tenant with overdue invoices submit again until a day (inclusive), with a reason (staff admins; audited). */
export async function liftOverdueBlock(db: Db, staff: Actor, input: { orgId: string; untilDay: string; reason: string; now: Date }) {
  if (!isStaff(staff, 'admin')) throw new AppError('FORBIDDEN', 'error.adminOnly');
  const today = input.now.toISOString().slice(0, 10);
  if (input.untilDay < today) throw new AppError('BAD_REQUEST', 'payment.error.liftInPast', {}, 'untilDay');
  return inTransaction(db, async (tx) => {
    const [org] = await tx.select({ id: organisations.id, name: organisations.name }).from(organisations).where(eq(organisations.id, input.orgId));
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'orgId');
    const [lift] = await tx.insert(overdueBlockLifts).values({ orgId: org.id, untilDay: input.untilDay, reason: input.reason, liftedBy: staff.userId, liftedAt: input.now }).returning();
    if (!lift) throw new Error('lift insert returned nothing');
    await recordAudit(tx, { actorUserId: staff.userId, orgId: org.id, action: 'tenant.overdue_block_lifted', targetType: 'organisation', targetId: org.id, reason: input.reason, data: { untilDay: input.untilDay }, isStaffAction: true });
    return { id: lift.id, orgId: org.id, untilDay: lift.untilDay };
  });
}
