// Researchers apply for GPU-hours; reviewers approve (less), reject or ask for changes; the budget appears.
import { expect, test, type Page } from '@playwright/test';
import { signIn, signOut, texts, unique, waitingNotice } from './helpers';

const t = texts('en');
const nav = (page: Page) => page.getByRole('navigation', { name: t('nav.main') });

async function createProject(page: Page, title: string) {
  await nav(page).getByRole('link', { name: t('nav.projects') }).click();
  await expect(page).toHaveURL(/\/projects$/);
  await page.getByRole('link', { name: t('projects.new') }).click();
  await page.getByLabel(t('project.title')).fill(title);
  await page.getByLabel(t('project.abstract')).fill('Training graph neural networks for weather nowcasting on radar data.');
  await page.getByLabel(t('project.field')).fill('Earth and climate sciences');
  await page.getByRole('button', { name: t('projects.create') }).click();
  await expect(page.getByRole('heading', { name: title })).toBeVisible();
}

async function draftApplication(page: Page, mode: 'Playground' | 'Development', hours: number) {
  await page.getByRole('link', { name: t('project.apply') }).click();
  await page.getByText(mode, { exact: true }).click();
  await page.getByLabel(t('application.gpuHoursFor', { name: 'H100 partition (Jena)' })).fill(String(hours));
  await page.getByLabel(t('application.justification'), { exact: true }).fill('Twenty training runs of about 25 GPU-hours each, measured on a pilot.');
}

async function openReview(page: Page, projectTitle: string) {
  await nav(page).getByRole('link', { name: t('nav.reviews') }).click();
  const row = page.getByTestId('queue-row').filter({ hasText: projectTitle });
  await expect(row).toContainText(t('review.ageOfTarget', { age: 0, target: 5 }));
  await row.getByRole('link', { name: projectTitle }).click();
}

test('a Development application for 500 GPU-h is approved with 400 and becomes a budget with a burn-down', async ({ page }) => {
  const title = unique('Radar nowcasting');
  await signIn(page, 'en', 'pi@uni.example');
  await createProject(page, title);
  await draftApplication(page, 'Development', 500);
  await page.getByRole('button', { name: t('application.saveDraft') }).click();
  await expect(page.getByText(t('applicationStatus.draft'), { exact: true }).first()).toBeVisible();
  await page.getByRole('button', { name: t('application.submit') }).click();
  await expect(page.getByText(waitingNotice(t, 5))).toBeVisible();
  await signOut(page, 'en');

  await signIn(page, 'en', 'reviewer@centre.example');
  await openReview(page, title);
  await expect(page.getByRole('cell', { name: '500 GPU-h' })).toBeVisible();
  await page.getByLabel(t('review.grantHours', { name: 'H100 partition (Jena)', hours: 500 })).fill('400');
  await page.getByLabel(t('review.comment')).fill('Approved for the pilot phase; apply for a top-up with results.');
  await page.getByRole('button', { name: t('review.submit.approved') }).click();
  await expect(page).toHaveURL(/\/staff\/applications$/);
  await expect(page.getByTestId('queue-row').filter({ hasText: title })).toHaveCount(0);
  await signOut(page, 'en');

  await signIn(page, 'en', 'pi@uni.example');
  await nav(page).getByRole('link', { name: t('nav.projects') }).click();
  await page.getByRole('link', { name: new RegExp(title) }).click();
  await expect(page.getByRole('heading', { name: title })).toBeVisible();
  await expect(page.getByText(t('allocationStatus.active'), { exact: true })).toBeVisible();
  await page.getByRole('link', { name: 'H100 partition (Jena)' }).click();
  await expect(page.getByTestId('stat-allocation.granted')).toHaveText('400 GPU-h');
  await expect(page.getByTestId('stat-allocation.remaining')).toHaveText('400 GPU-h');
  await expect(page.getByRole('heading', { name: t('allocation.burnDown') })).toBeVisible();
  await expect(page.getByRole('img', { name: /Burn-down: 0 GPU-h \/ 400 GPU-h/ })).toBeVisible();
  await expect(page.getByTestId('ledger-row').first()).toContainText(t('ledgerKind.grant'));
  // The decision and its words are on the application, and the PI was notified.
  await page.getByRole('link', { name: /notifications/i }).click();
  await expect(page.getByTestId('notification').filter({ hasText: 'Approved for the pilot phase' })).toBeVisible();
});

