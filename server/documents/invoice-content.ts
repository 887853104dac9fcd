// What an invoice says, in the reader's language: one source for the page and the PDF, so the two
// cannot drift apart. Plain strings in blocks; the page lays them out in HTML, the PDF with pdfkit.
import type { z } from 'zod';
import { formatDay, formatEuros } from '~/server/i18n/format';
import type { invoiceOut } from '~/server/api/outputs';
import { formatIban } from '~/server/core/billing/iban';
import { lineVatCents } from '~/server/core/billing/invoicing';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n';
import { formatInvoiceGpuHours, formatInvoiceTbMonths, formatTokens, formatVatRate } from './invoice-format';

export type InvoiceView = z.infer<typeof invoiceOut>;
type T = (key: MessageKey, params?: MessageParams) => string;

export interface PartyBlock {
  heading: string;
  name: string;
  lines: string[];
}

export interface InvoiceContent {
  title: string;
  number: string;
  /** On invoices issued before the issuer was configured: the centre's name only. */
  issuer: PartyBlock;
  recipient: PartyBlock;
  /** Number, dates, purchase order: label and value. */
  facts: [label: string, value: string][];
  columns: { label: string; numeric: boolean }[];
  rows: string[][];
  totals: { label: string; value: string; id: 'net' | 'vat' | 'gross' }[];
  /** Legal notes: reverse charge, closing invoice, how each line is priced, how to pay. */
  notes: { text: string; prominent: boolean }[];
  /** The issuer's registration and bank, in columns as at the foot of a letter. */
  footer: string[][];
  creditNotes: {
    heading: string;
    note: string;
    columns: { label: string; numeric: boolean }[];
    rows: string[][];
    remaining: string;
  } | null;
}

/** countryName is a country's name in the reader's language. */
function countryName(locale: Locale, code: string): string {
  return new Intl.DisplayNames([locale], { type: 'region' }).of(code) ?? code;
}

/** The parties and the issuer's footer, alike on an invoice and on its credit notes. */
function partiesOf(invoice: InvoiceView, t: T, locale: Locale): { issuer: PartyBlock; recipient: PartyBlock; footer: string[][] } {
  const { issuer, recipient } = invoice;
  const issuerBlock: PartyBlock = issuer
    ? { heading: t('invoice.issuer'), name: issuer.name, lines: [issuer.street, `${issuer.postcode} ${issuer.city}`, countryName(locale, issuer.country), `${t('invoice.vatId')}: ${issuer.vatId}`] }
    : { heading: t('invoice.issuer'), name: t('app.name'), lines: [t('app.tagline')] };
  const recipientLines = [
    ...(recipient.street ? [recipient.street] : []),
    ...(recipient.postcode || recipient.city ? [`${recipient.postcode ?? ''} ${recipient.city ?? ''}`.trim()] : []),
    countryName(locale, recipient.country),
    ...(recipient.vatId ? [`${t('invoice.vatId')}: ${recipient.vatId}`] : []),
  ];
  const footer: string[][] = issuer
    ? [
        [issuer.name, issuer.street, `${issuer.postcode} ${issuer.city}`, `${t('invoice.register')}: ${issuer.registerEntry}`],
        [`${t('invoice.vatId')}: ${issuer.vatId}`, `${t('invoice.taxNumber')}: ${issuer.taxNumber}`, `${t('invoice.email')}: ${issuer.email}`, `${t('invoice.phone')}: ${issuer.phone}`],
        [`${t('invoice.bank')}: ${issuer.bankName}`, `${t('invoice.iban')}: ${formatIban(issuer.iban)}`, `${t('invoice.bic')}: ${issuer.bic}`],
      ]
    : [];
  return { issuer: issuerBlock, recipient: { heading: t('invoice.recipient'), name: recipient.name, lines: recipientLines }, footer };
}

const day = (locale: Locale, at: Date | string) => formatDay(locale, typeof at === 'string' ? at : at.toISOString().slice(0, 10));

/** A line's description with its projects' cost centre and PO number, when they have them (issue #24). */
export function lineDescription(line: InvoiceView['lines'][number], t: T, locale: Locale): string {
  const references = [line.costCentre && t('invoice.line.costCentre', { costCentre: line.costCentre }), line.purchaseOrder && t('invoice.line.purchaseOrder', { purchaseOrder: line.purchaseOrder })].filter(Boolean);
  return [locale === 'de' && line.descriptionDe ? line.descriptionDe : line.description, ...references].join(' · ');
}

