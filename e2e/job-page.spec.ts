// A job's page and the job form, in English and German: the whole footprint with a run time that
// equals GPU-hours ÷ GPUs, the over-budget warning before submitting, Back after a submit keeping the
// values, cancel behind a confirm step (keyboard only), "Submit again" prefilling, a service stopped
// as completed — and both pages usable at 390 px without sideways scrolling (screenshots at 1366 and 390).
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { shoot, signIn, texts, unique } from './helpers';

const SHOTS = process.env.E2E_SHOTS_DIR ?? 'test-results/job-page';

/** number reads a figure as the page writes it in a locale ("1,234.5" / "1.234,5"). */
function number(locale: Locale, text: string): number {
  const digits = (text.match(/-?[\d.,]+/) ?? ['NaN'])[0];
  return Number(locale === 'de' ? digits.replace(/\./g, '').replace(',', '.') : digits.replace(/,/g, ''));
}

/** seconds reads a duration as the page writes it ("1 h 4 min 43 s"). */
function seconds(text: string): number {
  const part = (unit: string) => Number(new RegExp(`(\\d+) ${unit}\\b`).exec(text)?.[1] ?? 0);
  return part('h') * 3600 + part('min') * 60 + part('s');
}

async function noSidewaysScroll(page: Page) {
  const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(scroll, 'the page must not scroll sideways').toBeLessThanOrEqual(client);
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`job page and form (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB', viewport: { width: 1366, height: 900 } });
    const t = texts(locale);

    async function openForm(page: Page) {
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.jobs') }).click();
      await page.getByRole('link', { name: t('jobs.submitTitle') }).click();
      await expect(page.getByRole('heading', { name: t('jobs.submitTitle') })).toBeVisible();
      const select = page.getByLabel(t('jobs.allocation'));
      await select.selectOption((await select.locator('option', { hasText: 'Protein structure prediction' }).first().getAttribute('value')));
    }

    async function fill(page: Page, job: { name: string; gpus: number; hours: number; kind?: string }) {
      await page.getByLabel(t('jobs.name')).fill(job.name);
      if (job.kind) await page.getByLabel(t('jobs.kind'), { exact: true }).selectOption(job.kind);
      await page.getByLabel(t('jobs.gpus')).fill(String(job.gpus));
      await page.getByLabel(t('jobs.nodes')).fill(String(Math.ceil(job.gpus / 8)));
      await page.getByLabel(t('jobs.walltime')).fill(String(job.hours)); // a number field takes a dot in every language
    }

    test('a finished job shows its whole footprint, a run time of GPU-hours ÷ GPUs, and can be submitted again', async ({ page }) => {
      await signIn(page, locale, 'pi@uni.example');
      await openForm(page);
      const name = unique('footprint');
      await fill(page, { name, gpus: 8, hours: 1 });
      await expect(page.getByTestId('job-estimate')).toContainText('8 GPU-h');
      await expect(page.getByTestId('reservation-warning')).toHaveCount(0);
      await shoot(page, `form-${locale}`, 'test-results/job-page');
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 30_000 });
      await expect(page.getByTestId('job-facility-energy')).toContainText('kWh');

      // Names, not ids, in the reader's language.
      await expect(page.getByTestId('job-resource-class')).toHaveText(locale === 'de' ? 'H100-Partition (Jena)' : 'H100 partition (Jena)');
      await expect(page.getByTestId('job-site')).toHaveText(locale === 'de' ? 'Jena, Deutschland (Warmwasserkühlung)' : 'Jena, Germany (warm-water cooled)');
      // Who it ran as on the cluster: the person's Unix user (made from pi@uni.example) and the project's group.
      await expect(page.getByTestId('job-runs-as')).toHaveText(new RegExp(`^pi\\d* \\(${locale === 'de' ? 'Gruppe' : 'group'} p[0-9a-f]{16}\\)$`));

      // Run time (cluster time) = GPU-hours ÷ GPUs, both as the page shows them.
      const gpuHours = number(locale, await page.getByTestId('job-gpu-hours').innerText());
      const runSeconds = seconds(await page.getByTestId('job-runtime').innerText());
      expect(gpuHours).toBeGreaterThan(0);
      // GPU-hours are shown to 2 decimals: ±0.005 GPU-h ÷ 8 GPUs = ±2.25 s.
      expect(Math.abs(runSeconds - (gpuHours * 3600) / 8)).toBeLessThanOrEqual(2.25);
      expect(runSeconds).toBeLessThanOrEqual(3600);

      // The footprint: facility = IT × the site's PUE, heat reused and CO2e from the facility energy.
      const it = number(locale, await page.getByTestId('job-it-energy').innerText());
      const pue = number(locale, await page.getByTestId('job-pue').innerText());
      const facility = number(locale, await page.getByTestId('job-facility-energy').innerText());
      const heat = number(locale, await page.getByTestId('job-heat-reused').innerText());
      const co2e = number(locale, await page.getByTestId('job-co2e').innerText());
      expect(pue).toBe(1.08);
      expect(it).toBeGreaterThan(0);
      expect(Math.abs(facility - it * pue)).toBeLessThanOrEqual(0.15);
      expect(Math.abs(heat - facility * 0.7)).toBeLessThanOrEqual(0.15); // Jena reuses 70 %
      expect(Math.abs(co2e - facility * 0.38)).toBeLessThanOrEqual(0.15); // 380 g per kWh
      // Efficiency: the utilisation and the share of the walltime used.
      expect(number(locale, await page.getByTestId('job-gpu-util').innerText())).toBeGreaterThan(0);
      const used = number(locale, await page.getByTestId('job-walltime-used').innerText());
      expect(Math.abs(used - (runSeconds / 3600) * 100)).toBeLessThanOrEqual(1);
      // The timeline names each state once.
      const states = await page.getByTestId('timeline-state').locator(':scope > p').allInnerTexts();
      expect(new Set(states).size).toBe(states.length);
      expect(states).toEqual(['SUBMITTING', 'PENDING', 'RUNNING', 'COMPLETED'].map((s) => t(`jobState.${s}` as 'jobState.PENDING')));
      await shoot(page, `job-${locale}`, 'test-results/job-page');

      // Submit again: the form opens with this job's spec.
      await page.getByTestId('job-clone').click();
      await expect(page).toHaveURL(/\/jobs\/new\?clone=/);
      await expect(page.getByText(t('jobs.cloneNote', { name }))).toBeVisible();
      await expect(page.getByLabel(t('jobs.name'))).toHaveValue(name);
      await expect(page.getByLabel(t('jobs.gpus'))).toHaveValue('8');
      await expect(page.getByLabel(t('jobs.walltime'))).toHaveValue('1');
      await expect(page.getByLabel(t('jobs.command'))).toHaveValue(/torchrun/);
    });

    test('a job can start after another job of its project, and its page links the one it waits for', async ({ page }) => {
      await signIn(page, locale, 'pi@uni.example');
      await openForm(page);
      const first = unique('first');
      await fill(page, { name: first, gpus: 8, hours: 1 });
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      const firstUrl = page.url();

      await openForm(page);
      await fill(page, { name: unique('second'), gpus: 8, hours: 1 });
      const after = page.getByLabel(t('jobs.after.job'));
      const option = after.locator('option', { hasText: first });
      await expect(option).toHaveCount(1);
      await after.selectOption((await option.getAttribute('value')) ?? '');
      await page.getByLabel(t('jobs.after.when')).selectOption('afterany');
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      const row = page.getByTestId('job-after');
      await expect(row).toContainText(first);
      await expect(row).toContainText(t('jobs.after.once.afterany', { count: 1 }));
      await shoot(page, `job-after-${locale}`, 'test-results/job-page');
      await row.getByRole('link', { name: first }).click();
      await expect(page).toHaveURL(firstUrl);
    });

    test('a sweep over a list of values runs as one job array: the form reserves every task, the page counts and lists them, the job list groups them', async ({ page }) => {
      await signIn(page, locale, 'pi@uni.example');
      await openForm(page);
      const name = unique('sweep');
      // Training tasks: the simulated cluster fails 1 batch job in 20 at random, which made 1 run in 7 of this test end FAILED.
      await fill(page, { name, gpus: 1, hours: 1, kind: 'training' });
      await page.getByLabel(t('jobs.sweep.mode.values'), { exact: true }).check();
      await page.getByLabel(t('jobs.sweep.name'), { exact: true }).fill('LR');
      await page.getByLabel(t('jobs.sweep.values'), { exact: true }).fill('0.1\n0.01\n0.001');
      await page.getByLabel(t('jobs.sweep.atOnce'), { exact: true }).fill('2');
      // Every task reserves as one job: 3 × 1 GPU × 1 h.
      await expect(page.getByTestId('job-estimate-tasks')).toHaveText(t('jobs.sweep.forTasks', { tasks: 3 }));
      await expect(page.getByTestId('job-estimate')).toContainText('3 GPU-h');
      await shoot(page, `form-sweep-${locale}`, 'test-results/job-page');
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      const array = page.getByTestId('job-array');
      await expect(array).toContainText(t('jobs.array.summary', { tasks: 3, text: '0-2%2' }));
      await expect(array).toContainText(t('jobs.array.throttle', { throttle: 2 }));
      await expect(page.getByTestId('job-state').first()).toHaveAttribute('data-state', 'COMPLETED', { timeout: 60_000 });
      await expect(page.getByTestId('job-array-task')).toHaveCount(3);
      await expect(array.getByTestId('array-counts').locator('[data-state="COMPLETED"]')).toHaveAttribute('data-count', '3');
      // Each task picked its own value: the command begins with the values and the line that picks one.
      await expect(page.getByText('SWEEP_VALUES=(')).toBeVisible();
      // The job's GPU-hours are the sum of its tasks'.
      const taskHours = await page.getByTestId('job-array-task').locator('td:nth-child(6)').allInnerTexts();
      const sum = taskHours.reduce((s, text) => s + number(locale, text), 0);
      expect(Math.abs(number(locale, await page.getByTestId('job-gpu-hours').innerText()) - sum)).toBeLessThanOrEqual(0.02);
      await shoot(page, `job-sweep-${locale}`, 'test-results/job-page');
      // Submit again: the same array (its values are in the command), as task indexes.
      await page.getByTestId('job-clone').click();
      await expect(page).toHaveURL(/\/jobs\/new\?clone=/);
      await expect(page.getByTestId('sweep-indexes')).toHaveValue('0-2');
      await expect(page.getByTestId('sweep-at-once')).toHaveValue('2');
      await expect(page.getByLabel(t('jobs.command'), { exact: true })).toHaveValue(/^SWEEP_VALUES=\('0\.1' '0\.01' '0\.001'\)/);
      // The job list shows the array once, with its tasks by state.
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.jobs') }).click();
      const row = page.getByTestId('job-row').filter({ hasText: name });
      await expect(row.getByTestId('job-row-array')).toContainText(t('jobs.array.badge', { tasks: 3 }));
      await expect(row.getByTestId('array-counts').locator('[data-state="COMPLETED"]')).toHaveAttribute('data-count', '3');
    });

    test('the form warns before submitting when the reservation does not fit, and Back after a submit keeps the values', async ({ page }) => {
      await signIn(page, locale, 'pi@uni.example');
      await openForm(page);
      // 64 GPUs × 48 h = 3,072 GPU-h, more than the project has left: said before any submit.
      await fill(page, { name: unique('too big'), gpus: 64, hours: 48 });
      const warning = page.getByTestId('reservation-warning');
      await expect(warning).toContainText(t('jobs.fit.title'));
      const text = await warning.innerText();
      const fits = /(\d+ h(?: \d+ min)?|\d+ min)[^\d]+64 GPUs?/.exec(text);
      expect(fits, text).not.toBeNull();
      expect(seconds(fits![1]!)).toBeLessThan(48 * 3600);
      await expect(page).toHaveURL(/\/jobs\/new/);
      await page.setViewportSize({ width: 390, height: 844 });
      await noSidewaysScroll(page);
      await page.screenshot({ path: `${SHOTS}/form-warning-${locale}-390.png`, fullPage: true });
      await page.setViewportSize({ width: 1366, height: 900 });

      // Submit a job that fits, go Back: the values are still there.
      const name = unique('back');
      // Long enough to be still running or queued when it is cancelled below.
      await fill(page, { name, gpus: 2, hours: 40.5 });
      await page.getByLabel(t('jobs.env')).fill('SEED=7');
      await expect(warning).toHaveCount(0);
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      const jobUrl = page.url();
      await page.goBack();
      await expect(page).toHaveURL(/\/jobs\/new\?.*draft=/);
      await expect(page.getByLabel(t('jobs.name'))).toHaveValue(name);
      await expect(page.getByLabel(t('jobs.gpus'))).toHaveValue('2');
      await expect(page.getByLabel(t('jobs.walltime'))).toHaveValue('40.5');
      await expect(page.getByLabel(t('jobs.env'))).toHaveValue('SEED=7');
      // A new visit of the form starts afresh.
      await openForm(page);
      await expect(page.getByLabel(t('jobs.name'))).toHaveValue('');

      // Cancelling asks first; the keyboard alone can decline and confirm.
      await page.goto(jobUrl);
      const cancel = page.getByRole('button', { name: t('jobs.cancel') });
      await cancel.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: t('jobs.confirmCancelTitle') });
      await expect(dialog).toBeVisible();
      await expect(dialog.getByRole('button', { name: t('jobs.confirmKeep') })).toBeFocused();
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', /SUBMITTING|PENDING|RUNNING/);
      await cancel.focus();
      await page.keyboard.press('Enter');
      await expect(dialog).toBeVisible();
      await page.keyboard.press('Tab');
      await expect(dialog.getByRole('button', { name: t('jobs.confirmCancelYes') })).toBeFocused();
      await page.keyboard.press('Enter');
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'CANCELLED', { timeout: 20_000 });
    });
  });
}

test.describe('inference service (en)', () => {
  test.use({ locale: 'en-GB' });
  const t = texts('en');

  test('a service shows its endpoint, traffic and cost so far; stopping it ends it as completed, charged for the time it ran', async ({ page }) => {
    await signIn(page, 'en', 'pi@uni.example');
    await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.jobs') }).click();
    await page.getByRole('link', { name: t('jobs.submitTitle') }).click();
    const select = page.getByLabel(t('jobs.allocation'));
    await select.selectOption((await select.locator('option', { hasText: 'Protein structure prediction' }).first().getAttribute('value')));
    await page.getByLabel(t('jobs.name')).fill(unique('llm endpoint'));
    await page.getByLabel(t('jobs.kind')).selectOption('inference');
    const model = unique('robotics/assistant').replace(/[^A-Za-z0-9._/:-]/g, '-');
    await page.getByLabel(t('jobs.servedModel')).fill(model);
    await page.getByLabel(t('jobs.gpus')).fill('2');
    await page.getByLabel(t('jobs.nodes')).fill('1');
    await page.getByLabel(t('jobs.walltime')).fill('24');
    await page.getByRole('button', { name: t('jobs.submit') }).click();
    await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'RUNNING', { timeout: 30_000 });
    // Its model behind the portal's OpenAI-compatible gateway, with a curl and a Python snippet naming both.
    await expect(page.getByTestId('job-endpoint')).toHaveText(/^https?:\/\/[^/]+\/api\/v1\/openai\/v1$/);
    await expect(page.getByTestId('job-model')).toHaveText(model);
    await expect(page.getByTestId('service-curl')).toContainText(`"model":"${model}"`);
    await expect(page.getByTestId('service-python')).toContainText(`model="${model}"`);
    await shoot(page, 'service-en', 'test-results/job-page');
    // Nobody has called it yet: the gateway counts calls as they end (e2e/inference.spec.ts makes some).
    await expect(page.getByTestId('job-requests')).toHaveText('0');
    await expect(page.getByTestId('job-cost')).toHaveText(/€\d/);
    await page.getByRole('button', { name: t('jobs.stopService') }).click();
    await page.getByRole('dialog', { name: t('jobs.confirmStopTitle') }).getByRole('button', { name: t('jobs.confirmStopYes') }).click();
    await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 20_000 });
    await expect(page.getByTestId('timeline')).toContainText(t('job.event.stopRequested'));
    const gpuHours = number('en', await page.getByTestId('job-gpu-hours').innerText());
    expect(gpuHours).toBeGreaterThan(0);
    expect(gpuHours).toBeLessThan(2 * 24); // charged for the time it ran, not its walltime
    await expect(page.getByTestId('job-charged')).toHaveText(await page.getByTestId('job-gpu-hours').innerText());
    expect(Math.abs(seconds(await page.getByTestId('job-runtime').innerText()) - (gpuHours * 3600) / 2)).toBeLessThanOrEqual(9);
  });
});
