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