/** lineQuantity is what a line bills: GPU-hours, TB-months, or tokens in and out. */
export function lineQuantity(line: InvoiceView['lines'][number], t: T, locale: Locale): string {
  if (line.kind === 'storage') return formatInvoiceTbMonths(locale, line.milliTbMonths ?? 0, t('invoice.tbMonths'));
  if (line.kind === 'tokens') return t('invoice.tokens', { input: formatTokens(locale, line.inputTokens ?? 0), output: formatTokens(locale, line.outputTokens ?? 0) });
  return formatInvoiceGpuHours(locale, line.gpuSeconds);
}

/** linePrice is a line's unit price: per GPU-hour, per TB-month, or per million tokens in and out. */
export function linePrice(line: InvoiceView['lines'][number], t: T, locale: Locale): string {
  const euros = (cents: number) => formatEuros(locale, cents);
  if (line.kind === 'storage') return t('invoice.perTbMonth', { price: euros(line.unitPriceCentsPerTbMonth ?? 0) });
  if (line.kind === 'tokens') {
    const plain = (cents: number) => new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(cents / 100);
    return t('invoice.perMTokens', { input: plain(line.inputCentsPerMTokens ?? 0), output: plain(line.outputCentsPerMTokens ?? 0) });
  }
  return t('invoice.perGpuHour', { price: euros(line.unitPriceCentsPerGpuHour) });
}

/** invoiceContent turns an invoice into the strings both its page and its PDF show. */
export function invoiceContent(invoice: InvoiceView, t: T, locale: Locale): InvoiceContent {
  const euros = (cents: number) => formatEuros(locale, cents);
  const rate = formatVatRate(locale, invoice.vatPermille);
  const { recipient } = invoice;
  const parties = partiesOf(invoice, t, locale);
  // VAT is computed once on the net total; each line shows its share, adding up to it exactly.
  const lineVat = lineVatCents(invoice.lines.map((line) => line.netCents), invoice.vatCents);

  const facts: [string, string][] = [
    [t('invoice.number'), invoice.number],
    [t('invoice.issueDate'), day(locale, invoice.issuedAt)],
    [t('invoice.servicePeriod'), `${day(locale, invoice.coversFrom)} – ${day(locale, invoice.periodLastDay)}`],
  ];
  if (invoice.dueDate) facts.push([t('invoice.dueDate'), day(locale, invoice.dueDate)]);
  if (recipient.purchaseOrder) facts.push([t('invoice.purchaseOrder'), recipient.purchaseOrder]);

  const notes: InvoiceContent['notes'] = [];
  if (invoice.vatTreatment === 'reverseCharge') notes.push({ text: t('invoice.reverseCharge'), prominent: true });
  if (invoice.dueDate) notes.push({ text: t('invoice.payBy', { amount: euros(invoice.grossCents), date: day(locale, invoice.dueDate), number: invoice.number }), prominent: true });
  if (invoice.closing) notes.push({ text: t('invoice.closingNote', { date: day(locale, invoice.periodLastDay) }), prominent: false });
  notes.push({ text: t('invoice.pricingNote'), prominent: false });
  if (invoice.lines.some((line) => line.kind === 'storage')) notes.push({ text: t('invoice.storagePricingNote'), prominent: false });
  if (invoice.lines.some((line) => line.kind === 'tokens')) notes.push({ text: t('invoice.tokenPricingNote'), prominent: false });

  const credited = invoice.creditNotes;
  return {
    title: t('invoice.document'),
    number: invoice.number,
    issuer: parties.issuer,
    recipient: parties.recipient,
    facts,
    columns: [
      { label: t('invoice.lineNo'), numeric: false },
      { label: t('invoice.description'), numeric: false },
      { label: t('invoice.jobs'), numeric: true },
      { label: t('invoice.quantity'), numeric: true },
      { label: t('invoice.unitPrice'), numeric: true },
      { label: t('invoice.amount'), numeric: true },
      { label: t('invoice.vatRate'), numeric: true },
      { label: t('invoice.vatAmount'), numeric: true },
      { label: t('invoice.gross'), numeric: true },
    ],
    rows: invoice.lines.map((line, i) => [
      String(line.lineNo),
      lineDescription(line, t, locale),
      // A storage line (issue #27) bills TB-months at a site: no jobs, its quantity and price per TB-month. A
      // token line (issue #29): its calls, tokens in and out, and the prices per million of each.
      line.kind === 'storage' ? '—' : String(line.jobs),
      lineQuantity(line, t, locale),
      linePrice(line, t, locale),
      euros(line.netCents),
      rate,
      euros(lineVat[i] ?? 0),
      euros(line.netCents + (lineVat[i] ?? 0)),
    ]),
    totals: [
      { label: t('invoice.netTotal'), value: euros(invoice.netCents), id: 'net' },
      { label: t('invoice.vatAt', { rate }), value: euros(invoice.vatCents), id: 'vat' },
      { label: t('invoice.grossTotal'), value: euros(invoice.grossCents), id: 'gross' },
    ],
    notes,
    footer: parties.footer,
    creditNotes:
      credited.length === 0
        ? null
        : {
            heading: t('invoice.creditNotes'),
            note: t('invoice.creditNotesNote', { number: invoice.number }),
            columns: [
              { label: t('invoice.number'), numeric: false },
              { label: t('invoice.issueDate'), numeric: false },
              { label: t('common.reason'), numeric: false },
              { label: t('invoice.net'), numeric: true },
              { label: t('invoice.vat'), numeric: true },
              { label: t('invoice.gross'), numeric: true },
            ],
            rows: credited.map((note) => [note.number, day(locale, note.issuedAt), note.reason, `−${euros(note.netCents)}`, `−${euros(note.vatCents)}`, `−${euros(note.grossCents)}`]),
            remaining: t('invoice.remainingNet', { amount: euros(invoice.remainingNetCents) }),
          },
  };
}

