#!/usr/bin/env node
// `npm test`: every tier — typecheck, lint, unit + integration (vitest), the tests against a real Slurm
// when SLURM_REST_URL is set (vitest project `slurm`), e2e (Playwright) — then each tier's result and
// wall-clock time, and one closing line "N passed, N failed" that totals them all (CI reads that line).
// Integration tests also run on real Postgres when TEST_DATABASE_URL is set.
//
// Tiers that do not compete for the same thing run side by side (the machine has 2 cores):
//   1. typecheck, lint and the production build for e2e;
//   2. unit + integration;
//   3. e2e in two shards balanced by each spec file's recorded time (scripts/e2e-shards.mjs), each on its own
//      server, database, SMTP sink and OIDC provider;
// and the Slurm tier, which mostly waits on the cluster in real time, beside all three from the start.
// The tier shown live prints to the terminal; the others write to .test-results/<tier>.log, printed
// whole after their phase.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildIsCurrent, nextBin } from './build-if-needed.mjs';
import { assignShards, durationsOfReport, DURATIONS_FILE, fileFilter, readDurations, specFiles } from './e2e-shards.mjs';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, '.test-results');
fs.mkdirSync(out, { recursive: true });
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const started = Date.now();
const E2E_SHARDS = Math.max(1, Number(process.env.E2E_SHARDS ?? 2));

/** Logs of the tiers that ran beside the live one, printed after their phase (so outputs never interleave). */
const pendingLogs = [];
function printLogs() {
  for (const { line, file } of pendingLogs.splice(0)) console.log(`\n${line}   (logged to ${path.relative(root, file)})\n${fs.readFileSync(file, 'utf8')}`);
}

/** run starts a command; `live` prints to the terminal, else to .test-results/<log>.log (printed after the phase). Resolves to success. */
function run(command, args, { env = {}, live = false, log } = {}) {
  const line = `$ ${path.basename(command)} ${args.join(' ')}`;
  const file = live ? undefined : path.join(out, `${log}.log`);
  if (live) console.log(`\n${line}`);
  const fd = file ? fs.openSync(file, 'w') : undefined;
  const child = spawn(command, args, { cwd: root, stdio: live ? 'inherit' : ['ignore', fd, fd], env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env } });
  return new Promise((resolve) => {
    let settled = false;
    const settle = (ok) => {
      if (settled) return;
      settled = true;
      if (fd !== undefined) {
        fs.closeSync(fd);
        pendingLogs.push({ line, file });
      }
      resolve(ok);
    };
    child.on('close', (code) => settle(code === 0));
    child.on('error', (error) => {
      console.error(`${line}: ${error.message}`);
      settle(false);
    });
  });
}

/** timed runs a tier and adds its results with the seconds it took. */
async function timed(work) {
  const from = Date.now();
  const results = await work();
  const seconds = (Date.now() - from) / 1000;
  return results.map((r) => ({ ...r, seconds }));
}

const minutes = (seconds) => `${Math.floor(Math.round(seconds) / 60)}:${String(Math.round(seconds) % 60).padStart(2, '0')} min`;

const check = (name) => (ok) => [{ name, passed: ok ? 1 : 0, failed: ok ? 0 : 1 }];

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The failed tests of every tier, named again just above the closing line (a CI log's tail shows them). */
const failures = [];
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const firstLine = (message) => String(message ?? '').replace(ANSI_COLOUR, '').split('\n').find((l) => l.trim())?.trim().slice(0, 240) ?? '';

/** playwrightFailures walks a Playwright JSON report's suites for the tests that ended unexpectedly. */
function playwrightFailures(suites, shard) {
  for (const suite of suites ?? []) {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests ?? []) {
        if (test.status !== 'unexpected') continue;
        const error = test.results?.at(-1)?.error?.message;
        failures.push(`e2e shard ${shard}: ${spec.file}:${spec.line} › ${[test.projectName, suite.title, spec.title].filter(Boolean).join(' › ')} — ${firstLine(error)}`);
      }
    }
    playwrightFailures(suite.suites, shard);
  }
}

