/**
 * Simulator replay benchmark: replays the KTH SP2 trace with FIFO and EASY,
 * a 10× KTH trace with EASY, and the Alibaba GPU pods with EASY, and KTH / KTH ×10
 * with EASY under a facility power cap against the same without; reports the
 * median wall time of the simulation alone (parsing excluded) and writes the
 * "## Simulator replay" section of BENCHMARKS.md (other sections untouched).
 *
 *   npx tsx bench/sim.ts [--traces DIR] [--reps N] [--no-write]
 *
 * Traces are read from DIR, ../shared/traces (relative to the repo root) or
 * /work/shared/traces; when none exists the benchmark is skipped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { loadAverage, machine, writeSection } from './markdown';
import {
  alibabaNodeGpus,
  capItCentiW,
  jobPowerCentiW,
  parseAlibabaPods,
  parseSwf,
  repeatTrace,
  replayMetrics,
  replayTrace,
  replayTraceCapped,
  selectJobs,
  type ReplayMetrics,
  type ReplayPower,
  type ReplayPolicy,
  type ReplayTrace,
} from '../server/core/sim/index';

const KTH_FILE = 'KTH-SP2-1996-2.1-cln.swf.gz';
const PODS_FILE = 'alibaba-gpu-v2023-pods.csv';
const NODES_FILE = 'alibaba-gpu-v2023-gpu-nodes.csv';
const TARGET_JOBS_PER_SECOND = 500_000;
const SECTION = '## Simulator replay';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function findTraces(): string | null {
  const candidates = [flag('--traces'), join(root, '..', 'shared', 'traces'), '/work/shared/traces'].filter(
    (d): d is string => !!d,
  );
  return candidates.find((d) => existsSync(join(d, KTH_FILE))) ?? null;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

interface Row {
  label: string;
  policy: ReplayPolicy;
  metrics: ReplayMetrics;
  medianMs: number;
  minMs: number;
  reps: number;
}

function measure(label: string, trace: ReplayTrace, policy: ReplayPolicy, reps: number, warmup: number): Row {
  for (let i = 0; i < warmup; i++) replayTrace(trace, policy);
  const times: number[] = [];
  let starts: Float64Array = new Float64Array(0);
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    starts = replayTrace(trace, policy);
    times.push(performance.now() - t0);
  }
  return { label, policy, metrics: replayMetrics(trace, starts), medianMs: median(times), minMs: Math.min(...times), reps };
}

// The power-cap rows: 100 W idle / 700 W busy per processor (100 %), PUE 1.2; a tight cap of 60 kW (50 kW IT ⇒ 66 busy
// of 100) and a mild one of 80 kW (94 busy of 100). Jobs too large for the cap even alone are left out of both runs,
// so capped and uncapped replay the same jobs. The third time is the uncapped replay on a machine cut down to the
// processors the cap lets run: what the longer queue alone costs, without any power bookkeeping.
const CAP = { pueMilli: 1200, idleW: 100, maxW: 700 };
const CAPS_W = [60_000, 80_000];

interface CapRow {
  label: string;
  capW: number;
  jobs: number;
  uncappedMs: number;
  cappedMs: number;
  /** Processors the cap lets run at once, and the uncapped replay on a machine of that size. */
  effectiveProcs: number;
  smallMachineMs: number;
  delayed: number;
  peakFacilityW: number;
}

