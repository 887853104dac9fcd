// Refusals a user meets in the browser: a wrong password, a staff page opened by a tenant member.
import { expect, test } from '@playwright/test';
import { signIn, texts } from './helpers';

const t = texts('en');

test('a wrong password gives a clear message and no session', async ({ page }) => {
  await page.goto('/sign-in');
  await page.getByLabel(t('field.email')).fill('pi@uni.example');
  await page.getByLabel(t('field.password')).fill('not-the-password');
  await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
  await expect(page.getByRole('alert').filter({ hasText: t('signIn.wrongCredentials') })).toBeVisible();
  await page.goto('/dashboard');
  await expect(page).toHaveURL(/\/sign-in/);
});

test('a tenant member who opens a staff page gets the 403 page', async ({ page }) => {
  await signIn(page, 'en', 'member@uni.example');
  await expect(page.getByRole('link', { name: t('nav.tenants') })).toHaveCount(0);
  const response = await page.goto('/staff/tenants');
  expect(response?.status()).toBe(403);
  await expect(page.getByRole('heading', { name: t('forbidden.title') })).toBeVisible();
  await page.getByRole('link', { name: t('goHome') }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
});

test('an unknown page gets the friendly 404 page', async ({ page }) => {
  const response = await page.goto('/no-such-page');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: t('notFound.title') })).toBeVisible();
});

test('the language switch turns the portal German and keeps it', async ({ page }) => {
  await signIn(page, 'en', 'pi@uni.example');
  await page.getByLabel(t('nav.language')).first().selectOption('de');
  await expect(page.getByRole('heading', { name: texts('de')('dashboard.title') })).toBeVisible();
  await page.reload();
  await expect(page.getByRole('heading', { name: texts('de')('dashboard.title') })).toBeVisible();
});
