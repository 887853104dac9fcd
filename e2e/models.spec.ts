// The centre's shared models (issue #29), in English and in German: an admin starts a replica of a
// catalogue model on the Models page, a company finds it there with its price per million tokens, where it
// is served and how to call it, and the admin stops the replica again.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { expectNoViolations, shoot, signIn, signOut, texts } from './helpers';

const LLAMA = { id: 'centre/llama-3.1-8b-instruct', name: 'Llama 3.1 8B Instruct' };

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`shared models (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('an admin starts a shared model, a company sees its price and where it runs, the admin stops it', async ({ page }) => {
      test.setTimeout(150_000);
      const t = texts(locale);
      const nav = () => page.getByRole('navigation', { name: t('nav.main') });
      const replicas = () => page.getByTestId(`replicas-${LLAMA.id}`);

      // 1. The admin starts a replica of Llama on its first class (Jena's H100s) and sees it run.
      await signIn(page, locale, 'admin@centre.example');
      await nav().getByRole('link', { name: t('nav.models') }).click();
      await expect(page.getByRole('heading', { name: t('models.title'), level: 1 })).toBeVisible();
      const before = await replicas().getByRole('listitem').count();
      await replicas().getByRole('button', { name: t('models.startAria', { model: LLAMA.name }) }).click();
      await expect(replicas().getByRole('listitem')).toHaveCount(before + 1);
      await expect(async () => {
        await page.reload();
        await expect(page.getByTestId(`shared-model-${LLAMA.id}`).getByText(t('models.siteReplicas', { site: locale === 'de' ? 'Jena, Deutschland (Warmwasserkühlung)' : 'Jena, Germany (warm-water cooled)', count: before + 1 }))).toBeVisible({ timeout: 2_000 });
      }).toPass({ timeout: 90_000 });
      await signOut(page, locale);

      // 2. A company reads its price (its kind's only), where the model runs, and how to call it.
      await signIn(page, locale, 'owner@company.example');
      await nav().getByRole('link', { name: t('nav.models') }).click();
      const row = page.getByTestId(`shared-model-${LLAMA.id}`);
      await expect(row.getByText(LLAMA.id)).toBeVisible();
      await expect(row.getByText(locale === 'de' ? '0,15 € / 0,45 €' : '€0.15 / €0.45')).toBeVisible();
      await expect(page.getByRole('columnheader', { name: t('models.price') })).toBeVisible();
      await expect(page.getByRole('columnheader', { name: t('models.calls24h') })).toHaveCount(0);
      // No replica's job or button for a tenant.
      await expect(page.getByTestId(`replicas-${LLAMA.id}`)).toHaveCount(0);
      await expect(page.getByTestId('service-curl')).toContainText(`"model":"${LLAMA.id}"`);
      await expect(page.getByTestId('service-python')).toContainText('/api/v1/openai/v1');
      await expectNoViolations(page, `models page (${locale})`);
      await shoot(page, `models-${locale}`);
      await signOut(page, locale);

      // 3. The admin stops the replica it started: it leaves the list once it has ended.
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/models');
      await stopAll(page, locale);
      await expect(async () => {
        await page.reload();
        await expect(replicas().getByRole('listitem')).toHaveCount(0, { timeout: 2_000 });
      }).toPass({ timeout: 60_000 });
    });
  });
}

/** stopAll stops every replica of Llama listed. */
async function stopAll(page: Page, locale: Locale) {
  const t = texts(locale);
  const stop = page.getByTestId(`replicas-${LLAMA.id}`).getByRole('button', { name: t('models.stopAria', { model: LLAMA.name }) });
  for (let n = await stop.count(); n > 0; n--) {
    await stop.first().click();
    await page.waitForLoadState('networkidle');
  }
}