/** vitestTier runs vitest projects with the JSON reporter and counts their tests (a file that failed to load counts as a failure). */
async function vitestTier(name, projects, options) {
  const json = path.join(out, `vitest-${name.replace(/\W+/g, '-')}.json`);
  fs.rmSync(json, { force: true });
  await run(bin('vitest'), ['run', ...projects.flatMap((p) => ['--project', p]), '--reporter=default', '--reporter=json', `--outputFile.json=${json}`], options);
  const result = readJson(json);
  if (!result) return [{ name, passed: 0, failed: 1 }];
  const files = result.testResults ?? [];
  const loadFailures = files.filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0);
  for (const f of loadFailures) failures.push(`${name}: ${path.relative(root, f.name)} did not load — ${firstLine(f.message)}`);
  for (const f of files) {
    for (const a of f.assertionResults ?? []) {
      if (a.status === 'failed') failures.push(`${name}: ${path.relative(root, f.name)} › ${a.fullName} — ${firstLine(a.failureMessages?.[0])}`);
    }
  }
  return [{ name, passed: result.numPassedTests, failed: result.numFailedTests + loadFailures.length }];
}

/** build makes the production build e2e serves, unless one newer than every source exists. */
function build() {
  if (buildIsCurrent()) return Promise.resolve(true);
  return run(process.execPath, [nextBin, 'build'], { log: 'build' });
}

/** e2eShard runs one shard of the browser journeys (its spec files) on ports of its own (server, SMTP sink, OIDC provider). */
async function e2eShard(index, files) {
  const json = path.join(out, `playwright-${index + 1}.json`);
  fs.rmSync(json, { force: true });
  const offset = index * 10;
  const env = {
    PLAYWRIGHT_JSON_OUTPUT_NAME: json,
    E2E_PORT: String(Number(process.env.E2E_PORT ?? 3100) + offset),
    TEST_SMTP_PORT: String(Number(process.env.TEST_SMTP_PORT ?? 2526) + offset),
    TEST_SMTP_HTTP_PORT: String(Number(process.env.TEST_SMTP_HTTP_PORT ?? 3902) + offset),
    TEST_OIDC_PORT: String(Number(process.env.TEST_OIDC_PORT ?? 3901) + offset),
    E2E_OUTPUT_DIR: E2E_SHARDS > 1 ? `test-results/shard-${index + 1}` : 'test-results',
  };
  const args = ['test', ...(E2E_SHARDS > 1 ? files.map(fileFilter) : [])];
  await run(bin('playwright'), args, { env, live: index === 0, log: index === 0 ? undefined : `e2e-shard-${index + 1}` });
  const report = readJson(json);
  playwrightFailures(report?.suites, index + 1);
  return report && { stats: report.stats, seconds: durationsOfReport(report) };
}

/**
 * noteDurations writes each spec file's time of this run to .test-results/e2e-durations.json and says when the
 * recorded times (e2e/durations.json, which balance the shards) are off by more than a quarter of the run.
 */
function noteDurations(seconds) {
  const fresh = path.join(out, 'e2e-durations.json');
  fs.writeFileSync(fresh, `${JSON.stringify(seconds, null, 2)}\n`);
  const recorded = readDurations();
  const total = Object.values(seconds).reduce((a, b) => a + b, 0);
  const off = Object.entries(seconds).reduce((sum, [f, s]) => sum + Math.abs(s - (recorded[f] ?? 0)), 0);
  if (off > total / 4) console.log(`\nThe e2e files' times moved (by ${Math.round(off)} of ${Math.round(total)} s): cp ${path.relative(root, fresh)} ${path.relative(root, DURATIONS_FILE)} balances the shards again.`);
}

