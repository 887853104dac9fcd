// The REST API from outside (issue #13): its reference page renders under the page's strict policy,
// and a token made on the profile page estimates, submits (once per Idempotency-Key) and lists a job,
// and downloads the same usage CSV as the usage page — against the built server.
import { expect, test, type Page } from '@playwright/test';
import { signIn, texts, unique } from './helpers';

const t = texts('en');

async function makeToken(page: Page, scopes: string[]): Promise<string> {
  await page.goto('/profile');
  const form = page.getByTestId('create-token');
  await form.getByLabel(t('profile.tokenName')).fill(unique('script'));
  for (const scope of scopes) await form.getByLabel(t(`tokenScope.${scope}` as never)).check();
  await form.getByRole('button', { name: t('profile.tokenCreate') }).click();
  const shown = page.getByTestId('new-token-value');
  await expect(shown).toHaveText(/^afp_/);
  return (await shown.textContent())!;
}

test('the API reference renders its operations under the page policy, with the examples above it', async ({ page }) => {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Content-Security-Policy/i.test(message.text())) violations.push(message.text());
  });
  await signIn(page, 'en', 'pi@uni.example');
  await page.getByRole('link', { name: t('nav.developers'), exact: true }).first().click();
  await expect(page).toHaveURL(/\/developers\/api$/);
  await expect(page.getByRole('heading', { name: t('developers.startTitle') })).toBeVisible();
  await expect(page.getByLabel('curl')).toContainText('/api/v1/jobs');
  await expect(page.getByLabel('Python')).toContainText('nextCursor');
  const reference = page.getByTestId('api-reference');
  await expect(reference.locator('.opblock-summary-path', { hasText: '/jobs/{jobId}' }).first()).toBeVisible({ timeout: 20_000 });
  await expect(reference.locator('.opblock-summary-path', { hasText: '/usage.csv' })).toBeVisible();
  expect(violations).toEqual([]);
});

test('a token estimates and submits a job once per Idempotency-Key, lists it, and gets the usage page’s CSV', async ({ page }) => {
  await signIn(page, 'en', 'pi@uni.example');
  const token = await makeToken(page, ['jobs:write']);
  const headers = { authorization: `Bearer ${token}` };
  const api = page.request;

  const allocations = (await (await api.get('/api/v1/allocations', { headers })).json()) as { items: { id: string; status: string; unit: string; resourceClassId: string | null; periodEnd: string; balance: { available: number } }[] };
  const today = new Date().toISOString().slice(0, 10);
  const allocation = allocations.items.find((a) => a.status === 'active' && a.unit === 'gpu_seconds' && a.resourceClassId && a.periodEnd > today && a.balance.available > 8 * 3600);
  expect(allocation, 'an active GPU-hour allocation of the demo PI').toBeTruthy();
  const job = { allocationId: allocation!.id, resourceClassId: allocation!.resourceClassId!, gpus: 1, nodes: 1, walltimeMinutes: 30 };

  const estimate = await api.post('/api/v1/jobs/estimate', { headers, data: job });
  expect(estimate.status()).toBe(200);
  const { reservation } = (await estimate.json()) as { reservation: number };

  const key = { ...headers, 'idempotency-key': unique('e2e').replace(/\s/g, '-') };
  const body = { ...job, name: unique('rest e2e'), kind: 'batch', image: 'python:3.12', command: 'python -c "print(1)"' };
  const first = await api.post('/api/v1/jobs', { headers: key, data: body });
  expect(first.status()).toBe(200);
  expect(first.headers()['x-ratelimit-limit']).toBeTruthy();
  expect(first.headers()['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  const { id } = (await first.json()) as { id: string };
  const again = await api.post('/api/v1/jobs', { headers: key, data: body });
  expect(((await again.json()) as { id: string }).id).toBe(id);

  const got = (await (await api.get(`/api/v1/jobs/${id}`, { headers })).json()) as { reservedAmount: number; name: string };
  expect(got).toMatchObject({ name: body.name, reservedAmount: reservation });
  const listed = (await (await api.get('/api/v1/jobs?limit=20', { headers })).json()) as { items: { id: string }[] };
  expect(listed.items.filter((j) => j.id === id)).toHaveLength(1);

  // The same bytes as the usage page's download, which the browser fetches with its session.
  const month = today.slice(0, 7);
  const viaApi = await api.get(`/api/v1/usage.csv?month=${month}`, { headers });
  expect(viaApi.status()).toBe(200);
  const viaPage = await api.get(`/api/reports/usage.csv?month=${month}`);
  expect(viaPage.status()).toBe(200);
  expect((await viaApi.body()).equals(await viaPage.body())).toBe(true);
});
