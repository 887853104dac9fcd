// Walk findings, in English and German: a person chooses their time zone on the profile (keyboard only)
// and the pages then name it; the usage filter offers one kind of period at a time and keeps it in the URL.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { expectNoViolations, signIn, signUpInBrowser, texts, unique } from './helpers';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`walk findings (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a person picks a time zone from the keyboard and the profile names it', async ({ page }) => {
      const t = texts(locale);
      const email = `${unique('tz').replace(/\s+/g, '-').toLowerCase()}@example.org`;
      await signUpInBrowser(page, locale, { name: 'Zoe Zone', email, password: 'a-long-enough-password', org: { name: unique('Zone Org'), kind: 'company', country: 'DE' } });
      await page.goto('/profile');
      const select = page.getByLabel(t('profile.timeZoneLabel'));
      await expect(select).toHaveValue('Europe/Berlin');
      // The session started a moment ago: shown in Berlin time, named.
      await expect(page.getByTestId('session').first()).toContainText(locale === 'de' ? /ME(S)?Z/ : /GMT\+[12]/);
      await select.focus();
      await select.selectOption('America/New_York');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await expect(page.getByText(t('profile.timeZoneSaved', { zone: 'America/New_York' }))).toBeVisible();
      await page.reload();
      await expect(page.getByLabel(t('profile.timeZoneLabel'))).toHaveValue('America/New_York');
      await expect(page.getByTestId('session').first()).toContainText(/E[SD]T|GMT-[45]/);
      await expectNoViolations(page, `profile with a time zone (${locale})`);
    });

    test('the usage filter shows one kind of period at a time, from the keyboard, and the URL keeps it', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'owner@company.example');
      await page.goto('/usage');
      const kind = page.getByRole('group', { name: t('usage.periodType') });
      await expect(kind.getByRole('radio', { name: t('usage.month') })).toBeChecked();
      await expect(page.locator('input[name="month"]')).toBeVisible();
      await expect(page.getByRole('textbox', { name: t('usage.quarter') })).toHaveCount(0);
      await expect(page.locator('input[name="from"]')).toHaveCount(0);
      // Arrow keys move between the kinds, as radio buttons do.
      await kind.getByRole('radio', { name: t('usage.month') }).focus();
      await page.keyboard.press('ArrowRight');
      await expect(kind.getByRole('radio', { name: t('usage.quarter') })).toBeChecked();
      await expect(page.locator('input[name="month"]')).toHaveCount(0);
      const quarter = page.getByRole('textbox', { name: t('usage.quarter') });
      await quarter.fill('2026-Q3');
      await quarter.press('Enter');
      await expect(page).toHaveURL(/[?&]mode=quarter&quarter=2026-Q3&groupBy=project$/);
      await expect(kind.getByRole('radio', { name: t('usage.quarter') })).toBeChecked();
      await expect(page.getByRole('textbox', { name: t('usage.quarter') })).toHaveValue('2026-Q3');
      await kind.getByRole('radio', { name: t('usage.range') }).check();
      await expect(page.locator('input[name="from"]')).toBeVisible();
      await expect(page.locator('input[name="to"]')).toBeVisible();
      await expect(page.getByRole('textbox', { name: t('usage.quarter') })).toHaveCount(0);
      await expectNoViolations(page, `usage filter (${locale})`);
    });
  });
}
