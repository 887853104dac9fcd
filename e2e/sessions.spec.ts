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
      // The e2e cluster's clock runs 600× (scripts/e2e-server.mjs): 24 hours and a 1,440-minute idle time-out last 144 s here.
      await form.getByLabel(t('sessions.hours')).fill('24');
      await form.getByLabel(t('sessions.idle')).fill('1440');
      // The reservation before starting: 1 GPU × 24 h.
      await expect(page.getByTestId('session-estimate')).toContainText(`${new Intl.NumberFormat(locale).format(24)} GPU-h`);
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
      await expect(page.getByTestId('session-panel')).toContainText(t('sessions.idleAfter', { minutes: 1440 }));
      // More time: an hour more (the choice offered first after 30 minutes), reserved before it is asked
      // (1 GPU × 1 h), then on the job's timeline.
      const extend = page.getByTestId('session-extend');
      await expect(extend.getByLabel(t('sessions.extendBy'))).toHaveValue('60');
      await expect(extend).toContainText(t('sessions.extendCost', { cost: `${new Intl.NumberFormat(locale).format(1)} GPU-h` }));
      await shoot(page, `session-job-${locale}`, 'test-results/sessions');
      await extend.getByRole('button', { name: t('sessions.extend') }).click();
      await expect(page.getByTestId('timeline')).toContainText(t('session.event.extended', { hours: 1, total: 25, by: '' }).split(' (')[0]!);
      await page.goBack();

      // Ending it: the job ends and is charged what it ran.
      await page.getByTestId('session-row').first().getByRole('button', { name: t('sessions.end'), exact: true }).click();
      await expect(page.getByTestId('session-row').first()).toHaveAttribute('data-state', /COMPLETED|CANCELLED/, { timeout: 60_000 });
    });
  });
}

test.describe('a Jupyter session through the portal’s proxy', () => {
  test.use({ locale: 'en-GB', viewport: { width: 1366, height: 900 } });
  const t = texts('en');

  test('a notebook runs 1+1 over the proxied WebSocket; others get 404 or the sign-in; idle, it ends and is charged; the usage page shows it', async ({ page, browser, context }) => {
    test.setTimeout(240_000);
    await signIn(page, 'en', 'pi@uni.example');
    await page.goto('/apps');
    const form = page.locator('form').first();
    await form.getByLabel(t('sessions.allocation')).selectOption({ label: 'Protein structure prediction with diffusion models' });
    await form.getByLabel(t('sessions.gpus')).fill('1');
    // 48 hours and 120 idle minutes on the e2e cluster's clock (600×, scripts/e2e-server.mjs): 288 s and 12 s here.
    await form.getByLabel(t('sessions.hours')).fill('48');
    await form.getByLabel(t('sessions.idle')).fill('120');
    await form.getByRole('button', { name: t('sessions.start') }).click();
    const row = page.getByTestId('session-row').first();
    await expect(row).toHaveAttribute('data-ready', 'true', { timeout: 60_000 });
    const href = (await row.getByRole('link', { name: t('sessions.open') }).getAttribute('href'))!;
    const jobId = /^\/sessions\/([0-9a-f-]{36})\/$/.exec(href)![1]!;

    // Opened: Jupyter's own page, through the portal; its token never in the page or the address.
    const [notebookTree] = await Promise.all([context.waitForEvent('page'), row.getByRole('link', { name: t('sessions.open') }).click()]);
    await notebookTree.waitForLoadState();
    await expect(notebookTree).toHaveURL(new RegExp(`/sessions/${jobId}/tree`));
    expect(notebookTree.url()).not.toContain('token=');
    // A new notebook from the tree page's New menu, in a tab of its own.
    await notebookTree.locator('#new-dropdown-button').click();
    const [notebook] = await Promise.all([context.waitForEvent('page'), notebookTree.locator('#new-menu a', { hasText: /Python 3/ }).first().click()]);
    await notebook.waitForLoadState();
    await expect(notebook).toHaveURL(new RegExp(`/sessions/${jobId}/notebooks/Untitled.*\\.ipynb`));
    // The kernel answers over the WebSocket through the proxy: 1+1 is 2.
    await expect(notebook.locator('#kernel_indicator_icon.kernel_idle_icon')).toBeAttached({ timeout: 60_000 });
    await notebook.locator('.CodeMirror').first().click();
    await notebook.keyboard.type('1+1');
    await notebook.keyboard.press('Shift+Enter');
    await expect(notebook.locator('.output_area .output_subarea').first()).toHaveText('2', { timeout: 30_000 });
    const html = await notebook.content();
    expect(html).not.toMatch(/token=[A-Za-z0-9_-]{20,}/);

    // Another tenant's person and a colleague in the same tenant: not found. Signed out: the sign-in page.
    for (const email of ['owner@company.example', 'member@uni.example']) {
      const other = await browser.newContext({ locale: 'en-GB' });
      const otherPage = await other.newPage();
      await signIn(otherPage, 'en', email);
      const answer = await otherPage.goto(href);
      expect(answer?.status(), email).toBe(404);
      await other.close();
    }
    const anonymous = await browser.newContext({ locale: 'en-GB' });
    const anonymousPage = await anonymous.newPage();
    await anonymousPage.goto(href);
    await expect(anonymousPage).toHaveURL(/\/sign-in/);
    await anonymous.close();

    // Left alone, the session ends after its idle time-out and is charged as a job.
    await notebook.close();
    await notebookTree.close();
    await page.goto(`/jobs/${jobId}`);
    await expect(page.getByText(t('job.event.sessionIdle', { minutes: 120 }))).toBeVisible({ timeout: 120_000 });
    await expect(page.getByTestId('job-state').first()).toHaveAttribute('data-state', 'COMPLETED', { timeout: 60_000 });
    // The usage page by kind has interactive sessions.
    await page.goto('/usage?groupBy=kind');
    await expect(page.getByRole('main')).toContainText(t('jobKind.interactive'));
  });
});
