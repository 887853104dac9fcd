// The e-invoices say what the invoice says: the XRechnung XML (UBL) and the Factur-X PDF's embedded CII are
// parsed and their business terms compared with the invoice's own stored figures, for a German customer at
// 19 % and an Austrian business with reverse charge, and for a credit note on each. No external validator is
// reachable here; the library validates its input against its own schema before it writes.
import { describe, expect, it } from 'vitest';
import { DEMO_ISSUER } from '~/server/catalogue';
import { translate, type Locale, type MessageKey, type MessageParams } from '~/server/i18n';
import { CBC, CAC, RAM, cents as amount, child, children, embeddedFiles, parseXml as parse, partyVatId, text } from '~/server/testing/e-invoice-xml';
import { buyerReference, centsDecimal, creditNoteEInvoiceData, gpuHoursDecimal, invoiceEInvoiceData, tbMonthsDecimal, vatPercentDecimal } from './e-invoice-data';
import { renderFacturX, renderXRechnung } from './e-invoice';
import { invoiceContent, type InvoiceView } from './invoice-content';
import { renderInvoicePdf } from './invoice-pdf';

/** What a line that bills no tokens holds of a token line's fields (issue #29). */
const NO_TOKENS = { model: null, inputTokens: null, outputTokens: null, inputCentsPerMTokens: null, outputCentsPerMTokens: null };

const t = (locale: Locale) => (key: MessageKey, params?: MessageParams) => translate(locale, key, params);

/** Two lines whose VAT (19 % of 1 234,57 €) needs rounding: 234,568 → 234,57 €. */
const GERMAN: InvoiceView = {
  id: '00000000-0000-4000-8000-000000000001',
  number: 'INV-2026-000042',
  month: '2026-03',
  periodMonth: '2026-03',
  periodLastDay: '2026-03-31',
  coversFrom: new Date('2026-03-01T00:00:00Z'),
  coversUntil: new Date('2026-04-01T00:00:00Z'),
  closing: false,
  issuedAt: new Date('2026-04-01T02:00:00Z'),
  dueDate: '2026-04-15',
  recipient: { name: 'Elbe Vision GmbH', country: 'DE', street: 'Ostra-Allee 9', postcode: '01067', city: 'Dresden', vatId: 'DE136695976', billingEmail: 'accounts@elbe.example', purchaseOrder: 'PO-7781' },
  issuer: DEMO_ISSUER,
  vatTreatment: 'standard',
  netCents: 123_457,
  vatPermille: 190,
  vatCents: 23_457,
  grossCents: 146_914,
  lines: [
    { lineNo: 1, kind: 'compute', resourceClassId: 'h100', siteId: null, milliTbMonths: null, unitPriceCentsPerTbMonth: null, ...NO_TOKENS, description: 'NVIDIA H100, standard', descriptionDe: null, costCentre: null, purchaseOrder: null, jobs: 3, gpuSeconds: 123_457, unitPriceCentsPerGpuHour: 350, netCents: 12_003 },
    { lineNo: 2, kind: 'compute', resourceClassId: 'a100', siteId: null, milliTbMonths: null, unitPriceCentsPerTbMonth: null, ...NO_TOKENS, description: 'NVIDIA A100, low priority', descriptionDe: null, costCentre: 'CC-4711', purchaseOrder: 'PO-2026-17', jobs: 1, gpuSeconds: 3_600 * 999 + 1, unitPriceCentsPerGpuHour: 111, netCents: 111_454 },
  ],
  creditNotes: [{ id: 'cn-1', number: 'CN-2026-000007', issuedAt: new Date('2026-04-20T10:00:00Z'), reason: 'Node failure', netCents: 10_000, vatCents: 1_900, grossCents: 11_900 }],
  creditedNetCents: 10_000,
  remainingNetCents: 113_457,
  creditedGrossCents: 11_900,
  payments: [],
  reminders: [],
  status: 'partlyPaid',
  paidCents: 0,
  openCents: 135_014,
  daysOverdue: 0,
};

