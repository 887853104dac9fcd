// The REST API from outside (issue #13): its reference page renders on the server (issue #30: no script,
// no console error, axe clean, en and de),
// and a token made on the profile page estimates, submits (once per Idempotency-Key) and lists a job,
// and downloads the same usage CSV as the usage page — against the built server.
import { expect, test, type Page } from '@playwright/test';
import { expectNoViolations, shoot, signIn, texts, unique } from './helpers';

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

test('the API reference renders its operations on the server: no script of its own, no console error, axe clean, en and de', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await signIn(page, 'en', 'pi@uni.example');
  await page.getByRole('link', { name: t('nav.developers'), exact: true }).first().click();
  await expect(page).toHaveURL(/\/developers\/api$/);
  await expect(page.getByRole('heading', { name: t('developers.startTitle') })).toBeVisible();
  await expect(page.getByLabel('curl', { exact: true })).toContainText('/api/v1/jobs');
  await expect(page.getByLabel('Python')).toContainText('nextCursor');
  const reference = page.getByTestId('api-reference');
  await expect(reference.getByTestId('api-path').filter({ hasText: /^\/jobs\/\{jobId\}$/ }).first()).toBeVisible();
  await expect(reference.getByTestId('api-path').filter({ hasText: /^\/usage\.csv$/ })).toBeVisible();
  // An operation opens from the keyboard and shows its body's fields and a curl line to start from.
  const submit = reference.locator('details', { has: page.getByTestId('api-path').filter({ hasText: /^\/jobs$/ }) }).filter({ hasText: 'POST' });
  await submit.locator('summary').focus();
  await page.keyboard.press('Enter');
  await expect(submit).toHaveAttribute('open', '');
  await expect(submit.getByRole('cell', { name: 'walltimeMinutes', exact: true })).toBeVisible();
  await expect(submit.locator('pre')).toContainText('-H "Idempotency-Key: <a key of yours>"');
  await expect(submit.locator('pre')).toContainText('"walltimeMinutes":1');
  await expectNoViolations(page, 'the API reference');
  await shoot(page, 'developers-api-en');
  await page.goto('/developers/api');
  await expect(page.getByRole('heading', { name: t('developers.startTitle') })).toBeVisible();
  expect(errors).toEqual([]);
});

test.describe('in German', () => {
  test.use({ locale: 'de-DE' });
  test('the API reference in German', async ({ page }) => {
    const de = texts('de');
    await signIn(page, 'de', 'pi@uni.example');
    await page.goto('/developers/api');
    await expect(page.getByRole('heading', { name: de('developers.referenceTitle') })).toBeVisible();
    const estimate = page.getByTestId('api-reference').locator('details', { has: page.getByTestId('api-path').filter({ hasText: /^\/jobs\/estimate$/ }) });
    await estimate.locator('summary').click();
    await expect(estimate.getByRole('heading', { name: de('developers.body') })).toBeVisible();
    await expect(estimate.getByRole('columnheader', { name: de('developers.required') }).first()).toBeVisible();
    await expectNoViolations(page, 'die API-Referenz');
    await shoot(page, 'developers-api-de');
  });
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
