// Budgets inside a company (issue #24), in English and German, with the people the issue names: the owner
// of Example Robotics invites a manager and a member, who join through their invitation links. The manager
// creates a project with the member in it and sets its monthly budget of €50 on a fresh credit line; the
// member's job that would pass it is warned on the form before submitting and refused on its walltime; the
// member's job that takes the project to 87 % is admitted and the 80 % alert mail reaches the manager
// through the SMTP sink. The manager sees the spend on the usage page and sets the member's monthly limit.
// Screenshots of the pages changed at 1366 and 390 px go to .screenshots/.
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

/** joinByInvitation opens an invitation link signed out, makes the invited account and signs it out again. */
async function joinByInvitation(page: Page, locale: Locale, link: string, name: string) {
  const t = texts(locale);
  await page.goto(link);
  await page.getByRole('link', { name: t('nav.signUp') }).click();
  await page.getByLabel(t('field.name')).fill(name);
  await page.getByLabel(t('field.password')).fill(PASSWORD);
  await page.getByRole('button', { name: t('signUp.submit') }).click();
  await expect(page).toHaveURL(/\/organisation$/);
  await expect(page.getByRole('cell', { name })).toBeVisible();
  await signOut(page, locale);
}

const PASSWORD = 'a-long-password-1';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`company budgets (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a manager sets a project budget of €50; the member is warned, refused on the walltime, and the manager alerted at 80 %', async ({ page }) => {
      test.setTimeout(240_000);
      const t = texts(locale);
      const title = unique(locale === 'de' ? 'Budgetprojekt' : 'Budget project');
      const stamp = `${Date.now().toString(36)}.${locale}`;
      const manager = { name: `Mara Manager ${stamp}`, email: `mara.${stamp}@company.example` };
      const member = { name: `Mika Member ${stamp}`, email: `mika.${stamp}@company.example` };
      const euros = (n: string) => (locale === 'de' ? `${n.replace('.', ',')} €` : `€${n}`);

      // 1. The owner invites a manager and a member; each joins through the link.
      await signIn(page, locale, OWNER);
      const links: string[] = [];
      for (const [person, role] of [[manager, 'manager'], [member, 'member']] as const) {
        await page.goto('/organisation');
        await page.getByLabel(t('field.email')).fill(person.email);
        await page.getByLabel(t('field.role'), { exact: true }).selectOption(role);
        await page.getByRole('button', { name: t('org.inviteSubmit') }).click();
        await expect(page.getByRole('cell', { name: person.email })).toBeVisible();
        links.push(await page.getByTestId('invitation-link').inputValue());
      }
      await signOut(page, locale);
      await joinByInvitation(page, locale, links[0]!, manager.name);
      await joinByInvitation(page, locale, links[1]!, member.name);

      // 2. The manager makes a project with the member in it; staff give it a credit line of €100.
      await signIn(page, locale, manager.email, PASSWORD);
      await page.goto('/projects/new');
      await page.getByLabel(t('project.title')).fill(title);
      await page.locator('input[name="workloadKind"]').first().check();
      await page.getByLabel(t('project.descriptionCompany')).fill('Fine-tuning a vision model within a budget.');
      await page.getByLabel(t('project.roleOf', { name: member.name })).selectOption('member');
      await page.getByRole('button', { name: t('projects.create') }).click();
      await expect(page.getByRole('heading', { name: title })).toBeVisible();
      await expect(page.getByRole('cell', { name: member.name })).toBeVisible();
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

      // 3. The manager sets a monthly budget of €50.
      await signIn(page, locale, manager.email, PASSWORD);
      await page.goto(projectUrl);
      await page.getByLabel(t('budget.monthly')).fill('50');
      await page.getByLabel(t('budget.costCentre')).fill('CC-4711');
      await page.getByRole('button', { name: t('budget.save') }).click();
      await expect(page.getByText(t('budget.saved'))).toBeVisible();
      await expect(page.getByTestId('project-budget-current')).toHaveText(t('budget.current', { monthly: euros('50.00'), total: t('budget.none') }));
      await expectNoViolations(page, 'project page with its budget');
      await shoot(page, `project-budget-${locale}`);
      await signOut(page, locale);

      // 4. The member: 20 h on one H100 (€58.00) is warned before submitting, then refused on the walltime.
      await signIn(page, locale, member.email, PASSWORD);
      await page.goto(projectUrl);
      // A member sees the budget but may not change it.
      await expect(page.getByTestId('project-budget-current')).toHaveText(t('budget.current', { monthly: euros('50.00'), total: t('budget.none') }));
      await expect(page.getByRole('button', { name: t('budget.save') })).toHaveCount(0);
      await page.goto('/jobs/new');
      const allocation = page.getByLabel(t('jobs.allocation'));
      await allocation.selectOption((await allocation.locator('option', { hasText: title }).first().getAttribute('value')) ?? '');
      await page.getByLabel(t('application.resourceClass')).selectOption('h100');
      await page.getByLabel(t('jobs.name')).fill('over budget');
      await page.getByLabel(t('jobs.gpus')).fill('1');
      await page.getByLabel(t('jobs.nodes')).fill('1');
      await page.getByLabel(t('jobs.walltime')).fill('20');
      await expect(page.getByTestId('reservation-warning')).toContainText(t('jobs.fit.projectMonthly', { needed: euros('58.00'), left: euros('50.00') }));
      await expect(page.getByTestId('job-budget-left')).toHaveText(t('jobs.leftProjectMonthly', { left: euros('50.00') }));
      await expectNoViolations(page, 'job form with a budget warning');
      await shoot(page, `job-form-budget-${locale}`);
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page.getByLabel(t('jobs.walltime'))).toHaveAttribute('aria-invalid', 'true');
      await expect(page.getByText(t('budget.refused.projectMonthly', { limit: 50, needed: 58, remaining: 50 }))).toBeVisible();

      // 5. 15 h (€43.50, 87 %) is admitted; the manager gets the 80 % alert by mail.
      await page.getByLabel(t('jobs.walltime')).fill('15');
      await expect(page.getByTestId('reservation-warning')).toHaveCount(0);
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}/);
      await signOut(page, locale);
      // The manager's mails about this project also tell of the credit line granted: wait for the alert.
      const mail = await waitForMail(manager.email, '80 %');
      expect(mail.text).toContain(title);

      // 6. The manager's usage page shows the project's spend against its budget.
      await signIn(page, locale, manager.email, PASSWORD);
      await page.goto('/usage');
      const row = page.getByTestId('spending-budget').filter({ hasText: title });
      await expect(row).toContainText(t('budget.usage.figure', { spent: euros('43.50'), limit: euros('50.00'), percent: 87 }));
      await expectNoViolations(page, 'usage page with budgets');
      await shoot(page, `usage-budgets-${locale}`);

      // 7. The member's monthly limit on the organisation page: set, shown, then cleared again.
      await page.goto('/organisation');
      const limit = page.getByTestId('spend-limit').filter({ hasText: member.name });
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
