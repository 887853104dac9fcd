// Jobs in the browser on the simulated cluster (600× speed): submit, watch, cancel, refusals, templates.
import { expect, test, type Page } from '@playwright/test';
import { pickAllocation, signIn, texts, unique, waitForMail } from './helpers';

const t = texts('en');
const nav = (page: Page) => page.getByRole('navigation', { name: t('nav.main') });

async function openSubmitForm(page: Page) {
  await nav(page).getByRole('link', { name: t('nav.jobs') }).click();
  await page.getByRole('link', { name: t('jobs.submitTitle') }).click();
  await expect(page.getByRole('heading', { name: t('jobs.submitTitle') })).toBeVisible();
}

async function chooseAllocation(page: Page, projectTitle: string) {
  const select = page.getByLabel(t('jobs.allocation'));
  const value = await select.locator('option', { hasText: projectTitle }).first().getAttribute('value');
  await select.selectOption(value);
}

async function fillJob(page: Page, job: { name: string; gpus: number; nodes: number; hours: number; kind?: string }) {
  await chooseAllocation(page, 'Protein structure prediction');
  await page.getByLabel(t('jobs.name')).fill(job.name);
  if (job.kind) await page.getByLabel(t('jobs.kind')).selectOption(job.kind);
  await page.getByLabel(t('jobs.gpus')).fill(String(job.gpus));
  await page.getByLabel(t('jobs.nodes')).fill(String(job.nodes));
  await page.getByLabel(t('jobs.walltime')).fill(String(job.hours));
}

const gpuHoursText = (page: Page, testId: string) => page.getByTestId(testId).innerText();

test('a training job goes PENDING → RUNNING → COMPLETED and is charged exactly what it used', async ({ page }) => {
  await signIn(page, 'en', 'pi@uni.example');
  await openSubmitForm(page);
  await fillJob(page, { name: unique('train'), gpus: 4, nodes: 1, hours: 1 });
  const estimate = page.getByTestId('job-estimate');
  await expect(estimate).toContainText('4 GPU-h'); // 4 GPUs × 1 h reserved
  await expect(estimate).toContainText('€7.20'); // at most 4 GPU-h × €1.80
  await expect(estimate).toContainText('kWh');
  await page.getByRole('button', { name: t('jobs.submit') }).click();
  await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', /SUBMITTING|PENDING|RUNNING/);
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
  const timeline = page.getByTestId('timeline');
  for (const state of ['PENDING', 'RUNNING', 'COMPLETED']) await expect(timeline).toContainText(t(`jobState.${state}` as 'jobState.PENDING'));
  const used = await gpuHoursText(page, 'job-gpu-hours');
  await expect(page.getByTestId('job-charged')).toHaveText(used);
  await expect(page.getByTestId('job-output')).toContainText('exit code 0');
  // The allocation's ledger shows the same charge.
  await nav(page).getByRole('link', { name: t('nav.projects') }).click();
  await page.getByRole('link', { name: /Protein structure prediction/ }).click();
  await page.getByRole('listitem').filter({ hasText: t('allocationStatus.active') }).getByRole('link', { name: 'H100 partition (Jena)' }).click();
  await expect(page.getByTestId('ledger-row').filter({ hasText: t('ledgerKind.charge') }).first()).toContainText(used);
});

