// What an attacker meets from the browser side: security headers on pages and API answers, a strict
// Content-Security-Policy that the portal's own pages run under without a single violation, sign-in
// redirects that never leave the site, and cross-site or oversized API calls refused.
import { expect, test } from '@playwright/test';
import { signIn, signOut, texts } from './helpers';

const t = texts('en');

test('pages and API answers carry the security headers, and pages run under their CSP without violations', async ({ page, request }) => {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Content-Security-Policy/i.test(message.text())) violations.push(message.text());
  });
  const response = await page.goto('/sign-in');
  const headers = response!.headers();
  const csp = headers['content-security-policy'] ?? '';
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("object-src 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  expect(headers['permissions-policy']).toContain('camera=()');
  // Every script of the page carries this response's nonce.
  const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
  const scripts = await page.locator('script').evaluateAll((nodes) => nodes.map((n) => (n as HTMLScriptElement).nonce));
  expect(scripts.length).toBeGreaterThan(0);
  for (const n of scripts) expect(n).toBe(nonce);
  // A fresh nonce per answer.
  const again = await request.get('/sign-in');
  expect(again.headers()['content-security-policy']).not.toContain(`'nonce-${nonce}'`);

  // The portal's own pages work under the policy: sign in, open pages with charts and forms.
  await signIn(page, 'en', 'owner@company.example');
  for (const path of ['/dashboard', '/jobs', '/usage', '/jobs/new']) {
    await page.goto(path);
    await expect(page.locator('main')).toBeVisible();
  }
  expect(violations).toEqual([]);

  const api = await request.get('/api/health');
  expect(api.headers()['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(api.headers()['x-content-type-options']).toBe('nosniff');
  // A kept-alive connection is announced shorter (60 s) than the server holds it (65 s, scripts/server.mjs).
  expect(api.headers()['keep-alive']).toBe('timeout=60');
});

test('sign-in never redirects off the site, however the address is dressed up', async ({ page }) => {
  await signIn(page, 'en', 'pi@uni.example');
  for (const target of ['/\\evil.example/', '/%09/evil.example', '//evil.example', 'https://evil.example/', '/%5Cevil.example']) {
    await page.goto(`/sign-in?callbackUrl=${target}`);
    await expect(page).toHaveURL((url) => url.host === new URL(page.url()).host && !url.host.includes('evil'));
    expect(new URL(page.url()).hostname).not.toContain('evil');
  }
  await page.goto('/sign-in?callbackUrl=/usage');
  await expect(page).toHaveURL(/\/usage$/);
  await expect(page.getByRole('heading', { name: t('usage.title') })).toBeVisible();
});

test('the API refuses a cross-site mutation and an oversized body before reading it', async ({ page, baseURL }) => {
  await signIn(page, 'en', 'pi@uni.example');
  const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const body = JSON.stringify({ 0: { json: { invitationId: '00000000-0000-4000-8000-000000000000' } } });
  const crossSite = await fetch(`${baseURL}/api/trpc/organisation.revokeInvitation?batch=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookies, origin: 'https://evil.example' },
    body,
  });
  expect(crossSite.status).toBe(403);
  expect(JSON.stringify(await crossSite.json())).toContain(t('error.crossOrigin'));
  const huge = await fetch(`${baseURL}/api/trpc/job.submit?batch=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookies, origin: baseURL! },
    body: JSON.stringify({ 0: { json: { name: 'x'.repeat(2 * 1024 * 1024) } } }),
  });
  expect(huge.status).toBe(413);
  const manyCalls = Array.from({ length: 30 }, () => 'account.me').join(',');
  const batch = await fetch(`${baseURL}/api/trpc/${manyCalls}?batch=1&input=${encodeURIComponent('{}')}`, { headers: { cookie: cookies } });
  expect(batch.status).toBe(400);
  const malformed = await fetch(`${baseURL}/api/trpc/job.submit?batch=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookies, origin: baseURL! },
    // superjson turns this into an object that contains itself.
    body: JSON.stringify({ 0: { json: { name: {} }, meta: { referentialEqualities: { name: ['name.name'] } } } }),
  });
  expect(malformed.status).toBe(400);
  const answer = await malformed.text();
  expect(answer).toContain(t('error.malformedRequest'));
  expect(answer).not.toContain('Maximum call stack');
});

test('the 11th wrong password in a minute gets 429 with Retry-After, the right one too, until an admin lifts the lock', async ({ page, request, baseURL }) => {
  // An account of its own, so no other journey meets the lock.
  const email = `locked-${Date.now()}@example.org`;
  const password = 'correct-horse-battery';
  const created = await request.post('/api/trpc/account.signUp?batch=1', {
    headers: { origin: baseURL!, 'content-type': 'application/json' },
    data: { 0: { json: { name: 'Lock Test', email, password, organisation: { name: `Lock Test ${Date.now()}`, kind: 'academic', country: 'DE', residency: 'any' } } } },
  });
  expect(created.ok()).toBe(true);
  const attempt = async (secret: string) => {
    const { csrfToken } = (await (await request.get('/api/auth/csrf')).json()) as { csrfToken: string };
    return request.post('/api/auth/callback/credentials', { form: { email, password: secret, csrfToken, json: 'true', callbackUrl: '/dashboard' } });
  };
  for (let i = 1; i <= 10; i++) expect((await attempt('wrong-password')).status(), `wrong password ${i}`).toBe(401);
  const eleventh = await attempt('wrong-password');
  expect(eleventh.status()).toBe(429);
  expect(Number(eleventh.headers()['retry-after'])).toBeGreaterThanOrEqual(55);
  expect((await attempt(password)).status()).toBe(429);

  // The sign-in form says what happened and for how long.
  await page.goto('/sign-in');
  await page.getByLabel(t('field.email')).fill(email);
  await page.getByLabel(t('field.password')).fill(password);
  await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
  await expect(page.getByRole('alert').filter({ hasText: t('signIn.lockedOut', { minutes: 1 }) })).toBeVisible();

  // An admin lifts it (with a reason, audited); the right password works again.
  await signIn(page, 'en', 'admin@centre.example');
  await page.goto('/staff/tenants');
  const form = page.locator('section', { has: page.getByRole('heading', { name: t('staff.lockout.title') }) });
  await form.getByLabel(t('field.email')).fill(email);
  await form.getByLabel(t('common.reason')).fill('Identity checked on the phone');
  await form.getByRole('button', { name: t('staff.lockout.submit') }).click();
  await expect(page.getByRole('status').filter({ hasText: t('staff.lockout.lifted', { email }) })).toBeVisible();
  expect((await attempt(password)).status()).toBe(200);
});

test('signing out ends the session: the old cookie is refused, and the account page shows where one is signed in', async ({ browser, baseURL }) => {
  const laptop = await browser.newContext();
  const page = await laptop.newPage();
  await signIn(page, 'en', 'member@uni.example');
  const cookies = await laptop.cookies();
  const asLaptop = () => fetch(`${baseURL}/api/trpc/account.me?batch=1`, { headers: { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') } });
  expect((await asLaptop()).status).toBe(200);

  // A second browser of the same person; the account page lists both and marks this one.
  const phone = await browser.newContext();
  const other = await phone.newPage();
  await signIn(other, 'en', 'member@uni.example');
  await page.goto('/profile');
  await expect(page.getByRole('heading', { name: t('profile.sessionsTitle') })).toBeVisible();
  expect(await page.getByTestId('session').count()).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId('session').filter({ hasText: t('profile.thisSession') })).toHaveCount(1);

  await signOut(page, 'en');
  const replayed = await asLaptop();
  expect(replayed.status).toBe(401);
  // The old cookie in a browser lands on the sign-in page.
  const thief = await browser.newContext();
  await thief.addCookies(cookies);
  const stolen = await thief.newPage();
  await stolen.goto('/dashboard');
  await expect(stolen).toHaveURL(/\/sign-in/);

  // The other browser is still in, and can sign out everywhere else.
  await other.goto('/profile');
  await expect(other.getByTestId('session').filter({ hasText: t('profile.thisSession') })).toHaveCount(1);
  await Promise.all([laptop.close(), phone.close(), thief.close()]);
});
