// Staff open the TCO page from the navigation in English and German: each partition shows its cost per
// delivered GPU-hour at the measured utilisation, the tariffs' break-even; a what-if utilisation typed
// and submitted with the keyboard adds a column and stays in the address; no accessibility violations.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { formatBasisPoints } from '../server/i18n/format';
import { expectNoViolations, signIn, texts } from './helpers';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`TCO per GPU-hour (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('cost per GPU-hour at the measured and a what-if utilisation, beside the tariffs', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'admin@centre.example');
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.tco') }).click();
      await expect(page.getByRole('heading', { name: t('tco.title') })).toBeVisible();

      // The demo catalogue configures every figure: the H100 partition shows a total in euros per GPU-hour.
      const total = page.getByTestId('tco-h100-measured-total');
      await expect(total).toContainText('€');
      await expect(total).toContainText('GPU-h');
      // At 100 % an H100 hour in Jena costs less than the company tariff, so it breaks even below that.
      await expect(page.getByTestId('tco-h100-break-even-company')).toContainText('%');
      await expect(page.getByTestId('tco-h100-break-even-company')).not.toHaveText(t('tco.tariffs.never'));
      await expectNoViolations(page, `TCO page (${locale})`);

      // The what-if utilisation, by keyboard only.
      const field = page.getByLabel(t('tco.form.whatIf'));
      await field.focus();
      await page.keyboard.type('70');
      await page.keyboard.press('Enter');
      await expect(page).toHaveURL(/whatIf=70/);
      await expect(page.getByTestId('tco-h100-whatIf-total')).toContainText('€');
      await expect(page.getByRole('columnheader', { name: t('tco.breakdown.atWhatIf', { utilisation: formatBasisPoints(locale, 7000) }) }).first()).toBeVisible();
      await expectNoViolations(page, `TCO page with a what-if (${locale})`);
    });
  });
}
