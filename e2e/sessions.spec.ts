// Interactive sessions (issue #28), in English and German, on the simulated cluster of the embedded
// default: a PI starts a Jupyter session from the Notebooks page with its cost shown first; it goes
// Starting → Running with an Open button once the app answers (a real Jupyter on this machine); the job
// page offers the same button; ending it ends the job, charged as a job.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { expectNoViolations, shoot, signIn, texts } from './helpers';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`interactive sessions (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB', viewport: { width: 1366, height: 900 } });
    const t = texts(locale);

    test('a Jupyter session starts, opens once its app answers, and ends charged as a job', async ({ page }) => {
      test.setTimeout(150_000);
      await signIn(page, locale, 'pi@uni.example');
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.apps') }).click();
      await expect(page.getByRole('heading', { name: t('sessions.title') })).toBeVisible();
      const form = page.getByRole('form').or(page.locator('form')).first();
      await form.getByLabel(t('sessions.allocation')).selectOption({ label: 'Protein structure prediction with diffusion models' });
      await form.getByLabel(t('sessions.gpus')).fill('1');
      await form.getByLabel(t('sessions.hours')).fill('4');
      await form.getByLabel(t('sessions.idle')).fill('60');
      // The reservation before starting: 1 GPU × 4 h.
      await expect(page.getByTestId('session-estimate')).toContainText(new Intl.NumberFormat(locale).format(4));
      await expectNoViolations(page, 'notebooks page');
      await form.getByRole('button', { name: t('sessions.start') }).click();

      const row = page.getByTestId('session-row').first();
      await expect(row).toHaveAttribute('data-ready', 'true', { timeout: 60_000 });
      await expect(row).toHaveAttribute('data-state', 'RUNNING');
      await expect(row.getByRole('link', { name: t('sessions.open') })).toHaveAttribute('href', /^\/sessions\/[0-9a-f-]{36}\/$/);
      await shoot(page, `sessions-${locale}`, 'test-results/sessions');

      // The job page says the same and offers the same button.
      await row.getByRole('link', { name: 'Jupyter Notebook' }).click();
      await expect(page.getByTestId('session-open')).toBeVisible();
      await expect(page.getByTestId('session-panel')).toContainText(t('sessions.idleAfter', { minutes: 60 }));
      await shoot(page, `session-job-${locale}`, 'test-results/sessions');
      await page.goBack();

      // Ending it: the job ends and is charged what it ran.
      await page.getByTestId('session-row').first().getByRole('button', { name: t('sessions.end') }).click();
      await expect(page.getByTestId('session-row').first()).toHaveAttribute('data-state', /COMPLETED|CANCELLED/, { timeout: 60_000 });
    });
  });
}
