// A company serves its fine-tuned model and calls it from its own software (issue #29), in English and in
// German: it starts the model as a service from the job form, makes a token with the scope `inference`
// naming the project that pays, runs the job page's curl and Python snippets as they are shown, makes a
// large call, and finds the calls' tokens and euros on the usage page — the amount the invoice staff
// issue then bills on its model-call line.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { openVerificationLink, shoot, signIn, signOut, signUpInBrowser, texts, unique } from './helpers';

const run = promisify(execFile);
const PASSWORD = 'a-long-password-1';

/** python runs a snippet with python3: with the official client where it is installed, else with the stand-in of its chat API (e2e/fixtures/python). */
async function python(snippet: string, env: Record<string, string>): Promise<string> {
  const installed = await run('python3', ['-c', 'import openai']).then(
    () => true,
    () => false,
  );
  const pythonPath = installed ? {} : { PYTHONPATH: path.join(import.meta.dirname, 'fixtures', 'python') };
  const { stdout } = await run('python3', ['-c', snippet], { env: { ...process.env, ...env, ...pythonPath }, timeout: 60_000 });
  return stdout;
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`models behind the gateway (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a company serves its model, calls it with the page’s snippets, and sees the tokens and euros the invoice bills', async ({ page }) => {
      test.setTimeout(180_000);
      const t = texts(locale);
      const nav = () => page.getByRole('navigation', { name: t('nav.main') });
      const stamp = `${Date.now()}.${locale}`;
      const company = { orgName: unique('Saale Sprachmodelle GmbH'), email: `owner.${stamp}@saale.example` };
      const model = `saale/support-7b-${stamp.replace(/\./g, '-')}`;

      // 1. The company signs up, the centre verifies it, its owner fills in the billing profile and accepts the price list.
      await signUpInBrowser(page, locale, { name: `Owner of ${company.orgName}`, email: company.email, password: PASSWORD, org: { name: company.orgName, kind: 'company', country: 'DE', residency: 'EU' } });
      await openVerificationLink(page, locale, company.email);
      await page.goto('/dashboard');
      await signOut(page, locale);
      await signIn(page, locale, 'admin@centre.example');
      await nav().getByRole('link', { name: t('nav.tenants') }).click();
      const tenantRow = page.getByTestId(`tenant-row-${company.orgName}`);
      await tenantRow.getByRole('button', { name: `${t('staff.tenants.verify')} ${company.orgName}` }).click();
      await tenantRow.getByLabel(t('staff.tenants.reasonFor', { action: t('staff.tenants.verify').toLowerCase(), org: company.orgName })).fill('Commercial register entry checked');
      await tenantRow.getByRole('button', { name: t('staff.tenants.verify'), exact: true }).click();
      await expect(tenantRow.getByText(t('status.active'))).toBeVisible();
      await signOut(page, locale);
      await signIn(page, locale, company.email, PASSWORD);
      await nav().getByRole('link', { name: t('nav.organisation') }).click();
      const billing = page.getByRole('form', { name: t('billing.title') });
      await billing.getByLabel(t('billing.legalName')).fill(company.orgName);
      await billing.getByLabel(t('billing.street')).fill('Markt 1');
      await billing.getByLabel(t('billing.postcode')).fill('07743');
      await billing.getByLabel(t('billing.city')).fill('Jena');
      await billing.getByLabel(t('billing.email')).fill(`accounts.${stamp}@example.org`);
      await billing.getByLabel(t('billing.vatId')).fill('DE136695976');
      await billing.getByRole('button', { name: t('billing.save') }).click();
      await expect(page.getByText(t('billing.saved'))).toBeVisible();
      await nav().getByRole('link', { name: t('nav.prices') }).click();
      await page.getByRole('button', { name: t('payg.accept') }).click();
      await expect(page.getByText(t('payg.done', { credit: new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(1000) }))).toBeVisible();

      // 2. Its fine-tuned model as a service: the job page names the endpoint and the model, with snippets.
      await nav().getByRole('link', { name: t('nav.jobs') }).click();
      await page.getByRole('link', { name: t('jobs.submitTitle') }).click();
      await page.getByLabel(t('jobs.name'), { exact: true }).fill('support bot');
      await page.getByLabel(t('jobs.kind'), { exact: true }).selectOption('inference');
      await page.getByLabel(t('jobs.servedModel'), { exact: true }).fill(model);
      await page.getByLabel(t('jobs.gpus'), { exact: true }).fill('1');
      await page.getByLabel(t('jobs.nodes'), { exact: true }).fill('1');
      await page.getByLabel(t('jobs.walltime'), { exact: true }).fill('24');
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      const jobPath = new URL(page.url()).pathname;
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'RUNNING', { timeout: 30_000 });
      await expect(page.getByTestId('job-model')).toHaveText(model);

      // 3. A token with the scope `inference`, paid from the company's project.
      await page.goto('/profile');
      const form = page.getByTestId('create-token');
      await form.getByLabel(t('profile.tokenName')).fill('support bot backend');
      await form.getByLabel(t('tokenScope.inference')).check();
      await expect(form.getByLabel(t('profile.tokenProject'))).toHaveValue(/[0-9a-f-]{36}/);
      await form.getByRole('button', { name: t('profile.tokenCreate') }).click();
      const token = (await page.getByTestId('new-token-value').textContent())!;
      expect(token).toMatch(/^afp_[0-9A-Za-z]{36}$/);
      await expect(page.getByTestId('api-token').filter({ hasText: 'support bot backend' })).toContainText(t('profile.tokenPaysFrom', { project: 'Pay as you go' }));

      // 4. The snippets work as shown: curl, and Python.
      await page.goto(jobPath);
      // The service's server may still be starting: a 503 asks to try again in a few seconds.
      const curl = await page.getByTestId('service-curl').innerText();
      let answer: { choices?: { message: { content: string } }[] } = {};
      await expect
        .poll(
          async () => {
            answer = JSON.parse((await run('bash', ['-c', curl], { env: { ...process.env, PORTAL_TOKEN: token }, timeout: 30_000 })).stdout) as typeof answer;
            return answer.choices?.[0]?.message.content.length ?? 0;
          },
          { timeout: 30_000 },
        )
        .toBeGreaterThan(0);
      const printed = await python(await page.getByTestId('service-python').innerText(), { PORTAL_TOKEN: token });
      expect(printed.trim().length).toBeGreaterThan(0);

      // 5. A large call from the company's software: 120,000 tokens to embed (€0.10 per million: a cent and more).
      const embedded = await page.request.post('/api/v1/openai/v1/embeddings', {
        headers: { authorization: `Bearer ${token}` },
        data: { model, input: Array.from({ length: 30 }, (_, i) => `ticket${i} `.repeat(4000)) },
      });
      expect(embedded.status()).toBe(200);
      const used = ((await embedded.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
      expect(used).toBe(120_000);

      // The job page counts the calls it served.
      await page.reload();
      expect(Number((await page.getByTestId('job-requests').innerText()).replace(/\D/g, ''))).toBe(3);
      await shoot(page, `inference-service-${locale}`, 'test-results/inference');

      // 6. The usage page: the calls' tokens and euros.
      await nav().getByRole('link', { name: t('nav.usage') }).click();
      const row = page.getByTestId('usage-model-row').filter({ hasText: model });
      await expect(row).toBeVisible();
      expect(Number((await row.getByTestId('tokens-in').innerText()).replace(/\D/g, ''))).toBeGreaterThan(used);
      const charged = await row.getByTestId('charged').innerText();
      expect(charged).toMatch(/€/);
      expect(Number(charged.replace(/\D/g, ''))).toBeGreaterThanOrEqual(1);
      await shoot(page, `inference-usage-${locale}`, 'test-results/inference');

      // 7. The service stops; staff close the month so far; the invoice bills the model calls at that amount.
      await page.goto(jobPath);
      await page.getByRole('button', { name: t('jobs.stopService') }).click();
      await page.getByRole('dialog', { name: t('jobs.confirmStopTitle') }).getByRole('button', { name: t('jobs.confirmStopYes') }).click();
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 20_000 });
      await signOut(page, locale);
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/invoices');
      const issue = page.locator('form').filter({ has: page.getByLabel(t('invoice.issueOne.tenant')) });
      await issue.getByLabel(t('invoice.issueOne.tenant')).selectOption({ label: company.orgName });
      const closing = issue.getByLabel(t('invoice.issueOne.closing'));
      if (!(await closing.isChecked())) await closing.check();
      await issue.getByRole('button', { name: t('invoice.issueOne.submit') }).click();
      await expect(issue.getByRole('status')).toHaveText(new RegExp(t('invoice.issueOne.issued', { number: 'INV-\\d{4}-\\d{6}' })));
      await signOut(page, locale);
      await signIn(page, locale, company.email, PASSWORD);
      await nav().getByRole('link', { name: t('nav.invoices') }).click();
      await page.getByRole('link', { name: /^INV-/ }).first().click();
      const line = page.getByRole('row').filter({ hasText: t('invoice.line.tokens', { model }) });
      await expect(line).toBeVisible();
      await expect(line.getByRole('cell').nth(5)).toHaveText(charged);
      await expect(line).toContainText(t('invoice.perMTokens', { input: locale === 'de' ? '0,10' : '0.10', output: locale === 'de' ? '0,40' : '0.40' }));
      await signOut(page, locale);
    });
  });
}