test('cancelling a pending job releases its reservation; an over-budget job is refused with the numbers', async ({ page }) => {
  await signIn(page, 'en', 'pi@uni.example');
  // Fill the whole H100 partition, then queue a job behind it. Four simulated hours are 24 s at the
  // e2e speed (600×): the rest of this test must happen while it runs, also on a slow machine.
  await openSubmitForm(page);
  await fillJob(page, { name: unique('whole partition'), gpus: 128, nodes: 16, hours: 4 });
  await page.getByRole('button', { name: t('jobs.submit') }).click();
  await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
  const bigJob = page.url();
  // 48 hours, the longest a job may run, so it cannot be backfilled into a gap before the big job
  // starts (a 1-hour job was, when the demo workload held some nodes and the big job had to wait).
  await openSubmitForm(page);
  await fillJob(page, { name: unique('waits'), gpus: 2, nodes: 1, hours: 48 });
  await page.getByRole('button', { name: t('jobs.submit') }).click();
  await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'PENDING');
  await expect(page.getByTestId('pending-reason')).toHaveText(/Waiting for enough free GPUs|higher priority/);
  await page.getByRole('button', { name: t('jobs.cancel') }).click();
  await page.getByRole('dialog').getByRole('button', { name: t('jobs.confirmCancelYes') }).click();
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'CANCELLED', { timeout: 20_000 });
  await expect(page.getByTestId('job-charged')).toHaveText('0 GPU-h');
  await expect(page.getByTestId('timeline')).toContainText(t('job.event.settled'));
  // Stop the big job too; it is charged for the time it ran.
  await page.goto(bigJob);
  await page.getByRole('button', { name: t('jobs.cancel') }).click();
  await page.getByRole('dialog').getByRole('button', { name: t('jobs.confirmCancelYes') }).click();
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'CANCELLED', { timeout: 20_000 });

  await openSubmitForm(page);
  await fillJob(page, { name: unique('too big'), gpus: 64, nodes: 8, hours: 48 });
  await page.getByRole('button', { name: t('jobs.submit') }).click();
  await expect(page.getByRole('alert').filter({ hasText: /Not enough budget: this needs 3,072 GPU-h, [\d,.]+ GPU-h remain/ })).toBeVisible();
  await expect(page).toHaveURL(/\/jobs\/new(\?draft=[0-9a-f-]{36})?$/); // still the form (its draft named in the URL)
});

test('a company fine-tunes from the template: estimate before, actual cost after', async ({ page }) => {
  await signIn(page, 'en', 'owner@company.example');
  await nav(page).getByRole('link', { name: t('nav.jobs') }).click();
  await page.getByRole('link', { name: t('jobs.templateFineTune') }).click();
  await pickAllocation(page, t('jobs.allocation'), 'Warehouse picking vision model');
  await page.getByLabel(t('jobs.modelSize')).fill('7');
  await page.getByLabel(t('jobs.tokens')).fill('0.05');
  const ft = page.getByTestId('fine-tune-estimate');
  await expect(ft).toContainText('6 × 7B parameters × 0.05B tokens');
  await expect(ft).toContainText('walltime is set to 1 h');
  const estimate = page.getByTestId('job-estimate');
  await expect(estimate).toContainText(t('jobs.expectedCost'));
  await expect(estimate).toContainText('€23.20'); // reserves 8 GPUs × 1 h × €2.90
  const expected = await estimate.getByText(/^€[\d.,]+$/).nth(1).innerText();
  await page.getByRole('button', { name: t('jobs.submit') }).click();
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
  await expect(page.getByTestId('job-site')).toHaveText('Jena, Germany (warm-water cooled)');
  const cost = await page.getByTestId('job-cost').innerText();
  expect(cost).toMatch(/^€\d+\.\d\d$/);
  // The actual cost is the expected one ±10 % (the simulated run varies around the estimate).
  const value = (text: string) => Number(text.replace(/[^\d.]/g, ''));
  expect(Math.abs(value(cost) - value(expected))).toBeLessThanOrEqual(value(expected) * 0.11 + 0.01);
  await expect(page.getByTestId('job-charged')).toHaveText(cost);
});

test('a company owner who asks for job mails gets one with the GPU-hours and cost the job page shows', async ({ page }) => {
  await signIn(page, 'en', 'owner@company.example');
  await page.goto('/profile');
  const choices = page.getByTestId('mail-preferences');
  await choices.getByLabel(t('mailKind.job_finished')).check();
  await choices.getByRole('button', { name: t('profile.mailSave') }).click();
  await expect(choices.getByText(t('profile.mailSaved'))).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('mail-preferences').getByLabel(t('mailKind.job_finished'))).toBeChecked();

  await nav(page).getByRole('link', { name: t('nav.jobs') }).click();
  await page.getByRole('link', { name: t('jobs.templateFineTune') }).click();
  await pickAllocation(page, t('jobs.allocation'), 'Warehouse picking vision model');
  const name = unique('mailed fine-tune');
  await page.getByLabel(t('jobs.name')).fill(name);
  await page.getByRole('button', { name: t('jobs.submit') }).click();
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
  const gpuHours = await page.getByTestId('job-gpu-hours').innerText();
  const cost = await page.getByTestId('job-cost').innerText();
  const mail = await waitForMail('owner@company.example', name);
  expect(mail.subject).toBe(`Job ${name}: ${t('jobState.COMPLETED')}`);
  expect(mail.text).toContain(`It used ${gpuHours} and cost ${cost}.`);
  expect(mail.text).toContain(new URL(page.url()).pathname);
});
