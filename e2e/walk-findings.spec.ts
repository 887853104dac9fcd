// Walk findings of issue #24, each checked the way a person walking the portal met it, in English and
// German: the icon, an empty sign-in form, the audit log in words and in time order, the cluster's
// power labels and capped site, and the API's address following the host the browser used.
import { expect, test } from '@playwright/test';
import { AUDIT_KINDS } from '../server/core/audit';
import { auditKindText } from '../server/i18n/audit';
import type { Locale } from '../server/i18n';
import { expectNoViolations, shoot, signIn, texts } from './helpers';

test('the portal has an icon: /favicon.ico is no 404', async ({ request }) => {
  const icon = await request.get('/favicon.ico');
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toMatch(/image\//);
  expect((await icon.body()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
});

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`walk findings (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('an empty sign-in form names the field to fill in, not a wrong password', async ({ page }) => {
      const t = texts(locale);
      await page.goto('/sign-in');
      await page.getByLabel(t('field.email')).fill('');
      await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
      await expect(page.getByText(t('signIn.emailRequired'))).toBeVisible();
      await expect(page.getByText(t('signIn.passwordRequired'))).toBeVisible();
      await expect(page.getByLabel(t('field.email'))).toHaveAttribute('aria-invalid', 'true');
      await expect(page.getByText(t('signIn.wrongCredentials'))).toHaveCount(0);
      // Only the password missing: only the password is named.
      await page.getByLabel(t('field.email')).fill('owner@company.example');
      await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
      await expect(page.getByText(t('signIn.passwordRequired'))).toBeVisible();
      await expect(page.getByText(t('signIn.emailRequired'))).toHaveCount(0);
      await expectNoViolations(page, 'sign-in with errors');
    });

    test('the audit log reads in words, newest first, and filters by kind', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/audit');
      const rows = page.getByTestId('audit-row');
      await expect(rows.first()).toBeVisible();
      const times = await rows.evaluateAll((trs) => trs.map((tr) => Date.parse(tr.getAttribute('data-at')!)));
      expect(times.length).toBeGreaterThan(20);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      // No raw kind such as "credit.raised" in the table.
      const table = await page.locator('table').innerText();
      for (const kind of AUDIT_KINDS) expect(table, kind).not.toContain(kind);
      // Filter by one kind: every row is of it, in words.
      await page.getByLabel(t('staff.audit.filterKind')).selectOption('tenant.verified');
      await page.getByRole('button', { name: t('common.filter') }).click();
      await expect(page).toHaveURL(/kind=tenant\.verified/);
      const kinds = await page.getByTestId('audit-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kind')));
      expect(kinds.length).toBeGreaterThan(0);
      expect(new Set(kinds)).toEqual(new Set(['tenant.verified']));
      await expect(page.getByTestId('audit-row').first()).toContainText(t(auditKindText('tenant.verified')));
      await expectNoViolations(page, 'audit log');
    });

    test('the cluster page says IT power and facility power, and shows the capped site', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/cluster');
      await expect(page.getByText(t('cluster.powerNow'), { exact: true })).toBeVisible();
      await expect(page.getByText(t('cluster.facilityPowerNow'), { exact: true })).toBeVisible();
      await expect(page.getByTestId('facility-power-ch-lugano')).toContainText(new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(24));
      // The fresh e2e cluster has minutes of samples, not a day: the titles say so.
      await expect(page.getByText(t('cluster.utilisationDay', { avg: '' }).split('(')[0]!.trim())).toHaveCount(0);
    });

    test('staff pages name sites and classes in the reader’s language', async ({ page }) => {
      test.setTimeout(120_000);
      // The catalogue's names: the H100 class and its site, in the reader's language, never the other's.
      const h100 = { en: 'H100 partition (Jena)', de: 'H100-Partition (Jena)' };
      const jena = { en: 'Jena, Germany', de: 'Jena, Deutschland' };
      const other = locale === 'en' ? 'de' : 'en';
      await signIn(page, locale, 'admin@centre.example');
      const pages: Array<{ path: string; open?: RegExp; names: Array<Record<'en' | 'de', string>> }> = [
        { path: '/staff/allocations', names: [h100] },
        { path: '/staff/allocations', open: /Protein structure prediction/, names: [h100] },
        { path: '/staff/applications', open: /Alemannic/, names: [{ en: 'B200 partition (Kajaani)', de: 'B200-Partition (Kajaani)' }] },
        { path: '/staff/centre', names: [h100] },
        { path: '/staff/cluster', names: [h100] },
        { path: '/staff/tco', names: [jena] },
      ];
      for (const { path, open, names } of pages) {
        await page.goto(path);
        if (open) {
          await page.getByRole('main').getByRole('link', { name: open }).first().click();
          await page.waitForURL((url) => url.pathname !== path);
        }
        const main = page.getByRole('main');
        for (const name of names) {
          await expect(main, `${page.url()} names ${name[locale]}`).toContainText(name[locale]);
          await expect(main, `${page.url()} never says ${name[other]}`).not.toContainText(name[other]);
        }
        await shoot(page, `names-${new URL(page.url()).pathname.split('/').slice(2, 3).join('')}${open ? '-one' : ''}-${locale}`, 'test-results/walk');
      }
    });

    test('the API reference and openapi.json give the address the browser used', async ({ page, baseURL }) => {
      const t = texts(locale);
      await signIn(page, locale, 'owner@company.example');
      await page.goto('/developers/api');
      await expect(page.getByRole('heading', { name: t('developers.title') })).toBeVisible();
      await expect(page.locator('pre').first()).toContainText(`${baseURL}/api/v1/jobs`);
      await expect(page.locator('body')).not.toContainText('localhost:');
      const document = (await (await page.request.get('/api/v1/openapi.json')).json()) as { servers: { url: string }[] };
      expect(document.servers).toEqual([{ url: `${baseURL}/api/v1` }]);
    });
  });
}
