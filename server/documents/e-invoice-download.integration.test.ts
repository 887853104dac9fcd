// The e-invoice downloads through their route handlers, on PGlite and (with TEST_DATABASE_URL) real
// Postgres: an issued invoice and a credit note as XRechnung XML and as Factur-X PDF, with the content
// types and file names a browser saves, their totals those of the invoice; and the invoice's access rules —
// another tenant's invoice (or credit note) is "not found", a member may not, staff may.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { createContextInner } from '~/server/api/trpc';
import { DEMO_ISSUER } from '~/server/catalogue';
import { CAC, RAM, cents, child, children, embeddedFiles, parseXml, text } from '~/server/testing/e-invoice-xml';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { insertSettledJob } from '~/server/testing/invoice-fixtures';

// The routes read the request's session; here the test says who is asking.
const current = vi.hoisted((): { context?: unknown } => ({}));
vi.mock('~/server/api/context', () => ({
  createRequestContext: () => Promise.resolve(current.context),
  requestLocale: () => Promise.resolve('en'),
}));
const { GET: invoiceXml } = await import('~/app/api/invoices/[id]/xrechnung/route');
const { GET: invoiceFacturX } = await import('~/app/api/invoices/[id]/factur-x/route');
const { GET: creditNoteXml } = await import('~/app/api/invoices/[id]/credit-notes/[creditNoteId]/xrechnung/route');
const { GET: creditNoteFacturX } = await import('~/app/api/invoices/[id]/credit-notes/[creditNoteId]/factur-x/route');

const H = 3600;
const NOW = new Date('2026-04-10T09:00:00Z');
type Tenant = Awaited<ReturnType<typeof createTenant>> & { projectId: string; allocationId: string };
type Who = { userId: string; orgId?: string };

const request = (path: string) => new Request(`http://portal.test${path}`) as unknown as Parameters<typeof invoiceXml>[0];
const params = <P,>(value: P) => ({ params: Promise.resolve(value) });

