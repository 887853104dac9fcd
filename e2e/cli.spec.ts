// The command-line client (bin/portal-cli.mjs) as a script runs it, a child process against the
// built portal: a token made on the profile page, `jobs submit` then `jobs watch` to COMPLETED on
// the simulated cluster, `usage --csv` byte for byte the usage page's download, and exit codes.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { signIn, texts, unique } from './helpers';

const t = texts('en');
const CLI = path.resolve(import.meta.dirname, '../bin/portal-cli.mjs');
const PROJECT = 'Protein structure prediction';

interface CliRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** cli runs portal-cli with the portal's address and a token in the environment, stdin from `input` (not a terminal). */
function cli(args: string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    // Nothing from the environment running the tests: no stored token, no PORTAL_* of its own.
    const isolated = { PORTAL_URL: '', PORTAL_TOKEN: '', PORTAL_CLI_CONFIG: path.join(workdir, 'no-config.json') };
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...isolated, ...env }, stdio: 'pipe' });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString('utf8') }));
    child.stdin.end(input);
  });
}

/** createToken makes a personal API token on the profile page, as a person would, and returns it (shown once). */
async function createToken(page: Page, scopes: ('read' | 'jobs:write')[]): Promise<string> {
  await page.goto('/profile');
  const form = page.getByTestId('create-token');
  await form.getByLabel(t('profile.tokenName')).fill(unique('portal-cli'));
  for (const scope of ['read', 'jobs:write'] as const) await form.getByLabel(t(`tokenScope.${scope}`)).setChecked(scopes.includes(scope));
  await form.getByRole('button', { name: t('profile.tokenCreate') }).click();
  const token = (await page.getByTestId('new-token-value').innerText()).trim();
  expect(token).toMatch(/^afp_/);
  return token;
}

/** The month before this one: all history, so nothing settles in it while the test compares two downloads. */
function lastMonth(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 7);
}

let workdir: string;
test.beforeEach(() => {
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-cli-e2e-'));
});
test.afterEach(() => fs.rmSync(workdir, { recursive: true, force: true }));

test('a script logs in with a token, submits a job and watches it reach COMPLETED', async ({ page, baseURL }) => {
  test.setTimeout(120_000);
  await signIn(page, 'en', 'pi@uni.example');
  const token = await createToken(page, ['read', 'jobs:write']);

  // login reads the token from a pipe (no terminal), checks it, and stores it readable by its owner only.
  const config = path.join(workdir, 'config.json');
  const env = { PORTAL_CLI_CONFIG: config };
  const login = await cli(['login', '--url', baseURL!], env, `${token}\n`);
  expect(login.stderr).toBe('');
  expect(login.code).toBe(0);
  expect(fs.statSync(config).mode & 0o777).toBe(0o600);
  expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({ url: baseURL, token });

  const allocations = await cli(['allocations', '--json'], env);
  expect(allocations.code, allocations.stderr).toBe(0);
  const { items } = JSON.parse(allocations.stdout.toString()) as { items: { id: string; projectTitle: string; status: string; unit: string }[] };
  const allocation = items.find((a) => a.projectTitle.startsWith(PROJECT) && a.status === 'active');
  expect(allocation, 'the PI’s active allocation').toBeDefined();

  const name = unique('cli job');
  const jobFile = path.join(workdir, 'job.yaml');
  fs.writeFileSync(
    jobFile,
    `# 2 GPUs for at most 30 minutes: 1 GPU-h reserved
name: "${name}"
kind: training
allocationId: ${allocation!.id}
resourceClassId: h100
gpus: 2
walltimeMinutes: 30
image: nvcr.io/nvidia/pytorch:24.05-py3
command: |
  python train.py --epochs 1
env:
  SEED: "42"
`,
  );

  // Without a terminal and without --yes nothing is submitted.
  const unconfirmed = await cli(['jobs', 'submit', '--file', jobFile], env);
  expect(unconfirmed.code).toBe(2);
  expect(unconfirmed.stderr).toContain('pass --yes');

  const submit = await cli(['jobs', 'submit', '--file', jobFile, '--yes'], env);
  expect(submit.stderr).toContain('Reservation:  1 GPU-h');
  expect(submit.stderr).toContain('Cost:         at most €1.80 at €1.80 per GPU-h');
  expect(submit.stderr).toMatch(/Energy:\s+at most [\d.]+ kWh/);
  expect(submit.code).toBe(0);
  const jobId = submit.stdout.toString().trim();
  expect(jobId).toMatch(/^[0-9a-f-]{36}$/);

  const watch = await cli(['jobs', 'watch', jobId, '--interval', '1'], env);
  const lines = watch.stdout.toString().trim().split('\n');
  expect(watch.code, watch.stderr).toBe(0);
  const states = lines.map((line) => / UTC {2}([A-Z_]+)/.exec(line)?.[1]).filter(Boolean);
  expect(states).toContain('RUNNING');
  expect(states.at(-1)).toBe('COMPLETED');
  expect(new Set(states).size).toBe(states.length); // each change once
  expect(lines.at(-1)).toMatch(/^Job completed with exit code 0/);

  // Pages of two, followed to the end: the demo's history holds more than one page of the PI's finished jobs.
  const listed = await cli(['jobs', 'list', '--state', 'COMPLETED', '--limit', '2', '--all', '--json'], env);
  expect(listed.code, listed.stderr).toBe(0);
  const { items: jobs, nextCursor } = JSON.parse(listed.stdout.toString()) as { items: { id: string; name: string; state: string }[]; nextCursor: string | null };
  expect(jobs.length).toBeGreaterThan(2);
  expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
  expect(jobs.every((j) => j.state === 'COMPLETED')).toBe(true);
  expect(jobs).toContainEqual(expect.objectContaining({ id: jobId, name }));
  expect(nextCursor).toBeNull();

  // The browser shows the same job.
  await page.goto(`/jobs/${jobId}`);
  await expect(page.getByTestId('job-state')).toHaveAttribute('data-state', 'COMPLETED');
  await expect(page.getByRole('heading', { name })).toBeVisible();
});

