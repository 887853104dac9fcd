// Phone-sized screens (390 × 844): the navigation collapses behind a menu button, no page scrolls
// sideways (tables scroll inside their card, charts scale), and axe finds no WCAG A/AA violations.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { expectNoViolations, signIn, texts } from './helpers';

test.use({ viewport: { width: 390, height: 844 } });

/** expectPhoneFriendly checks what a phone user would notice: sideways scroll, and what axe reports. */
async function expectPhoneFriendly(page: Page, what: string) {
  await page.waitForLoadState('networkidle');
  const widths = await page.evaluate(() => ({ document: document.documentElement.scrollWidth, viewport: window.innerWidth }));
  expect(widths.document, `${what}: the page scrolls sideways (document ${widths.document} px, viewport ${widths.viewport} px)`).toBeLessThanOrEqual(widths.viewport);
  await expectNoViolations(page, what);
}

/**
 * expectKeyColumnInView scrolls the page's first wide table all the way sideways and checks that its
 * first column (the row's name) is still on screen and on top, not scrolled out of its card (issue #24).
 */
async function expectKeyColumnInView(page: Page, what: string) {
  const table = page.locator('table').first();
  await expect(table, `${what}: a table`).toBeVisible();
  const result = await table.evaluate((el) => {
    const box = el.parentElement!;
    box.scrollLeft = box.scrollWidth;
    const cells = [...el.querySelectorAll('tr')].slice(0, 6).map((row) => row.firstElementChild as HTMLElement);
    return {
      scrolled: box.scrollLeft,
      overflows: box.scrollWidth > box.clientWidth,
      cells: cells.map((cell) => {
        // Bring the row into the window (vertically only: the box keeps its sideways scroll).
        window.scrollBy(0, cell.getBoundingClientRect().top - window.innerHeight / 2);
        const rect = cell.getBoundingClientRect();
        const hit = document.elementFromPoint(rect.left + Math.min(rect.width / 2, 20), rect.top + rect.height / 2);
        return { text: cell.textContent?.trim().slice(0, 30), left: rect.left, right: rect.right, onTop: Boolean(hit && cell.contains(hit)) };
      }),
    };
  });
  expect(result.overflows, `${what}: the table is wider than a phone, so it scrolls`).toBe(true);
  expect(result.scrolled, `${what}: scrolled sideways`).toBeGreaterThan(0);
  for (const cell of result.cells) {
    expect(cell.left, `${what}: "${cell.text}" starts on screen`).toBeGreaterThanOrEqual(0);
    expect(cell.right, `${what}: "${cell.text}" ends on screen`).toBeLessThanOrEqual(390);
    expect(cell.onTop, `${what}: "${cell.text}" is not covered by the scrolled columns`).toBe(true);
  }
}

/** openFromMenu opens the collapsed menu and follows one of its links. */
async function openFromMenu(page: Page, locale: Locale, label: string) {
  const t = texts(locale);
  const nav = page.getByRole('navigation', { name: t('nav.main') });
  await expect(nav).toBeHidden();
  const menu = page.getByRole('button', { name: t('nav.menu') });
  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await nav.getByRole('link', { name: label, exact: true }).click();
  await expect(nav).toBeHidden(); // closes on arrival
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`phone layout (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a company’s pages fit a phone', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'owner@company.example');
      await expectPhoneFriendly(page, 'dashboard');

      await openFromMenu(page, locale, t('nav.jobs'));
      await expect(page).toHaveURL(/\/jobs$/);
      await expect(page.getByRole('heading', { name: t('jobs.title') })).toBeVisible();
      await expectPhoneFriendly(page, 'jobs list');

      // A job's page, reached from the list.
      await page.getByTestId('job-row').first().getByRole('link').first().click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      await expectPhoneFriendly(page, 'job page');

      await page.goto('/jobs/new');
      await expect(page.getByRole('heading', { name: t('jobs.submitTitle') })).toBeVisible();
      await expectPhoneFriendly(page, 'job form');

      await openFromMenu(page, locale, t('nav.usage'));
      await expect(page.getByRole('heading', { name: t('usage.title') })).toBeVisible();
      await expectPhoneFriendly(page, 'usage');
    });

    test('the centre dashboard fits a phone', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'admin@centre.example');
      await openFromMenu(page, locale, t('nav.centre'));
      await expect(page).toHaveURL(/\/staff\/centre/);
      await expectPhoneFriendly(page, 'centre dashboard');
    });

    test('wide tables keep their first column in view when scrolled sideways', async ({ page }) => {
      await signIn(page, locale, 'owner@company.example');
      await page.goto('/prices');
      await page.waitForLoadState('networkidle');
      await expectKeyColumnInView(page, 'prices');
      await page.context().clearCookies();
      await signIn(page, locale, 'admin@centre.example');
      for (const [path, what] of [['/staff/tenants', 'tenants'], ['/staff/audit', 'audit log']] as const) {
        await page.goto(path);
        await page.waitForLoadState('networkidle');
        await expectKeyColumnInView(page, what);
        await expectPhoneFriendly(page, what);
      }
    });

    test('the staff planning pages fit a phone', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'admin@centre.example');
      await openFromMenu(page, locale, t('nav.tco'));
      await expect(page.getByRole('heading', { name: t('tco.title') })).toBeVisible();
      await expectPhoneFriendly(page, 'cost per GPU-hour');
      await openFromMenu(page, locale, t('nav.cluster'));
      await expectPhoneFriendly(page, 'cluster');
      await openFromMenu(page, locale, t('nav.whatIf'));
      await expect(page.getByRole('heading', { name: t('whatIf.title') })).toBeVisible();
      await expectPhoneFriendly(page, 'what-if planning');
    });
  });
}
