// Caps and credit lines never move by themselves (issue #24), in English and German: a new company's
// checklist starts with confirming the e-mail and says which way to take; its price list opens a
// starter line; staff raise the line and set the cap in one decision from the review page, and the
// owner is mailed both; staff grant a second line from the allocations page beside the tenant's cap and
// spend, with the cap they choose, and the company sees it. An established company is never offered a
// step that would change its money.
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { formatEuros } from '../server/i18n/format';
import { expectNoViolations, openVerificationLink, signIn, signOut, signUpInBrowser, texts, unique, mailsTo } from './helpers';

/** shot saves the page at 1366 and 390 px wide into .screenshots/ when SCREENSHOTS is set (for reading, not committed). */
async function shot(page: Page, name: string) {
  if (!process.env.SCREENSHOTS) return;
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `.screenshots/${name}-${width}.png`, fullPage: true });
    // Nothing may push the page sideways at phone width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} at ${width} px scrolls sideways`).toBe(true);
  }
  await page.setViewportSize({ width: 1280, height: 720 });
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`credit lines and caps (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });

    test('a new company confirms its e-mail first, starts on the price list, and staff raise its line with a cap', async ({ page }) => {
      test.setTimeout(240_000);
      const t = texts(locale);
      const orgName = unique('Caps Robotics GmbH');
      const ownerEmail = `owner.${Date.now()}.${locale}@caps.example`;
      const password = 'a-long-password-1';
      const nav = () => page.getByRole('navigation', { name: t('nav.main') });

      // 1. Right after sign-up: confirming the e-mail is the first open step, and the banner does not
      //    promise invitations the portal would refuse; the checklist says which way to take.
      await signUpInBrowser(page, locale, { name: 'Carla Caps', email: ownerEmail, password, org: { name: orgName, kind: 'company', country: 'DE', residency: 'EU' } });
      await expect(page.getByText(t('dashboard.pendingBodyUnconfirmed', { org: orgName }))).toBeVisible();
      await expect(page.getByText(t('dashboard.pendingBody', { org: orgName }))).toHaveCount(0);
      const checklist = page.getByTestId('company-checklist');
      await expect(checklist.locator('li').first()).toContainText(t('checklist.emailConfirmed'));
      await expect(checklist.locator('li').first()).toHaveAttribute('data-done', 'false');
      await expect(checklist.getByText(t('checklist.emailConfirmedHint'))).toBeVisible();
      await expect(page.getByTestId('checklist-paths')).toHaveText(t('checklist.paths'));
      await expect(checklist.getByRole('link', { name: t('checklist.priceList') })).toBeVisible();
      await expect(checklist).toContainText(formatEuros(locale, 1000_00));
      await expectNoViolations(page, 'new company dashboard');
      await shot(page, `dashboard-new-${locale}`);
      await openVerificationLink(page, locale, ownerEmail);
      await page.goto('/dashboard');
      await expect(page.getByTestId('company-checklist').locator('li').first()).toHaveAttribute('data-done', 'true');
      await expect(page.getByText(t('dashboard.pendingBody', { org: orgName }))).toBeVisible();
      await signOut(page, locale);

      // 2. Staff verify the company.
      await signIn(page, locale, 'admin@centre.example');
      await nav().getByRole('link', { name: t('nav.tenants') }).click();
      const row = page.getByTestId(`tenant-row-${orgName}`);
      await row.getByRole('button', { name: `${t('staff.tenants.verify')} ${orgName}` }).click();
      await row.getByLabel(t('staff.tenants.reasonFor', { action: t('staff.tenants.verify').toLowerCase(), org: orgName })).fill('Commercial register entry checked');
      await row.getByRole('button', { name: t('staff.tenants.verify'), exact: true }).click();
      await expect(row.getByText(t('status.active'))).toBeVisible();
      await signOut(page, locale);

      // 3. The owner fills in the billing profile, accepts the price list (a starter line of €1,000 with
      //    a cap of €1,000) and asks for €25,000.
      await signIn(page, locale, ownerEmail, password);
      await nav().getByRole('link', { name: t('nav.organisation') }).click();
      const billing = page.getByRole('form', { name: t('billing.title') });
      await billing.getByLabel(t('billing.legalName')).fill(orgName);
      await billing.getByLabel(t('billing.street')).fill('Leutragraben 1');
      await billing.getByLabel(t('billing.postcode')).fill('07743');
      await billing.getByLabel(t('billing.city')).fill('Jena');
      await billing.getByLabel(t('billing.email')).fill(`invoices.${Date.now()}@caps.example`);
      await billing.getByLabel(t('billing.vatId')).fill('DE136695976');
      await billing.getByRole('button', { name: t('billing.save') }).click();
      await expect(page.getByText(t('billing.saved'))).toBeVisible();
      await nav().getByRole('link', { name: t('nav.prices') }).click();
      await page.getByRole('button', { name: t('payg.accept') }).click();
      await expect(page.getByText(t('payg.done', { credit: formatEuros(locale, 1000_00) }))).toBeVisible();
      await nav().getByRole('link', { name: t('nav.organisation') }).click();
      await page.getByLabel(t('creditRequest.amount')).fill('25000');
      await page.getByLabel(t('creditRequest.reason')).fill('A year of fine-tuning for our product.');
      await page.getByRole('button', { name: t('creditRequest.submit') }).click();
      await expect(page.getByText(t('creditRequest.done'))).toBeVisible();
      await signOut(page, locale);

      // 4. Staff see the tenant, its line and cap and its spend beside the decision; the cap is
      //    suggested with the line (not left at the starter €1,000); they grant it with a cap of €4,000.
      await signIn(page, locale, 'admin@centre.example');
      await page.goto('/staff/applications');
      const request = page.getByTestId('credit-request-row').filter({ hasText: orgName });
      await expect(request.getByTestId('credit-cap-now')).toHaveText(formatEuros(locale, 1000_00));
      await expect(request.getByText(t('review.creditSpentThisMonth'))).toBeVisible();
      await expect(request.getByLabel(t('review.creditGranted'))).toHaveValue('25000');
      await expect(request.getByLabel(t('review.creditNewCap'))).toHaveValue('25000');
      await expectNoViolations(page, 'credit request review');
      await shot(page, `review-credit-${locale}`);
      // Another amount than asked needs a comment, named on its field.
      await request.getByLabel(t('review.creditGranted')).fill('20000');
      await request.getByRole('button', { name: t('review.creditApprove') }).click();
      await expect(request.getByText(t('creditRequest.commentForOtherAmount', { requested: 25000 }))).toBeVisible();
      await request.getByLabel(t('review.creditGranted')).fill('25000');
      await request.getByLabel(t('review.creditNewCap')).fill('4000');
      await request.getByRole('button', { name: t('review.creditApprove') }).click();
      await expect(page.getByTestId('credit-request-row').filter({ hasText: orgName })).toHaveCount(0);
      await nav().getByRole('link', { name: t('nav.tenants') }).click();
      await page.getByTestId(`tenant-row-${orgName}`).getByRole('link', { name: orgName }).click();
      const money = page.getByTestId('tenant-money');
      await expect(money).toContainText(formatEuros(locale, 25000_00));
      await expect(money).toContainText(formatEuros(locale, 4000_00));
      await shot(page, `staff-tenant-${locale}`);

      // 5. The owner is mailed the new line and the new cap, in the language of their profile (which
      //    sign-up does not take from the browser, so either).
      const told = (['en', 'de'] as const).map((l) => texts(l)('notice.creditRaised', { line: 25000, cap: 4000, comment: '' }).trim());
      await expect.poll(async () => (await mailsTo(ownerEmail)).some((m) => told.some((text) => m.text.includes(text))), { timeout: 20_000 }).toBe(true);

      // 6. Staff grant the company a second line from the allocations page: the form shows the tenant,
      //    its cap, its lines and this month's spend, and suggests the cap for the lines with the new
      //    one (€4,000 on €25,000 grows to €4,800 on €30,000); staff set €6,000 instead.
      await page.goto('/staff/allocations');
      const grant = page.getByRole('form', { name: t('credit.title') });
      const option = grant.getByLabel(t('credit.project')).locator('option', { hasText: orgName });
      const projectTitle = (await option.innerText()).split(' — ').pop()!.trim();
      await grant.getByLabel(t('credit.project')).selectOption((await option.getAttribute('value')) ?? '');
      const figures = grant.getByTestId('credit-tenant-figures');
      await expect(figures).toContainText(orgName);
      await expect(figures.getByTestId('credit-cap-now')).toHaveText(formatEuros(locale, 4000_00));
      await expect(figures.getByTestId('credit-spent-this-month')).toHaveText(formatEuros(locale, 0));
      await expect(figures).toContainText(formatEuros(locale, 25000_00));
      await expect(grant.getByLabel(t('credit.capField'))).toHaveValue('4000');
      await grant.getByLabel(t('credit.amount')).fill('5000');
      await expect(grant.getByLabel(t('credit.capField'))).toHaveValue('4800');
      await expect(grant.getByText(t('credit.capHint', { suggested: formatEuros(locale, 4800_00) }))).toBeVisible();
      await grant.getByLabel(t('credit.capField')).fill('6000');
      await grant.getByLabel(t('common.reason')).fill('Second product line, signed contract');
      await expectNoViolations(page, 'credit line grant with its cap');
      await shot(page, `staff-grant-cap-${locale}`);
      await grant.getByRole('button', { name: t('credit.submit') }).click();
      await expect(page.getByText(t('credit.done'))).toBeVisible();
      await expect(figures.getByTestId('credit-cap-now')).toHaveText(formatEuros(locale, 6000_00));
      await expect(figures).toContainText(formatEuros(locale, 30000_00));
      await signOut(page, locale);

      // 7. The company sees it: the organisation page shows the new cap, and the owner is told the new
      //    line and cap on the bell and by mail.
      await signIn(page, locale, ownerEmail, password);
      await nav().getByRole('link', { name: t('nav.organisation') }).click();
      await expect(page.getByText(t('cap.current', { cap: formatEuros(locale, 6000_00) }))).toBeVisible();
      await shot(page, `organisation-cap-granted-${locale}`);
      await page.goto('/notifications');
      await expect(page.getByText(t('notice.creditGranted', { project: projectTitle, line: 5000, cap: 6000 }))).toBeVisible();
      const granted = (['en', 'de'] as const).map((l) => texts(l)('notice.creditGranted', { project: projectTitle, line: 5000, cap: 6000 }));
      await expect.poll(async () => (await mailsTo(ownerEmail)).some((m) => granted.some((text) => m.text.includes(text))), { timeout: 20_000 }).toBe(true);
    });

    test('an established company is offered no step that would change its money, and accepting keeps its line and cap', async ({ page }) => {
      const t = texts(locale);
      await signIn(page, locale, 'owner@company.example');
      // The demo's Example Robotics has a €20,000 line from staff and a €5,000 cap: nothing to accept for money.
      await expect(page.getByRole('link', { name: t('checklist.priceList') })).toHaveCount(0);
      await shot(page, `dashboard-established-${locale}`);
      // The cap as it stands (other journeys may have raised it with a credit line): accepting must not move it.
      await page.goto('/organisation');
      const capCard = page.locator('section').filter({ has: page.getByRole('heading', { name: t('cap.title') }) }).getByText(t('cap.intro'));
      const capBefore = await capCard.innerText();
      expect(capBefore).toContain(t('cap.current', { cap: '' }).replace(/[.:\s]+$/, '').trim());
      await page.goto('/prices');
      const accept = page.getByRole('button', { name: t('payg.acceptOnly') });
      if (await accept.count()) {
        await expect(page.getByText(t('payg.establishedIntro'))).toBeVisible();
        await shot(page, `prices-established-${locale}`);
        await accept.click();
        await expect(page.getByText(t('payg.keptLines'))).toBeVisible();
      }
      await expect(page.getByRole('button', { name: t('payg.accept') })).toHaveCount(0);
      await page.goto('/organisation');
      await expect(capCard).toHaveText(capBefore);
    });
  });
}
