// Staff give a company project a credit line and adjust a budget, from the browser: a bad amount is
// refused on its field, a good one lands in the ledger, and the balance shown moves by exactly it; a
// credit line's adjustment shows the tenant's cap and keeps it for a cut.
import { expect, test } from '@playwright/test';
import { signIn, texts } from './helpers';

const t = texts('en');
const euros = (text: string) => Number(text.replace(/[^\d.-]/g, ''));

test('a staff admin grants a credit line, then adjusts it; a bad amount is refused on its field', async ({ page }) => {
  await signIn(page, 'en', 'admin@centre.example');
  await page.goto('/staff/allocations');
  const grant = page.locator('form').filter({ has: page.getByLabel(t('credit.project')) });
  const option = grant.getByLabel(t('credit.project')).locator('option', { hasText: 'Warehouse picking vision model' });
  const projectId = await option.getAttribute('value');
  expect(projectId).toMatch(/^[0-9a-f-]{36}$/);
  await grant.getByLabel(t('credit.project')).selectOption(projectId ?? '');
  await grant.getByLabel(t('common.reason')).fill('Second framework contract');

  // Nothing asked for: refused on the amount, nothing granted.
  await grant.getByRole('button', { name: t('credit.submit') }).click();
  await expect(grant.getByLabel(t('credit.amount'))).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText(t('credit.done'))).toHaveCount(0);

  await grant.getByLabel(t('credit.amount')).fill('750');
  await grant.getByRole('button', { name: t('credit.submit') }).click();
  await expect(page.getByText(t('credit.done'))).toBeVisible();
  await expect(grant.getByLabel(t('credit.amount'))).toHaveValue(''); // the form starts afresh

  // The new line is in the list; its page shows €750 granted, and an adjustment of −€50 leaves €700.
  await page.reload();
  const row = page.getByRole('row').filter({ hasText: 'Example Robotics GmbH' }).filter({ hasText: '€750.00' });
  await row.getByRole('link').first().click();
  await expect(page.getByTestId('stat-allocation.granted')).toHaveText('€750.00');
  const adjust = page.locator('form').filter({ has: page.getByLabel(t('adjust.amountEuros')) });
  // A credit line's adjustment shows the tenant's cap and spend; a cut offers the cap as it is.
  await expect(adjust.getByTestId('credit-tenant-figures')).toContainText('Example Robotics GmbH');
  const capNow = euros(await adjust.getByTestId('credit-cap-now').innerText());
  await adjust.getByLabel(t('adjust.amountEuros')).fill('-50');
  await expect(adjust.getByLabel(t('credit.capField'))).toHaveValue(String(capNow));
  await adjust.getByLabel(t('common.reason')).fill('Correction: contract says €700');
  await adjust.getByRole('button', { name: t('adjust.submit') }).click();
  await expect(page.getByText(t('adjust.done'))).toBeVisible();
  await expect(page.getByTestId('stat-allocation.granted')).toHaveText('€700.00');
  expect(euros(await page.getByTestId('stat-allocation.remaining').innerText())).toBe(700);
});