function measureCap(label: string, all: ReplayTrace, capW: number, reps: number, warmup: number): CapRow {
  const model = { gpusPerNode: 1, gpuIdlePowerW: CAP.idleW, gpuMaxPowerW: CAP.maxW, nodeBasePowerW: 0 };
  const capCentiW = capItCentiW({ powerCapW: capW, pueMilli: CAP.pueMilli })!;
  const idleCentiW = all.machineSize * CAP.idleW * 100;
  const trace = selectJobs(all, (i) => idleCentiW + jobPowerCentiW(model, all.processors[i]!, 100) <= capCentiW);
  const power: ReplayPower = { capCentiW, idleCentiW, jobCentiW: Float64Array.from(trace.processors, (g) => jobPowerCentiW(model, g, 100)) };
  const time = (run: () => unknown): number => {
    for (let i = 0; i < warmup; i++) run();
    const times: number[] = [];
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      run();
      times.push(performance.now() - t0);
    }
    return median(times);
  };
  const uncappedMs = time(() => replayTrace(trace, 'easy'));
  const cappedMs = time(() => replayTraceCapped(trace, 'easy', power));
  const effectiveProcs = Math.floor((capCentiW - idleCentiW) / jobPowerCentiW(model, 1, 100));
  const smallMachineMs = time(() => replayTrace({ ...trace, machineSize: Math.min(trace.machineSize, effectiveProcs) }, 'easy'));
  const r = replayTraceCapped(trace, 'easy', power);
  let delayed = 0;
  for (const d of r.delayed) delayed += d;
  return { label, capW, jobs: trace.jobCount, uncappedMs, cappedMs, effectiveProcs, smallMachineMs, delayed, peakFacilityW: Math.round((r.peakCentiW * CAP.pueMilli) / 100_000) };
}

function capSection(rows: CapRow[]): string[] {
  return [
    '### Under a facility power cap',
    '',
    `EASY replay with and without a facility cap at PUE ${CAP.pueMilli / 1000} (\`replayTraceCapped\` vs \`replayTrace\`, same jobs; ${CAP.idleW} W idle / ${CAP.maxW} W busy per processor). Target: the cap costs ≤ 2× the time. The last time column is the uncapped replay on a machine of only the processors the cap lets run at once: the cost of the longer queue a tight cap makes, without any power bookkeeping.`,
    '',
    'The capped backfill pass does not walk the whole queue: it visits the jobs not yet marked delayed and, through a min-tree of power, GPUs and estimate over the pending jobs, only those marked ones that can start now (a marked job that cannot start would only be marked again); a pass after which nothing has ended, with the same head, shadow time and no more extra, visits only the new arrivals. Schedules, delayed flags and peaks are those of the full walk (pinned in `server/core/sim/power.test.ts`).',
    '',
    '| trace | cap (kW) | jobs | uncapped median (ms) | capped median (ms) | ratio | jobs delayed by the cap | peak facility power (W) | uncapped on the capped machine\'s processors (ms) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${num(r.capW / 1000)} | ${num(r.jobs)} | ${num(r.uncappedMs, 2)} | ${num(r.cappedMs, 2)} | ${num(r.cappedMs / r.uncappedMs, 2)}× | ${num(r.delayed)} | ${num(r.peakFacilityW)} | ${num(r.smallMachineMs, 2)} (${r.effectiveProcs} procs) |`,
    ),
    '',
    ...rows.map(
      (r) =>
        `- ${r.label} at ${num(r.capW / 1000)} kW: target ≤ 2× ${r.cappedMs <= 2 * r.uncappedMs ? 'met' : 'NOT met'}; the capped replay takes ${num(r.cappedMs / r.smallMachineMs, 2)}× the uncapped one on ${r.effectiveProcs} processors.`,
    ),
    '',
  ];
}

