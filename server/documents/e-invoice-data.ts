// An invoice or credit note as EN 16931 data (the UBL-shaped input of @e-invoice-eu/core), mapped from the
// document's own stored figures: the issuer and recipient snapshots, the lines, the VAT decided at issue and
// the totals. Nothing is recomputed here, so the e-invoice says exactly what the page and the PDF say.
import type { Invoice } from '@e-invoice-eu/core';
import { lineDescription, linePrice, lineQuantity, type InvoiceView } from './invoice-content';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n';
import { formatDay, formatEuros } from '~/server/i18n/format';

type T = (key: MessageKey, params?: MessageParams) => string;
type Document = Invoice['ubl:Invoice'];
type Party = Document['cac:AccountingSupplierParty']['cac:Party'];
type Buyer = Document['cac:AccountingCustomerParty']['cac:Party'];
type VatCategory = Document['cac:TaxTotal'][0] extends { 'cac:TaxSubtotal'?: (infer S)[] } ? S extends { 'cac:TaxCategory': infer C } ? C : never : never;
type CountryCode = Party['cac:PostalAddress']['cac:Country']['cbc:IdentificationCode'];
type Line = Document['cac:InvoiceLine'][number];
type PaymentMeans = NonNullable<Document['cac:PaymentMeans']>;

/** UNTDID 1001: commercial invoice and credit note. */
export const INVOICE_TYPE_CODE = '380';
export const CREDIT_NOTE_TYPE_CODE = '381';
/** UNTDID 4461: SEPA credit transfer. */
export const PAYMENT_MEANS_CREDIT_TRANSFER = '58';
/** UN/ECE Recommendation 20: hour (a line is billed in GPU-hours), and "one" (a credit note's single line, a token line's lot of model calls). */
export const UNIT_HOUR = 'HUR';
export const UNIT_ONE = 'C62';
/** Terabyte: a storage line is billed in TB-months, TB held for a month (Rec 20 has no unit of its own for it). */
export const UNIT_TERABYTE = 'E35';
/** VATEX code list: reverse charge. */
export const VATEX_REVERSE_CHARGE = 'VATEX-EU-AE';

/** Why an invoice cannot become an e-invoice: issued before the issuer (seller) was configured. */
export type EInvoiceRefusal = { reason: 'noIssuer' } | { reason: 'noCreditNote' };

