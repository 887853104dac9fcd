// Every page a company and the centre's staff use, at a desktop width: axe (WCAG 2.1 A/AA) finds nothing.
// The phone-sized run is e2e/phone.spec.ts.
import { test, type Page } from '@playwright/test';
import { expectNoViolations, signIn } from './helpers';

test.use({ viewport: { width: 1366, height: 900 } });

/** visit opens a page (or the first entry of a list page) and checks it. */
async function visit(page: Page, path: string, firstLink?: RegExp) {
  await page.goto(path);
  if (firstLink) {
    await page.getByRole('main').getByRole('link', { name: firstLink }).first().click();
    await page.waitForURL((url) => url.pathname !== path);
  }
  await expectNoViolations(page, firstLink ? `${path} → ${page.url()}` : path);
}

test('a company’s pages have no accessibility violations', async ({ page }) => {
  test.setTimeout(180_000); // 13 pages through axe: 1–1.5 min on a quiet machine, 2.1 min once beside the Slurm tier
  await signIn(page, 'en', 'owner@company.example');
  for (const path of ['/dashboard', '/jobs', '/jobs/new', '/usage', '/prices', '/organisation', '/projects', '/invoices', '/notifications', '/profile']) await visit(page, path);
  await visit(page, '/jobs', /^(fine-tuning|inference|batch|training)-/);
  await visit(page, '/invoices', /^INV-/);
  await visit(page, '/projects', /Warehouse picking vision model/);
});

test('the centre staff’s pages have no accessibility violations', async ({ page }) => {
  test.setTimeout(200_000); // 15 pages through axe: 1–1.5 min on a quiet machine, 2.3 min once beside the Slurm tier
  await signIn(page, 'en', 'admin@centre.example');
  for (const path of ['/staff/centre', '/staff/applications', '/staff/cluster', '/staff/allocations', '/staff/invoices', '/staff/tenants', '/staff/audit', '/staff/mail', '/staff/reports']) await visit(page, path);
  await visit(page, '/staff/applications', /Alemannic/);
  // The demo's first Large Scale round: its ranking, scored by the panel (issue #32).
  await visit(page, '/staff/applications', /^Ranking$/);
  await visit(page, '/staff/tenants', /^Example Robotics GmbH$/);
});
