// Invoicing rules for company tenants: invoice lines from settled jobs, VAT, totals, credit notes,
// document numbers and invoiced months. Pure: integers in euro cents, values in, values out.
//
// A line's net amount is the sum of its jobs' frozen costs (each job is priced when it settles,
// GPU-seconds × its tariff rounded half up to the cent), so every invoice is reproducible from the
// jobs it covers. VAT is computed once, on the invoice's net total, rounded half up to the cent.

import { divRoundHalfUp } from '../usage/footprint';
import { milliTbMonths, storageCents } from '../usage/storage';

/** The VAT rate applied when none is configured: 19 % (German standard rate), in per-mille. */
export const DEFAULT_VAT_PERMILLE = 190;

/** Seconds into a new month before the monthly run invoices the previous one, so jobs that ran at midnight are settled. */
export const MONTHLY_ISSUE_GRACE_SECONDS = 600;

const GPU_SECONDS_PER_HOUR = 3600;

// ---- Amounts ----------------------------------------------------------------------------------

/** vatCents is the VAT on a net amount at a per-mille rate, rounded half up to the cent. */
export function vatCents(netCents: number, vatPermille: number): number {
  assertCents(netCents, 'netCents');
  if (!Number.isInteger(vatPermille) || vatPermille < 0 || vatPermille > 1000) throw new RangeError(`vatPermille must be an integer 0..1000, got ${vatPermille}`);
  return divRoundHalfUp(netCents * vatPermille, 1000);
}

export interface Totals {
  netCents: number;
  vatCents: number;
  grossCents: number;
}

/** invoiceTotals sums the lines' net amounts and adds VAT on the total (not per line). */
export function invoiceTotals(lines: readonly { netCents: number }[], vatPermille: number): Totals {
  const netCents = lines.reduce((sum, line) => sum + line.netCents, 0);
  const vat = vatCents(netCents, vatPermille);
  return { netCents, vatCents: vat, grossCents: netCents + vat };
}

/**
 * lineVatCents shares an invoice's VAT (computed once on the net total) among its lines in proportion
 * to their net amounts, to the cent, by largest remainder (ties to the earlier line): the lines' VAT
 * then adds up to the invoice's exactly, so each line can show its VAT and gross.
 */
export function lineVatCents(lineNetCents: readonly number[], totalVatCents: number): number[] {
  assertCents(totalVatCents, 'totalVatCents');
  for (const net of lineNetCents) assertCents(net, 'netCents');
  const totalNet = lineNetCents.reduce((sum, net) => sum + net, 0);
  if (totalNet === 0) return lineNetCents.map((_, i) => (i === 0 ? totalVatCents : 0));
  const shares = lineNetCents.map((net) => ({ floor: Math.floor((net * totalVatCents) / totalNet), remainder: (net * totalVatCents) % totalNet }));
  let left = totalVatCents - shares.reduce((sum, share) => sum + share.floor, 0);
  const order = shares.map((share, i) => ({ i, remainder: share.remainder })).sort((a, b) => b.remainder - a.remainder || a.i - b.i);
  const result = shares.map((share) => share.floor);
  for (const { i } of order) {
    if (left === 0) break;
    result[i]! += 1;
    left -= 1;
  }
  return result;
}

/** listPriceCents is GPU-seconds × a unit price in cents per GPU-hour, rounded half up (how one job is priced). */
export function listPriceCents(gpuSeconds: number, centsPerGpuHour: number): number {
  return divRoundHalfUp(gpuSeconds * centsPerGpuHour, GPU_SECONDS_PER_HOUR);
}