test('a Playground application goes to a reviewer while the university still holds an active Playground allocation, saying why', async ({ page }) => {
  // The demo's nowcasting pilot (Max Member's) is a Playground allocation running until a few days from now:
  // Playground approves at once only once per tenant and period (a first request: e2e/access-modes.spec.ts).
  const title = unique('Playground try-out');
  await signIn(page, 'en', 'pi@uni.example');
  await createProject(page, title);
  await draftApplication(page, 'Playground', 50);
  await page.getByRole('button', { name: t('application.submit') }).click();
  await expect(page.getByText(waitingNotice(t, 5))).toBeVisible();
  await expect(page.getByTestId('review-note')).toContainText(t('application.reviewNoteTitle'));
  await expect(page.getByTestId('decision')).toHaveCount(0);
});

test('rejections and change requests show the reviewer’s words, and a changed application can be resubmitted', async ({ page }) => {
  const rejectTitle = unique('Reject me');
  const changeTitle = unique('Change me');
  await signIn(page, 'en', 'pi@uni.example');
  for (const title of [rejectTitle, changeTitle]) {
    await createProject(page, title);
    await draftApplication(page, 'Development', 300);
    await page.getByRole('button', { name: t('application.submit') }).click();
    await expect(page.getByText(waitingNotice(t, 5))).toBeVisible();
  }
  await signOut(page, 'en');

  await signIn(page, 'en', 'reviewer@centre.example');
  await openReview(page, rejectTitle);
  await page.getByLabel(t('review.outcome.rejected')).check();
  await page.getByRole('button', { name: t('review.submit.rejected') }).click();
  await expect(page.getByText(/Write a comment for the applicants/)).toBeVisible();
  await page.getByLabel(t('review.comment')).fill('The method section does not explain the GPU-hour estimate.');
  await page.getByRole('button', { name: t('review.submit.rejected') }).click();
  await expect(page).toHaveURL(/\/staff\/applications$/);
  await openReview(page, changeTitle);
  await page.getByLabel(t('review.outcome.changes_requested')).check();
  await page.getByLabel(t('review.comment')).fill('Please split the request into a pilot and a production phase.');
  await page.getByRole('button', { name: t('review.submit.changes_requested') }).click();
  await expect(page).toHaveURL(/\/staff\/applications$/);
  await signOut(page, 'en');

  await signIn(page, 'en', 'pi@uni.example');
  await nav(page).getByRole('link', { name: t('nav.projects') }).click();
  await page.getByRole('link', { name: new RegExp(rejectTitle) }).click();
  await expect(page.getByRole('heading', { name: rejectTitle })).toBeVisible();
  await page.getByRole('link', { name: /^Application of / }).click();
  await expect(page.getByText(t('application.rejectedTitle'))).toBeVisible();
  await expect(page.getByText('The method section does not explain the GPU-hour estimate.').first()).toBeVisible();

  await nav(page).getByRole('link', { name: t('nav.projects') }).click();
  await page.getByRole('link', { name: new RegExp(changeTitle) }).click();
  await expect(page.getByRole('heading', { name: changeTitle })).toBeVisible();
  await page.getByRole('link', { name: /^Application of / }).click();
  await expect(page.getByText(t('application.changesRequestedTitle'))).toBeVisible();
  await expect(page.getByText('Please split the request into a pilot and a production phase.').first()).toBeVisible();
  await page.getByLabel(t('application.gpuHoursFor', { name: 'H100 partition (Jena)' })).fill('150');
  await page.getByRole('button', { name: t('application.submit') }).click();
  await expect(page.getByText(waitingNotice(t, 5))).toBeVisible();
});
