// Usage, cost and energy in the browser: a company's report and CSV, a PI's scope, the centre dashboard.
import fs from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { JOB_CSV_COLUMNS } from '../server/services/usage/reports';
import { signIn, texts } from './helpers';

const t = texts('en');
const nav = (page: Page) => page.getByRole('navigation', { name: t('nav.main') });

/**
 * A month the demo's history fills: this month from its 8th day on, else last month (the history
 * ends six hours before the server started, so in a month's first days this month is still empty).
 */
function recentMonth(): string {
  return new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 7);
}

/** openUsage goes to the usage page through the menu, then to the month the demo's history fills. */
async function openUsage(page: Page) {
  await nav(page).getByRole('link', { name: t('nav.usage') }).click();
  await expect(page.getByRole('heading', { name: t('usage.title') })).toBeVisible();
  await page.goto(`/usage?month=${recentMonth()}`);
}

test('a company owner sees a month’s usage chart and table and downloads the CSV', async ({ page }) => {
  await signIn(page, 'en', 'owner@company.example');
  await openUsage(page);
  await expect(page.getByRole('img', { name: t('usage.overTime') })).toBeVisible();
  const rows = page.getByTestId('usage-job');
  await expect(rows.first()).toBeVisible();
  const shown = await rows.count();
  const jobsStat = Number((await page.getByTestId('usage-usage.jobs').innerText()).replace(/[^\d]/g, ''));
  expect(jobsStat).toBeGreaterThan(0);
  await expect(page.getByTestId('usage-group').first()).toContainText('Warehouse picking vision model');

  const downloadPromise = page.waitForEvent('download');
  await page.getByRole('link', { name: t('usage.downloadCsv') }).click();
  const download = await downloadPromise;
  expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-01-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = fs.readFileSync((await download.path()), 'utf8');
  expect(csv.startsWith('\uFEFF')).toBe(true); // UTF-8 with a byte-order mark, for spreadsheet programs
  const [header, ...lines] = csv.slice(1).trimEnd().split('\r\n');
  expect(header).toBe(JOB_CSV_COLUMNS.join(','));
  expect(lines).toHaveLength(jobsStat);
  expect(lines.length).toBeGreaterThanOrEqual(Math.min(shown, 200));
  const first = lines[0]!.split(',');
  expect(first[JOB_CSV_COLUMNS.indexOf('project')]).toBe('Warehouse picking vision model');
  expect(Number(first[JOB_CSV_COLUMNS.indexOf('gpu_seconds')])).toBeGreaterThan(0);
  expect(Number(first[JOB_CSV_COLUMNS.indexOf('cost_cents')])).toBeGreaterThan(0);
});

test('a PI who is not an owner sees only the projects they lead', async ({ page }) => {
  await signIn(page, 'en', 'member@uni.example');
  await openUsage(page);
  const groups = page.getByTestId('usage-group');
  await expect(groups).toHaveCount(1);
  await expect(groups.first()).toContainText('Graph neural networks for weather nowcasting');
  await expect(page.getByText('Protein structure prediction')).toHaveCount(0);
});

test('a company owner opens last month’s invoice and sees its total', async ({ page }) => {
  await signIn(page, 'en', 'owner@company.example');
  await nav(page).getByRole('link', { name: t('nav.invoices') }).click();
  const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1));
  const label = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(lastMonth);
  const row = page.getByRole('row').filter({ hasText: label });
  await expect(row).toHaveCount(1);
  await row.getByRole('link').first().click();
  await expect(page.getByRole('article').getByText(t('invoice.grossTotal'))).toBeVisible();
  const euros = async (id: string) => Number((await page.getByTestId(id).innerText()).replace(/[^\d.]/g, ''));
  const [net, vat, gross] = [await euros('invoice-net'), await euros('invoice-vat'), await euros('invoice-gross')];
  expect(net).toBeGreaterThan(0);
  expect(Math.round(net * 0.19 * 100) / 100).toBeCloseTo(vat, 2);
  expect(Math.round((net + vat) * 100) / 100).toBeCloseTo(gross, 2);
  await expect(page.getByRole('button', { name: t('invoice.print') })).toBeVisible();
});

test('staff open the centre dashboard and see the utilisation chart', async ({ page }) => {
  await signIn(page, 'en', 'admin@centre.example');
  await nav(page).getByRole('link', { name: t('nav.centre') }).click();
  await expect(page.getByRole('img', { name: /utilisation/i }).first()).toBeVisible();
  // And one tenant's usage, cost and energy.
  await nav(page).getByRole('link', { name: t('nav.tenants') }).click();
  await page.getByRole('link', { name: 'Example Robotics GmbH' }).click();
  await expect(page.getByRole('heading', { name: 'Example Robotics GmbH' })).toBeVisible();
  // It opens on this month, which in a month's first days the demo's history has not reached yet.
  await page.goto(`${new URL(page.url()).pathname}?month=${recentMonth()}`);
  await expect(page.getByRole('img', { name: t('usage.overTime') })).toBeVisible();
  await expect(page.getByTestId('usage-group').first()).toContainText('Warehouse picking vision model');
});
