// Payment status (issue #24): the demo company's invoice from two months ago is overdue after a part
// payment (server/services/demo/demo-history.ts), so the worker's first daily round sends the payment
// reminder its days overdue have reached — to the owner and, in German, to the billing address. Staff
// then record a part and a full payment on an open invoice, and the invoice shows "paid" to staff and
// to the company. In English and in German, with axe on each page changed.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { formatEuros } from '../server/i18n/format';
import { expectNoViolations, signIn, signOut, texts, waitForMail } from './helpers';

const OWNER = 'owner@company.example';
const ACCOUNTS = 'accounts@company.example';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`payments (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });
    const t = texts(locale);
    /** cents reads an amount as the page formats it ("1,234.56 €" / "1.234,56 €") in cents. */
    const cents = (text: string) => Math.round(Number(text.replace(/[^\d,.-]/g, '').replace(locale === 'de' ? /\./g : /,/g, '').replace(',', '.')) * 100);
    const card = (page: Page) => page.locator('section').filter({ has: page.getByRole('heading', { name: t('payment.title') }) });
    /** The status badge of the payments card (a span; the card's table also has a "Paid" term). */
    const badge = (page: Page, status: 'issued' | 'partlyPaid' | 'paid' | 'overdue') => card(page).locator('span', { hasText: new RegExp(`^${t(`invoice.status.${status}`)}$`) });

    test('an overdue invoice’s payment reminder arrives, and the company sees it on the invoice', async ({ page }) => {
      // Which reminder is due depends on the calendar: the invoice was issued on the 1st of last month
      // and is due 14 days later (the catalogue's payment terms); the reminders come 7 and 21 days after
      // that (INVOICE_REMINDER_DAYS), and a worker that finds both due sends only the second.
      const today = new Date();
      const due = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 15);
      const overdueDays = Math.round((Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - due) / 86_400_000);
      const level = overdueDays >= 21 ? 2 : 1;
      const subject = level === 1 ? 'Zahlungserinnerung: Rechnung' : 'Zweite Zahlungserinnerung: Rechnung';
      const accounts = await waitForMail(ACCOUNTS, `${subject} INV-`, 60_000);
      const number = /INV-\d{4}-\d{6}/.exec(accounts.subject)![0];
      expect(accounts.subject).toBe(`${subject} ${number}`);
      await waitForMail(OWNER, number, 20_000);

      await signIn(page, locale, OWNER);
      await page.goto('/invoices');
      const row = page.getByRole('row').filter({ hasText: number });
      await expect(row).toBeVisible();
      await expectNoViolations(page, 'invoices');
      await row.getByRole('link', { name: number }).click();
      await expect(page.getByText(t('payment.reminderSent', { level, day: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date()) }))).toBeVisible();
      await expectNoViolations(page, 'invoice with payments');
      await signOut(page, locale);
    });

    test('staff record a part and then a full payment; the invoice shows paid to staff and the company', async ({ page }) => {
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/invoices');
      await expectNoViolations(page, 'staff invoices');
      // The open items list the company's open invoices; take the newest (the English run pays the one
      // just issued, the German run then the overdue one).
      const openItems = page.locator('section').filter({ has: page.getByRole('heading', { name: t('payment.openItems.title') }) });
      const rows = openItems.getByRole('row').filter({ hasText: 'Example Robotics GmbH' });
      await expect(rows.first()).toBeVisible();
      const row = rows.last();
      const wasOverdue = (await row.getByText(t('invoice.status.overdue'), { exact: true }).count()) > 0;
      const number = (await row.getByRole('link').textContent())!.trim();
      await row.getByRole('link', { name: number }).click();
      await expect(page.getByRole('heading', { name: t('payment.title') })).toBeVisible();

      const form = page.locator('form').filter({ has: page.getByLabel(t('payment.record.amount')) });
      const openCents = cents((await page.getByTestId('invoice-open-balance').textContent())!);
      expect(openCents).toBeGreaterThan(1_000);

      // 1. Ten euros: part-paid (or still overdue, if it was), the rest open.
      await form.getByLabel(t('payment.record.amount')).fill(locale === 'de' ? '10,00' : '10.00');
      await form.getByLabel(t('payment.reference')).fill(`SEPA part ${locale}`);
      await form.getByRole('button', { name: t('payment.record.submit') }).click();
      await expect(form.getByText(t('payment.record.done'))).toBeVisible();
      await expect(badge(page, wasOverdue ? 'overdue' : 'partlyPaid')).toBeVisible();
      await expect(page.getByTestId('invoice-open-balance')).toHaveText(formatEuros(locale, openCents - 1_000));
      await expect(page.getByTestId('invoice-payment')).not.toHaveCount(0);

      // 2. More than is open is refused on the amount field.
      const rest = openCents - 1_000;
      const restText = (rest / 100).toFixed(2).replace('.', locale === 'de' ? ',' : '.');
      const over = ((rest + 1) / 100).toFixed(2).replace('.', locale === 'de' ? ',' : '.');
      await form.getByLabel(t('payment.record.amount')).fill(over);
      await form.getByLabel(t('payment.reference')).fill(`SEPA too much ${locale}`);
      await form.getByRole('button', { name: t('payment.record.submit') }).click();
      await expect(form.getByLabel(t('payment.record.amount'))).toHaveAttribute('aria-invalid', 'true');

      // 3. The rest: paid, nothing open, and the form is gone.
      await form.getByLabel(t('payment.record.amount')).fill(restText);
      await form.getByLabel(t('payment.reference')).fill(`SEPA rest ${locale}`);
      await form.getByRole('button', { name: t('payment.record.submit') }).click();
      await expect(badge(page, 'paid')).toBeVisible();
      await expect(page.getByTestId('invoice-open-balance')).toHaveText(formatEuros(locale, 0));
      await expect(page.getByLabel(t('payment.record.amount'))).toHaveCount(0);
      await expectNoViolations(page, 'paid invoice (staff)');
      await signOut(page, locale);

      // 4. The company sees it paid too, in its list and on the invoice.
      await signIn(page, locale, OWNER);
      await page.goto('/invoices');
      const own = page.getByRole('row').filter({ hasText: number });
      await expect(own.getByText(t('invoice.status.paid'), { exact: true })).toBeVisible();
      await expect(own.getByTestId('invoice-open')).toHaveText(formatEuros(locale, 0));
      await own.getByRole('link', { name: number }).click();
      await expect(badge(page, 'paid')).toBeVisible();
      await signOut(page, locale);
    });
  });
}
