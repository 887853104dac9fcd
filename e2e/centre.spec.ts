// Staff read the centre dashboard in English and German: PUE per site and for the whole centre, each
// equal to the facility ÷ IT energy the same page shows; the "last month" preset; no day above
// 100 %; the charts fit a phone's width.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { signIn, texts } from './helpers';

/** number reads a figure as the page writes it in the locale ("1,234.5" / "1.234,5"). */
function number(locale: Locale, text: string): number {
  const cleaned = text.replace(/[^\d.,-]/g, '');
  return Number(locale === 'de' ? cleaned.replace(/\./g, '').replace(',', '.') : cleaned.replace(/,/g, ''));
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

async function openCentre(page: Page, locale: Locale) {
  const t = texts(locale);
  await signIn(page, locale, 'admin@centre.example');
  await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.centre') }).click();
  await expect(page.getByRole('heading', { name: t('centre.title') })).toBeVisible();
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`centre dashboard (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('PUE per site and for the centre is facility ÷ IT energy as the page shows them', async ({ page }) => {
      const t = texts(locale);
      await openCentre(page, locale);
      await expect(page.getByRole('heading', { name: t('centre.sites.title') })).toBeVisible();
      const rows = page.locator('[data-testid^="centre-site-"]');
      // The demo's jobs ran in Jena and Kajaani; the last row is the whole centre.
      await expect(rows.last()).toHaveAttribute('data-testid', 'centre-site-centre');
      const count = await rows.count();
      expect(count).toBeGreaterThanOrEqual(3);
      const read = async (row: ReturnType<Page['locator']>) => ({
        it: number(locale, await row.getByTestId('site-it-kwh').innerText()),
        facility: number(locale, await row.getByTestId('site-facility-kwh').innerText()),
        pue: await row.getByTestId('site-pue').innerText(),
      });
      const sites = [];
      for (let i = 0; i < count; i++) sites.push(await read(rows.nth(i)));
      for (const s of sites) {
        expect(s.it).toBeGreaterThan(0);
        expect(s.pue).toMatch(locale === 'de' ? /^\d,\d\d$/ : /^\d\.\d\d$/); // two decimals
        // The kWh are shown to 0.1 kWh: their ratio agrees with the PUE to its second decimal.
        expect(Math.abs(s.facility / s.it - number(locale, s.pue))).toBeLessThan(0.006);
      }
      // Each site's PUE is the catalogue's (Jena 1.08, Kajaani 1.04, Lugano 1.20); the centre's lies between.
      const perSite = sites.slice(0, -1);
      for (const s of perSite) expect([1.04, 1.08, 1.2]).toContain(number(locale, s.pue));
      const centre = sites.at(-1)!;
      expect(Math.abs(centre.it - perSite.reduce((sum, s) => sum + s.it, 0))).toBeLessThan(0.05 * perSite.length + 0.01);
      expect(number(locale, centre.pue)).toBeGreaterThanOrEqual(1.04);
      expect(number(locale, centre.pue)).toBeLessThanOrEqual(1.2);
      // The headline figure is the same centre PUE.
      await expect(page.getByTestId('centre-pue')).toHaveText(centre.pue);
    });

    test('decision times per access mode stand against their targets', async ({ page }) => {
      const t = texts(locale);
      await openCentre(page, locale);
      await expect(page.getByRole('heading', { name: t('centre.decisions.title') })).toBeVisible();
      // One row per access mode of the catalogue, in its order, each with its target in working days.
      const rows = page.locator('[data-testid^="centre-decisions-"]');
      await expect(rows).toHaveCount(4);
      await expect(rows.nth(1)).toContainText('Fast Lane');
      await expect(rows.nth(1)).toContainText(t('centre.decisions.days', { days: 4 }));
      await expect(page.getByTestId('centre-decisions-large-scale')).toContainText(t('centre.decisions.days', { days: 10 }));
    });

    test('the "last month" preset shows last month, keeping the partition', async ({ page }) => {
      const t = texts(locale);
      await openCentre(page, locale);
      await page.getByLabel(t('centre.filter.partition'), { exact: true }).selectOption('h100');
      await page.getByRole('button', { name: t('centre.filter.apply') }).click();
      await expect(page).toHaveURL(/partition=h100/);
      await page.getByRole('navigation', { name: t('centre.preset.label') }).getByRole('link', { name: t('centre.preset.lastMonth') }).click();
      const now = new Date();
      const from = day(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)));
      const to = day(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)));
      await expect(page).toHaveURL(new RegExp(`from=${from}&to=${to}&partition=h100`));
      await expect(page.getByLabel(t('centre.filter.from'), { exact: true })).toHaveValue(from);
      await expect(page.getByLabel(t('centre.filter.to'), { exact: true })).toHaveValue(to);
      await expect(page.getByTestId('centre-preset-lastMonth')).toHaveAttribute('aria-current', 'page');
      const days = Number(to.slice(8));
      const fmt = (d: string) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${d}T00:00:00Z`));
      await expect(page.getByText(t('centre.range', { from: fmt(from), to: fmt(to), days }))).toBeVisible();
      // Last month's days, none above 100 % (usage apportioned to the hours it ran).
      const table = page.locator('.sr-only table').filter({ hasText: t('centre.chart.utilisation') });
      const cells = await table.locator('tbody td').allInnerTexts();
      expect(cells).toHaveLength(days);
      for (const cell of cells) expect(number(locale, cell)).toBeLessThanOrEqual(100);
      expect(Math.max(...cells.map((c) => number(locale, c)))).toBeGreaterThan(0);
    });

    test('the charts fit the window, on a wide screen and on a phone', async ({ page }) => {
      await openCentre(page, locale);
      for (const width of [1366, 390]) {
        await page.setViewportSize({ width, height: 844 });
        await page.reload();
        // The charts scale to their card: none is wider than the viewport.
        const widest = await page.evaluate(() => Math.max(...[...document.querySelectorAll('figure')].map((f) => f.getBoundingClientRect().right)));
        expect(widest).toBeLessThanOrEqual(width);
      }
    });
  });
}
