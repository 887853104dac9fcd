import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';
import { translate, type Locale, type MessageKey, type MessageParams } from '../server/i18n';

export const DEMO_PASSWORD = 'demo-password';

/** texts returns a translator for the locale the browser runs in, so journeys read like the UI. */
export function texts(locale: Locale) {
  return (key: MessageKey, params?: MessageParams) => translate(locale, key, params);
}

/** waitingNotice is the start of an application's "waiting for a reviewer" notice, up to its due time (which follows the clock). */
export function waitingNotice(t: ReturnType<typeof texts>, days: number): string {
  const marker = '\u0001';
  return t('application.waiting', { days, due: marker }).split(marker)[0]!;
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

/** signUpInBrowser makes an account and its organisation through the sign-up form; the browser is signed in after it. */
export async function signUpInBrowser(
  page: Page,
  locale: Locale,
  person: { name: string; email: string; password: string; org: { name: string; kind: 'academic' | 'company'; country: string; residency?: 'any' | 'EU' | 'DE' } },
) {
  const t = texts(locale);
  await page.goto('/sign-up');
  await page.getByLabel(t('field.name')).fill(person.name);
  await page.getByLabel(t('field.email')).fill(person.email);
  await page.getByLabel(t('field.password')).fill(person.password);
  await page.getByLabel(t('field.orgName')).fill(person.org.name);
  await page.getByLabel(t('field.orgKind')).selectOption(person.org.kind);
  await page.getByLabel(t('field.country')).selectOption(person.org.country);
  if (person.org.residency) await page.getByLabel(t('field.residency')).selectOption(person.org.residency);
  await page.getByRole('button', { name: t('signUp.submit') }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
}

export async function signOut(page: Page, locale: Locale) {
  await page.getByRole('button', { name: texts(locale)('nav.signOut'), exact: true }).click();
  await expect(page).toHaveURL(/\/sign-in/);
}

// ---- mail: the portal sends to the test SMTP sink (scripts/test-smtp-sink.mjs) ----------------------

export interface SinkMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

const sinkUrl = () => `http://127.0.0.1:${process.env.TEST_SMTP_HTTP_PORT ?? '3902'}/messages`;

/** mailsTo lists what the SMTP sink received for an address so far, oldest first. */
export async function mailsTo(address: string): Promise<SinkMail[]> {
  const response = await fetch(`${sinkUrl()}?to=${encodeURIComponent(address)}`);
  if (!response.ok) throw new Error(`the SMTP sink answered ${response.status}`);
  return (await response.json()) as SinkMail[];
}

/**
 * waitForMail waits until a mail to an address whose text contains `containing` arrived (the worker
 * sends the outbox about once a second) and returns the newest such mail.
 */
export async function waitForMail(address: string, containing: string, timeoutMs = 20_000): Promise<SinkMail> {
  let found: SinkMail | undefined;
  await expect
    .poll(
      async () => {
        found = (await mailsTo(address)).filter((m) => m.text.includes(containing)).at(-1);
        return Boolean(found);
      },
      { timeout: timeoutMs, message: `a mail to ${address} with ${containing}` },
    )
    .toBe(true);
  return found!;
}

/**
 * linkIn pulls the portal link under `path` (such as /reset-password/) out of a mail's text and returns
 * it as a path of the portal, so the browser opens it on the host under test; the HTML part must carry
 * the same link.
 */
export function linkIn(mail: SinkMail, path: string): string {
  const match = new RegExp(`https?://[^\\s/]+(${path}[A-Za-z0-9_-]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in the mail "${mail.subject}"`);
  expect(mail.html).toContain(match[0]);
  return match[1]!;
}

/** openVerificationLink opens the address-check link mailed to a new account and confirms, as its owner would. */
export async function openVerificationLink(page: Page, locale: Locale, email: string): Promise<void> {
  const mail = await waitForMail(email, '/verify-email/');
  await page.goto(linkIn(mail, '/verify-email/'));
  await page.getByRole('button', { name: texts(locale)('verify.confirm') }).click();
  await expect(page.getByText(texts(locale)('verify.done', { email }))).toBeVisible();
}

/** expectNoViolations checks the page as it stands with axe (WCAG 2.1 A/AA), once the network is quiet. */
export async function expectNoViolations(page: Page, what: string) {
  await page.waitForLoadState('networkidle');
  // The pointer off the content and every CSS transition ended: a button that was under the pointer
  // (the link just clicked sat there) is measured in its resting colours, not halfway into its hover.
  await page.mouse.move(0, 0);
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished.catch(() => undefined))));
  // A refresh the page started meanwhile has settled: the network is quiet again and the head is back.
  await page.waitForLoadState('networkidle');
  await page.waitForFunction(() => document.title !== '');
  const found = async () => {
    const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
    return axe.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  };
  let violations = await found();
  if (violations.length > 0) {
    // On a loaded machine a page can hydrate after the network went quiet, fetch, and re-render while axe
    // reads it (CI saw a submit button measured halfway from disabled to enabled). The page at rest decides:
    // a real violation is there again once the network is quiet and every transition has ended.
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(1000);
    await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished.catch(() => undefined))));
    violations = await found();
  }
  expect(violations, `${what}: axe`).toEqual([]);
}

/** pickAllocation chooses the job form's allocation by its project's title (other journeys may have added projects that sort first). */
export async function pickAllocation(page: Page, label: string, projectTitle: string) {
  const select = page.getByLabel(label, { exact: true });
  const value = await select.locator('option', { hasText: projectTitle }).first().getAttribute('value');
  expect(value, `an allocation of "${projectTitle}" in the job form`).toBeTruthy();
  await select.selectOption(value);
}

/**
 * shoot takes full-page screenshots at 1366 and 390 px (phone: no sideways scroll allowed) into
 * E2E_SHOTS_DIR, else `dir`, and leaves the page at 1366 px.
 */
export async function shoot(page: Page, name: string, dir = 'test-results/shots') {
  const folder = process.env.E2E_SHOTS_DIR ?? dir;
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    if (width === 390) {
      const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      expect(scroll, `${name}: the page must not scroll sideways`).toBeLessThanOrEqual(client);
    }
    await page.screenshot({ path: `${folder}/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1366, height: 900 });
}
