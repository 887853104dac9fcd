// Budgets inside a company (issue #24), in English and German: the owner sets a project's monthly budget
// of €50 on a fresh credit line; a job that would pass it is warned on the form before submitting and
// refused on its walltime; a job that takes the project to 87 % is admitted and the 80 % alert mail
// arrives through the SMTP sink. Screenshots of the pages changed at 1366 and 390 px go to .screenshots/.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { expectNoViolations, signIn, signOut, texts, unique, waitForMail } from './helpers';

const OWNER = 'owner@company.example';

async function shoot(page: Page, name: string) {
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    // No sideways scroll at phone width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${width} px`).toBeLessThanOrEqual(width);
    await page.screenshot({ path: `.screenshots/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`company budgets (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a project budget of €50 warns, refuses on the walltime, and alerts at 80 %', async ({ page }) => {
      test.setTimeout(180_000);
      const t = texts(locale);
      const title = unique(locale === 'de' ? 'Budgetprojekt' : 'Budget project');

      // 1. The owner makes a project; staff give it a credit line of €100.
      await signIn(page, locale, OWNER);
      await page.goto('/projects/new');
      await page.getByLabel(t('project.title')).fill(title);
      await page.locator('input[name="workloadKind"]').first().check();
      await page.getByLabel(t('project.descriptionCompany')).fill('Fine-tuning a vision model within a budget.');
      await page.getByRole('button', { name: t('projects.create') }).click();
      await expect(page.getByRole('heading', { name: title })).toBeVisible();
      const projectUrl = page.url();
      await signOut(page, locale);
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/allocations');
      const grant = page.locator('form').filter({ has: page.getByLabel(t('credit.project')) });
      const projectId = await grant.getByLabel(t('credit.project')).locator('option', { hasText: title }).getAttribute('value');
      await grant.getByLabel(t('credit.project')).selectOption(projectId ?? '');
      await grant.getByLabel(t('credit.amount')).fill('100');
      await grant.getByLabel(t('common.reason')).fill('Budget journey');
      await grant.getByRole('button', { name: t('credit.submit') }).click();
      await expect(page.getByText(t('credit.done'))).toBeVisible();
      await signOut(page, locale);

      // 2. The owner sets a monthly budget of €50.
      await signIn(page, locale, OWNER);
      await page.goto(projectUrl);
      await page.getByLabel(t('budget.monthly')).fill('50');
      await page.getByLabel(t('budget.costCentre')).fill('CC-4711');
      await page.getByRole('button', { name: t('budget.save') }).click();
      await expect(page.getByText(t('budget.saved'))).toBeVisible();
      await expect(page.getByTestId('project-budget-current')).toHaveText(t('budget.current', { monthly: locale === 'de' ? '50,00 €' : '€50.00', total: t('budget.none') }));
      await expectNoViolations(page, 'project page with its budget');
      await shoot(page, `project-budget-${locale}`);

      // 3. 20 h on one H100 (€58.00) is warned before submitting, then refused on the walltime.
      await page.goto('/jobs/new');
      const allocation = page.getByLabel(t('jobs.allocation'));
      await allocation.selectOption((await allocation.locator('option', { hasText: title }).first().getAttribute('value')) ?? '');
      await page.getByLabel(t('application.resourceClass')).selectOption('h100');
      await page.getByLabel(t('jobs.name')).fill('over budget');
      await page.getByLabel(t('jobs.gpus')).fill('1');
      await page.getByLabel(t('jobs.nodes')).fill('1');
      await page.getByLabel(t('jobs.walltime')).fill('20');
      const euros = (n: string) => (locale === 'de' ? `${n.replace('.', ',')} €` : `€${n}`);
      await expect(page.getByTestId('reservation-warning')).toContainText(t('jobs.fit.projectMonthly', { needed: euros('58.00'), left: euros('50.00') }));
      await expect(page.getByTestId('job-budget-left')).toHaveText(t('jobs.leftProjectMonthly', { left: euros('50.00') }));
      await expectNoViolations(page, 'job form with a budget warning');
      await shoot(page, `job-form-budget-${locale}`);
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page.getByLabel(t('jobs.walltime'))).toHaveAttribute('aria-invalid', 'true');
      await expect(page.getByText(t('budget.refused.projectMonthly', { limit: 50, needed: 58, remaining: 50 }))).toBeVisible();

      // 4. 15 h (€43.50, 87 %) is admitted; the owner gets the 80 % alert by mail.
      await page.getByLabel(t('jobs.walltime')).fill('15');
      await expect(page.getByTestId('reservation-warning')).toHaveCount(0);
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}/);
      const mail = await waitForMail(OWNER, title);
      expect(mail.text).toContain('80 %');

      // 5. The usage page shows the project's spend against its budget.
      await page.goto('/usage');
      const row = page.getByTestId('spending-budget').filter({ hasText: title });
      await expect(row).toContainText(t('budget.usage.figure', { spent: euros('43.50'), limit: euros('50.00'), percent: 87 }));
      await expectNoViolations(page, 'usage page with budgets');
      await shoot(page, `usage-budgets-${locale}`);

      // 6. A person's monthly limit on the organisation page: set, shown, then cleared again.
      await page.goto('/organisation');
      const limit = page.getByTestId('spend-limit').filter({ hasText: 'Olivia Owner' });
      await limit.getByRole('spinbutton').fill('1000');
      await limit.getByRole('button', { name: t('budget.people.save') }).click();
      await expect(limit.getByText(t('budget.saved'))).toBeVisible();
      await expect(limit.getByRole('spinbutton')).toHaveValue('1000');
      await expectNoViolations(page, 'organisation page with monthly limits');
      await shoot(page, `organisation-limits-${locale}`);
      await limit.getByRole('spinbutton').fill('');
      await limit.getByRole('button', { name: t('budget.people.save') }).click();
      await expect(limit.getByRole('spinbutton')).toHaveValue('');
    });
  });
}
