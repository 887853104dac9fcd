// Invoices an accounts department accepts, on PGlite and (with TEST_DATABASE_URL) real Postgres: the
// issuer and the customer's billing profile copied onto the invoice, 19 % VAT for a German customer of
// the German demo issuer and reverse charge at 0 % for an Austrian business, the due date from the
// payment terms, a closing invoice for the month so far with the month's invoice taking the rest, the
// PDF's text (extracted with unpdf) saying what the page says, and who may read which invoice.
import { randomUUID } from 'node:crypto';
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditNoteContent, invoiceContent, type InvoiceContent } from '~/server/documents/invoice-content';
import { renderInvoicePdf } from '~/server/documents/invoice-pdf';
import type { Db, DbHandle } from '~/db/client';
import { DEMO_ISSUER } from '~/server/catalogue';
import { translate, type Locale, type MessageKey, type MessageParams } from '~/server/i18n';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { issueMonthlyInvoices } from './invoices';
import { insertSettledJob } from '~/server/testing/invoice-fixtures';

const H = 3600;
/** Mid-April 2026: March is over; April so far can get a closing invoice. */
const NOW = new Date('2026-04-10T09:00:00Z');

type Tenant = Awaited<ReturnType<typeof createTenant>> & { projectId: string; allocationId: string };
type InvoiceView = Parameters<typeof invoiceContent>[0];

type T = (key: MessageKey, params?: MessageParams) => string;

/** pdfText renders an invoice's PDF (or another document of it) in a language and extracts its text, spaces collapsed. */
async function pdfText(invoice: InvoiceView, locale: Locale, build: (invoice: InvoiceView, t: T, locale: Locale) => InvoiceContent | null = invoiceContent): Promise<string> {
  const t: T = (key, params) => translate(locale, key, params);
  const doc = build(invoice, t, locale);
  if (!doc) throw new Error('no such document');
  const bytes = await renderInvoicePdf(doc, { author: 'test', pageLabel: (page, pages) => t('invoice.page', { page, pages }) });
  expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
  const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
  return text.replace(/\s+/g, ' ');
}