/** An Austrian business with a VAT ID: reverse charge at 0 %, no purchase order (BT-10 falls back to the number). */
const AUSTRIAN: InvoiceView = {
  ...GERMAN,
  id: '00000000-0000-4000-8000-000000000002',
  number: 'INV-2026-000043',
  closing: true,
  periodLastDay: '2026-03-20',
  recipient: { name: 'Donau Sprachmodelle GmbH', country: 'AT', street: 'Praterstraße 1', postcode: '1020', city: 'Wien', vatId: 'ATU13585627', billingEmail: 'buchhaltung@donau.example', purchaseOrder: null },
  vatTreatment: 'reverseCharge',
  vatPermille: 0,
  vatCents: 0,
  grossCents: 123_457,
  creditNotes: [{ id: 'cn-2', number: 'CN-2026-000008', issuedAt: new Date('2026-04-21T10:00:00Z'), reason: 'Goodwill', netCents: 2_345, vatCents: 0, grossCents: 2_345 }],
  creditedNetCents: 2_345,
  remainingNetCents: 121_112,
  creditedGrossCents: 2_345,
  openCents: 121_112,
};

/** expectParty checks a seller or buyer: name, address, VAT ID. */
function expectParty(party: Element, expected: { name: string; street?: string; postcode?: string; city?: string; country: string; vatId?: string | null }) {
  expect(text(party, 'cac:PartyLegalEntity', 'cbc:RegistrationName')).toBe(expected.name);
  expect(text(party, 'cac:PartyName', 'cbc:Name')).toBe(expected.name);
  expect(text(party, 'cac:PostalAddress', 'cbc:StreetName')).toBe(expected.street);
  expect(text(party, 'cac:PostalAddress', 'cbc:PostalZone')).toBe(expected.postcode);
  expect(text(party, 'cac:PostalAddress', 'cbc:CityName')).toBe(expected.city);
  expect(text(party, 'cac:PostalAddress', 'cac:Country', 'cbc:IdentificationCode')).toBe(expected.country);
  expect(partyVatId(party)).toBe(expected.vatId ?? undefined);
}

/** The amount of an element as cents, checking its currency is EUR. */
function cents(element: Element): number {
  expect(element.getAttribute('currencyID')).toBe('EUR');
  return amount(element);
}

describe('amounts and quantities in EN 16931 notation', () => {
  it.each([
    [0, '0.00'],
    [5, '0.05'],
    [123_457, '1234.57'],
    [-1_990, '-19.90'],
  ])('%i cents are %s', (value, expected) => expect(centsDecimal(value)).toBe(expected));

  it.each([
    [3_600, '1'],
    [1, '0.0003'], // 0.000277… h, rounded half up to four decimals as the page shows it
    [123_457, '34.2936'],
    [5_400, '1.5'],
  ])('%i GPU-seconds are %s GPU-hours', (value, expected) => expect(gpuHoursDecimal(value)).toBe(expected));

  it.each([
    [190, '19'],
    [75, '7.5'],
    [0, '0'],
  ])('%i ‰ is %s percent', (value, expected) => expect(vatPercentDecimal(value)).toBe(expected));

  it('takes the buyer reference from the purchase order, else the document number', () => {
    expect(buyerReference(GERMAN, GERMAN.number)).toBe('PO-7781');
    expect(buyerReference(AUSTRIAN, AUSTRIAN.number)).toBe('INV-2026-000043');
  });
});

describe('an invoice issued before the issuer was configured', () => {
  it('is refused as an e-invoice, not rendered without a seller', () => {
    expect(invoiceEInvoiceData({ ...GERMAN, issuer: null }, t('en'), 'en')).toEqual({ ok: false, refusal: { reason: 'noIssuer' } });
    expect(creditNoteEInvoiceData(GERMAN, 'no-such-note', t('en'))).toEqual({ ok: false, refusal: { reason: 'noCreditNote' } });
  });
});

