// The portal works from the keyboard alone: sign in, reach a page through the navigation, apply.
import { expect, test } from '@playwright/test';
import { DEMO_PASSWORD, texts } from './helpers';

const t = texts('en');

test('signing in and moving around with the keyboard only', async ({ page }) => {
  await page.goto('/sign-in');
  await page.keyboard.type('pi@uni.example'); // the e-mail field has focus on arrival
  await page.keyboard.press('Tab');
  await page.keyboard.type(DEMO_PASSWORD);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/dashboard$/);
  // The skip link comes first, then the navigation.
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: t('nav.skipToContent') })).toBeFocused();
  const projects = page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.projects') });
  for (let i = 0; i < 10 && !(await projects.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
  await expect(projects).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/projects$/);
  // The access modes of the application form are radio buttons: arrow keys choose, and the choice is visible.
  await page.getByRole('link', { name: /Protein structure prediction/ }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('link', { name: t('project.apply') }).focus();
  await page.keyboard.press('Enter');
  const development = page.getByRole('radio', { name: /Development/ });
  await development.focus();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('radio', { name: /Large Scale/ })).toBeChecked();
});