/** centsDecimal writes integer cents as an EN 16931 amount with two decimals ("1234.50", "-0.05"). */
export function centsDecimal(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new Error(`not whole cents: ${cents}`);
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** gpuHoursDecimal writes GPU-seconds as GPU-hours with up to four decimals (as the page shows them), rounded half up. */
export function gpuHoursDecimal(gpuSeconds: number): string {
  if (!Number.isSafeInteger(gpuSeconds) || gpuSeconds < 0) throw new Error(`not whole GPU-seconds: ${gpuSeconds}`);
  // 1 GPU-hour = 10 000 units of 0.36 s: units = gpuSeconds × 10 000 / 3600 = gpuSeconds × 25 / 9.
  const units = Math.floor((gpuSeconds * 25 * 2 + 9) / 18);
  const whole = Math.floor(units / 10_000);
  const fraction = String(units % 10_000).padStart(4, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/** tbMonthsDecimal writes thousandths of a TB-month with three decimals, as the page shows them ("1.234"). */
export function tbMonthsDecimal(milliTbMonths: number): string {
  if (!Number.isSafeInteger(milliTbMonths) || milliTbMonths < 0) throw new Error(`not whole thousandths: ${milliTbMonths}`);
  return `${Math.floor(milliTbMonths / 1000)}.${String(milliTbMonths % 1000).padStart(3, '0')}`;
}

/** vatPercentDecimal writes a per-mille rate as a percentage (190 → "19", 75 → "7.5"). */
export function vatPercentDecimal(permille: number): string {
  return permille % 10 === 0 ? String(permille / 10) : (permille / 10).toFixed(1);
}

const isoDay = (at: Date | string) => (typeof at === 'string' ? at : at.toISOString()).slice(0, 10);

/**
 * buyerReference is BT-10, which XRechnung requires (BR-DE-15): the purchase order or reference the customer
 * gave on its billing profile; without one, the document's own number, which the customer's accounts can
 * match to the payment (the payment reference says the same).
 */
export function buyerReference(invoice: InvoiceView, documentNumber: string): string {
  return invoice.recipient.purchaseOrder?.trim() || documentNumber;
}

function sellerParty(issuer: NonNullable<InvoiceView['issuer']>): Party {
  return {
    // BT-34: the seller's electronic address; XRechnung requires one, the issuer's e-mail ("EM").
    'cbc:EndpointID': issuer.email,
    'cbc:EndpointID@schemeID': 'EM',
    'cac:PartyName': { 'cbc:Name': issuer.name },
    'cac:PostalAddress': {
      'cbc:StreetName': issuer.street,
      'cbc:CityName': issuer.city,
      'cbc:PostalZone': issuer.postcode,
      'cac:Country': { 'cbc:IdentificationCode': issuer.country as CountryCode },
    },
    // BT-31 (VAT ID) and BT-32 (the national tax number, scheme "FC").
    'cac:PartyTaxScheme': [
      { 'cbc:CompanyID': issuer.vatId, 'cac:TaxScheme': { 'cbc:ID': 'VAT' } },
      { 'cbc:CompanyID': issuer.taxNumber, 'cac:TaxScheme': { 'cbc:ID': 'FC' } },
    ],
    'cac:PartyLegalEntity': { 'cbc:RegistrationName': issuer.name, 'cbc:CompanyLegalForm': issuer.registerEntry },
    // BG-6: XRechnung requires a contact with name, telephone and e-mail (BR-DE-2, -5, -6, -7).
    'cac:Contact': { 'cbc:Name': issuer.name, 'cbc:Telephone': issuer.phone, 'cbc:ElectronicMail': issuer.email },
  };
}

function buyerParty(recipient: InvoiceView['recipient']): Buyer {
  return {
    ...(recipient.billingEmail ? { 'cbc:EndpointID': recipient.billingEmail, 'cbc:EndpointID@schemeID': 'EM' as const } : {}),
    'cac:PartyName': { 'cbc:Name': recipient.name },
    'cac:PostalAddress': {
      ...(recipient.street ? { 'cbc:StreetName': recipient.street } : {}),
      ...(recipient.city ? { 'cbc:CityName': recipient.city } : {}),
      ...(recipient.postcode ? { 'cbc:PostalZone': recipient.postcode } : {}),
      'cac:Country': { 'cbc:IdentificationCode': recipient.country as CountryCode },
    },
    ...(recipient.vatId ? { 'cac:PartyTaxScheme': { 'cbc:CompanyID': recipient.vatId, 'cac:TaxScheme': { 'cbc:ID': 'VAT' } } } : {}),
    'cac:PartyLegalEntity': { 'cbc:RegistrationName': recipient.name },
    ...(recipient.billingEmail ? { 'cac:Contact': { 'cbc:ElectronicMail': recipient.billingEmail } } : {}),
  };
}

/** The VAT category of the document: standard rate (S) or reverse charge (AE, 0 %, with its exemption reason). */
function vatCategory(invoice: InvoiceView, t: T): VatCategory {
  return invoice.vatTreatment === 'reverseCharge'
    ? { 'cbc:ID': 'AE', 'cbc:Percent': '0', 'cbc:TaxExemptionReasonCode': VATEX_REVERSE_CHARGE, 'cbc:TaxExemptionReason': t('invoice.reverseCharge'), 'cac:TaxScheme': { 'cbc:ID': 'VAT' } }
    : { 'cbc:ID': 'S', 'cbc:Percent': vatPercentDecimal(invoice.vatPermille), 'cac:TaxScheme': { 'cbc:ID': 'VAT' } };
}

/** A line's VAT category is the document's without the exemption reason (which belongs to the breakdown). */
function lineCategory(category: VatCategory) {
  return { 'cbc:ID': category['cbc:ID'], 'cbc:Percent': category['cbc:Percent'], 'cac:TaxScheme': { 'cbc:ID': 'VAT' } };
}

/** The parts alike on an invoice and its credit notes: parties, currency, period, references, payment means. */
function common(invoice: InvoiceView, issuer: NonNullable<InvoiceView['issuer']>, number: string, t: T) {
  const orderReference = invoice.recipient.purchaseOrder?.trim();
  const paymentMeans: PaymentMeans = [
    {
      'cbc:PaymentMeansCode': PAYMENT_MEANS_CREDIT_TRANSFER,
      'cbc:PaymentMeansCode@name': t('invoice.eInvoice.creditTransfer'),
      'cbc:PaymentID': number,
      'cac:PayeeFinancialAccount': { 'cbc:ID': issuer.iban, 'cbc:Name': issuer.name, 'cac:FinancialInstitutionBranch': { 'cbc:ID': issuer.bic } },
    },
  ];
  return {
    'cbc:DocumentCurrencyCode': 'EUR' as const,
    'cbc:BuyerReference': buyerReference(invoice, number),
    'cac:InvoicePeriod': { 'cbc:StartDate': isoDay(invoice.coversFrom), 'cbc:EndDate': invoice.periodLastDay },
    ...(orderReference ? { 'cac:OrderReference': { 'cbc:ID': orderReference } } : {}),
    'cac:AccountingSupplierParty': { 'cac:Party': sellerParty(issuer) },
    'cac:AccountingCustomerParty': { 'cac:Party': buyerParty(invoice.recipient) },
    'cac:PaymentMeans': paymentMeans,
  };
}

/**
 * invoiceEInvoiceData maps an issued invoice to EN 16931 data (type 380): seller, buyer, lines in GPU-hours,
 * one VAT breakdown (standard rate or reverse charge), totals, due date and payment by credit transfer.
 */
export function invoiceEInvoiceData(invoice: InvoiceView, t: T, locale: Locale): { ok: true; data: Invoice } | { ok: false; refusal: EInvoiceRefusal } {
  const { issuer } = invoice;
  if (!issuer) return { ok: false, refusal: { reason: 'noIssuer' } };
  const category = vatCategory(invoice, t);
  const [first, ...rest] = invoice.lines.map((line): Line => ({
    'cbc:ID': String(line.lineNo),
    // A storage line (issue #27): TB-months at a site, priced per TB-month.
    // A token line (issue #29): one lot of model calls (its tokens and prices in the item's name), priced at its amount.
    'cbc:InvoicedQuantity': line.kind === 'storage' ? tbMonthsDecimal(line.milliTbMonths ?? 0) : line.kind === 'tokens' ? '1' : gpuHoursDecimal(line.gpuSeconds),
    'cbc:InvoicedQuantity@unitCode': line.kind === 'storage' ? UNIT_TERABYTE : line.kind === 'tokens' ? UNIT_ONE : UNIT_HOUR,
    'cbc:LineExtensionAmount': centsDecimal(line.netCents),
    'cbc:LineExtensionAmount@currencyID': 'EUR' as const,
    // BT-133, the buyer's accounting reference: the project's cost centre (issue #24); the name carries cost centre and PO as the page does.
    ...(line.costCentre ? { 'cbc:AccountingCost': line.costCentre } : {}),
    'cac:Item': {
      'cbc:Name': line.kind === 'tokens' ? `${lineDescription(line, t, locale)}: ${lineQuantity(line, t, locale)}, ${linePrice(line, t, locale)}` : lineDescription(line, t, locale),
      'cac:SellersItemIdentification': { 'cbc:ID': line.kind === 'storage' ? `storage-${line.siteId ?? ''}` : line.kind === 'tokens' ? `tokens-${line.model ?? ''}` : (line.resourceClassId ?? '') },
      'cac:ClassifiedTaxCategory': lineCategory(category),
    },
    'cac:Price': { 'cbc:PriceAmount': centsDecimal(line.kind === 'storage' ? (line.unitPriceCentsPerTbMonth ?? 0) : line.kind === 'tokens' ? line.netCents : line.unitPriceCentsPerGpuHour), 'cbc:PriceAmount@currencyID': 'EUR' as const },
  }));
  // An invoice always has a line (one is issued only for usage); an empty one still needs one for EN 16931.
  const lines: Document['cac:InvoiceLine'] = first
    ? [first, ...rest]
    : [{ 'cbc:ID': '1', 'cbc:InvoicedQuantity': '0', 'cbc:InvoicedQuantity@unitCode': UNIT_HOUR, 'cbc:LineExtensionAmount': '0.00', 'cbc:LineExtensionAmount@currencyID': 'EUR', 'cac:Item': { 'cbc:Name': t('invoice.document'), 'cac:ClassifiedTaxCategory': lineCategory(category) }, 'cac:Price': { 'cbc:PriceAmount': '0.00', 'cbc:PriceAmount@currencyID': 'EUR' } }];
  const notes = [...(invoice.vatTreatment === 'reverseCharge' ? [t('invoice.reverseCharge')] : []), ...(invoice.closing ? [t('invoice.closingNote', { date: formatDay(locale, invoice.periodLastDay) })] : [])];
  return {
    ok: true,
    data: {
      'ubl:Invoice': {
        'cbc:ID': invoice.number,
        'cbc:IssueDate': isoDay(invoice.issuedAt),
        ...(invoice.dueDate ? { 'cbc:DueDate': invoice.dueDate } : {}),
        'cbc:InvoiceTypeCode': INVOICE_TYPE_CODE,
        ...(notes.length > 0 ? { 'cbc:Note': notes } : {}),
        ...common(invoice, issuer, invoice.number, t),
        'cac:PaymentTerms': { 'cbc:Note': invoice.dueDate ? t('invoice.payBy', { amount: formatEuros(locale, invoice.grossCents), date: formatDay(locale, invoice.dueDate), number: invoice.number }) : t('invoice.eInvoice.payOnReceipt') },
        'cac:TaxTotal': [
          {
            'cbc:TaxAmount': centsDecimal(invoice.vatCents),
            'cbc:TaxAmount@currencyID': 'EUR',
            'cac:TaxSubtotal': [{ 'cbc:TaxableAmount': centsDecimal(invoice.netCents), 'cbc:TaxableAmount@currencyID': 'EUR', 'cbc:TaxAmount': centsDecimal(invoice.vatCents), 'cbc:TaxAmount@currencyID': 'EUR', 'cac:TaxCategory': category }],
          },
        ],
        'cac:LegalMonetaryTotal': {
          'cbc:LineExtensionAmount': centsDecimal(invoice.netCents),
          'cbc:LineExtensionAmount@currencyID': 'EUR',
          'cbc:TaxExclusiveAmount': centsDecimal(invoice.netCents),
          'cbc:TaxExclusiveAmount@currencyID': 'EUR',
          'cbc:TaxInclusiveAmount': centsDecimal(invoice.grossCents),
          'cbc:TaxInclusiveAmount@currencyID': 'EUR',
          'cbc:PayableAmount': centsDecimal(invoice.grossCents),
          'cbc:PayableAmount@currencyID': 'EUR',
        },
        'cac:InvoiceLine': lines,
      },
    },
  };
}

/**
 * creditNoteEInvoiceData maps a credit note on an invoice to EN 16931 data (type 381, a UBL CreditNote):
 * the invoice's parties and VAT treatment, a reference to the invoice (BT-25, BT-26) and one line with the
 * credited net amount; amounts are positive, as a credit note states them.
 */
export function creditNoteEInvoiceData(invoice: InvoiceView, creditNoteId: string, t: T): { ok: true; data: Invoice } | { ok: false; refusal: EInvoiceRefusal } {
  const note = invoice.creditNotes.find((n) => n.id === creditNoteId);
  if (!note) return { ok: false, refusal: { reason: 'noCreditNote' } };
  const { issuer } = invoice;
  if (!issuer) return { ok: false, refusal: { reason: 'noIssuer' } };
  const category = vatCategory(invoice, t);
  return {
    ok: true,
    data: {
      'ubl:Invoice': {
        'cbc:ID': note.number,
        'cbc:IssueDate': isoDay(note.issuedAt),
        'cbc:InvoiceTypeCode': CREDIT_NOTE_TYPE_CODE,
        'cbc:Note': [t('invoice.creditNote.line', { number: invoice.number, reason: note.reason }), ...(invoice.vatTreatment === 'reverseCharge' ? [t('invoice.reverseCharge')] : [])],
        ...common(invoice, issuer, note.number, t),
        'cac:BillingReference': [{ 'cac:InvoiceDocumentReference': { 'cbc:ID': invoice.number, 'cbc:IssueDate': isoDay(invoice.issuedAt) } }],
        'cac:PaymentTerms': { 'cbc:Note': t('invoice.eInvoice.creditNoteTerms', { number: invoice.number }) },
        'cac:TaxTotal': [
          {
            'cbc:TaxAmount': centsDecimal(note.vatCents),
            'cbc:TaxAmount@currencyID': 'EUR',
            'cac:TaxSubtotal': [{ 'cbc:TaxableAmount': centsDecimal(note.netCents), 'cbc:TaxableAmount@currencyID': 'EUR', 'cbc:TaxAmount': centsDecimal(note.vatCents), 'cbc:TaxAmount@currencyID': 'EUR', 'cac:TaxCategory': category }],
          },
        ],
        'cac:LegalMonetaryTotal': {
          'cbc:LineExtensionAmount': centsDecimal(note.netCents),
          'cbc:LineExtensionAmount@currencyID': 'EUR',
          'cbc:TaxExclusiveAmount': centsDecimal(note.netCents),
          'cbc:TaxExclusiveAmount@currencyID': 'EUR',
          'cbc:TaxInclusiveAmount': centsDecimal(note.grossCents),
          'cbc:TaxInclusiveAmount@currencyID': 'EUR',
          'cbc:PayableAmount': centsDecimal(note.grossCents),
          'cbc:PayableAmount@currencyID': 'EUR',
        },
        'cac:InvoiceLine': [
          {
            'cbc:ID': '1',
            'cbc:InvoicedQuantity': '1',
            'cbc:InvoicedQuantity@unitCode': UNIT_ONE,
            'cbc:LineExtensionAmount': centsDecimal(note.netCents),
            'cbc:LineExtensionAmount@currencyID': 'EUR',
            'cac:Item': { 'cbc:Name': t('invoice.creditNote.line', { number: invoice.number, reason: note.reason }), 'cac:ClassifiedTaxCategory': lineCategory(category) },
            'cac:Price': { 'cbc:PriceAmount': centsDecimal(note.netCents), 'cbc:PriceAmount@currencyID': 'EUR' },
          },
        ],
      },
    },
  };
}
