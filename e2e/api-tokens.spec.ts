// Personal API tokens from the profile page (issue #13): a researcher makes a token for a script, sees
// it once, uses it against the REST API, and revokes it — after which the API refuses it.
import { expect, test } from '@playwright/test';
import { expectNoViolations, signIn, texts, unique } from './helpers';

for (const locale of ['en', 'de'] as const) {
  const t = texts(locale);
  test.describe(`API tokens (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a token is made on the profile page, shown once, works against the API and stops working when revoked', async ({ page, request }) => {
      await signIn(page, locale, 'member@uni.example');
      await page.goto('/profile');
      const name = unique('notebook');
      const form = page.getByTestId('create-token');
      await form.getByLabel(t('profile.tokenName')).fill(name);
      await form.getByLabel(t('tokenScope.jobs:write')).check();
      await form.getByRole('button', { name: t('profile.tokenCreate') }).click();
      const shown = page.getByTestId('new-token-value');
      await expect(shown).toHaveText(/^afp_[0-9A-Za-z]{36}$/);
      const token = (await shown.textContent())!;
      const row = page.getByTestId('api-token').filter({ hasText: name });
      await expect(row).toContainText(token.slice(0, 10));
      await expect(row).toContainText(t('profile.tokenState.active'));
      await expect(row).toContainText('read jobs:write');
      await expectNoViolations(page, 'the profile page with a new token');

      // Shown once: after a reload only its first characters remain.
      await page.reload();
      await expect(page.getByTestId('new-token-value')).toHaveCount(0);
      await expect(page.locator('body')).not.toContainText(token);

      const answer = await request.get('/api/v1/jobs', { headers: { authorization: `Bearer ${token}`, 'accept-language': locale } });
      expect(answer.status()).toBe(200);
      expect(Array.isArray(((await answer.json()) as { items: unknown }).items)).toBe(true);
      await page.reload();
      await expect(row).not.toContainText(t('profile.tokenNeverUsed'));

      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: t('profile.tokenRevokeLabel', { name }) }).click();
      await expect(row).toContainText(t('profile.tokenState.revoked'));
      const refused = await request.get('/api/v1/jobs', { headers: { authorization: `Bearer ${token}`, 'accept-language': locale } });
      expect(refused.status()).toBe(401);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(t('apiToken.revoked'));
    });
  });
}