describe.each(dbTargets())('billing-ready invoices on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let de: Tenant;
  let at: Tenant;

  const asUser = (who: { userId: string; orgId?: string }, now: Date = NOW) => callerFor(db, { userId: who.userId, orgId: who.orgId, now: () => now });

  async function companyTenant(profile: { country: string; vatId: string | null; city: string; purchaseOrder?: string }): Promise<Tenant> {
    const tenant = await createTenant(db, { kind: 'company', name: `Company ${randomUUID().slice(0, 8)}` });
    await asUser(admin).staff.changeTenantStatus({ orgId: tenant.orgId, action: 'verify', reason: 'Company checked' });
    await asUser(tenant).organisation.setBillingProfile({
      legalName: `${tenant.orgName} Ltd.`,
      street: 'Hauptstraße 5',
      postcode: '1010',
      city: profile.city,
      country: profile.country,
      vatId: profile.vatId,
      billingEmail: 'accounts@example.org',
      purchaseOrder: profile.purchaseOrder ?? null,
    });
    const project = await asUser(tenant).project.create({ title: `Models ${randomUUID().slice(0, 6)}`, abstract: 'Training models for invoices.', workloadKind: 'training', members: [] });
    const credit = await asUser(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 100_000, periodStart: '2025-01-01', periodEnd: '2028-12-31', reason: 'Credit line for tests' });
    return { ...tenant, projectId: project.id, allocationId: credit.id };
  }

  /** settledJob writes a job as the reconciler leaves it once settled. */
  const settledJob = (tenant: Tenant, job: Parameters<typeof insertSettledJob>[2]) => insertSettledJob(db, tenant, job);

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
  });
  afterAll(async () => handle?.close());

  it('a German customer of the German issuer pays 19 % VAT, net + VAT = gross, due after the payment terms; issuer and billing profile are copied on', async () => {
    const { invoice: issued } = await asUser(admin).invoice.issue({ orgId: de.orgId, month: '2026-03' });
    const invoice = await asUser(de).invoice.get({ id: issued!.id });
    expect(invoice).toMatchObject({ vatTreatment: 'standard', vatPermille: 190, netCents: 3_625, vatCents: 689, grossCents: 4_314, dueDate: '2026-04-24', closing: false });
    expect(invoice.netCents + invoice.vatCents).toBe(invoice.grossCents);
    expect(invoice.issuer).toEqual(DEMO_ISSUER);
    expect(invoice.recipient).toMatchObject({ name: `${de.orgName} Ltd.`, street: 'Hauptstraße 5', postcode: '1010', city: 'Berlin', country: 'DE', vatId: 'DE136695976', purchaseOrder: 'PO-4711' });

    // The billing profile changes later; the issued invoice keeps what it was made out to.
    await asUser(de).organisation.setBillingProfile({ legalName: 'Renamed GmbH', street: 'Neue Straße 1', postcode: '10115', city: 'Berlin', country: 'DE', vatId: 'DE136695976', billingEmail: 'new@example.org' });
    expect((await asUser(de).invoice.get({ id: issued!.id })).recipient.name).toBe(`${de.orgName} Ltd.`);

    const en = await pdfText(invoice, 'en');
    for (const expected of ['DE812345673', 'DE136695976', 'PO-4711', 'Apr 24, 2026', '€36.25', '€6.89', '€43.14', DEMO_ISSUER.name, 'DE89 3704 0044 0532 0130 00', invoice.number]) expect(en).toContain(expected);
    // The line (both jobs: one class, one tariff) with its quantity, unit price, net, VAT rate, VAT and gross.
    expect(en).toContain('12.50 GPU-h €2.90 / GPU-h €36.25 19% €6.89 €43.14');
    expect(en).not.toContain('Reverse charge');
    const deText = await pdfText(invoice, 'de');
    for (const expected of ['USt-IdNr.: DE812345673', 'DE136695976', '24.04.2026', '36,25 €', '6,89 €', '43,14 €', 'Fällig am']) expect(deText).toContain(expected);
    // The line names the resource class in the invoice's language (frozen in both when it was issued).
    expect(invoice.lines[0]).toMatchObject({ description: 'H100 partition (Jena)', descriptionDe: 'H100-Partition (Jena)' });
    expect(en).toContain('H100 partition (Jena)');
    expect(deText).toContain('H100-Partition (Jena)');
    expect(deText).not.toContain('H100 partition');
  });

  it('interactive sessions go on a line of their own, named so in both languages, on the page and in the PDF', async () => {
    const tenant = await companyTenant({ country: 'DE', vatId: 'DE136695976', city: 'Berlin' });
    await settledJob(tenant, { gpuSeconds: 4 * H, costCents: 1_160, endedAt: '2026-03-05T10:00:00Z' });
    await settledJob(tenant, { gpuSeconds: 2 * H, costCents: 580, endedAt: '2026-03-06T10:00:00Z', kind: 'interactive' });
    const { invoice: issued } = await asUser(admin).invoice.issue({ orgId: tenant.orgId, month: '2026-03' });
    const invoice = await asUser(tenant).invoice.get({ id: issued!.id });
    expect(invoice.lines.map((l) => [l.description, l.descriptionDe, l.jobs, l.gpuSeconds, l.netCents])).toEqual([
      ['H100 partition (Jena)', 'H100-Partition (Jena)', 1, 4 * H, 1_160],
      ['H100 partition (Jena) · interactive sessions', 'H100-Partition (Jena) · interaktive Sitzungen', 1, 2 * H, 580],
    ]);
    expect(invoice.netCents).toBe(1_740);
    expect(await pdfText(invoice, 'en')).toContain('H100 partition (Jena) · interactive sessions');
    expect(await pdfText(invoice, 'de')).toContain('H100-Partition (Jena) · interaktive Sitzungen');
  });

  it('an Austrian business with a VAT ID gets reverse charge at 0 %, with the note on the page content and in the PDF', async () => {
    const { invoice: issued } = await asUser(admin).invoice.issue({ orgId: at.orgId, month: '2026-03' });
    const invoice = await asUser(at).invoice.get({ id: issued!.id });
    expect(invoice).toMatchObject({ vatTreatment: 'reverseCharge', vatPermille: 0, netCents: 3_625, vatCents: 0, grossCents: 3_625 });
    const en = await pdfText(invoice, 'en');
    for (const expected of ['DE812345673', 'ATU13585627', 'Reverse charge: VAT to be accounted for by the recipient, Art. 196 Council Directive 2006/112/EC', '€0.00', '€36.25']) expect(en).toContain(expected);
    expect(await pdfText(invoice, 'de')).toContain('Steuerschuldnerschaft des Leistungsempfängers');

    // A credit note on it carries the same treatment: no VAT.
    const note = await asUser(admin).invoice.creditNote({ invoiceId: invoice.id, netCents: 1_000, reason: 'Goodwill' });
    expect(note).toMatchObject({ netCents: 1_000, vatCents: 0, grossCents: 1_000 });
    // Its own PDF: the same parties, the invoice it credits, the same reverse-charge note.
    const credited = await asUser(at).invoice.get({ id: invoice.id });
    const noteText = await pdfText(credited, 'en', (inv, t, locale) => creditNoteContent(inv, note.id, t, locale));
    for (const expected of [note.number, `Credit on invoice ${invoice.number}: Goodwill`, 'DE812345673', 'ATU13585627', 'Reverse charge', '-€10.00', 'Total credited']) expect(noteText).toContain(expected);
  });

  it('a closing invoice covers the month so far; the month’s invoice later covers only what ran after it', async () => {
    await settledJob(de, { gpuSeconds: 4 * H, costCents: 1_160, endedAt: '2026-04-05T10:00:00Z' });
    await expect(asUser(admin).invoice.issue({ orgId: de.orgId, month: '2026-04' })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await expect(asUser(admin).invoice.issue({ orgId: de.orgId, month: '2026-03', closing: true })).rejects.toMatchObject({ code: 'BAD_REQUEST' });

    const closing = (await asUser(admin).invoice.issue({ orgId: de.orgId, month: '2026-04', closing: true })).invoice!;
    expect(closing).toMatchObject({ created: true, netCents: 1_160, vatCents: 220, grossCents: 1_380 });
    const again = (await asUser(admin).invoice.issue({ orgId: de.orgId, month: '2026-04', closing: true })).invoice!;
    expect(again).toMatchObject({ id: closing.id, created: false });
    const view = await asUser(de).invoice.get({ id: closing.id });
    expect(view).toMatchObject({ closing: true, periodLastDay: '2026-04-10', coversUntil: NOW });
    expect(await pdfText(view, 'en')).toContain('Closing invoice: usage up to Apr 10, 2026');

    // The tenant runs on after the closing invoice; the monthly run in May invoices only that.
    await settledJob(de, { gpuSeconds: H, costCents: 290, endedAt: '2026-04-20T10:00:00Z' });
    const run = await issueMonthlyInvoices(db, new Date('2026-05-01T01:00:00Z'), {});
    expect(run.issued.filter((i) => i.orgId === de.orgId)).toHaveLength(1);
    const rest = await asUser(de).invoice.get({ id: run.issued.find((i) => i.orgId === de.orgId)!.invoiceId });
    expect(rest).toMatchObject({ netCents: 290, closing: false, coversFrom: NOW, periodLastDay: '2026-04-30' });
    // Nothing left for April: a second run issues nothing more.
    expect((await issueMonthlyInvoices(db, new Date('2026-05-01T02:00:00Z'), {})).issued.filter((i) => i.orgId === de.orgId)).toHaveLength(0);
  });

  it('the invoice (and so its PDF) is read by the tenant’s owners and managers and by staff, by no other tenant', async () => {
    const [mine] = await asUser(de).invoice.list();
    await expect(asUser(at).invoice.get({ id: mine!.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const member = await addMember(db, de, 'member');
    await expect(asUser(member).invoice.get({ id: mine!.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const manager = await addMember(db, de, 'manager');
    expect((await asUser(manager).invoice.get({ id: mine!.id })).id).toBe(mine!.id);
    expect((await asUser(admin).invoice.staffGet({ id: mine!.id })).id).toBe(mine!.id);
    await expect(asUser(de).invoice.staffGet({ id: mine!.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
