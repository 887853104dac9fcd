/**
 * What each page sends of JavaScript on its first load (issue #30): the production build
 * (`scripts/server.mjs`) on a fresh database with the demo centre, Debian's Chromium (Playwright)
 * signed in as a company owner, a PI and the centre's admin; each page in a fresh browser context (an
 * empty cache, the session kept), every script it loads until the network is quiet, summed as sent
 * (compressed, Playwright's response body size) and as the browser runs it (decoded). Writes the
 * section "## Page weight (first load)" of BENCHMARKS.md.
 *
 *   npm run bench:pages -- [--port 3215] [--rebuild | --no-build] [--webpack] [--database-url URL] [--keep] [--no-write]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext } from '@playwright/test';
import { serverBenchFlags } from './args';
import { atInterrupt, createBenchDatabase, wasInterrupted, type BenchDatabase } from './database';
import { ensureBuild, startServer, type PortalServer } from './http-server';
import { machine, mark, writeSection } from './markdown';
import { num } from './stats';

const SECTION = '## Page weight (first load)';
const DEMO_PASSWORD = 'demo-password';
/** The targets of issue #30, in KB (1,000 bytes) of JavaScript sent. */
const TARGET_KB = { reference: 250, other: 210 } as const;
const REFERENCE = '/developers/api';

const PERSONAS: { email: string; who: string; pages: string[] }[] = [
  { email: 'owner@company.example', who: 'company owner', pages: ['/dashboard', '/jobs', '/jobs/new', '/usage', '/prices', '/models', '/organisation', '/projects', '/invoices', '/notifications', '/profile', '/apps', REFERENCE] },
  { email: 'pi@uni.example', who: 'PI', pages: ['/dashboard', '/projects', '/projects/new', '/usage'] },
  { email: 'admin@centre.example', who: 'centre admin', pages: ['/staff/centre', '/staff/applications', '/staff/cluster', '/staff/allocations', '/staff/invoices', '/staff/tenants', '/staff/audit', '/staff/mail', '/staff/what-if', '/staff/tco'] },
];
const PUBLIC_PAGES = ['/sign-in', '/sign-up'];

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Weight {
  page: string;
  who: string;
  scripts: number;
  sentBytes: number;
  decodedBytes: number;
}

/** weigh loads one page in a fresh context and sums the scripts it fetched. */
async function weigh(browser: Browser, base: string, page: string, who: string, storageState?: Awaited<ReturnType<BrowserContext['storageState']>>): Promise<Weight> {
  const context = await browser.newContext({ baseURL: base, ...(storageState ? { storageState } : {}) });
  try {
    const tab = await context.newPage();
    const scripts: Promise<{ sent: number; decoded: number }>[] = [];
    tab.on('response', (response) => {
      if (response.request().resourceType() !== 'script') return;
      scripts.push(
        (async () => {
          const [body, sizes] = await Promise.all([response.body().catch(() => Buffer.alloc(0)), response.request().sizes().catch(() => ({ responseBodySize: 0 }))]);
          return { sent: sizes.responseBodySize || body.length, decoded: body.length };
        })(),
      );
    });
    const answer = await tab.goto(page, { waitUntil: 'networkidle' });
    if (!answer || answer.status() >= 400) throw new Error(`${page} as ${who}: HTTP ${answer?.status() ?? 'none'}`);
    if (new URL(tab.url()).pathname !== page) throw new Error(`${page} as ${who}: sent to ${tab.url()}`);
    const sizes = await Promise.all(scripts);
    return { page, who, scripts: sizes.length, sentBytes: sizes.reduce((s, x) => s + x.sent, 0), decodedBytes: sizes.reduce((s, x) => s + x.decoded, 0) };
  } finally {
    await context.close();
  }
}

async function signedIn(browser: Browser, base: string, email: string) {
  const context = await browser.newContext({ baseURL: base });
  const tab = await context.newPage();
  await tab.goto('/sign-in');
  await tab.locator('input[type=email]').fill(email);
  await tab.locator('input[type=password]').fill(DEMO_PASSWORD);
  await tab.locator('form button[type=submit]').first().click();
  await tab.waitForURL(/\/dashboard$/);
  const state = await context.storageState();
  await context.close();
  return state;
}

