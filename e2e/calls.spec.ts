// Calls and rounds (issue #32), in English and German: the demo centre's Large Scale call with its first
// round closed and decided; an admin opens another call from the review page (a past cut-off is refused
// on its field); an applicant's form says which round a Large Scale request would join now.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { shoot, signIn, texts, unique } from './helpers';

/** A day `days` ahead as "YYYY-MM-DD 17:00", the form's way of writing a cut-off in the browser's time zone. */
function cutoffLine(days: number): string {
  const day = new Date(Date.now() + days * 86_400_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())} 17:00`;
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`calls and rounds (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });
    const t = texts(locale);

    test('an admin sees the rolling call with its closed first round, and opens another call', async ({ page }) => {
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/applications');
      await expect(page.getByRole('heading', { name: t('calls.heading') })).toBeVisible();
      const rolling = page.getByTestId('call').filter({ hasText: 'Large Scale access, rolling call' });
      await expect(rolling).toBeVisible();
      // The demo's three institutes applied in the first round; it closed at its cut-off and was decided.
      const firstRound = rolling.getByTestId('call-round').first();
      await expect(firstRound).toContainText(t('calls.roundClosed'));
      await expect(firstRound.getByRole('cell').nth(2)).toHaveText('3');
      // Its ranking, scored by the demo's panel, is a click away.
      await expect(firstRound.getByRole('link', { name: t('calls.ranking') })).toBeVisible();
      // Later rounds take requests: cut-offs every 15 days, the passed ones closed by the worker.
      await expect(rolling.getByTestId('call-round').filter({ hasText: t('calls.roundOpen') }).first()).toBeVisible();

      const form = page.getByRole('form', { name: t('calls.open') });
      const title = unique(locale === 'de' ? 'Large Scale Sonderrunde' : 'Large Scale special round');
      await form.getByLabel(t('calls.title')).fill(title);
      await form.getByLabel(t('calls.gpuHoursPerRound')).fill('120000');
      // A cut-off in the past is refused on its field, and nothing is opened.
      await form.getByLabel(t('calls.cutoffs')).fill(`${cutoffLine(-3)}\n${cutoffLine(30)}`);
      await form.getByRole('button', { name: t('calls.open') }).click();
      await expect(form.getByLabel(t('calls.cutoffs'))).toHaveAttribute('aria-invalid', 'true');
      await expect(page.getByTestId('call').filter({ hasText: title })).toHaveCount(0);

      await form.getByLabel(t('calls.cutoffs')).fill(`${cutoffLine(30)}\n${cutoffLine(60)}`);
      await form.getByRole('button', { name: t('calls.open') }).click();
      await expect(form.getByText(t('calls.opened'))).toBeVisible();
      const opened = page.getByTestId('call').filter({ hasText: title });
      await expect(opened.getByTestId('call-round')).toHaveCount(2);
      for (const round of await opened.getByTestId('call-round').all()) {
        await expect(round).toContainText(t('calls.roundOpen'));
        await expect(round.getByRole('cell').nth(2)).toHaveText('0');
        await expect(round.getByRole('link', { name: t('calls.ranking') })).toHaveCount(0);
      }
      await shoot(page, `calls-${locale}`);
    });

    test('the application form says which round a Large Scale request joins now', async ({ page }) => {
      await signIn(page, locale, 'pi@uni.example');
      await page.goto('/projects');
      await page.getByRole('link', { name: 'Protein structure prediction with diffusion models' }).click();
      await page.getByRole('link', { name: t('project.apply') }).click();
      const [before] = t('mode.nextCutoff', { date: '\u0000' }).split('\u0000');
      await expect(page.getByTestId('mode-cutoff-large-scale')).toContainText(before!);
      await expect(page.getByText(t('mode.noOpenCall'))).toHaveCount(0);
    });
  });
}
