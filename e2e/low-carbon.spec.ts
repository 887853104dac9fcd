// A researcher lets a job wait for cleaner power, in English and German: the form suggests the start in
// the next 24 h with the least CO2e at the job's site and what it saves; submitted with that start, the
// job waits for its begin time, and its page says when it may start and why it waits.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { expectNoViolations, signIn, texts, unique } from './helpers';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`low-carbon start (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('the suggested start becomes the job’s begin', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'pi@uni.example');
      await page.goto('/jobs/new');
      const select = page.getByLabel(t('jobs.allocation'));
      await select.selectOption((await select.locator('option', { hasText: 'Protein structure prediction' }).first().getAttribute('value')) ?? '');
      await page.getByLabel(t('jobs.name')).fill(unique('green'));
      await page.getByLabel(t('jobs.gpus')).fill('8');
      await page.getByLabel(t('jobs.nodes')).fill('1');
      await page.getByLabel(t('jobs.walltime')).fill('4');
      await page.getByTestId('low-carbon-window').selectOption('24');
      const suggestion = page.getByTestId('low-carbon-suggestion');
      await expect(suggestion).toBeVisible();
      // The suggestion depends on the hour the test runs at: when now is already the cleanest start
      // in the day ahead, the form says so and there is no begin to submit (the service's own test
      // covers that branch at fixed times).
      if (!(await page.getByTestId('low-carbon-use').isVisible())) {
        await expect(suggestion).toHaveText(t('jobs.lowCarbon.nowIsBest', { hours: 24 }));
        return;
      }
      await expect(suggestion).toContainText('kg');
      await expect(suggestion).toContainText('%');
      // The suggestion names the zone it speaks (the person's, Europe/Berlin by default), as the job page will.
      const zone = /\(([^()]+)\)/.exec(await suggestion.innerText())?.[1] ?? '';
      expect(['GMT+1', 'GMT+2', 'MEZ', 'MESZ']).toContain(zone);
      await expectNoViolations(page, `job form with a low-carbon suggestion (${locale})`);
      await page.getByTestId('low-carbon-use').check();
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      await expect(page.getByTestId('job-begin')).toBeVisible();
      await expect(page.getByTestId('job-begin')).toHaveText(new RegExp(` ${zone.replace('+', '\\+')}$`));
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'PENDING', { timeout: 20_000 });
      await expect(page.getByText(t('pendingReason.BeginTime')).first()).toBeVisible({ timeout: 20_000 });
      // A waiting job: its output says so in the reader's language, and cancelling offers to keep it waiting, not running.
      await expect(page.getByTestId('job-output-none')).toHaveText(t('jobs.outputWaiting'));
      await page.getByRole('button', { name: t('jobs.cancel') }).click();
      const dialog = page.getByRole('dialog');
      await expect(dialog.getByRole('button', { name: t('jobs.confirmKeepWaiting') })).toBeVisible();
      await expect(dialog.getByRole('button', { name: t('jobs.confirmKeep') })).toHaveCount(0);
      await dialog.getByRole('button', { name: t('jobs.confirmKeepWaiting') }).click();
      await expect(dialog).toBeHidden();
      await expectNoViolations(page, `job waiting for its begin (${locale})`);
    });
  });
}
