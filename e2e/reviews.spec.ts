// Calls, panels, scores, conflicts of interest and the end-of-allocation report (issue #32), in English and
// German, in real time: an admin opens a Large Scale call whose round closes in a minute or two; two
// applicants (the demo's PI, who owes a report, and the university's member) apply into it; the admin puts
// themselves and the reviewer on the round's panel; once the worker has closed the round at its cut-off,
// the reviewer declares a conflict of interest with one application and from then on gets 404 on it, no
// form to score it and no queue row; an admin overrides the conflict with a reason, and both reviewers
// score both applications; the ranking draws its cut line at the round's 100,000 GPU-h and the admin
// approves the application above it in one action; its PI files the end-of-allocation report with a DOI,
// which staff then see among the reports filed.
import { expect, test, type Browser, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { shoot, signIn, texts, unique } from './helpers';

/** A cut-off on a full minute at least `seconds` ahead, and how the call form takes it ("YYYY-MM-DD HH:MM", the browser's local time). */
function cutoffIn(seconds: number): { at: Date; line: string } {
  const at = new Date(Math.ceil((Date.now() + seconds * 1000) / 60_000) * 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return { at, line: `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}` };
}

/** The text of a message up to its first parameter (the rest follows the clock). */
function upTo(t: ReturnType<typeof texts>, key: Parameters<ReturnType<typeof texts>>[0], first: string): string {
  return t(key, { [first]: '\u0001' }).split('\u0001')[0]!;
}

async function personIn(browser: Browser, locale: Locale, email: string): Promise<Page> {
  const context = await browser.newContext({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });
  const page = await context.newPage();
  await signIn(page, locale, email);
  return page;
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test(`a round is scored by its panel and decided from its ranking; the PI reports with a DOI (${locale})`, async ({ browser }) => {
    // The round closes at a real cut-off 80 to 140 s ahead, and the worker closes it within seconds.
    test.setTimeout(300_000);
    const t = texts(locale);
    const h100 = locale === 'de' ? 'H100-Partition (Jena)' : 'H100 partition (Jena)';
    const [admin, reviewer, pi, member] = await Promise.all([personIn(browser, locale, 'admin@centre.example'), personIn(browser, locale, 'reviewer@centre.example'), personIn(browser, locale, 'pi@uni.example'), personIn(browser, locale, 'member@uni.example')]);

    // 1. The admin opens a call with one round and budget for one of the two applications to come.
    const callTitle = unique(locale === 'de' ? 'Large Scale Sonderrunde' : 'Large Scale special round');
    // Time enough for both to apply (about 30 s), even on a busy machine.
    const cutoff = cutoffIn(80);
    await admin.goto('/staff/applications');
    const form = admin.getByRole('form', { name: t('calls.open') });
    await form.getByLabel(t('application.mode')).selectOption('large-scale');
    await form.getByLabel(t('calls.title')).fill(callTitle);
    await form.getByLabel(t('calls.gpuHoursPerRound')).fill('100000');
    await form.getByLabel(t('calls.cutoffs')).fill(cutoff.line);
    await form.getByRole('button', { name: t('calls.open') }).click();
    await expect(form.getByText(t('calls.opened'))).toBeVisible();

    // 2. Two applicants apply into its round, each on a new project: 60,000 and 55,000 GPU-h.
    async function apply(page: Page, title: string, gpuHours: number): Promise<string> {
      await page.goto('/projects/new');
      await page.getByLabel(t('project.title')).fill(title);
      await page.getByLabel(t('project.abstract')).fill('Pretraining a multilingual foundation model on public European text.');
      await page.getByLabel(t('project.field')).fill('Computer science');
      await page.getByRole('button', { name: t('projects.create') }).click();
      await expect(page.getByRole('heading', { name: title })).toBeVisible();
      await page.getByRole('link', { name: t('project.apply') }).click();
      await page.getByText('Large Scale', { exact: true }).click();
      await page.getByLabel(t('application.gpuHoursFor', { name: h100 })).fill(String(gpuHours));
      await page.getByLabel(t('application.justification'), { exact: true }).fill('Multi-node pretraining over the year, planned in quarterly blocks with ablations at small scale.');
      await page.getByRole('button', { name: t('application.submit') }).click();
      await expect(page.getByText(upTo(t, 'application.waitingInRound', 'cutoff'))).toBeVisible();
      return page.url();
    }
    const piTitle = unique(locale === 'de' ? 'Europäisches Basismodell' : 'European foundation model');
    const memberTitle = unique(locale === 'de' ? 'Wettermodell' : 'Weather foundation model');
    const [piUrl, memberUrl] = await Promise.all([apply(pi, piTitle, 60_000), apply(member, memberTitle, 55_000)]);
    const memberApplication = memberUrl.split('/').pop()!;

    // 3. The admin puts themselves and the reviewer on the round's panel, from the round's ranking page.
    await admin.reload();
    const call = admin.getByTestId('call').filter({ hasText: callTitle });
    await expect(call.getByTestId('call-round').getByRole('cell').nth(2)).toHaveText('2');
    await call.getByRole('link', { name: t('calls.ranking') }).click();
    await expect(admin.getByRole('heading', { name: t('ranking.title', { call: callTitle }) })).toBeVisible();
    for (const name of ['Alex Admin', 'Robin Reviewer']) {
      const panel = admin.getByRole('form', { name: t('ranking.addToPanel') });
      await panel.getByLabel(t('ranking.addToPanel')).selectOption({ label: name });
      await panel.getByRole('button', { name: t('ranking.addToPanel') }).click();
      await expect(admin.getByTestId('round-panel')).toContainText(name);
    }
    const roundUrl = admin.url();

    // 4. The worker closes the round at its cut-off: the ranking can then be decided.
    await expect(admin.getByText(upTo(t, 'ranking.roundOpen', 'cutoff'))).toBeVisible();
    await expect(async () => {
      await admin.reload();
      await expect(admin.getByRole('heading', { name: t('ranking.bulk') })).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: cutoff.at.getTime() - Date.now() + 90_000, intervals: [3_000] });

    // 5. The reviewer declares a conflict with the member's application: 404 on it from then on.
    await reviewer.goto('/staff/applications');
    await reviewer.getByTestId('queue-row').filter({ hasText: memberTitle }).getByRole('link', { name: memberTitle }).click();
    const declare = reviewer.getByRole('form', { name: t('reviews.declare') });
    await declare.getByLabel(t('reviews.declareReason')).fill(locale === 'de' ? 'Ich habe mit der Projektleitung publiziert.' : 'I co-authored a paper with the project lead.');
    await declare.getByRole('button', { name: t('reviews.declare') }).click();
    await expect(reviewer).toHaveURL(/\/staff\/applications$/);
    await expect(reviewer.getByTestId('queue-row').filter({ hasText: piTitle })).toBeVisible();
    await expect(reviewer.getByTestId('queue-row').filter({ hasText: memberTitle })).toHaveCount(0);
    const hidden = await reviewer.goto(`/staff/applications/${memberApplication}`);
    expect(hidden!.status()).toBe(404);
    await expect(reviewer.getByRole('heading', { name: t('notFound.title') })).toBeVisible();
    await expect(reviewer.getByTestId('review-form')).toHaveCount(0);
    await reviewer.goto(roundUrl);
    await expect(reviewer.getByText(t('ranking.withheld'))).toBeVisible();

    // 6. An admin finds the conflict does not hold and overrides it with a reason; the review is the reviewer's again.
    await admin.goto(`/staff/applications/${memberApplication}`);
    await expect(admin.getByTestId('conflicts')).toContainText('Robin Reviewer');
    const override = admin.getByRole('form', { name: t('reviews.override') });
    await override.getByLabel(t('reviews.overrideReason')).fill(locale === 'de' ? 'Ein Konsortialpapier mit 200 Autoren, keine gemeinsame Arbeit.' : 'A consortium paper of 200 authors: no shared work.');
    await override.getByRole('button', { name: t('reviews.overrideButton') }).click();
    await expect(admin.getByTestId('conflicts')).toContainText(t('reviews.overridden'));

    // 7. Both reviewers score both applications: the PI's higher.
    async function score(page: Page, title: string, scores: [number, number, number], comment: string) {
      await page.goto('/staff/applications');
      await page.getByTestId('queue-row').filter({ hasText: title }).getByRole('link', { name: title }).click();
      const review = page.getByTestId('review-form');
      for (const [criterion, value] of (['excellence', 'feasibility', 'impact'] as const).map((c, i) => [c, scores[i]!] as const)) await review.getByTestId(`score-${criterion}-${value}`).check();
      await review.getByLabel(t('reviews.commentToApplicant')).fill(comment);
      await review.getByRole('button', { name: t('reviews.submit') }).click();
      await expect(review.getByText(t('reviews.saved'))).toBeVisible();
    }
    await score(admin, piTitle, [5, 4, 5], 'A strong, well-planned case.');
    await score(reviewer, piTitle, [5, 5, 4], 'Excellent team and a clear plan.');
    await score(admin, memberTitle, [3, 4, 3], 'Sound, but the data pipeline needs more detail.');
    await score(reviewer, memberTitle, [3, 3, 4], 'Promising; the evaluation plan is thin.');
    // The PI owes the report of their earlier allocation: reviewers see it flagged.
    await admin.goto(piUrl.replace('/applications/', '/staff/applications/'));
    await expect(admin.getByTestId('missing-reports-of-pi')).toContainText('Protein structure prediction with diffusion models');

    // 8. The ranking: the PI's first, the cut line after it at 100,000 GPU-h; the admin approves the one above it.
    await admin.goto(roundUrl);
    const rows = admin.getByTestId('ranking-row');
    await expect(rows).toHaveCount(2);
    await expect(rows.nth(0)).toContainText(piTitle);
    await expect(rows.nth(0)).toHaveAttribute('data-above-line', 'true');
    await expect(rows.nth(1)).toContainText(memberTitle);
    await expect(rows.nth(1)).toHaveAttribute('data-above-line', 'false');
    await expect(admin.getByTestId('cut-line')).toBeVisible();
    await expect(admin.getByRole('checkbox', { name: t('ranking.select', { project: piTitle }) })).toBeChecked();
    await expect(admin.getByRole('checkbox', { name: t('ranking.select', { project: memberTitle }) })).not.toBeChecked();
    await shoot(admin, `ranking-${locale}`);
    await admin.getByLabel(t('ranking.comment')).fill(locale === 'de' ? 'Bewilligt in der Sonderrunde.' : 'Approved in the special round.');
    await admin.getByRole('button', { name: t('ranking.apply', { count: 1 }) }).click();
    await expect(admin.getByTestId('bulk-results')).toContainText(t('ranking.done', { count: 1 }));
    await expect(rows.nth(0)).toContainText(t('applicationStatus.approved'));
    await expect(rows.nth(1)).toContainText(t('applicationStatus.submitted'));

    // 9. The PI reads the scores and comments (no names), and files the end-of-allocation report with a DOI.
    await pi.goto(piUrl);
    await expect(pi.getByText(t('application.approvedTitle'))).toBeVisible();
    await expect(pi.getByTestId('applicant-review')).toHaveCount(2);
    await expect(pi.getByTestId('applicant-review').first()).not.toContainText('Robin Reviewer');
    const report = pi.getByRole('form', { name: t('report.title') });
    await report.getByLabel(t('report.summary')).fill('Three pretraining runs of a 7B model; the best beats the baseline on 9 of 12 European benchmarks.');
    // Not a DOI: refused on its field, nothing filed.
    await report.getByLabel(t('report.publications')).fill('arXiv:2701.00001');
    await report.getByRole('button', { name: t('report.file') }).click();
    await expect(report.getByLabel(t('report.publications'))).toHaveAttribute('aria-invalid', 'true');
    await expect(pi.getByTestId('report-view')).toHaveCount(0);
    await report.getByLabel(t('report.publications')).fill('https://doi.org/10.5555/Portal.E2E.2027');
    await report.getByLabel(t('report.datasets')).fill('https://huggingface.co/datasets/rhine-valley/eu-corpus');
    await report.getByRole('button', { name: t('report.file') }).click();
    await expect(pi.getByTestId('report-doi')).toHaveText('10.5555/portal.e2e.2027');
    await expect(pi.getByTestId('report-doi')).toHaveAttribute('href', 'https://doi.org/10.5555/portal.e2e.2027');
    await expect(pi.getByTestId('report-dataset')).toHaveText('https://huggingface.co/datasets/rhine-valley/eu-corpus');
    await shoot(pi, `report-${locale}`);

    // 10. Staff see it among the reports filed; the demo's earlier allocation is still missing its report.
    await admin.goto('/staff/reports');
    await expect(admin.getByTestId('filed-report').filter({ hasText: piTitle })).toContainText('1 · 1');
    await expect(admin.getByTestId('missing-report').filter({ hasText: 'Protein structure prediction with diffusion models' })).toBeVisible();
    await shoot(admin, `reports-${locale}`);
    await Promise.all([admin, reviewer, pi, member].map((page) => page.context().close()));
  });
}
