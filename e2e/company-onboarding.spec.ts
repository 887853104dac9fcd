// A company signs up, staff verify it, the owner invites a colleague who joins: in English and in German.
import { expect, test } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { openVerificationLink, signIn, signOut, texts, unique } from './helpers';

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`company onboarding (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('sign up, verification by staff, invitation accepted', async ({ page }) => {
      const t = texts(locale);
      const orgName = unique('Nordlicht AI GmbH');
      const ownerEmail = `owner.${Date.now()}.${locale}@nordlicht.example`;
      const memberEmail = `dev.${Date.now()}.${locale}@nordlicht.example`;

      // 1. The company signs up and learns that it awaits verification.
      await page.goto('/sign-up');
      await expect(page.getByRole('heading', { name: t('signUp.title') })).toBeVisible();
      await page.getByLabel(t('field.name')).fill('Greta Gründerin');
      await page.getByLabel(t('field.email')).fill(ownerEmail);
      await page.getByLabel(t('field.password')).fill('a-long-password-1');
      await page.getByLabel(t('field.orgName')).fill(orgName);
      await page.getByLabel(t('field.orgKind')).selectOption('company');
      await page.getByLabel(t('field.country')).selectOption('DE');
      await page.getByLabel(t('field.residency')).selectOption('EU');
      await page.getByRole('button', { name: t('signUp.submit') }).click();
      await expect(page).toHaveURL(/\/dashboard$/);
      await expect(page.getByText(t('dashboard.pendingTitle'))).toBeVisible();
      // The address is confirmed by the link mailed to it; until then the banner asks for it.
      await expect(page.getByText(t('verify.banner', { email: ownerEmail }))).toBeVisible();
      await openVerificationLink(page, locale, ownerEmail);
      await page.goto('/dashboard');
      await expect(page.getByText(t('verify.banner', { email: ownerEmail }))).toHaveCount(0);
      await signOut(page, locale);

      // 2. The staff admin verifies it, with a reason; the audit log shows who did it and why.
      await signIn(page, locale, 'admin@centre.example');
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.tenants') }).click();
      const row = page.getByTestId(`tenant-row-${orgName}`);
      await expect(row.getByText(t('status.pending_verification'))).toBeVisible();
      await row.getByRole('button', { name: `${t('staff.tenants.verify')} ${orgName}` }).click();
      await row.getByLabel(t('staff.tenants.reasonFor', { action: t('staff.tenants.verify').toLowerCase(), org: orgName })).fill('Commercial register entry checked');
      await row.getByRole('button', { name: t('staff.tenants.verify'), exact: true }).click();
      await expect(row.getByText(t('status.active'))).toBeVisible();
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.audit') }).click();
      const auditRow = page.getByTestId('audit-row').filter({ hasText: orgName }).filter({ hasText: t('audit.action.tenant.verified') });
      await expect(auditRow).toContainText('Alex Admin');
      await expect(auditRow).toContainText('Commercial register entry checked');
      await signOut(page, locale);

      // 3. The owner now sees the organisation active and invites a colleague.
      await signIn(page, locale, ownerEmail, 'a-long-password-1');
      await expect(page.getByText(t('dashboard.pendingTitle'))).toHaveCount(0);
      await expect(page.getByText(t('status.active'))).toBeVisible();
      // The dashboard says what is left: e-mail confirmed and verified, then billing profile, price list, first job.
      const checklist = page.getByTestId('company-checklist');
      await expect(checklist.locator('[data-done="true"]')).toHaveText([new RegExp(t('checklist.emailConfirmed')), new RegExp(t('checklist.verified'))]);
      await expect(checklist.getByRole('link', { name: t('checklist.billingProfile') })).toBeVisible();
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.organisation') }).click();
      await page.getByLabel(t('field.email')).fill(memberEmail);
      await page.getByLabel(t('field.role'), { exact: true }).selectOption('member');
      await page.getByRole('button', { name: t('org.inviteSubmit') }).click();
      const link = await page.getByTestId('invitation-link').inputValue();
      expect(link).toMatch(/\/invitations\/[A-Za-z0-9_-]{20,}$/);
      await expect(page.getByRole('cell', { name: memberEmail })).toBeVisible();

      // The owner fills in the billing profile: a VAT ID with a wrong check digit is refused on its field.
      const billing = page.getByRole('form', { name: t('billing.title') });
      await billing.getByLabel(t('billing.legalName')).fill(orgName);
      await billing.getByLabel(t('billing.street')).fill('Leutragraben 1');
      await billing.getByLabel(t('billing.postcode')).fill('07743');
      await billing.getByLabel(t('billing.city')).fill('Jena');
      await billing.getByLabel(t('billing.email')).fill(`invoices.${Date.now()}@nordlicht.example`);
      await billing.getByLabel(t('billing.vatId')).fill('DE136695977');
      await billing.getByRole('button', { name: t('billing.save') }).click();
      await expect(billing.getByText(t('billing.vatIdCheckDigit', { example: 'DE123456788' }))).toBeVisible();
      await billing.getByLabel(t('billing.vatId')).fill('DE 136 695 976');
      await billing.getByRole('button', { name: t('billing.save') }).click();
      await expect(page.getByText(t('billing.saved'))).toBeVisible();
      await expect(billing.getByLabel(t('billing.vatId'))).toHaveValue('DE136695976');

      // With the billing profile in place the owner accepts the price list and has a credit line at once.
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.prices') }).click();
      await page.getByRole('button', { name: t('payg.accept') }).click();
      const credit = new Intl.NumberFormat(locale, { style: 'currency', currency: 'EUR' }).format(1000);
      await expect(page.getByText(t('payg.done', { credit }))).toBeVisible();
      await expect(page.getByText(t('payg.acceptedOn', { date: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date()) }))).toBeVisible();
      await signOut(page, locale);

      // 4. The colleague opens the link, creates an account and sees the organisation.
      await page.goto(link);
      await expect(page.getByText(t('invite.body', { inviter: 'Greta Gründerin', org: orgName, role: t('role.member') }))).toBeVisible();
      await page.getByRole('link', { name: t('nav.signUp') }).click();
      await expect(page.getByText(t('signUp.invitedIntro', { org: orgName }))).toBeVisible();
      await expect(page.getByLabel(t('field.email'))).toHaveValue(memberEmail);
      await page.getByLabel(t('field.name')).fill('Devin Developer');
      await page.getByLabel(t('field.password')).fill('another-long-password');
      await page.getByRole('button', { name: t('signUp.submit') }).click();
      await expect(page).toHaveURL(/\/organisation$/);
      await expect(page.getByRole('heading', { name: orgName })).toBeVisible();
      await expect(page.getByRole('cell', { name: 'Devin Developer' })).toBeVisible();
      await expect(page.getByRole('cell', { name: 'Greta Gründerin' })).toBeVisible();
    });
  });
}