const num = (n: number, digits = 0): string =>
  n.toLocaleString('en-GB', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function section(rows: Row[], warmup: number, capRows: CapRow[], loadBefore: number[]): string {
  const date = new Date().toISOString().slice(0, 10);
  const lines = [
    SECTION,
    '',
    `Measured by \`npx tsx bench/sim.ts\` on ${date}. Machine: ${machine()}; load average ${loadAverage(loadBefore)} when the timing started.`,
    `Wall time is the simulation alone (\`replayTrace\`; process start-up and trace parsing excluded): median and minimum over the runs shown, after ${warmup} warm-up runs.`,
    '',
    '| trace | policy | jobs | utilisation | avg wait (s) | avg bounded slowdown | makespan (s) | runs | median wall (ms) | min wall (ms) | jobs/s (median) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) =>
      [
        '',
        r.label,
        r.policy.toUpperCase(),
        num(r.metrics.jobs),
        `${num(r.metrics.utilization * 100, 2)} %`,
        num(r.metrics.avgWaitSeconds, 1),
        num(r.metrics.avgBoundedSlowdown, 2),
        num(r.metrics.makespanSeconds),
        String(r.reps),
        num(r.medianMs, 2),
        num(r.minMs, 2),
        num(r.metrics.jobs / (r.medianMs / 1000)),
        '',
      ].join(' | ').trim(),
    ),
    '',
  ];
  const easyRates = rows.filter((r) => r.label.startsWith('KTH')).filter((r) => r.policy === 'easy').map((r) => r.metrics.jobs / (r.medianMs / 1000));
  const met = easyRates.every((rate) => rate >= TARGET_JOBS_PER_SECOND);
  lines.push(
    `Target: ≥ ${num(TARGET_JOBS_PER_SECOND)} simulated jobs/s with EASY on KTH and on the 10× trace — ${met ? 'met' : 'NOT met'}.`,
    '',
    'Notes:',
    '- KTH SP2: IBM SP2 at KTH, 100 processors, cleaned log from the Parallel Workloads Archive (Feitelson et al.); all 27,992 jobs kept. Size = field 5 (field 8 if −1), runtime = field 4, estimate = field 9.',
    '- KTH ×10: the KTH jobs concatenated 10 times, copy k shifted by k × (last submit − first submit + 1 s) (`repeatTrace`), same 100-processor machine.',
    '- Alibaba: cluster-trace-gpu-v2023 pods (CC-BY-4.0) on a flat pool of all GPUs of its node list; GPUs = ceil(num_gpu × gpu_milli / 1000), runtime = deletion − scheduled, submit = creation, estimate = runtime; pods with no GPU or no schedule time dropped. The pod list is a sample, so the machine is nearly idle.',
    '- Semantics: ends, then arrivals, then one scheduling pass per instant; jobs run their actual runtime; EASY reservation from estimated ends. See `server/core/sim/README.md`.',
    '',
    ...capSection(capRows),
  );
  return lines.join('\n');
}


function main(): void {
  const dir = findTraces();
  if (!dir) {
    process.stdout.write(
      `bench/sim: skipped — ${KTH_FILE} not found in --traces DIR, ../shared/traces or /work/shared/traces (traces are not part of the project).\n`,
    );
    return;
  }
  const loadBefore = loadavg();
  const reps = Number(flag('--reps') ?? 21);
  const warmup = 3;
  const kth = parseSwf(gunzipSync(readFileSync(join(dir, KTH_FILE))).toString('utf8')).trace;
  const kth10 = repeatTrace(kth, 10);
  const rows: Row[] = [
    measure('KTH SP2 (100 procs)', kth, 'fifo', reps, warmup),
    measure('KTH SP2 (100 procs)', kth, 'easy', reps, warmup),
    measure('KTH SP2 ×10 (100 procs)', kth10, 'easy', Math.max(5, Math.ceil(reps / 2)), warmup),
  ];
  if (existsSync(join(dir, PODS_FILE)) && existsSync(join(dir, NODES_FILE))) {
    const gpus = alibabaNodeGpus(readFileSync(join(dir, NODES_FILE), 'utf8'));
    const pods = parseAlibabaPods(readFileSync(join(dir, PODS_FILE), 'utf8'), gpus).trace;
    rows.push(measure(`Alibaba GPU pods (${num(gpus)} GPUs)`, pods, 'easy', reps, warmup));
  }
  const capRows = CAPS_W.flatMap((capW) => [
    measureCap('KTH SP2 (100 procs)', kth, capW, reps, warmup),
    measureCap('KTH SP2 ×10 (100 procs)', kth10, capW, Math.max(5, Math.ceil(reps / 2)), warmup),
  ]);
  const text = section(rows, warmup, capRows, loadBefore);
  process.stdout.write(`${text}\n`);
  if (!process.argv.includes('--no-write')) process.stdout.write(`wrote ${writeSection(root, SECTION, text)}\n`);
}

main();
