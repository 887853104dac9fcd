// Access modes keep their meaning and companies get forms that fit them (issue #10), in English and
// German: a second Playground request goes to a reviewer and says why; a company's project form asks
// what it wants to run; a company owner asks for a larger credit line and a staff admin approves it.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { openVerificationLink, signIn, signOut, signUpInBrowser, texts, unique, waitingNotice } from './helpers';

const nav = (page: Page, locale: Locale) => page.getByRole('navigation', { name: texts(locale)('nav.main') });

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`access modes (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });
    const t = texts(locale);

    async function playground(page: Page, hours: number) {
      await page.getByRole('link', { name: t('project.apply') }).click();
      // The AI Factory modes with their sizes and how they take requests (issue #32).
      await expect(page.getByRole('radio', { name: /Fast Lane/ })).toBeAttached();
      await expect(page.getByText(t('mode.from', { hours: 50_001 }))).toBeVisible();
      await expect(page.getByText(t('mode.rounds', { days: 10 }))).toBeVisible();
      await page.getByText('Playground', { exact: true }).click();
      await page.getByLabel(t('application.gpuHoursFor', { name: locale === 'de' ? 'H100-Partition (Jena)' : 'H100 partition (Jena)' })).fill(String(hours));
      await page.getByLabel(t('application.justification'), { exact: true }).fill('A first look at the partition with a small training run.');
      await page.getByRole('button', { name: t('application.submit') }).click();
    }

    test('a second Playground request in the same period goes to a reviewer, and the applicant sees why', async ({ page }) => {
      // A new research group: academic tenants are active at once.
      const orgName = unique('Playground Lab');
      const email = `pi.${Date.now()}.${locale}@playground-lab.example`;
      await signUpInBrowser(page, locale, { name: 'Pia Playground', email, password: 'a-long-password-1', org: { name: orgName, kind: 'academic', country: 'DE', residency: 'any' } });
      await openVerificationLink(page, locale, email);
      await page.goto('/dashboard');

      // Academic tenants keep the research form: abstract and field of science.
      const title = unique('Try-outs');
      // Each click waits for its page: a click on the next link while the last navigation is still under
      // way could be overtaken by it (the run then stayed on /projects).
      await nav(page, locale).getByRole('link', { name: t('nav.projects') }).click();
      await expect(page).toHaveURL(/\/projects$/);
      await page.getByRole('link', { name: t('projects.new') }).click();
      await expect(page).toHaveURL(/\/projects\/new$/);
      await expect(page.getByLabel(t('project.title'))).toBeVisible();
      await expect(page.getByLabel(t('project.workload'))).toHaveCount(0);
      await page.getByLabel(t('project.title')).fill(title);
      await page.getByLabel(t('project.abstract')).fill('Small experiments before a real proposal.');
      await page.getByLabel(t('project.field')).fill('Physics');
      await page.getByRole('button', { name: t('projects.create') }).click();
      await expect(page.getByRole('heading', { name: title })).toBeVisible();

      await playground(page, 50);
      await expect(page.getByText(t('application.approvedTitle'))).toBeVisible();
      await page.getByRole('link', { name: title }).click();
      await expect(page.getByRole('heading', { name: title })).toBeVisible();

      await playground(page, 40);
      await expect(page.getByText(waitingNotice(t, 5))).toBeVisible();
      await expect(page.getByTestId('review-note')).toContainText(t('application.reviewNoteTitle'));
      await expect(page.getByTestId('review-note')).toContainText(t('application.reviewNote.instantOnceActive', { mode: 'Playground', until: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(Date.now() + 30 * 86_400_000)), days: 5 }));
      await signOut(page, locale);

      // The reviewer sees it marked in the queue, and the same note on the review page.
      await signIn(page, locale, 'reviewer@centre.example');
      await nav(page, locale).getByRole('link', { name: t('nav.reviews') }).click();
      const row = page.getByTestId('queue-row').filter({ hasText: title });
      await expect(row).toContainText(t('review.repeatInstant'));
      await expect(row).toContainText(t('review.ageOfTarget', { age: 0, target: 5 }));
      await row.getByRole('link', { name: title }).click();
      await expect(page.getByTestId('review-note')).toBeVisible();
    });

    test('a company’s project form asks what it wants to run, not for a scientific goal', async ({ page }) => {
      await signIn(page, locale, 'owner@company.example');
      await nav(page, locale).getByRole('link', { name: t('nav.projects') }).click();
      await expect(page).toHaveURL(/\/projects$/);
      await page.getByRole('link', { name: t('projects.new') }).click();
      await expect(page.getByText(t('projects.newIntroCompany'))).toBeVisible();
      await expect(page.getByLabel(t('project.field'))).toHaveCount(0);
      const title = unique('Parcel detector');
      await page.getByLabel(t('project.title')).fill(title);
      // Example Robotics keeps its data in Germany: no looser choice is offered.
      const residency = page.getByLabel(t('project.dataResidency'));
      await expect(residency.locator('option')).toHaveText([t('residency.DE')]);
      await page.getByLabel(t('project.descriptionCompany')).fill('Fine-tuning a 7B vision-language model on 200,000 labelled parcel images.');
      await page.getByRole('button', { name: t('projects.create') }).click();
      await expect(page.getByText(t('project.workloadRequired'))).toBeVisible();
      await page.getByRole('radio', { name: t('workload.fine_tuning') }).check();
      await page.getByRole('button', { name: t('projects.create') }).click();
      await expect(page.getByRole('heading', { name: title })).toBeVisible();
      await expect(page.getByText(`${t('workload.fine_tuning')} · ${t('residency.DE')}`)).toBeVisible();

      // The application form asks the company to describe its workload.
      await page.getByRole('link', { name: t('project.apply') }).click();
      await expect(page.getByLabel(t('application.workloadDescription'), { exact: true })).toBeVisible();
      await expect(page.getByText(t('application.justificationHint'))).toHaveCount(0);
    });

    test('a company owner asks for a larger credit line and a staff admin approves it in the review queue', async ({ page }) => {
      const euros = locale === 'en' ? 30_000 : 40_000;
      const amount = new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(euros);
      await signIn(page, locale, 'owner@company.example');
      await nav(page, locale).getByRole('link', { name: t('nav.organisation') }).click();
      const card = page.locator('section').filter({ has: page.getByRole('heading', { name: t('creditRequest.title') }) });
      await card.getByLabel(t('creditRequest.amount')).fill(String(euros));
      await card.getByLabel(t('creditRequest.reason')).fill('A second product line starts fine-tuning in January.');
      await card.getByRole('button', { name: t('creditRequest.submit') }).click();
      await expect(card.getByText(t('creditRequest.done'))).toBeVisible();
      const mine = card.getByTestId('credit-request').first();
      await expect(mine).toContainText(t('creditRequest.status.submitted'));
      await expect(mine).toContainText(amount);
      await signOut(page, locale);

      await signIn(page, locale, 'admin@centre.example');
      await nav(page, locale).getByRole('link', { name: t('nav.reviews') }).click();
      const row = page.getByTestId('credit-request-row').filter({ hasText: 'Example Robotics GmbH' });
      await expect(row).toContainText(amount);
      await row.getByRole('button', { name: t('review.creditApprove') }).click();
      await expect(row).toHaveCount(0);
      await signOut(page, locale);

      await signIn(page, locale, 'owner@company.example');
      await nav(page, locale).getByRole('link', { name: t('nav.organisation') }).click();
      const decided = page.getByTestId('credit-request').first();
      await expect(decided).toContainText(t('creditRequest.status.approved'));
      await expect(page.getByRole('combobox', { name: t('creditRequest.line') }).locator('option').first()).toContainText(amount);
    });
  });
}