test('`usage --csv` writes the usage page’s CSV byte for byte', async ({ page, baseURL }) => {
  await signIn(page, 'en', 'pi@uni.example');
  const token = await createToken(page, ['read']);
  const month = lastMonth();

  await page.goto(`/usage?month=${month}`);
  const downloading = page.waitForEvent('download');
  await page.getByRole('link', { name: t('usage.downloadCsv') }).click();
  const fromPage = fs.readFileSync(await (await downloading).path());

  const run = await cli(['usage', '--month', month, '--csv'], { PORTAL_URL: baseURL!, PORTAL_TOKEN: token });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(fromPage.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
  expect(fromPage.toString('utf8').split('\r\n').length).toBeGreaterThan(2); // the header and some jobs of the demo's history
  expect(run.stdout.equals(fromPage)).toBe(true);
});

test('exit codes a script can act on: not found 4, refused scope 3, bad token 3, unreachable 6', async ({ page, baseURL }) => {
  await signIn(page, 'en', 'pi@uni.example');
  const readOnly = await createToken(page, ['read']);
  const env = { PORTAL_URL: baseURL!, PORTAL_TOKEN: readOnly };

  const missing = await cli(['jobs', 'get', randomUUID()], env);
  expect(missing.code).toBe(4);
  expect(missing.stderr).toMatch(/^error: /);

  const cancel = await cli(['jobs', 'cancel', randomUUID(), '--json'], env);
  expect(cancel.code).toBe(3); // a read token may not cancel (403), whatever the job
  expect((JSON.parse(cancel.stderr) as { error: { status: number; exitCode: number } }).error).toMatchObject({ status: 403, exitCode: 3 });

  const revoked = await cli(['allocations'], { ...env, PORTAL_TOKEN: `afp_${'x'.repeat(40)}` });
  expect(revoked.code).toBe(3);
  expect(revoked.stderr).toContain('run `portal-cli login`');

  const nowhere = await cli(['allocations'], { ...env, PORTAL_URL: 'http://127.0.0.1:1' });
  expect(nowhere.code).toBe(6);
  expect(nowhere.stderr).toContain('cannot reach http://127.0.0.1:1/api/v1/allocations');
});
