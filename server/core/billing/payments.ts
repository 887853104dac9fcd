// Payment status of an invoice, derived — never stored — from one balance:
//   open = gross − payments (net of reversals) − credit notes' gross.
// Issued while nothing is paid and the due date has not passed; partly paid while something is paid
// and something is open; paid when nothing is open (a credit note settles like a payment); overdue
// while something is open after the due date. Pure: the day comes in as a value (YYYY-MM-DD, UTC).

/** The payment states of an invoice, in the order an invoice goes through them. */
export const INVOICE_STATUSES = ['issued', 'partlyPaid', 'paid', 'overdue'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** What an invoice's status is derived from. */
export interface InvoiceSettlement {
  grossCents: number;
  /** Payments received, reversals subtracted. */
  paidCents: number;
  /** The gross of the invoice's credit notes. */
  creditedGrossCents: number;
  /** The day payment is due (YYYY-MM-DD), null on invoices issued before payment terms. */
  dueDate: string | null;
}

const DAY_MS = 86_400_000;

/** openCents is what is still to be paid on an invoice: gross less payments and credit notes (never below zero). */
export function openCents(s: Pick<InvoiceSettlement, 'grossCents' | 'paidCents' | 'creditedGrossCents'>): number {
  return Math.max(0, s.grossCents - s.paidCents - s.creditedGrossCents);
}

/** daysOverdue counts the whole days since the due date (0 on and before it, or without a due date). */
export function daysOverdue(dueDate: string | null, today: string): number {
  if (!dueDate) return 0;
  return Math.max(0, Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${dueDate}T00:00:00Z`)) / DAY_MS));
}

/** invoiceStatus derives an invoice's payment status on a day. */
export function invoiceStatus(s: InvoiceSettlement, today: string): InvoiceStatus {
  const open = openCents(s);
  if (open === 0) return 'paid';
  if (daysOverdue(s.dueDate, today) > 0) return 'overdue';
  return s.paidCents > 0 || s.creditedGrossCents > 0 ? 'partlyPaid' : 'issued';
}

export type PaymentRefusal = { reason: 'notPositive' } | { reason: 'exceedsOpen'; openCents: number };

/**
 * paymentRefusal checks a payment against the open balance: an amount must be positive and at most
 * what is open. An overpayment is refused rather than kept as credit: the portal keeps no customer
 * account, so a surplus would have nowhere to live; finance pays it back outside the portal.
 */
export function paymentRefusal(open: number, amountCents: number): PaymentRefusal | null {
  if (!Number.isInteger(amountCents) || amountCents <= 0) return { reason: 'notPositive' };
  if (amountCents > open) return { reason: 'exceedsOpen', openCents: open };
  return null;
}

/**
 * reminderLevelDue is the reminder (1 = first, 2 = second …) an overdue invoice should get today, or
 * null: the highest level whose day (days after the due date, ascending) has come, if no reminder
 * of that level or a later one has been sent. A worker that missed the first reminder's day sends it
 * the day after; one that missed both sends only the second.
 */
export function reminderLevelDue(overdueDays: number, reminderDays: readonly number[], sentLevels: readonly number[]): number | null {
  let level = 0;
  reminderDays.forEach((day, i) => {
    if (overdueDays >= day) level = i + 1;
  });
  if (level === 0) return null;
  const highestSent = sentLevels.reduce((max, l) => Math.max(max, l), 0);
  return level > highestSent ? level : null;
}

/** An invoice as the block policy sees it. */
export interface OverdueCandidate extends InvoiceSettlement {
  number: string;
}

/**
 * overdueBeyond lists the numbers of the invoices open more than `blockDays` days after their due
 * date (the policy that suspends new submissions); empty when the policy is off (null).
 */
export function overdueBeyond(invoices: readonly OverdueCandidate[], blockDays: number | null, today: string): string[] {
  if (blockDays === null) return [];
  return invoices.filter((i) => openCents(i) > 0 && daysOverdue(i.dueDate, today) > blockDays).map((i) => i.number);
}
