#!/usr/bin/env node
// `npm test`: every tier, in order — typecheck, lint, unit + integration (vitest), the tests against a
// real Slurm when SLURM_REST_URL is set (vitest project `slurm`), e2e (Playwright) —
// then one closing line "N passed, N failed" that totals them all (CI reads that line).
// Integration tests also run on real Postgres when TEST_DATABASE_URL is set.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildIfNeeded } from './build-if-needed.mjs';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, '.test-results');
fs.mkdirSync(out, { recursive: true });
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const tiers = [];
const started = Date.now();

function run(command, args, env = {}) {
  console.log(`\n$ ${path.basename(command)} ${args.join(' ')}`);
  return spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env } }).status === 0;
}

function check(name, ok) {
  tiers.push({ name, passed: ok ? 1 : 0, failed: ok ? 0 : 1 });
}

// Each tier's wall-clock time, printed in the summary: the line's budget is CI's 90 minutes, and a tier
// that grows shows here first.
let tierStarted = Date.now();
function stamp() {
  const tier = tiers[tiers.length - 1];
  if (tier) tier.seconds = (Date.now() - tierStarted) / 1000;
  tierStarted = Date.now();
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

// 1. Static checks.
check('typecheck', run(bin('tsc'), ['--noEmit']));
stamp();
check('lint', run(bin('eslint'), ['.', '--max-warnings', '0']));
stamp();

// 2. Unit and integration tests.
const vitestJson = path.join(out, 'vitest.json');
fs.rmSync(vitestJson, { force: true });
if (!process.env.TEST_DATABASE_URL) console.log('\n(TEST_DATABASE_URL not set: integration tests run on PGlite only)');
run(bin('vitest'), ['run', '--project', 'unit', '--project', 'integration', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`]);
const vitest = readJson(vitestJson);
if (vitest) {
  const loadFailures = (vitest.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
  tiers.push({ name: 'unit + integration', passed: vitest.numPassedTests, failed: vitest.numFailedTests + loadFailures });
} else {
  tiers.push({ name: 'unit + integration', passed: 0, failed: 1 });
}
stamp();

// 3. Against a real Slurm, when one is configured (CI starts one: scripts/slurm-test-cluster.sh).
if (process.env.SLURM_REST_URL) {
  const slurmJson = path.join(out, 'vitest-slurm.json');
  fs.rmSync(slurmJson, { force: true });
  run(bin('vitest'), ['run', '--project', 'slurm', '--reporter=default', '--reporter=json', `--outputFile.json=${slurmJson}`]);
  const slurm = readJson(slurmJson);
  const loadFailures = (slurm?.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
  tiers.push(slurm ? { name: 'slurm', passed: slurm.numPassedTests, failed: slurm.numFailedTests + loadFailures } : { name: 'slurm', passed: 0, failed: 1 });
} else if (process.env.PORTAL_SLURM_REQUIRED === '1') {
  console.error('\nPORTAL_SLURM_REQUIRED=1 but no Slurm is configured (SLURM_REST_URL): the Slurm tier fails.');
  tiers.push({ name: 'slurm', passed: 0, failed: 1 });
} else {
  console.log('\n(SLURM_REST_URL not set: the tests against a real Slurm are skipped; `scripts/slurm-test-cluster.sh start` starts one)');
}
if (tiers.at(-1)?.name === 'slurm') stamp();
else tierStarted = Date.now();

// 4. Browser journeys on a production build.
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!fs.existsSync(chromium)) {
  console.error(`\nNo Chromium at ${chromium}: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH.`);
  tiers.push({ name: 'e2e', passed: 0, failed: 1 });
} else if (!buildIfNeeded()) {
  tiers.push({ name: 'e2e (build failed)', passed: 0, failed: 1 });
} else {
  const playwrightJson = path.join(out, 'playwright.json');
  fs.rmSync(playwrightJson, { force: true });
  run(bin('playwright'), ['test'], { PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson });
  const stats = readJson(playwrightJson)?.stats;
  tiers.push(stats ? { name: 'e2e', passed: stats.expected + stats.flaky, failed: stats.unexpected } : { name: 'e2e', passed: 0, failed: 1 });
}
stamp();

console.log('\nSummary');
const minutes = (seconds) => `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')} min`;
for (const tier of tiers) console.log(`  ${tier.name.padEnd(20)} ${`${tier.passed} passed, ${tier.failed} failed`.padEnd(26)} ${minutes(tier.seconds ?? 0)}`);
console.log(`  ${'total'.padEnd(20)} ${''.padEnd(26)} ${minutes((Date.now() - started) / 1000)}`);
const passed = tiers.reduce((sum, t) => sum + t.passed, 0);
const failed = tiers.reduce((sum, t) => sum + t.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
