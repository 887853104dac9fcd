// Several web processes (scripts/server.mjs --processes, PORTAL_WEB_PROCESSES): started together on a
// fresh Postgres they migrate and seed it once (an advisory lock), both serve the one port, a process
// killed is replaced while the other answers, and SIGTERM stops them all as one server would stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import postgres from 'postgres';
import { DEMO_PASSWORD, texts } from './helpers';

const ADMIN_URL = process.env.TEST_DATABASE_URL;
// Beside this shard's own server (E2E_PORT, one per shard).
const PORT = Number(process.env.E2E_PORT ?? 3100) + 90;

/** The process ids of a process's children (Linux /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * health asks GET /api/health on a connection of its own (no keep-alive: each request is handed to a
 * process afresh, and none reuses a connection to a process that was killed); 0 when there is no answer
 * within 15 s.
 */
const health = (base: string) =>
  new Promise<number>((resolve) => {
    const request = http.get(`${base}/api/health`, { agent: false, timeout: 15_000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(0));
  });

test('two web processes share one port and one Postgres: one migration, one seed, a lost process replaced, one stop', async ({ page }) => {
  test.skip(!ADMIN_URL, 'needs a real Postgres (TEST_DATABASE_URL): PGlite is one process');
  // Two Next.js processes start, migrate and seed a fresh database, and one starts again: on a loaded CI machine that takes minutes.
  test.setTimeout(420_000);
  const name = `portal_e2e_procs_${Math.random().toString(36).slice(2, 10)}`;
  const admin = postgres(ADMIN_URL!, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL!);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'portal-e2e-procs-'));
  const base = `http://127.0.0.1:${PORT}`;
  let output = '';
  let server: ChildProcess | undefined;
  try {
    server = spawn(process.execPath, ['scripts/server.mjs', '-p', String(PORT), '-H', '127.0.0.1', '--processes', '2'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      // Tenant calls on their own login, as in production (docs/deploy.md; .ci/run creates the role with LOGIN).
      env: { ...process.env, DATABASE_URL: url.toString(), DATABASE_TENANT_URL: Object.assign(new URL(url), { username: 'portal_authenticator' }).toString(), PORTAL_DATA_DIR: dataDir, PORTAL_ENV: 'demo', DEMO_SEED: 'auto', PORTAL_URL: '', SIM_NODE_MTBF_HOURS: '0', SMTP_URL: '', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Kept for the assertions, and what is not routine shown as it comes (a time-out shows where it stood).
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      for (const line of text.split('\n')) if (line.trim() && !line.includes('"level":"info"')) console.log(`[web-processes] ${line.slice(0, 300)}`);
    };
    server.stdout!.on('data', take);
    server.stderr!.on('data', take);
    const primary = server.pid!;
    console.log(`[web-processes] started ${primary} on ${base}, database ${name}`);
    await until('the server to listen with 2 web processes', () => (output.includes('with 2 web processes') ? true : undefined), 180_000);
    const workers = childrenOf(primary);
    expect(workers).toHaveLength(2);
    // Both started the portal on the one fresh database: migrated and seeded once, neither failed.
    expect(output.match(/\[portal\] ready/g)).toHaveLength(2);
    expect(output.match(/Demo centre seeded/g)).toHaveLength(1);
    expect(output).not.toContain('cannot open the database');
    const db = postgres(url.toString(), { max: 1, onnotice: () => undefined });
    try {
      const [seeded] = await db<{ n: number }[]>`select count(*)::int as n from users where email = 'owner@company.example'`;
      expect(seeded?.n).toBe(1);
    } finally {
      await db.end();
    }
    // Answers on the one port, from whichever process the connection was handed to.
    const statuses = await Promise.all(Array.from({ length: 20 }, () => health(base)));
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
    // A signed-in person's pages: their tenant reads run on the tenant calls' own login (DATABASE_TENANT_URL).
    const t = texts('en');
    await page.goto(`${base}/sign-in`);
    await page.getByLabel(t('field.email')).fill('owner@company.example');
    await page.getByLabel(t('field.password')).fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: t('signIn.submit'), exact: true }).click();
    await expect(page).toHaveURL(/\/dashboard$/);
    await page.goto(`${base}/jobs`);
    await expect(page.getByRole('heading', { level: 1, name: t('jobs.title') })).toBeVisible();
    await expect(page.getByRole('row').nth(1)).toBeVisible(); // the demo company's jobs, read as its tenant

    // One process killed: the other answers meanwhile, and a new one takes its place.
    process.kill(workers[0]!, 'SIGKILL');
    const during = await Promise.all(Array.from({ length: 10 }, () => health(base)));
    expect(during.filter((s) => s === 200).length).toBeGreaterThan(0);
    const replaced = await until('a new web process', () => {
      const now = childrenOf(primary);
      return now.length === 2 && !now.includes(workers[0]!) ? now : undefined;
    }, 90_000);
    await until('the new process to be ready', () => (output.match(/\[portal\] ready/g)?.length === 3 ? true : undefined), 120_000);
    const after = await Promise.all(Array.from({ length: 20 }, () => health(base)));
    expect(after).toEqual(Array.from({ length: 20 }, () => 200));

    // SIGTERM to the first process stops them all, with the exit code of one stopped server.
    const exited = new Promise<number | null>((resolve) => server!.on('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    expect(await exited).toBe(143);
    await until('every web process to end', () => (replaced.every((pid) => !alive(pid)) ? true : undefined), 20_000);
  } catch (error) {
    // What the server said, to see why.
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- the server's output ---\n${output.slice(-4000)}`, { cause: error });
  } finally {
    if (server && server.exitCode === null) {
      for (const pid of childrenOf(server.pid!)) process.kill(pid, 'SIGKILL');
      server.kill('SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
  }
});

test('several web processes are refused on the embedded database, with the fix named', async () => {
  const child = spawn(process.execPath, ['scripts/server.mjs', '-p', String(PORT), '--processes', '2'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(code).toBe(1);
  expect(text).toContain('set DATABASE_URL');
  expect(text).toContain('PORTAL_WEB_PROCESSES=1');
});
