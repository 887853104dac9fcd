// A company reads its price list: its own tariff per GPU-hour, the energy and CO2e at each site, and
// which sites its data-residency rule leaves out — in English and in German.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { signIn, texts } from './helpers';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`prices (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('the price list of a company', async ({ page }) => {
      const t = texts(locale);
      const euros = (value: number) => new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(value);
      // Example Robotics GmbH keeps its data in Germany.
      await signIn(page, locale, 'owner@company.example');
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.prices') }).click();
      await expect(page.getByRole('heading', { name: t('prices.title') })).toBeVisible();
      const jena = page.getByTestId('price-h100');
      await expect(jena).toContainText(euros(2.9));
      await expect(jena).toContainText(t('prices.available'));
      // Kajaani (Finland) and Lugano (Switzerland) are outside a Germany-only rule.
      for (const id of ['b200', 'h100-ch']) await expect(page.getByTestId(`price-${id}`)).toContainText(t('prices.excludedByResidency', { rule: t('residency.DE') }));
      await expect(page.getByTestId('price-b200')).toContainText(euros(4.9));
    });
  });
}