describe.each([
  ['a German customer at 19 %', GERMAN, 'S', '19'],
  ['an Austrian business with reverse charge', AUSTRIAN, 'AE', '0'],
] as const)('the XRechnung of %s', (_name, invoice, category, percent) => {
  it('carries seller, buyer, lines, VAT breakdown, totals, due date and payment means from the invoice', async () => {
    const mapped = invoiceEInvoiceData(invoice, t('de'), 'de');
    if (!mapped.ok) throw new Error(mapped.refusal.reason);
    const root = parse(await renderXRechnung(mapped.data, 'de'));
    expect(root.localName).toBe('Invoice');
    expect(text(root, 'cbc:CustomizationID')).toMatch(/^urn:cen\.eu:en16931:2017#compliant#urn:xeinkauf\.de:kosit:xrechnung_3\.0$/);
    expect(text(root, 'cbc:ID')).toBe(invoice.number); // BT-1
    expect(text(root, 'cbc:IssueDate')).toBe('2026-04-01'); // BT-2
    expect(text(root, 'cbc:InvoiceTypeCode')).toBe('380'); // BT-3
    expect(text(root, 'cbc:DocumentCurrencyCode')).toBe('EUR'); // BT-5
    expect(text(root, 'cbc:DueDate')).toBe(invoice.dueDate); // BT-9
    expect(text(root, 'cbc:BuyerReference')).toBe(invoice.recipient.purchaseOrder ?? invoice.number); // BT-10
    expect(text(root, 'cac:InvoicePeriod', 'cbc:StartDate')).toBe('2026-03-01'); // BT-73
    expect(text(root, 'cac:InvoicePeriod', 'cbc:EndDate')).toBe(invoice.periodLastDay); // BT-74

    // Seller (BG-4) and buyer (BG-7): names, addresses, VAT IDs; XRechnung's seller contact and electronic addresses.
    const seller = child(root, 'cac:AccountingSupplierParty', 'cac:Party');
    expectParty(seller, { name: DEMO_ISSUER.name, street: DEMO_ISSUER.street, postcode: DEMO_ISSUER.postcode, city: DEMO_ISSUER.city, country: 'DE', vatId: 'DE812345673' });
    expect(text(seller, 'cbc:EndpointID')).toBe(DEMO_ISSUER.email);
    expect(text(seller, 'cac:Contact', 'cbc:Telephone')).toBe(DEMO_ISSUER.phone);
    expect(text(seller, 'cac:Contact', 'cbc:ElectronicMail')).toBe(DEMO_ISSUER.email);
    const buyer = child(root, 'cac:AccountingCustomerParty', 'cac:Party');
    expectParty(buyer, invoice.recipient);
    expect(text(buyer, 'cbc:EndpointID')).toBe(invoice.recipient.billingEmail);

    // Lines (BG-25): quantity in hours, price per GPU-hour, net; each with the document's VAT category.
    const lines = children(root, CAC, 'InvoiceLine');
    expect(lines).toHaveLength(invoice.lines.length);
    lines.forEach((line, i) => {
      const own = invoice.lines[i]!;
      expect(text(line, 'cbc:ID')).toBe(String(own.lineNo));
      const quantity = child(line, 'cbc:InvoicedQuantity');
      expect(quantity.getAttribute('unitCode')).toBe('HUR');
      expect(Math.abs(Number(quantity.textContent) - own.gpuSeconds / 3600)).toBeLessThanOrEqual(0.00005);
      expect(cents(child(line, 'cac:Price', 'cbc:PriceAmount'))).toBe(own.unitPriceCentsPerGpuHour);
      expect(cents(child(line, 'cbc:LineExtensionAmount'))).toBe(own.netCents);
      expect(text(line, 'cac:Item', 'cbc:Name').startsWith(own.description)).toBe(true);
      // The project's cost centre as the buyer's accounting reference (BT-133); cost centre and PO in the name, as on the page.
      if (own.costCentre) expect(text(line, 'cbc:AccountingCost')).toBe(own.costCentre);
      else expect(line.getElementsByTagNameNS(CBC, 'AccountingCost')).toHaveLength(0);
      if (own.purchaseOrder) expect(text(line, 'cac:Item', 'cbc:Name')).toContain(own.purchaseOrder);
      expect(text(line, 'cac:Item', 'cac:ClassifiedTaxCategory', 'cbc:ID')).toBe(category);
      expect(text(line, 'cac:Item', 'cac:ClassifiedTaxCategory', 'cbc:Percent')).toBe(percent);
    });
    expect(invoice.lines.reduce((sum, line) => sum + line.netCents, 0)).toBe(invoice.netCents);

    // VAT breakdown (BG-23): one category with its rate, taxable amount and tax.
    const taxTotal = child(root, 'cac:TaxTotal');
    expect(cents(child(taxTotal, 'cbc:TaxAmount'))).toBe(invoice.vatCents); // BT-110
    const subtotal = child(taxTotal, 'cac:TaxSubtotal');
    expect(cents(child(subtotal, 'cbc:TaxableAmount'))).toBe(invoice.netCents); // BT-116
    expect(cents(child(subtotal, 'cbc:TaxAmount'))).toBe(invoice.vatCents); // BT-117
    expect(text(subtotal, 'cac:TaxCategory', 'cbc:ID')).toBe(category); // BT-118
    expect(text(subtotal, 'cac:TaxCategory', 'cbc:Percent')).toBe(percent); // BT-119
    if (category === 'AE') {
      expect(text(subtotal, 'cac:TaxCategory', 'cbc:TaxExemptionReasonCode')).toBe('VATEX-EU-AE'); // BT-121
      expect(text(subtotal, 'cac:TaxCategory', 'cbc:TaxExemptionReason')).toBe(translate('de', 'invoice.reverseCharge')); // BT-120
      expect(invoice.vatCents).toBe(0);
    } else {
      expect(invoice.vatCents).toBe(Math.round((invoice.netCents * 19) / 100));
    }

    // Totals (BG-22).
    const totals = child(root, 'cac:LegalMonetaryTotal');
    expect(cents(child(totals, 'cbc:LineExtensionAmount'))).toBe(invoice.netCents); // BT-106
    expect(cents(child(totals, 'cbc:TaxExclusiveAmount'))).toBe(invoice.netCents); // BT-109
    expect(cents(child(totals, 'cbc:TaxInclusiveAmount'))).toBe(invoice.grossCents); // BT-112
    expect(cents(child(totals, 'cbc:PayableAmount'))).toBe(invoice.grossCents); // BT-115

    // Payment means (BG-16): SEPA credit transfer to the issuer's account, quoting the invoice number.
    const means = child(root, 'cac:PaymentMeans');
    expect(text(means, 'cbc:PaymentMeansCode')).toBe('58'); // BT-81
    expect(text(means, 'cbc:PaymentID')).toBe(invoice.number); // BT-83
    expect(text(means, 'cac:PayeeFinancialAccount', 'cbc:ID')).toBe(DEMO_ISSUER.iban); // BT-84
    expect(text(means, 'cac:PayeeFinancialAccount', 'cac:FinancialInstitutionBranch', 'cbc:ID')).toBe(DEMO_ISSUER.bic); // BT-86
  });

  it('credits as a UBL CreditNote (381) referring to the invoice', async () => {
    const note = invoice.creditNotes[0]!;
    const mapped = creditNoteEInvoiceData(invoice, note.id, t('en'));
    if (!mapped.ok) throw new Error(mapped.refusal.reason);
    const root = parse(await renderXRechnung(mapped.data, 'en'));
    expect(root.localName).toBe('CreditNote');
    expect(text(root, 'cbc:ID')).toBe(note.number);
    expect(text(root, 'cbc:IssueDate')).toBe(note.issuedAt.toISOString().slice(0, 10));
    expect(text(root, 'cbc:CreditNoteTypeCode')).toBe('381');
    expect(text(root, 'cac:BillingReference', 'cac:InvoiceDocumentReference', 'cbc:ID')).toBe(invoice.number); // BT-25
    expect(text(root, 'cac:BillingReference', 'cac:InvoiceDocumentReference', 'cbc:IssueDate')).toBe('2026-04-01'); // BT-26
    expectParty(child(root, 'cac:AccountingCustomerParty', 'cac:Party'), invoice.recipient);
    const line = child(root, 'cac:CreditNoteLine');
    expect(cents(child(line, 'cbc:LineExtensionAmount'))).toBe(note.netCents);
    expect(text(line, 'cac:Item', 'cac:ClassifiedTaxCategory', 'cbc:ID')).toBe(category);
    const subtotal = child(root, 'cac:TaxTotal', 'cac:TaxSubtotal');
    expect(cents(child(subtotal, 'cbc:TaxableAmount'))).toBe(note.netCents);
    expect(cents(child(subtotal, 'cbc:TaxAmount'))).toBe(note.vatCents);
    expect(text(subtotal, 'cac:TaxCategory', 'cbc:ID')).toBe(category);
    const totals = child(root, 'cac:LegalMonetaryTotal');
    expect(cents(child(totals, 'cbc:TaxExclusiveAmount'))).toBe(note.netCents);
    expect(cents(child(totals, 'cbc:TaxInclusiveAmount'))).toBe(note.grossCents);
    expect(cents(child(totals, 'cbc:PayableAmount'))).toBe(note.grossCents);
  });

  it('embeds its CII into the invoice PDF (Factur-X), with the totals the page shows', async () => {
    const locale: Locale = 'en';
    const pdf = await renderInvoicePdf(invoiceContent(invoice, t(locale), locale), { author: 'test', pageLabel: (page, pages) => `${page}/${pages}` });
    const mapped = invoiceEInvoiceData(invoice, t(locale), locale);
    if (!mapped.ok) throw new Error(mapped.refusal.reason);
    const bytes = await renderFacturX(mapped.data, new Uint8Array(pdf), `${invoice.number}.pdf`, locale);
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe('%PDF-');
    const files = await embeddedFiles(bytes);
    const embedded = files.get('factur-x.xml');
    if (!embedded) throw new Error(`no factur-x.xml among ${[...files.keys()].join(', ')}`);
    const root = parse(new TextDecoder().decode(embedded));
    expect(root.localName).toBe('CrossIndustryInvoice');
    // The header's monetary summation (BG-22 in CII), not the lines' own.
    const [summation, ...more] = Array.from(root.getElementsByTagNameNS(RAM, 'SpecifiedTradeSettlementHeaderMonetarySummation'));
    expect(more).toHaveLength(0);
    const sum = (name: string) => Math.round(Number(child(summation!, `ram:${name}`).textContent) * 100);
    expect(sum('LineTotalAmount')).toBe(invoice.netCents); // BT-106
    expect(sum('TaxBasisTotalAmount')).toBe(invoice.netCents); // BT-109
    expect(sum('TaxTotalAmount')).toBe(invoice.vatCents); // BT-110
    expect(sum('GrandTotalAmount')).toBe(invoice.grossCents); // BT-112
    expect(sum('DuePayableAmount')).toBe(invoice.grossCents); // BT-115
    expect(root.getElementsByTagNameNS(RAM, 'SpecifiedLineTradeSettlement')).toHaveLength(invoice.lines.length);
    expect(root.getElementsByTagNameNS(RAM, 'CategoryCode')[0]!.textContent).toBe(category);
    expect(root.getElementsByTagNameNS(RAM, 'IBANID')[0]!.textContent).toBe(DEMO_ISSUER.iban);
  });
});

describe('a storage line (issue #27)', () => {
  // 1.235 TB-months at Jena at €20.00 = €24.69 (priced from the exact byte-days, rounded once), after the GPU-hour lines.
  const storageLine = { lineNo: 3, kind: 'storage' as const, resourceClassId: null, siteId: 'de-jena', milliTbMonths: 1235, unitPriceCentsPerTbMonth: 2000, ...NO_TOKENS, description: 'Storage, Jena', descriptionDe: 'Speicher, Jena', costCentre: null, purchaseOrder: null, jobs: 0, gpuSeconds: 0, unitPriceCentsPerGpuHour: 0, netCents: 2469 };
  const withStorage: InvoiceView = { ...GERMAN, lines: [...GERMAN.lines, storageLine], netCents: 125_926, vatCents: 23_926, grossCents: 149_852, creditNotes: [], creditedNetCents: 0, remainingNetCents: 125_926, creditedGrossCents: 0, openCents: 149_852 };

  it.each([
    [1235, '1.235'],
    [1000, '1.000'],
    [7, '0.007'],
    [0, '0.000'],
  ])('%i thousandths are %s TB-months', (value, expected) => expect(tbMonthsDecimal(value)).toBe(expected));

  it('bills TB-months in terabytes at the price per TB-month, in the XRechnung and on the page', async () => {
    const mapped = invoiceEInvoiceData(withStorage, t('de'), 'de');
    if (!mapped.ok) throw new Error(mapped.refusal.reason);
    const root = parse(await renderXRechnung(mapped.data, 'de'));
    const line = children(root, CAC, 'InvoiceLine')[2]!;
    const quantity = child(line, 'cbc:InvoicedQuantity');
    expect(quantity.getAttribute('unitCode')).toBe('E35');
    expect(quantity.textContent).toBe('1.235');
    expect(cents(child(line, 'cac:Price', 'cbc:PriceAmount'))).toBe(2000);
    expect(cents(child(line, 'cbc:LineExtensionAmount'))).toBe(2469);
    expect(text(line, 'cac:Item', 'cbc:Name')).toBe('Speicher, Jena');
    expect(text(line, 'cac:Item', 'cac:SellersItemIdentification', 'cbc:ID')).toBe('storage-de-jena');
    expect(cents(child(root, 'cac:LegalMonetaryTotal', 'cbc:LineExtensionAmount'))).toBe(125_926);

    const content = invoiceContent(withStorage, t('en'), 'en');
    expect(content.rows[2]!.slice(1, 6)).toEqual(['Storage, Jena', '—', '1.235 TB-months', '€20.00 / TB-month', '€24.69']);
    expect(content.notes.map((n) => n.text)).toContain(translate('en', 'invoice.storagePricingNote'));
    expect(invoiceContent(withStorage, t('de'), 'de').rows[2]!.slice(1, 5).map((cell) => cell.replace(/\u00a0/g, ' '))).toEqual(['Speicher, Jena', '—', '1,235 TB-Monate', '20,00 € / TB-Monat']);
  });
});