function section(weights: Weight[], serverNote: string): string {
  const kb = (bytes: number) => bytes / 1000;
  const rows = weights.map((w) => {
    const target = w.page === REFERENCE ? TARGET_KB.reference : TARGET_KB.other;
    return `| \`${w.page}\` | ${w.who} | ${w.scripts} | ${num(kb(w.sentBytes), 1)} KB | ${num(kb(w.decodedBytes), 1)} KB | ≤ ${target} KB | ${mark(kb(w.sentBytes) <= target)} |`;
  });
  const others = weights.filter((w) => w.page !== REFERENCE);
  const heaviest = others.reduce((a, b) => (b.sentBytes > a.sentBytes ? b : a));
  return [
    SECTION,
    '',
    `Measured by \`npm run bench:pages\` (\`bench/page-weight.ts\`) on ${new Date().toISOString().slice(0, 10)}. Machine: ${machine()}; ${serverNote}. Debian's Chromium through Playwright loads each page in a fresh browser context (an empty cache; the person's session cookie kept) and waits until the network is quiet; every script it fetched is summed as sent (compressed by the server, Playwright's response body size) and as run (decoded). KB = 1,000 bytes.`,
    '',
    '| page | as | scripts | JavaScript sent | decoded | target (sent) | |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
    ...rows,
    '',
    `The heaviest page but the API reference: \`${heaviest.page}\` (${heaviest.who}), ${num(kb(heaviest.sentBytes), 1)} KB. The API reference is rendered on the server from the OpenAPI document (no script of its own); with Swagger UI it sent 593 KB (issue #30). Every page sent both languages' message catalogues too until client components imported \`server/i18n/core.ts\` (no catalogue): 37 KB less each (the dashboard 215.5 → 178.3 KB in the run before). Their messages then came inside every page's HTML (125–139 k characters); since issue #30 the browser fetches its language's catalogue once, as data (\`/api/i18n/<locale>.<hash>.json\`, 37 KB compressed in English, 42 KB in German; preloaded beside the scripts, kept a year, not counted above as it is no script).`,
    '',
    'Regenerate with `npm run bench:pages`.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const o = serverBenchFlags(3215);
  ensureBuild(root, { rebuild: o.rebuild, reuse: o.reuseBuild, webpack: o.webpack }, log);
  let database: BenchDatabase | undefined;
  let server: PortalServer | undefined;
  let browser: Browser | undefined;
  const work = mkdtempSync(join(tmpdir(), 'portal-bench-pages-'));
  const unregisterWork = atInterrupt(() => Promise.resolve(o.keep ? undefined : rmSync(work, { recursive: true, force: true })));
  let unregisterServer = () => {};
  try {
    database = await createBenchDatabase(o.adminUrl, { keep: o.keep, log });
    server = await startServer(root, { port: o.port, databaseUrl: database.url, dataDir: work, env: { SIM_NODE_MTBF_HOURS: '0' } });
    unregisterServer = atInterrupt(server.stop);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
    const weights: Weight[] = [];
    for (const page of PUBLIC_PAGES) weights.push(await weigh(browser, server.base, page, 'signed out'));
    for (const persona of PERSONAS) {
      const state = await signedIn(browser, server.base, persona.email);
      for (const page of persona.pages) {
        const w = await weigh(browser, server.base, page, persona.who, state);
        log(`  ${page} (${persona.who}): ${w.scripts} scripts, ${num(w.sentBytes / 1000, 1)} KB sent, ${num(w.decodedBytes / 1000, 1)} KB decoded`);
        weights.push(w);
      }
    }
    const text = section(weights, 'the server (`scripts/server.mjs` on the production build) and PostgreSQL (a fresh database with the demo centre, dropped after the run) on the same machine');
    log(`\n${text}`);
    if (o.write) log(`wrote ${writeSection(root, SECTION, text)}`);
  } catch (error) {
    if (server) log(`--- last lines of the server ---\n${server.tail()}`);
    throw error;
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    unregisterServer();
    await database?.drop().catch((error: unknown) => log(`could not drop ${database?.name}: ${String(error)}`));
    if (!o.keep) rmSync(work, { recursive: true, force: true });
    unregisterWork();
  }
}

main().catch((error: unknown) => {
  if (wasInterrupted()) return;
  console.error(error);
  process.exitCode = 1;
});
