// A company starts on its own, fine-tunes a model and gets an invoice its accounts department accepts:
// issuer and customer VAT IDs, due date, net + VAT = gross, in a PDF made on the server whose text the
// test extracts; a company in another EU state gets reverse charge. In English and in German.
// The invoice is a closing invoice (the month so far), which staff issue when a contract ends: the
// test cannot wait for the month's end, when the worker issues the month's invoice by itself.
import { readFile } from 'node:fs/promises';
import { expect, test } from '@playwright/test';
import { extractText, getDocumentProxy } from 'unpdf';
import type { Locale } from '../server/i18n';
import { cents, child, parseXml, partyVatId, text as xmlText } from '../server/testing/e-invoice-xml';
import { openVerificationLink, signIn, signOut, signUpInBrowser, texts, unique } from './helpers';

const ISSUER_VAT_ID = 'DE812345673'; // the demo centre's issuer (server/catalogue.ts)
const PASSWORD = 'a-long-password-1';

interface Company {
  orgName: string;
  email: string;
  country: string;
  street: string;
  postcode: string;
  city: string;
  vatId: string;
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`invoice PDF (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a German company pays 19 % VAT, an Austrian one reverse charge; the PDF says so', async ({ page }) => {
      test.setTimeout(150_000);
      const t = texts(locale);
      const nav = () => page.getByRole('navigation', { name: t('nav.main') });
      const stamp = `${Date.now()}.${locale}`;
      const german: Company = { orgName: unique('Elbe Vision GmbH'), email: `owner.${stamp}@elbe.example`, country: 'DE', street: 'Ostra-Allee 9', postcode: '01067', city: 'Dresden', vatId: 'DE136695976' };
      const austrian: Company = { orgName: unique('Donau Sprachmodelle GmbH'), email: `owner.${stamp}@donau.example`, country: 'AT', street: 'Praterstraße 1', postcode: '1020', city: 'Wien', vatId: 'ATU13585627' };
      const day = (at: Date) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(at);
      const jobCosts = new Map<string, string>();
      const euros = (text: string) => Number(text.replace(/[^\d,.-]/g, '').replace(locale === 'de' ? /\./g : /,/g, '').replace(',', '.'));

      // 1. Both companies sign up on their own.
      for (const company of [german, austrian]) {
        await signUpInBrowser(page, locale, { name: `Owner of ${company.orgName}`, email: company.email, password: PASSWORD, org: { name: company.orgName, kind: 'company', country: company.country, residency: 'EU' } });
        await openVerificationLink(page, locale, company.email);
        await page.goto('/dashboard');
        await signOut(page, locale);
      }

      // 2. The centre verifies them (the one staff step before a company can work: who it is).
      await signIn(page, locale, 'admin@centre.example');
      await nav().getByRole('link', { name: t('nav.tenants') }).click();
      for (const company of [german, austrian]) {
        const row = page.getByTestId(`tenant-row-${company.orgName}`);
        await row.getByRole('button', { name: `${t('staff.tenants.verify')} ${company.orgName}` }).click();
        await row.getByLabel(t('staff.tenants.reasonFor', { action: t('staff.tenants.verify').toLowerCase(), org: company.orgName })).fill('Commercial register entry checked');
        await row.getByRole('button', { name: t('staff.tenants.verify'), exact: true }).click();
        await expect(row.getByText(t('status.active'))).toBeVisible();
      }
      await signOut(page, locale);

      // 3. Each owner fills in the billing profile, accepts the price list and fine-tunes a model: no staff step.
      for (const company of [german, austrian]) {
        await signIn(page, locale, company.email, PASSWORD);
        await nav().getByRole('link', { name: t('nav.organisation') }).click();
        const billing = page.getByRole('form', { name: t('billing.title') });
        await billing.getByLabel(t('billing.legalName')).fill(company.orgName);
        await billing.getByLabel(t('billing.street')).fill(company.street);
        await billing.getByLabel(t('billing.postcode')).fill(company.postcode);
        await billing.getByLabel(t('billing.city')).fill(company.city);
        await billing.getByLabel(t('billing.email')).fill(`accounts.${stamp}@example.org`);
        if (company === german) {
          // A VAT ID with a wrong check digit is refused on its field.
          await billing.getByLabel(t('billing.vatId')).fill('DE136695977');
          await billing.getByRole('button', { name: t('billing.save') }).click();
          await expect(billing.getByText(t('billing.vatIdCheckDigit', { example: 'DE123456788' }))).toBeVisible();
        }
        await billing.getByLabel(t('billing.vatId')).fill(company.vatId);
        await billing.getByRole('button', { name: t('billing.save') }).click();
        await expect(page.getByText(t('billing.saved'))).toBeVisible();

        await nav().getByRole('link', { name: t('nav.prices') }).click();
        await page.getByRole('button', { name: t('payg.accept') }).click();
        await expect(page.getByText(t('payg.done', { credit: new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(1000) }))).toBeVisible();

        await nav().getByRole('link', { name: t('nav.jobs') }).click();
        await page.getByRole('link', { name: t('jobs.templateFineTune') }).click();
        await expect(page).toHaveURL(/\/jobs\/new/);
        await page.getByLabel(t('jobs.modelSize')).fill('7');
        await page.getByLabel(t('jobs.tokens')).fill('0.05'); // about an hour on 8 H100: six seconds at 600×
        await expect(page.getByTestId('fine-tune-estimate')).toBeVisible();
        await page.getByRole('button', { name: t('jobs.submit') }).click();
        await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 45_000 });
        // One figure, one value: the job's cost once settled, the usage page's row for it and (below) the invoice.
        await expect(page.getByTestId('job-charged')).toBeVisible({ timeout: 15_000 });
        const jobCost = await page.getByTestId('job-cost').innerText();
        const jobPath = new URL(page.url()).pathname;
        await nav().getByRole('link', { name: t('nav.usage') }).click();
        const usageRow = page.getByTestId('usage-job').filter({ has: page.locator(`a[href="${jobPath}"]`) });
        await expect(usageRow).toContainText(jobCost);
        jobCosts.set(company.orgName, jobCost);
        await signOut(page, locale);
      }

      // 4. Staff issue each a closing invoice for the month so far (the month's own invoice comes from the worker).
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/invoices');
      for (const company of [german, austrian]) {
        const form = page.locator('form').filter({ has: page.getByLabel(t('invoice.issueOne.tenant')) });
        await form.getByLabel(t('invoice.issueOne.tenant')).selectOption({ label: company.orgName });
        const closing = form.getByLabel(t('invoice.issueOne.closing'));
        if (!(await closing.isChecked())) await closing.check();
        await form.getByRole('button', { name: t('invoice.issueOne.submit') }).click();
        await expect(form.getByRole('status')).toHaveText(new RegExp(t('invoice.issueOne.issued', { number: 'INV-\\d{4}-\\d{6}' })));
      }
      await signOut(page, locale);

      // 5. Each owner opens the invoice and downloads its PDF; the other company cannot fetch it.
      const issued = new Date();
      const due = new Date(Date.UTC(issued.getUTCFullYear(), issued.getUTCMonth(), issued.getUTCDate() + 14));
      const invoiceUrls: string[] = [];
      for (const company of [german, austrian]) {
        await signIn(page, locale, company.email, PASSWORD);
        for (const other of invoiceUrls) expect((await page.request.get(`${other}/pdf`.replace('/invoices/', '/api/invoices/'))).status()).toBe(404);
        await nav().getByRole('link', { name: t('nav.invoices') }).click();
        await page.getByRole('link', { name: /^INV-/ }).first().click();
        await expect(page).toHaveURL(/\/invoices\/[0-9a-f-]{36}$/);
        invoiceUrls.push(new URL(page.url()).pathname);

        const net = await page.getByTestId('invoice-net').innerText();
        expect(euros(net)).toBe(euros(jobCosts.get(company.orgName)!)); // the company's one job, as its page and the usage page showed it
        const vat = await page.getByTestId('invoice-vat').innerText();
        const gross = await page.getByTestId('invoice-gross').innerText();
        expect(Math.round((euros(net) + euros(vat)) * 100)).toBe(Math.round(euros(gross) * 100));
        expect(euros(net)).toBeGreaterThan(0);
        const article = page.getByRole('article');
        await expect(article).toContainText(ISSUER_VAT_ID);
        await expect(article).toContainText(company.vatId);

        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: t('invoice.downloadPdf') }).click()]);
        expect(download.suggestedFilename()).toMatch(/^INV-\d{4}-\d{6}\.pdf$/);
        const bytes = await readFile(await download.path());
        const { text: raw } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
        const text = raw.replace(/\s+/g, ' ');
        const plain = (s: string) => s.replace(/\s+/g, ' ');
        for (const expected of [ISSUER_VAT_ID, company.vatId, company.orgName, `${company.postcode} ${company.city}`, day(due), plain(net), plain(vat), plain(gross), t('invoice.dueDate')]) expect(text).toContain(expected);

        // The same invoice as XRechnung: both VAT IDs, 19 % (S) or reverse charge (AE, 0 %), the page's totals.
        const [xml] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: t('invoice.downloadXRechnung') }).click()]);
        const ubl = parseXml(await readFile(await xml.path(), 'utf8'));
        expect(partyVatId(child(ubl, 'cac:AccountingSupplierParty', 'cac:Party'))).toBe(ISSUER_VAT_ID);
        expect(partyVatId(child(ubl, 'cac:AccountingCustomerParty', 'cac:Party'))).toBe(company.vatId);
        expect(xmlText(ubl, 'cac:TaxTotal', 'cac:TaxSubtotal', 'cac:TaxCategory', 'cbc:ID')).toBe(company === german ? 'S' : 'AE');
        expect(cents(child(ubl, 'cac:LegalMonetaryTotal', 'cbc:TaxExclusiveAmount'))).toBe(Math.round(euros(net) * 100));
        expect(cents(child(ubl, 'cac:TaxTotal', 'cbc:TaxAmount'))).toBe(Math.round(euros(vat) * 100));
        expect(cents(child(ubl, 'cac:LegalMonetaryTotal', 'cbc:PayableAmount'))).toBe(Math.round(euros(gross) * 100));
        expect(xmlText(ubl, 'cbc:DueDate')).toBe(due.toISOString().slice(0, 10));

        if (company === german) {
          const netCents = Math.round(euros(net) * 100);
          expect(Math.round(euros(vat) * 100)).toBe(Math.round((netCents * 19) / 100)); // 19 %, rounded to the cent
          expect(text).not.toContain(t('invoice.reverseCharge'));
        } else {
          expect(euros(vat)).toBe(0);
          expect(euros(gross)).toBe(euros(net));
          await expect(page.getByTestId('invoice-reverse-charge')).toHaveText(t('invoice.reverseCharge'));
          expect(text).toContain(t('invoice.reverseCharge'));
          expect(text).toContain(locale === 'de' ? 'Steuerschuldnerschaft des Leistungsempfängers' : 'Art. 196 Council Directive 2006/112/EC');
        }
        await signOut(page, locale);
      }
    });
  });
}