describe.each(dbTargets())('e-invoice downloads on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let de: Tenant;
  let at: Tenant;
  let deInvoice: { id: string; number: string; netCents: number; vatCents: number; grossCents: number };
  let atInvoice: { id: string; number: string };
  let atNote: { id: string; number: string; netCents: number; grossCents: number };

  const asUser = (who: Who) => callerFor(db, { userId: who.userId, orgId: who.orgId, now: () => NOW });
  const signedIn = (who: Who) => {
    current.context = createContextInner({ db, userId: who.userId, activeOrgId: who.orgId, locale: 'en', now: () => NOW });
  };

  async function companyTenant(profile: { country: string; vatId: string; city: string; purchaseOrder?: string }): Promise<Tenant> {
    const tenant = await createTenant(db, { kind: 'company', name: `Company ${randomUUID().slice(0, 8)}` });
    await asUser(admin).staff.changeTenantStatus({ orgId: tenant.orgId, action: 'verify', reason: 'Company checked' });
    await asUser(tenant).organisation.setBillingProfile({ legalName: `${tenant.orgName} Ltd.`, street: 'Hauptstraße 5', postcode: '1010', city: profile.city, country: profile.country, vatId: profile.vatId, billingEmail: 'accounts@example.org', purchaseOrder: profile.purchaseOrder ?? null });
    const project = await asUser(tenant).project.create({ title: `Models ${randomUUID().slice(0, 6)}`, abstract: 'Training models for invoices.', workloadKind: 'training', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 100_000, periodStart: '2025-01-01', periodEnd: '2028-12-31', reason: 'Credit line for tests' });
    return { ...tenant, projectId: project.id, allocationId: credit.id };
  }

  /** settledJob writes a job as the reconciler leaves it once settled. */
  const settledJob = (tenant: Tenant, job: { gpuSeconds: number; costCents: number; endedAt: string }) => insertSettledJob(db, tenant, job);

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    de = await companyTenant({ country: 'DE', vatId: 'DE136695976', city: 'Berlin', purchaseOrder: 'PO-4711' });
    at = await companyTenant({ country: 'AT', vatId: 'ATU13585627', city: 'Wien' });
    // March 2026: 12.5 GPU-h at 2.90 € = 36.25 € for each.
    for (const tenant of [de, at]) {
      await settledJob(tenant, { gpuSeconds: 10 * H, costCents: 2_900, endedAt: '2026-03-10T10:00:00Z' });
      await settledJob(tenant, { gpuSeconds: 2.5 * H, costCents: 725, endedAt: '2026-03-20T10:00:00Z' });
    }
    deInvoice = (await asUser(admin).invoice.issue({ orgId: de.orgId, month: '2026-03' })).invoice!;
    atInvoice = (await asUser(admin).invoice.issue({ orgId: at.orgId, month: '2026-03' })).invoice!;
    atNote = await asUser(admin).invoice.creditNote({ invoiceId: atInvoice.id, netCents: 1_000, reason: 'Goodwill' });
  });
  afterAll(async () => handle?.close());

  it('a German customer downloads its invoice as XRechnung: UBL XML with its number, buyer reference, 19 % and totals', async () => {
    signedIn(de);
    const response = await invoiceXml(request(`/api/invoices/${deInvoice.id}/xrechnung`), params({ id: deInvoice.id }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${deInvoice.number}-xrechnung.xml"`);
    const root = parseXml(await response.text());
    expect(root.localName).toBe('Invoice');
    expect(text(root, 'cbc:ID')).toBe(deInvoice.number);
    expect(text(root, 'cbc:BuyerReference')).toBe('PO-4711');
    expect(text(root, 'cac:OrderReference', 'cbc:ID')).toBe('PO-4711');
    expect(text(root, 'cbc:DueDate')).toBe('2026-04-24');
    expect(text(root, 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).toBe('DE136695976');
    expect(text(root, 'cac:TaxTotal', 'cac:TaxSubtotal', 'cac:TaxCategory', 'cbc:Percent')).toBe('19');
    expect({ net: deInvoice.netCents, vat: deInvoice.vatCents, gross: deInvoice.grossCents }).toEqual({ net: 3_625, vat: 689, gross: 4_314 });
    expect(cents(child(root, 'cac:LegalMonetaryTotal', 'cbc:TaxExclusiveAmount'))).toBe(3_625);
    expect(cents(child(root, 'cac:TaxTotal', 'cbc:TaxAmount'))).toBe(689);
    expect(cents(child(root, 'cac:LegalMonetaryTotal', 'cbc:PayableAmount'))).toBe(4_314);
    const [line] = children(root, CAC, 'InvoiceLine');
    expect(text(line!, 'cbc:InvoicedQuantity')).toBe('12.5');
    expect(cents(child(line!, 'cac:Price', 'cbc:PriceAmount'))).toBe(290);
  });

  it('and as a Factur-X PDF whose embedded XML has the same totals', async () => {
    signedIn(de);
    const response = await invoiceFacturX(request(`/api/invoices/${deInvoice.id}/factur-x`), params({ id: deInvoice.id }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${deInvoice.number}-factur-x.pdf"`);
    const files = await embeddedFiles(new Uint8Array(await response.arrayBuffer()));
    const root = parseXml(new TextDecoder().decode(files.get('factur-x.xml')));
    const [summation] = Array.from(root.getElementsByTagNameNS(RAM, 'SpecifiedTradeSettlementHeaderMonetarySummation'));
    expect(cents(child(summation!, 'ram:TaxBasisTotalAmount'))).toBe(3_625);
    expect(cents(child(summation!, 'ram:TaxTotalAmount'))).toBe(689);
    expect(cents(child(summation!, 'ram:DuePayableAmount'))).toBe(4_314);
  });

  it('an Austrian business downloads its credit note as a UBL CreditNote referring to the invoice, reverse charge', async () => {
    signedIn(at);
    const response = await creditNoteXml(request(`/api/invoices/${atInvoice.id}/credit-notes/${atNote.id}/xrechnung`), params({ id: atInvoice.id, creditNoteId: atNote.id }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${atNote.number}-xrechnung.xml"`);
    const root = parseXml(await response.text());
    expect(root.localName).toBe('CreditNote');
    expect(text(root, 'cbc:CreditNoteTypeCode')).toBe('381');
    expect(text(root, 'cac:BillingReference', 'cac:InvoiceDocumentReference', 'cbc:ID')).toBe(atInvoice.number);
    expect(text(root, 'cac:TaxTotal', 'cac:TaxSubtotal', 'cac:TaxCategory', 'cbc:ID')).toBe('AE');
    expect(text(root, 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PostalAddress', 'cbc:CityName')).toBe(DEMO_ISSUER.city);
    expect(cents(child(root, 'cac:LegalMonetaryTotal', 'cbc:PayableAmount'))).toBe(atNote.grossCents);
    expect(atNote.grossCents).toBe(1_000);

    const pdf = await creditNoteFacturX(request(`/api/invoices/${atInvoice.id}/credit-notes/${atNote.id}/factur-x`), params({ id: atInvoice.id, creditNoteId: atNote.id }));
    expect(pdf.status).toBe(200);
    const cii = parseXml(new TextDecoder().decode((await embeddedFiles(new Uint8Array(await pdf.arrayBuffer()))).get('factur-x.xml')));
    expect(cii.getElementsByTagNameNS(RAM, 'TypeCode')[0]!.textContent).toBe('381');
    expect(cents(child(Array.from(cii.getElementsByTagNameNS(RAM, 'SpecifiedTradeSettlementHeaderMonetarySummation'))[0]!, 'ram:DuePayableAmount'))).toBe(1_000);
  });

  it('another tenant gets "not found" for each download of an invoice or credit note not its own; a member is refused; staff may', async () => {
    signedIn(at);
    for (const answer of [
      await invoiceXml(request('/'), params({ id: deInvoice.id })),
      await invoiceFacturX(request('/'), params({ id: deInvoice.id })),
      // Its own credit note's id under another tenant's invoice is no way in either.
      await creditNoteXml(request('/'), params({ id: deInvoice.id, creditNoteId: atNote.id })),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toContain('text/plain');
      expect(await answer.text()).not.toContain(deInvoice.number);
    }
    signedIn(de);
    for (const answer of [await creditNoteXml(request('/'), params({ id: atInvoice.id, creditNoteId: atNote.id })), await creditNoteFacturX(request('/'), params({ id: atInvoice.id, creditNoteId: atNote.id }))]) expect(answer.status).toBe(404);
    // A credit note that is not on this invoice, and an id that is no id at all.
    expect((await creditNoteXml(request('/'), params({ id: deInvoice.id, creditNoteId: atNote.id }))).status).toBe(404);
    expect((await invoiceXml(request('/'), params({ id: 'not-an-id' }))).status).toBe(404);

    const member = await addMember(db, de, 'member');
    signedIn(member);
    expect((await invoiceXml(request('/'), params({ id: deInvoice.id }))).status).toBe(403);
    const manager = await addMember(db, de, 'manager');
    signedIn(manager);
    expect((await invoiceXml(request('/'), params({ id: deInvoice.id }))).status).toBe(200);
    signedIn(admin);
    expect((await invoiceFacturX(request('/'), params({ id: deInvoice.id }))).status).toBe(200);
    current.context = createContextInner({ db, userId: null, locale: 'en' });
    expect((await invoiceXml(request('/'), params({ id: deInvoice.id }))).status).toBe(401);
  });
});