// Against a real Slurm, when one is configured (CI starts one: scripts/slurm-test-cluster.sh). This tier
// mostly waits on the cluster in real time, so it runs beside all the others from the start.
const slurm = process.env.SLURM_REST_URL
  ? timed(() => vitestTier('slurm', ['slurm'], { log: 'slurm' }))
  : process.env.PORTAL_SLURM_REQUIRED === '1'
    ? (console.error('\nPORTAL_SLURM_REQUIRED=1 but no Slurm is configured (SLURM_REST_URL): the Slurm tier fails.'), Promise.resolve([{ name: 'slurm', passed: 0, failed: 1, seconds: 0 }]))
    : (console.log('\n(SLURM_REST_URL not set: the tests against a real Slurm are skipped; `scripts/slurm-test-cluster.sh start` starts one)'), Promise.resolve([]));

// 1. Static checks, and the build the browser journeys need.
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = fs.existsSync(chromium);
const [typecheck, lint, built] = await Promise.all([
  timed(async () => check('typecheck')(await run(bin('tsc'), ['--noEmit'], { live: true }))),
  timed(async () => check('lint')(await run(bin('eslint'), ['.', '--max-warnings', '0'], { log: 'lint' }))),
  haveChromium ? timed(async () => check('build (for e2e)')(await build())) : Promise.resolve([]),
]);
printLogs();

// 2. Unit and integration tests.
if (!process.env.TEST_DATABASE_URL) console.log('\n(TEST_DATABASE_URL not set: integration tests run on PGlite only)');
const vitest = await timed(() => vitestTier('unit + integration', ['unit', 'integration'], { live: true }));
printLogs();

// 3. Browser journeys on the production build.
let e2e = [];
if (!haveChromium) {
  console.error(`\nNo Chromium at ${chromium}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH.`);
  e2e = [{ name: 'e2e', passed: 0, failed: 1, seconds: 0 }];
} else if (built[0]?.failed === 0) {
  // Spec files whole to the shard with the least recorded time so far (scripts/e2e-shards.mjs).
  const plan = assignShards(specFiles(), readDurations(), E2E_SHARDS).filter((shard) => shard.files.length > 0);
  if (plan.length > 1) plan.forEach((shard, i) => console.log(`e2e shard ${i + 1}: ${shard.files.length} spec files, ${minutes(shard.seconds)} when last recorded`));
  e2e = await timed(async () => {
    const runs = await Promise.all(plan.map((shard, i) => e2eShard(i, shard.files)));
    if (runs.some((r) => !r)) return [{ name: 'e2e', passed: 0, failed: 1 }];
    if (plan.length > 1) noteDurations(Object.assign({}, ...runs.map((r) => r.seconds)));
    const shards = runs.map((r) => r.stats);
    return [{ name: `e2e (${plan.length} shard${plan.length > 1 ? 's' : ''})`, passed: shards.reduce((n, s) => n + s.expected + s.flaky, 0), failed: shards.reduce((n, s) => n + s.unexpected, 0) }];
  });
  printLogs();
}

const phases = [[...typecheck, ...lint, ...built], vitest, e2e, await slurm];
printLogs();
const tiers = phases.flat();
console.log('\nSummary (1–3 one after another, the tiers of 1 side by side; the Slurm tier beside them all)');
phases.forEach((phase, i) => {
  for (const tier of phase) console.log(`  ${i < 3 ? `${i + 1}.` : '  '} ${tier.name.padEnd(22)} ${`${tier.passed} passed, ${tier.failed} failed`.padEnd(26)} ${minutes(tier.seconds ?? 0)}`);
});
console.log(`     ${'whole line'.padEnd(22)} ${''.padEnd(26)} ${minutes((Date.now() - started) / 1000)}`);
if (failures.length > 0) console.log(`\nFailed (${failures.length}; the tier's log above has the whole message)\n${failures.map((f) => `  ✗ ${f}`).join('\n')}\n`);
const passed = tiers.reduce((sum, t) => sum + t.passed, 0);
const failed = tiers.reduce((sum, t) => sum + t.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
