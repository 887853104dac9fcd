// Data in, results out (issue #27), in English and German: a 50 MB upload whose connection is cut
// halfway resumes and lands with the original's SHA-256; a fine-tuning job reads it, its stdout grows on
// the job page while it runs; its model artefact downloads byte for byte; another tenant gets 404 on the
// file and on the log.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import type { Locale } from '../server/i18n';
import { shoot, signIn, texts, unique } from './helpers';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The e2e server's workspace folder of a project at Jena (scripts/e2e-server.mjs: one data folder per port). */
function workspaceDir(page: Page, projectId: string): string {
  const port = new URL(page.url()).port;
  const dataDir = path.resolve(import.meta.dirname, '..', port === '3100' ? '.data-e2e' : `.data-e2e-${port}`);
  return path.join(dataDir, 'files', 'de-jena', `p${projectId.replace(/-/g, '').slice(0, 16)}`);
}

for (const locale of ['en', 'de'] as const satisfies readonly Locale[]) {
  test.describe(`files and live output (${locale})`, () => {
    test.use({ locale: locale === 'de' ? 'de-DE' : 'en-GB', viewport: { width: 1366, height: 900 } });
    const t = texts(locale);

    test('a 50 MB upload cut halfway resumes; a fine-tuning job reads it and streams its stdout; its model downloads; another tenant gets 404', async ({ page, browser }) => {
      test.setTimeout(180_000);
      const bytes = randomBytes(50 * 1024 * 1024);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'portal-e2e-upload-'));
      const fileName = `${unique('train').replace(/\s+/g, '-')}.bin`;
      const local = path.join(dir, fileName);
      writeFileSync(local, bytes);

      await signIn(page, locale, 'pi@uni.example');
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.projects') }).click();
      await page.getByRole('link', { name: /Protein structure prediction/ }).click();
      await page.getByTestId('project-files').click();
      await expect(page.getByRole('heading', { name: t('files.title') })).toBeVisible();
      const projectId = /\/projects\/([0-9a-f-]{36})\/files/.exec(page.url())![1]!;

      // The connection drops once, on the third 16 MiB piece (after 32 MiB of 50 MiB): the upload asks
      // where it stands and goes on from there, never sending a byte twice.
      let cut = 0;
      let sent = 0;
      await page.route('**/api/uploads/**', async (route) => {
        const request = route.request();
        if (request.method() === 'PATCH') {
          const offset = Number(request.headers()['upload-offset']);
          if (offset >= 32 * 1024 * 1024 && cut === 0) {
            cut++;
            return route.abort('connectionreset');
          }
          sent += request.postDataBuffer()?.length ?? 0;
        }
        return route.continue();
      });
      await page.getByTestId('files-upload-input').setInputFiles(local);
      const upload = page.getByTestId('upload');
      await expect(upload).toHaveAttribute('data-state', 'done', { timeout: 90_000 });
      await expect(page.getByTestId('upload-sha256')).toHaveText(sha256(bytes));
      expect(cut).toBe(1);
      expect(sent).toBe(bytes.length);
      await page.unroute('**/api/uploads/**');
      await expect(page.getByTestId('files-list')).toContainText(fileName);
      await shoot(page, `files-${locale}`, 'test-results/files');

      // A fine-tuning job that reads it: picked in the form's inputs.
      await page.getByRole('navigation', { name: t('nav.main') }).getByRole('link', { name: t('nav.jobs') }).click();
      await page.getByRole('link', { name: t('jobs.submitTitle') }).click();
      const select = page.getByLabel(t('jobs.allocation'));
      await select.selectOption(await select.locator('option', { hasText: 'Protein structure prediction' }).first().getAttribute('value'));
      await page.getByLabel(t('jobs.name')).fill(unique('tune'));
      await page.getByLabel(t('jobs.kind'), { exact: true }).selectOption('fine_tuning');
      await page.getByLabel(t('jobs.gpus')).fill('1'); // the demo allocation is shared by every journey: 4 GPU-h reserved
      await page.getByLabel(t('jobs.nodes')).fill('1');
      await page.getByLabel(t('jobs.walltime')).fill('4');
      await page.getByLabel(t('jobs.inputs.pick', { name: fileName })).check();
      await expect(page.getByTestId('inputs-chosen')).toContainText(fileName);
      await page.getByRole('button', { name: t('jobs.submit') }).click();
      await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/);
      const jobId = /\/jobs\/([0-9a-f-]{36})$/.exec(page.url())![1]!;

      // Its stdout grows on the page while it runs.
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'RUNNING', { timeout: 30_000 });
      const output = page.getByTestId('job-output');
      await expect(output).toContainText(`reading input ${workspaceDir(page, projectId)}/${fileName}`, { timeout: 15_000 });
      const before = (await output.innerText()).length;
      await expect.poll(async () => (await output.innerText()).length, { timeout: 15_000 }).toBeGreaterThan(before);
      expect(await page.getByTestId('job-state').getAttribute('data-state')).toBe('RUNNING');
      await expect(page.getByTestId('job-log-status')).toContainText(t('jobs.log.following'));
      await shoot(page, `job-log-${locale}`, 'test-results/files');

      // Finished: the model artefact downloads byte for byte.
      await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED', { timeout: 60_000 });
      await expect(output).toContainText('[portal] finished');
      await page.getByTestId('job-files').getByRole('button', { name: 'model/' }).click();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'adapter_model.safetensors' }).click()]);
      const saved = readFileSync(await download.path());
      const onDisk = readFileSync(path.join(workspaceDir(page, projectId), 'jobs', jobId, 'model', 'adapter_model.safetensors'));
      expect(saved.length).toBeGreaterThan(1000);
      expect(sha256(saved)).toBe(sha256(onDisk));
      // A valid safetensors file: an 8-byte header length, then its JSON header.
      const headerLength = Number(saved.readBigUInt64LE(0));
      expect(JSON.parse(saved.subarray(8, 8 + headerLength).toString('utf8'))).toEqual(expect.any(Object));

      // A member of another tenant: 404 on the file, the job's log and the job page.
      const other = await browser.newContext({ locale: locale === 'de' ? 'de-DE' : 'en-GB' });
      const stranger = await other.newPage();
      await signIn(stranger, locale, 'owner@company.example');
      const file = await stranger.request.get(`/api/projects/${projectId}/files/download?site=de-jena&path=${encodeURIComponent(fileName)}`);
      expect(file.status()).toBe(404);
      const log = await stranger.request.get(`/api/trpc/files.output?input=${encodeURIComponent(JSON.stringify({ json: { jobId } }))}`);
      expect(log.status()).toBe(404);
      expect(await log.text()).not.toContain('[portal]');
      const jobPage = await stranger.goto(`/jobs/${jobId}`);
      expect(jobPage?.status()).toBe(404);
      await other.close();
    });
  });
}