/**
 * creditNoteContent is one credit note as a document of its own: the invoice's parties, a reference
 * to the invoice, the credited amount with the invoice's VAT rate and treatment; null if the invoice
 * has no such credit note.
 */
export function creditNoteContent(invoice: InvoiceView, creditNoteId: string, t: T, locale: Locale): InvoiceContent | null {
  const note = invoice.creditNotes.find((n) => n.id === creditNoteId);
  if (!note) return null;
  const euros = (cents: number) => formatEuros(locale, cents);
  const rate = formatVatRate(locale, invoice.vatPermille);
  const parties = partiesOf(invoice, t, locale);
  const facts: [string, string][] = [
    [t('invoice.number'), note.number],
    [t('invoice.issueDate'), day(locale, note.issuedAt)],
    [t('invoice.creditNote.invoice'), `${invoice.number} (${day(locale, invoice.issuedAt)})`],
    [t('invoice.servicePeriod'), `${day(locale, invoice.coversFrom)} – ${day(locale, invoice.periodLastDay)}`],
  ];
  if (invoice.recipient.purchaseOrder) facts.push([t('invoice.purchaseOrder'), invoice.recipient.purchaseOrder]);
  const notes: InvoiceContent['notes'] = [];
  if (invoice.vatTreatment === 'reverseCharge') notes.push({ text: t('invoice.reverseCharge'), prominent: true });
  notes.push({ text: t('invoice.creditNotesNote', { number: invoice.number }), prominent: false });
  return {
    title: t('invoice.creditNote.title'),
    number: note.number,
    issuer: parties.issuer,
    recipient: parties.recipient,
    facts,
    columns: [
      { label: t('invoice.lineNo'), numeric: false },
      { label: t('invoice.description'), numeric: false },
      { label: t('invoice.vatRate'), numeric: true },
      { label: t('invoice.amount'), numeric: true },
    ],
    rows: [['1', t('invoice.creditNote.line', { number: invoice.number, reason: note.reason }), rate, `−${euros(note.netCents)}`]],
    totals: [
      { label: t('invoice.netTotal'), value: `−${euros(note.netCents)}`, id: 'net' },
      { label: t('invoice.vatAt', { rate }), value: `−${euros(note.vatCents)}`, id: 'vat' },
      { label: t('invoice.creditNote.total'), value: `−${euros(note.grossCents)}`, id: 'gross' },
    ],
    notes,
    footer: parties.footer,
    creditNotes: null,
  };
}
