// An accounts department takes the invoice into its software: the demo company's owner downloads last
// month's invoice from its page as XRechnung (UBL XML) and as a Factur-X/ZUGFeRD PDF, and their totals equal
// the page's; another tenant cannot fetch them; staff credit part of it and download the credit note as a
// UBL CreditNote referring to the invoice. In English and German, with axe, at 1366 and 390 px.
import { readFile } from 'node:fs/promises';
import { expect, test, type Download } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { CAC, RAM, cents, child, embeddedFiles, parseXml, text } from '../server/testing/e-invoice-xml';
import { expectNoViolations, shoot, signIn, signOut, texts } from './helpers';


/** euroCents reads an amount as the page writes it in a locale ("€1,234.50" / "1.234,50 €", "−€1.00") as cents. */
function euroCents(locale: Locale, shown: string): number {
  const digits = (shown.match(/[\d.,]+/) ?? ['NaN'])[0];
  const value = Number(locale === 'de' ? digits.replace(/\./g, '').replace(',', '.') : digits.replace(/,/g, ''));
  return Math.round(value * 100) * (/[-−]/.test(shown) ? -1 : 1);
}

async function bytesOf(download: Download): Promise<Uint8Array> {
  return new Uint8Array(await readFile(await download.path()));
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`e-invoices (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB', viewport: { width: 1366, height: 900 } });
    const t = texts(locale);

    test('the invoice downloads as XRechnung and Factur-X with the page’s totals; staff credit it and its credit note downloads too', async ({ page }) => {
      test.setTimeout(120_000);
      const nav = () => page.getByRole('navigation', { name: t('nav.main') });

      // 1. The company's owner opens last month's invoice.
      await signIn(page, locale, 'owner@company.example');
      await nav().getByRole('link', { name: t('nav.invoices') }).click();
      const invoiceLink = page.getByRole('link', { name: /^INV-\d{4}-\d{6}$/ }).first();
      const number = (await invoiceLink.innerText()).trim();
      await invoiceLink.click();
      await expect(page).toHaveURL(/\/invoices\/[0-9a-f-]{36}$/);
      const invoicePath = new URL(page.url()).pathname;
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(t('invoice.document'));
      const net = euroCents(locale, await page.getByTestId('invoice-net').innerText());
      const vat = euroCents(locale, await page.getByTestId('invoice-vat').innerText());
      const gross = euroCents(locale, await page.getByTestId('invoice-gross').innerText());
      expect(net).toBeGreaterThan(0);
      expect(net + vat).toBe(gross);
      const eInvoice = page.getByRole('group', { name: t('invoice.eInvoice.title') });
      await expect(eInvoice).toBeVisible();
      await expectNoViolations(page, 'invoice page with e-invoice links');
      await shoot(page, `invoice-${locale}`, 'test-results/e-invoice');

      // 2. XRechnung: UBL XML whose number and totals are the page's.
      const [xmlDownload] = await Promise.all([page.waitForEvent('download'), eInvoice.getByRole('link', { name: t('invoice.downloadXRechnung') }).click()]);
      expect(xmlDownload.suggestedFilename()).toBe(`${number}-xrechnung.xml`);
      const ubl = parseXml(new TextDecoder().decode(await bytesOf(xmlDownload)));
      expect(ubl.localName).toBe('Invoice');
      expect(text(ubl, 'cbc:ID')).toBe(number);
      expect(text(ubl, 'cbc:CustomizationID')).toContain('xrechnung');
      expect(cents(child(ubl, 'cac:LegalMonetaryTotal', 'cbc:TaxExclusiveAmount'))).toBe(net);
      expect(cents(child(ubl, 'cac:TaxTotal', 'cbc:TaxAmount'))).toBe(vat);
      expect(cents(child(ubl, 'cac:LegalMonetaryTotal', 'cbc:PayableAmount'))).toBe(gross);
      await expect(page.getByRole('article')).toContainText(text(ubl, 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:RegistrationName'));

      // 3. Factur-X: a PDF with factur-x.xml embedded, the same totals.
      const [pdfDownload] = await Promise.all([page.waitForEvent('download'), eInvoice.getByRole('link', { name: t('invoice.downloadFacturX') }).click()]);
      expect(pdfDownload.suggestedFilename()).toBe(`${number}-factur-x.pdf`);
      const pdf = await bytesOf(pdfDownload);
      expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe('%PDF-');
      const cii = parseXml(new TextDecoder().decode((await embeddedFiles(pdf)).get('factur-x.xml')));
      const summation = cii.getElementsByTagNameNS(RAM, 'SpecifiedTradeSettlementHeaderMonetarySummation')[0]!;
      expect(cents(child(summation, 'ram:TaxBasisTotalAmount'))).toBe(net);
      expect(cents(child(summation, 'ram:TaxTotalAmount'))).toBe(vat);
      expect(cents(child(summation, 'ram:GrandTotalAmount'))).toBe(gross);
      expect(cents(child(summation, 'ram:DuePayableAmount'))).toBe(gross);
      await signOut(page, locale);

      // 4. Another tenant cannot fetch them: "not found", as the page answers.
      await signIn(page, locale, 'pi@uni.example');
      for (const kind of ['xrechnung', 'factur-x']) expect((await page.request.get(`/api${invoicePath}/${kind}`)).status()).toBe(404);
      await signOut(page, locale);

      // 5. Staff credit 1 € of it; the credit note downloads as a UBL CreditNote referring to the invoice.
      await signIn(page, locale, 'admin@centre.example');
      await page.goto(invoicePath);
      await page.getByRole('button', { name: t('invoice.creditNote.open') }).click();
      await page.getByLabel(t('invoice.creditNote.amount')).fill(locale === 'de' ? '1,00' : '1.00');
      await page.getByLabel(t('common.reason')).fill(`E-invoice check ${locale}`);
      await page.getByRole('button', { name: t('invoice.creditNote.submit') }).click();
      const noteRow = page.getByRole('row').filter({ hasText: `E-invoice check ${locale}` });
      await expect(noteRow).toBeVisible();
      const noteNumber = (await noteRow.getByRole('cell').first().innerText()).trim();
      const noteGross = euroCents(locale, (await noteRow.getByRole('cell').nth(5).innerText()).trim());
      expect(noteGross).toBeLessThan(0); // shown as a credit
      await expectNoViolations(page, 'invoice page with a credit note');
      await shoot(page, `invoice-credit-note-${locale}`, 'test-results/e-invoice');
      const [noteDownload] = await Promise.all([page.waitForEvent('download'), noteRow.getByRole('link', { name: t('invoice.creditNote.xrechnungLabel', { number: noteNumber }) }).click()]);
      expect(noteDownload.suggestedFilename()).toBe(`${noteNumber}-xrechnung.xml`);
      const note = parseXml(new TextDecoder().decode(await bytesOf(noteDownload)));
      expect(note.localName).toBe('CreditNote');
      expect(text(note, 'cbc:ID')).toBe(noteNumber);
      expect(text(note, 'cac:BillingReference', 'cac:InvoiceDocumentReference', 'cbc:ID')).toBe(number);
      expect(cents(child(note, 'cac:LegalMonetaryTotal', 'cbc:TaxExclusiveAmount'))).toBe(100);
      expect(cents(child(note, 'cac:LegalMonetaryTotal', 'cbc:PayableAmount'))).toBe(-noteGross);
      expect(note.getElementsByTagNameNS(CAC, 'CreditNoteLine')).toHaveLength(1);
      const [notePdf] = await Promise.all([page.waitForEvent('download'), noteRow.getByRole('link', { name: t('invoice.creditNote.facturXLabel', { number: noteNumber }) }).click()]);
      expect(notePdf.suggestedFilename()).toBe(`${noteNumber}-factur-x.pdf`);
      expect((await embeddedFiles(await bytesOf(notePdf))).has('factur-x.xml')).toBe(true);
    });
  });
}