function assertCents(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer number of cents, got ${value}`);
}

// ---- Lines ------------------------------------------------------------------------------------

/** A settled job as the invoice sees it: where it ran, at which tariff, how long, and what it cost. */
export interface ChargedJob {
  resourceClassId: string;
  /** How many jobs this entry stands for, when the caller has already summed jobs of one class and tariff (default 1). */
  jobs?: number;
  /** Tariff at submission, cents per GPU-hour. */
  centsPerGpuHour: number;
  gpuSeconds: number;
  /** The cost frozen on the job at settlement. */
  costCents: number;
  /** Its project's cost centre and purchase-order number (issue #24), when set: jobs with different ones go on different lines. */
  costCentre?: string | null;
  purchaseOrder?: string | null;
  /** Interactive sessions (issue #28) go on a line of their own beside the class's batch jobs. */
  interactive?: boolean;
}

export interface InvoiceLineValue {
  lineNo: number;
  resourceClassId: string;
  unitPriceCentsPerGpuHour: number;
  jobs: number;
  gpuSeconds: number;
  netCents: number;
  /** Present only when the line's projects have one. */
  costCentre?: string;
  purchaseOrder?: string;
  /** Present (true) only on a line of interactive sessions. */
  interactive?: true;
}

/**
 * invoiceLines groups jobs by resource class and tariff: one line per pair (two tariffs in a month
 * for one class give two lines; a company's projects with different cost centres or PO numbers too),
 * ordered by class then price, numbered from 1. A line's net is the
 * sum of its jobs' costs.
 */
export function invoiceLines(jobs: readonly ChargedJob[]): InvoiceLineValue[] {
  const groups = new Map<string, Omit<InvoiceLineValue, 'lineNo'>>();
  for (const job of jobs) {
    assertCents(job.costCents, 'costCents');
    if (!Number.isSafeInteger(job.gpuSeconds) || job.gpuSeconds < 0) throw new RangeError(`gpuSeconds must be a non-negative integer, got ${job.gpuSeconds}`);
    if (job.jobs !== undefined && (!Number.isSafeInteger(job.jobs) || job.jobs < 1)) throw new RangeError(`jobs must be a positive integer, got ${job.jobs}`);
    const key = `${job.resourceClassId}\u0000${job.centsPerGpuHour}\u0000${job.costCentre ?? ''}\u0000${job.purchaseOrder ?? ''}\u0000${job.interactive ? 'i' : ''}`;
    const line = groups.get(key) ?? {
      resourceClassId: job.resourceClassId,
      unitPriceCentsPerGpuHour: job.centsPerGpuHour,
      jobs: 0,
      gpuSeconds: 0,
      netCents: 0,
      ...(job.costCentre ? { costCentre: job.costCentre } : {}),
      ...(job.purchaseOrder ? { purchaseOrder: job.purchaseOrder } : {}),
      ...(job.interactive ? { interactive: true as const } : {}),
    };
    line.jobs += job.jobs ?? 1;
    line.gpuSeconds += job.gpuSeconds;
    line.netCents += job.costCents;
    groups.set(key, line);
  }
  return [...groups.values()]
    .sort((a, b) => (a.resourceClassId < b.resourceClassId ? -1 : a.resourceClassId > b.resourceClassId ? 1 : a.unitPriceCentsPerGpuHour - b.unitPriceCentsPerGpuHour || referenceOrder(a, b)))
    .map((line, i) => ({ lineNo: i + 1, ...line }));
}

/** A site's storage in the days an invoice covers (issue #27): the exact byte-days, the month's length and the site's price. */
export interface StorageCharge {
  siteId: string;
  byteDays: bigint;
  daysInMonth: number;
  centsPerTbMonth: number;
}

export interface StorageLineValue {
  siteId: string;
  storageByteDays: bigint;
  /** TB-months in thousandths, rounded half up once from the byte-days (the figure the usage page shows). */
  milliTbMonths: number;
  unitPriceCentsPerTbMonth: number;
  /** byte-days × price ÷ (10^12 × days in the month), rounded half up once: not the rounded quantity × price. */
  netCents: number;
}

/**
 * storageLines makes a company's storage lines: one per site (and price), after the compute lines, ordered by
 * site; a site with no byte-days or no price gives none. Academic tenants get no invoices at all.
 */
export function storageLines(charges: readonly StorageCharge[]): StorageLineValue[] {
  return charges
    .filter((c) => c.byteDays > 0n && c.centsPerTbMonth > 0)
    .map((c) => ({
      siteId: c.siteId,
      storageByteDays: c.byteDays,
      milliTbMonths: milliTbMonths(c.byteDays, c.daysInMonth),
      unitPriceCentsPerTbMonth: c.centsPerTbMonth,
      netCents: storageCents(c.byteDays, c.daysInMonth, c.centsPerTbMonth),
    }))
    .sort((a, b) => (a.siteId < b.siteId ? -1 : a.siteId > b.siteId ? 1 : a.unitPriceCentsPerTbMonth - b.unitPriceCentsPerTbMonth));
}

/**
 * coveredDays are the whole UTC days whose start falls in an invoice's [from, until): a closing invoice
 * issued at noon covers its day, the month's invoice after it the days from the next on, so a storage day is
 * billed once. null when no day starts in the range.
 */
export function coveredDays(from: Date, until: Date): { firstDay: string; lastDay: string } | null {
  const day = 86_400_000;
  const first = Math.ceil(from.getTime() / day) * day;
  const last = Math.ceil(until.getTime() / day) * day - day;
  if (last < first) return null;
  return { firstDay: new Date(first).toISOString().slice(0, 10), lastDay: new Date(last).toISOString().slice(0, 10) };
}

/** Lines of one class and tariff: without a cost centre or PO first, then by cost centre, then PO. */
function referenceOrder(a: Omit<InvoiceLineValue, 'lineNo'>, b: Omit<InvoiceLineValue, 'lineNo'>): number {
  return (a.costCentre ?? '').localeCompare(b.costCentre ?? '') || (a.purchaseOrder ?? '').localeCompare(b.purchaseOrder ?? '') || Number(a.interactive ?? false) - Number(b.interactive ?? false);
}

// ---- Credit notes -----------------------------------------------------------------------------

export type CreditNoteRefusal = { reason: 'notPositive' } | { reason: 'exceedsRemaining'; remainingCents: number };

/**
 * creditNoteAmounts prices a credit note of `netCents` against an invoice and the credit notes
 * already issued on it. It refuses more than the remaining net. VAT is the invoice's rate on the
 * credited net, never more than the VAT not yet credited; the credit note that brings the remaining
 * net to zero credits exactly the remaining VAT, so crediting an invoice in full always reverses it
 * to the cent.
 */
export function creditNoteAmounts(
  invoice: { netCents: number; vatCents: number; vatPermille: number },
  alreadyCredited: { netCents: number; vatCents: number },
  netCents: number,
): { ok: true; amounts: Totals } | { ok: false; refusal: CreditNoteRefusal } {
  if (!Number.isSafeInteger(netCents) || netCents <= 0) return { ok: false, refusal: { reason: 'notPositive' } };
  const remainingNet = Math.max(0, invoice.netCents - alreadyCredited.netCents);
  const remainingVat = Math.max(0, invoice.vatCents - alreadyCredited.vatCents);
  if (netCents > remainingNet) return { ok: false, refusal: { reason: 'exceedsRemaining', remainingCents: remainingNet } };
  const vat = netCents === remainingNet ? remainingVat : Math.min(vatCents(netCents, invoice.vatPermille), remainingVat);
  return { ok: true, amounts: { netCents, vatCents: vat, grossCents: netCents + vat } };
}

// ---- Document numbers -------------------------------------------------------------------------

export type DocumentKind = 'invoice' | 'creditNote';

const PREFIX: Record<DocumentKind, string> = { invoice: 'INV', creditNote: 'CN' };
const SERIES: Record<DocumentKind, string> = { invoice: 'invoice', creditNote: 'credit-note' };

/** counterSeries names the gap-free counter a document takes its number from: one per kind and year. */
export function counterSeries(kind: DocumentKind, year: number): string {
  assertYear(year);
  return `${SERIES[kind]}-${year}`;
}

/** documentNumber formats a document number: INV-2026-000001, CN-2026-000001 (more digits past 999,999). */
export function documentNumber(kind: DocumentKind, year: number, sequence: number): string {
  assertYear(year);
  if (!Number.isSafeInteger(sequence) || sequence < 1) throw new RangeError(`sequence must be a positive integer, got ${sequence}`);
  return `${PREFIX[kind]}-${year}-${String(sequence).padStart(6, '0')}`;
}

/** parseDocumentNumber reads a document number back, or returns null for anything else. */
export function parseDocumentNumber(value: string): { kind: DocumentKind; year: number; sequence: number } | null {
  const match = /^(INV|CN)-(\d{4})-(\d{6,})$/.exec(value);
  if (!match) return null;
  const sequence = Number(match[3]);
  if (sequence < 1) return null;
  return { kind: match[1] === 'INV' ? 'invoice' : 'creditNote', year: Number(match[2]), sequence };
}

function assertYear(year: number): void {
  if (!Number.isInteger(year) || year < 2000 || year > 9999) throw new RangeError(`year must be 2000..9999, got ${year}`);
}

// ---- Months -----------------------------------------------------------------------------------

/** The earliest month that can be invoiced. */
export const FIRST_INVOICE_MONTH = '2000-01';
export const MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

/** isMonth tells whether a string is a month YYYY-MM. */
export function isMonth(value: string): boolean {
  return MONTH_PATTERN.test(value);
}

/** monthOf is the UTC month YYYY-MM of an instant. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** previousMonth is the UTC month before the one an instant falls in. */
export function previousMonth(at: Date): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return monthOf(d);
}

/** monthPeriod gives a month's first day (YYYY-MM-DD) and the UTC instants that bound it: [start, end). */
export function monthPeriod(month: string): { firstDay: string; lastDay: string; start: Date; end: Date } {
  if (!isMonth(month)) throw new RangeError(`not a month YYYY-MM: ${month}`);
  const year = Number(month.slice(0, 4));
  const index = Number(month.slice(5, 7)) - 1;
  const start = new Date(Date.UTC(year, index, 1));
  const end = new Date(Date.UTC(year, index + 1, 1));
  const lastDay = new Date(end.getTime() - 86_400_000).toISOString().slice(0, 10);
  return { firstDay: `${month}-01`, lastDay, start, end };
}

/** monthHasEnded tells whether a month is over at an instant (it can be invoiced then, not before). */
export function monthHasEnded(month: string, at: Date): boolean {
  return monthPeriod(month).end.getTime() <= at.getTime();
}

/** monthlyRunDue tells whether the monthly run may invoice the previous month yet (after the grace period). */
export function monthlyRunDue(at: Date): boolean {
  const startOfMonth = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
  return at.getTime() - startOfMonth >= MONTHLY_ISSUE_GRACE_SECONDS * 1000;
}
