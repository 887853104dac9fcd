// Staff plan with the centre's own history, in English and German: a what-if run with 8 more H100 nodes
// is queued from the form by keyboard, the worker replays the last 90 days while the page shows its
// progress, and the side-by-side table then shows no longer waits on the larger machine; the current
// machine's p90 wait is the one the history really had (the sentence above the table says it too).
// No accessibility violations on the form or the result.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { formatDuration } from '../server/i18n/format';
import { expectNoViolations, signIn, texts } from './helpers';

/** Seconds from a duration as formatDuration writes it ("2 h 5 min 3 s"). */
function secondsOf(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/(\d+)\s*(h|min|s)\b/g)) total += Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'min' ? 60 : 1);
  return total;
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`what-if planning (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('8 more H100 nodes: replayed in the worker, compared side by side', async ({ page }) => {
      test.setTimeout(120_000);
      const t = texts(locale);
      await signIn(page, locale, 'admin@centre.example');
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.whatIf') }).click();
      await expect(page.getByRole('heading', { name: t('whatIf.title') })).toBeVisible();
      await expect(page.getByLabel(t('whatIf.field.class'))).toHaveValue('h100');
      await expectNoViolations(page, `what-if form (${locale})`);

      const name = `8 more H100 nodes (${locale})`;
      await page.getByLabel(t('whatIf.form.name')).fill(name);
      await page.getByLabel(t('whatIf.field.delta')).fill('8');
      await page.getByLabel(t('whatIf.field.delta')).press('Enter');

      await expect(page.getByRole('heading', { name })).toBeVisible();
      await expect(page.getByRole('columnheader', { name: t('whatIf.table.proposed') }).first()).toBeVisible({ timeout: 90_000 });
      const cells = async (key: string) => page.getByTestId(`whatif-${key}`).locator('td').allInnerTexts();
      const [gpusNow, gpusProposed] = await cells('gpus');
      expect(Number(gpusProposed!.replace(/\D/g, '')) - Number(gpusNow!.replace(/\D/g, ''))).toBe(64);
      const [p90Now, p90Proposed] = (await cells('p90')).map(secondsOf);
      const [meanNow, meanProposed] = (await cells('mean')).map(secondsOf);
      expect(p90Proposed).toBeLessThanOrEqual(p90Now!);
      expect(meanProposed).toBeLessThan(meanNow!);
      // The current machine waits as the history did: the same p90 in the sentence and in the table.
      await expect(page.getByTestId('whatif-history')).toContainText(`p90 ${formatDuration(p90Now!)}`);
      // Classes and sites go by their names in the reader's language, not by their ids.
      const jena = locale === 'de' ? 'H100-Partition (Jena) · Jena, Deutschland (Warmwasserkühlung)' : 'H100 partition (Jena) · Jena, Germany (warm-water cooled)';
      await expect(page.getByRole('rowheader', { name: jena })).toBeVisible();
      await expectNoViolations(page, `what-if result (${locale})`);

      // Listed as done with its change.
      await page.getByRole('link', { name: t('whatIf.run.back') }).click();
      const row = page.getByRole('row', { name: new RegExp(name.replace(/[()]/g, '\\$&')) });
      await expect(row).toContainText(t('whatIf.status.done'));
      await expect(row).toContainText('h100: +8');
    });
  });
}
