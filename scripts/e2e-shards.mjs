// The browser journeys' shards, balanced by time: each spec file goes whole to one shard (its journeys share
// a page's set-up and the demo's state), the longest first to the shard with the least time so far (LPT).
// Times come from e2e/durations.json (seconds per file, from a full run: `npm test` writes the fresh figures
// to .test-results/e2e-durations.json and says when they have moved far enough to be worth copying over); a
// file without a figure counts as the median of the others. Playwright's own --shard splits by count, which
// left one shard 6 minutes longer than the other.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
export const DURATIONS_FILE = path.join(root, 'e2e', 'durations.json');

/** specFiles lists the spec files of e2e/, by name. */
export function specFiles(dir = path.join(root, 'e2e')) {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.spec.ts'))
    .sort();
}

/**
 * readDurations reads the recorded seconds per spec file ({} when there are none).
 * @returns {Record<string, number>}
 */
export function readDurations(file = DURATIONS_FILE) {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    return parsed && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {};
  }
}

/**
 * assignShards puts each file into one of `count` shards so the longest shard is as short as the greedy rule
 * makes it: files by time, longest first (ties by name), each to the shard with the least time so far (the
 * lower index on a tie). Deterministic: the same files and times give the same shards.
 * @param {string[]} files
 * @param {Record<string, number>} durations seconds per file
 * @param {number} count
 * @returns {{ files: string[], seconds: number }[]}
 */
export function assignShards(files, durations, count) {
  const known = files.map((f) => durations[f]).filter((s) => typeof s === 'number' && Number.isFinite(s) && s >= 0).sort((a, b) => a - b);
  const median = known.length === 0 ? 1 : known[Math.floor(known.length / 2)];
  const timeOf = (f) => (typeof durations[f] === 'number' && Number.isFinite(durations[f]) && durations[f] >= 0 ? durations[f] : median);
  const shards = Array.from({ length: Math.max(1, count) }, () => ({ files: [], seconds: 0 }));
  const ordered = [...files].sort((a, b) => timeOf(b) - timeOf(a) || a.localeCompare(b));
  for (const file of ordered) {
    const target = shards.reduce((best, s) => (s.seconds < best.seconds ? s : best), shards[0]);
    target.files.push(file);
    target.seconds += timeOf(file);
  }
  for (const s of shards) s.files.sort();
  return shards;
}

/** A Playwright file filter that matches exactly e2e/<file> (its arguments are regular expressions). */
export function fileFilter(file) {
  return `e2e/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}

/**
 * durationsOfReport sums a Playwright JSON report's test times per spec file (seconds, one decimal): what a
 * file costs its shard, set-up and all retries included.
 */
export function durationsOfReport(report) {
  const seconds = {};
  const walk = (suites) => {
    for (const suite of suites ?? []) {
      for (const spec of suite.specs ?? []) {
        const file = path.basename(spec.file ?? suite.file ?? '');
        for (const test of spec.tests ?? []) for (const result of test.results ?? []) seconds[file] = (seconds[file] ?? 0) + (result.duration ?? 0) / 1000;
      }
      walk(suite.suites);
    }
  };
  walk(report?.suites);
  return Object.fromEntries(Object.entries(seconds).map(([f, s]) => [f, Math.round(s * 10) / 10]).sort(([a], [b]) => a.localeCompare(b)));
}
