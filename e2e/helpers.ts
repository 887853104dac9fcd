import { expect, type Page } from '@playwright/test';
import { translate, type Locale, type MessageKey, type MessageParams } from '../server/i18n';

export const DEMO_PASSWORD = 'demo-password';

/** texts returns a translator for the locale the browser runs in, so journeys read like the UI. */
export function texts(locale: Locale) {
  return (key: MessageKey, params?: MessageParams) => translate(locale, key, params);
}

/** unique makes a name that no earlier run used. */
export function unique(prefix: string): string {
  return `${prefix} ${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;
}

export async function signIn(page: Page, locale: Locale, email: string, password = DEMO_PASSWORD) {
  const t = texts(locale);
  await page.goto('/sign-in');
  await page.getByLabel(t('field.email')).fill(email);
  await page.getByLabel(t('field.password')).fill(password);
  await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
}

export async function signOut(page: Page, locale: Locale) {
  await page.getByRole('button', { name: texts(locale)('nav.signOut'), exact: true }).click();
  await expect(page).toHaveURL(/\/sign-in/);
}
