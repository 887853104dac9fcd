// Password reset and e-mail verification with real mail (issue #12): the portal's worker sends to the
// test SMTP sink (scripts/test-smtp-sink.mjs) and the journeys open the links in the mails received.
// A forgotten password is reset by the mailed link, which then no longer works; an unknown address gets
// the same answer and no mail; a new sign-up can look around but not act until it opens its link.
import { expect, test, type Page } from '@playwright/test';
import { expectNoViolations, linkIn, signUpInBrowser, mailsTo, signIn, signOut, texts, unique, waitForMail } from './helpers';

const locale = 'en' as const;
const t = texts(locale);
const PASSWORD = 'a-long-password-1';
const nav = (page: Page) => page.getByRole('navigation', { name: t('nav.main') });

/** signUp creates a research group's account through the form; the browser is signed in after it. */
async function signUp(page: Page, email: string, orgName: string) {
  await signUpInBrowser(page, locale, { name: 'Rosa Reset', email, password: PASSWORD, org: { name: orgName, kind: 'academic', country: 'DE', residency: 'any' } });
}

async function createProject(page: Page, title: string) {
  await nav(page).getByRole('link', { name: t('nav.projects') }).click();
  await expect(page).toHaveURL(/\/projects$/);
  await page.getByRole('link', { name: t('projects.new') }).click();
  await page.getByLabel(t('project.title')).fill(title);
  await page.getByLabel(t('project.abstract')).fill('Checking that a confirmed address may act.');
  await page.getByLabel(t('project.field')).fill('Physics');
  await page.getByRole('button', { name: t('projects.create') }).click();
}

async function askForReset(page: Page, email: string) {
  await page.goto('/sign-in');
  await page.getByRole('link', { name: t('signIn.forgotPassword') }).click();
  await expect(page).toHaveURL(/\/forgot-password$/);
  await expectNoViolations(page, 'the forgot-password page');
  await page.getByLabel(t('field.email')).fill(email);
  await page.getByRole('button', { name: t('forgot.submit') }).click();
  await expect(page.getByText(t('forgot.sent', { email }))).toBeVisible();
}

test.describe('password reset and e-mail verification (en)', () => {
  test.use({ locale: 'en-GB' });

  test('a forgotten password is reset by the mailed link, which works once', async ({ page }) => {
    const email = `rosa.${Date.now()}@reset-lab.example`;
    await signUp(page, email, unique('Reset Lab'));
    await signOut(page, locale);

    await askForReset(page, email);
    const mail = await waitForMail(email, '/reset-password/');
    expect(mail.subject).toBe(t('mail.passwordReset.subject'));
    const link = linkIn(mail, '/reset-password/');

    await page.goto(link);
    await expect(page.getByRole('heading', { name: t('reset.title') })).toBeVisible();
    await expectNoViolations(page, 'the reset page');
    // Two different passwords: refused on the second field, and the link still works.
    await page.getByLabel(t('reset.newPassword'), { exact: true }).fill('a-brand-new-passphrase');
    await page.getByLabel(t('reset.confirmPassword'), { exact: true }).fill('a-different-passphrase');
    await page.getByRole('button', { name: t('reset.submit') }).click();
    await expect(page.getByText(t('auth.reset.mismatch'))).toBeVisible();
    await page.getByLabel(t('reset.newPassword'), { exact: true }).fill('a-brand-new-passphrase');
    await page.getByLabel(t('reset.confirmPassword'), { exact: true }).fill('a-brand-new-passphrase');
    await page.getByRole('button', { name: t('reset.submit') }).click();

    // Sent to sign in, told what happened.
    await expect(page).toHaveURL(/\/sign-in\?reset=done/);
    await expect(page.getByText(t('signIn.passwordReset'))).toBeVisible();
    // The old password no longer works …
    await page.getByLabel(t('field.email')).fill(email);
    await page.getByLabel(t('field.password')).fill(PASSWORD);
    await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
    await expect(page.getByText(t('signIn.wrongCredentials'))).toBeVisible();
    // … the new one does, and the reset confirmed the address (the mail reached them).
    await signIn(page, locale, email, 'a-brand-new-passphrase');
    await expect(page.getByText(t('verify.banner', { email }))).toHaveCount(0);
    await signOut(page, locale);

    // The same link again: it no longer works, and says where to ask for a new one.
    await page.goto(link);
    await expect(page.getByRole('heading', { name: t('reset.invalidTitle') })).toBeVisible();
    await expect(page.getByText(t('reset.invalid'))).toBeVisible();
    await page.getByRole('link', { name: t('reset.askAgain') }).click();
    await expect(page).toHaveURL(/\/forgot-password$/);
  });

  test('an unknown address gets the same answer and no mail', async ({ page }) => {
    const known = `kim.${Date.now()}@reset-lab.example`;
    const unknown = `nobody.${Date.now()}@reset-lab.example`;
    await signUp(page, known, unique('Known Lab'));
    await signOut(page, locale);

    await askForReset(page, unknown);
    await askForReset(page, known);
    // By the time the known address's mail has arrived, the unknown one's would have too.
    await waitForMail(known, '/reset-password/');
    expect(await mailsTo(unknown)).toEqual([]);
  });

  test('a new sign-up can look around but not act until it opens the mailed link', async ({ page }) => {
    const email = `vera.${Date.now()}@verify-lab.example`;
    await signUp(page, email, unique('Verify Lab'));
    await expect(page.getByText(t('verify.banner', { email }))).toBeVisible();

    // Reading works, acting is refused with what to do.
    const title = unique('Confirmed project');
    await createProject(page, title);
    await expect(page.getByText(t('error.emailUnverified', { email }))).toBeVisible();

    // "Send the link again": a second mail, and only its link works.
    const first = linkIn(await waitForMail(email, '/verify-email/'), '/verify-email/');
    await page.getByRole('button', { name: t('verify.resend') }).click();
    await expect(page.getByText(t('verify.resent', { email }))).toBeVisible();
    await expect.poll(async () => (await mailsTo(email)).filter((m) => m.text.includes('/verify-email/')).length, { timeout: 20_000 }).toBe(2);
    const second = linkIn((await mailsTo(email)).filter((m) => m.text.includes('/verify-email/')).at(-1)!, '/verify-email/');
    expect(second).not.toBe(first);
    await page.goto(first);
    await expect(page.getByText(t('verify.invalid'))).toBeVisible();
    // Opening the link (as a mail scanner would) confirms nothing yet; the person's click does.
    await page.goto(second);
    await page.goto('/dashboard');
    await expect(page.getByText(t('verify.banner', { email }))).toBeVisible();
    await page.goto(second);
    await expectNoViolations(page, 'the address check page');
    await page.getByRole('button', { name: t('verify.confirm') }).click();
    await expect(page.getByText(t('verify.done', { email }))).toBeVisible();

    await page.getByRole('link', { name: t('verify.continue') }).click();
    await expect(page).toHaveURL(/\/dashboard$/);
    await expect(page.getByText(t('verify.banner', { email }))).toHaveCount(0);
    await createProject(page, title);
    await expect(page.getByRole('heading', { name: title })).toBeVisible();
  });
});
