// Single sign-on through a real OpenID Provider (scripts/test-oidc-provider.mjs, started by
// playwright.config.ts): a newcomer's account from the provider accepts an invitation; an existing
// password account links its provider identity only with its password; staff require single sign-on
// of a tenant and its member's password sign-in is refused, naming the organisation.
import { expect, test, type Page } from '@playwright/test';
import { expectNoViolations, signIn, signOut, signUpInBrowser, texts, unique } from './helpers';

const t = texts('en');
const PROVIDER = 'Test IdP';
const LINKED_EMAIL = 'linked@idp.test';
const LINKED_PASSWORD = 'a-long-password-1';

/** At the provider's own login page: a username and password it checks. */
async function loginAtProvider(page: Page, username: string, password: string) {
  await expect(page).toHaveURL(/127\.0\.0\.1:\d+\/interaction\//);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Continue' }).click();
}

test.describe.serial('single sign-on (en)', () => {
  test.use({ locale: 'en-GB' });
  let orgName = '';

  test('a newcomer signs in at the provider, gets an account and accepts an invitation', async ({ page }) => {
    // A demo owner invites the provider's newcomer and sees the link on the organisation page.
    await signIn(page, 'en', 'owner@company.example');
    await page.goto('/organisation');
    await page.getByLabel(t('field.email')).fill('newcomer@idp.test');
    await page.getByLabel(t('field.role'), { exact: true }).selectOption('member');
    await page.getByRole('button', { name: t('org.inviteSubmit') }).click();
    const link = await page.getByTestId('invitation-link').inputValue();
    await signOut(page, 'en');

    // The invitation offers the provider; its login page checks the password (a wrong one is refused there).
    await page.goto(link);
    await expectNoViolations(page, 'invitation with single sign-on');
    await page.getByRole('button', { name: t('signIn.with', { provider: PROVIDER }) }).click();
    await loginAtProvider(page, 'newcomer', 'not-the-password');
    await expect(page.getByRole('alert')).toHaveText('Wrong username or password.');
    await loginAtProvider(page, 'newcomer', 'idp-password-1');

    // Back on the invitation, signed in with the new account of the invited address.
    await expect(page).toHaveURL(/\/invitations\//);
    await page.getByRole('button', { name: t('invite.accept') }).click();
    await expect(page).toHaveURL(/\/organisation$/);
    await expect(page.getByRole('cell', { name: 'Nora Newcomer' })).toBeVisible();

    // The profile lists the identity; removing the only way in of an account without a password is refused.
    await page.goto('/profile');
    const identity = page.getByTestId('identity');
    await expect(identity).toContainText(PROVIDER);
    await expect(identity).toContainText('newcomer@idp.test');
    await identity.getByRole('button', { name: t('profile.identityRemoveLabel', { provider: PROVIDER }) }).click();
    await expect(identity.getByText(t('profile.identityLastWayIn'))).toBeVisible();
    await expectNoViolations(page, 'profile with an identity');
    await expect(page.getByTestId('identity')).toHaveCount(1);
  });

  test('an existing password account links its provider identity only with its password', async ({ page }) => {
    orgName = unique('SSO Lab');
    await signUpInBrowser(page, 'en', { name: 'Lina Linked', email: LINKED_EMAIL, password: LINKED_PASSWORD, org: { name: orgName, kind: 'academic', country: 'DE' } });
    await signOut(page, 'en');

    // The provider says the same address: the portal asks for the account's password instead of linking.
    await page.goto('/sign-in');
    await page.getByRole('button', { name: t('signIn.with', { provider: PROVIDER }) }).click();
    await loginAtProvider(page, 'linked', 'idp-password-2');
    await expect(page).toHaveURL(/\/sign-in\/link\?token=/);
    await expect(page.getByText(t('link.body', { email: LINKED_EMAIL, provider: PROVIDER }))).toBeVisible();
    await expectNoViolations(page, 'link page');
    await page.getByLabel(t('field.password')).fill('a-wrong-password');
    await page.getByRole('button', { name: t('link.submit') }).click();
    await expect(page.getByText(t('link.wrongPassword'))).toBeVisible();
    await expect(page).toHaveURL(/\/sign-in\/link/);
    await page.getByLabel(t('field.password')).fill(LINKED_PASSWORD);
    await page.getByRole('button', { name: t('link.submit') }).click();
    await expect(page).toHaveURL(/\/dashboard$/);

    await page.goto('/profile');
    await expect(page.getByTestId('identity')).toContainText(PROVIDER);
    await expect(page.getByTestId('identity')).toContainText(LINKED_EMAIL);
    // The session list shows this sign-in like any other.
    await expect(page.getByTestId('session')).toHaveCount(1);
    await signOut(page, 'en');

    // Linked: the next sign-in through the provider goes straight in (the provider remembers the person).
    await page.getByRole('button', { name: t('signIn.with', { provider: PROVIDER }) }).click();
    await expect(page).toHaveURL(/\/dashboard$/);
  });

  test('staff require single sign-on for a tenant: its member’s password is refused, naming the organisation', async ({ page }) => {
    expect(orgName).not.toBe('');
    await signIn(page, 'en', 'admin@centre.example');
    await page.goto('/staff/tenants');
    await page.getByTestId(`tenant-row-${orgName}`).getByRole('link', { name: orgName }).click();
    await expect(page.getByTestId('sso-status')).toHaveText(t('staff.tenants.ssoOptionalNow'));
    await page.getByLabel(t('staff.tenants.ssoReason', { org: orgName })).fill('Members use the university login');
    await page.getByRole('button', { name: t('staff.tenants.requireSso') }).click();
    await expect(page.getByTestId('sso-status')).toHaveText(t('staff.tenants.ssoRequiredNow'));
    await expectNoViolations(page, 'staff tenant page');
    await signOut(page, 'en');

    await page.goto('/sign-in');
    await page.getByLabel(t('field.email')).fill(LINKED_EMAIL);
    await page.getByLabel(t('field.password')).fill(LINKED_PASSWORD);
    await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
    await expect(page.getByText(t('signIn.ssoRequired', { org: orgName }))).toBeVisible();
    await expectNoViolations(page, 'sign-in page with providers');
    await expect(page).toHaveURL(/\/sign-in/);

    // The provider still lets them in, from the keyboard: its button comes just before the e-mail field.
    await page.goto('/sign-in');
    await expect(page.getByLabel(t('field.email'))).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(page.getByRole('button', { name: t('signIn.with', { provider: PROVIDER }) })).toBeFocused();
    await page.keyboard.press('Enter');
    await loginAtProvider(page, 'linked', 'idp-password-2');
    await expect(page).toHaveURL(/\/dashboard$/);
  });
});
