/**
 * Trace replay CLI for the simulator core.
 *
 *   npm run sim -- --trace FILE [--policy fifo|easy] [--cluster CONFIG.json] [--nodes NODES.csv] [--repeat N]
 *                  [--power-cap-kw N [--pue X]] [--json]
 *
 * With --power-cap-kw the pool replays under a facility power cap (replay-power.ts): each
 * processor/GPU draws the first --cluster partition's idle/max GPU power (default 100 W /
 * 700 W), busy at 100 %; the cap is at the meter (IT × --pue, default 1). Jobs that could
 * not run under the cap even on an idle pool are dropped (drops.powerCap).
 *
 * FILE is a Standard Workload Format trace (.swf or .swf.gz) or the Alibaba GPU
 * pod CSV (.csv). Bad arguments print one line and exit with code 2.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  SimInputError,
  alibabaNodeGpus,
  capItCentiW,
  clusterGpuCount,
  jobPowerCentiW,
  parseAlibabaPods,
  parseSwf,
  repeatTrace,
  replayMetrics,
  replayFacilityEnergyWh,
  replayTrace,
  replayTraceCapped,
  selectJobs,
  validateCluster,
  type ClusterConfig,
  type PowerModel,
  type ReplayMetrics,
  type ReplayPolicy,
  type ReplayTrace,
} from '../server/core/sim/index';

const USAGE =
  'usage: npm run sim -- --trace FILE [--policy fifo|easy] [--cluster CONFIG.json] [--nodes NODES.csv] [--repeat N] [--power-cap-kw N [--pue X]] [--json]';

class UsageError extends Error {}

interface Options {
  trace: string;
  policy: ReplayPolicy;
  cluster: string | null;
  nodes: string | null;
  repeat: number;
  json: boolean;
  powerCapKw: number | null;
  pue: number;
}

function parseArgs(argv: string[]): Options | 'help' {
  const opts: Options = { trace: '', policy: 'easy', cluster: null, nodes: null, repeat: 1, json: false, powerCapKw: null, pue: 1 };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const eq = raw.indexOf('=');
    const flag = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith('--') && eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--json':
        opts.json = true;
        break;
      case '--trace':
        opts.trace = value();
        break;
      case '--policy': {
        const p = value();
        if (p !== 'fifo' && p !== 'easy') throw new UsageError(`unknown policy "${p}" (expected fifo or easy)`);
        opts.policy = p;
        break;
      }
      case '--cluster':
        opts.cluster = value();
        break;
      case '--nodes':
        opts.nodes = value();
        break;
      case '--repeat': {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1) throw new UsageError(`--repeat must be a whole number ≥ 1, got "${v}"`);
        opts.repeat = n;
        break;
      }
      case '--power-cap-kw': {
        const v = value();
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--power-cap-kw must be a number > 0, got "${v}"`);
        opts.powerCapKw = n;
        break;
      }
      case '--pue': {
        const v = value();
        const n = Number(v);
        if (!Number.isFinite(n) || n < 1) throw new UsageError(`--pue must be a number ≥ 1, got "${v}"`);
        opts.pue = n;
        break;
      }
      default:
        throw new UsageError(`unknown argument "${raw}"`);
    }
  }
  if (!opts.trace) throw new UsageError('missing --trace FILE');
  if (opts.pue !== 1 && opts.powerCapKw === null) throw new UsageError('--pue needs --power-cap-kw');
  return opts;
}

function readText(path: string, what: string): string {
  if (!existsSync(path)) throw new UsageError(`${what} not found: ${path}`);
  const bytes = readFileSync(path);
  const gz = bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
  try {
    return (gz ? gunzipSync(bytes) : bytes).toString('utf8');
  } catch {
    throw new UsageError(`${what} is not a readable gzip file: ${path}`);
  }
}

function readCluster(path: string): ClusterConfig {
  let config: ClusterConfig;
  try {
    config = JSON.parse(readText(path, 'cluster config')) as ClusterConfig;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cluster config is not valid JSON: ${path}`);
  }
  validateCluster(config);
  return config;
}

interface Loaded {
  format: 'swf' | 'alibaba';
  trace: ReplayTrace;
  records: number;
  dropped: number;
  drops: Record<string, number>;
}

function loadTrace(opts: Options): Loaded {
  const text = readText(opts.trace, 'trace file');
  const machineFromCluster = opts.cluster ? clusterGpuCount(readCluster(opts.cluster)) : undefined;
  const isCsv = /\.csv(\.gz)?$/i.test(opts.trace);
  if (!isCsv) {
    const r = parseSwf(text, machineFromCluster === undefined ? {} : { machineSize: machineFromCluster });
    return { format: 'swf', trace: r.trace, records: r.records, dropped: r.dropped, drops: { ...r.drops } };
  }
  let machine = machineFromCluster;
  if (machine === undefined) {
    const nodesPath = opts.nodes ?? join(dirname(opts.trace), basename(opts.trace).replace('pods', 'gpu-nodes'));
    if (nodesPath === opts.trace || !existsSync(nodesPath)) {
      throw new UsageError('Alibaba pods need the machine size: give --nodes NODES.csv or --cluster CONFIG.json');
    }
    machine = alibabaNodeGpus(readText(nodesPath, 'nodes file'));
  }
  const r = parseAlibabaPods(text, machine);
  return { format: 'alibaba', trace: r.trace, records: r.records, dropped: r.dropped, drops: { ...r.drops } };
}

function fmt(n: number, digits = 2): string {
  return n.toLocaleString('en-GB', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** What one replay measured, for `jsonResult`. */
interface Result {
  opts: Options;
  loaded: Loaded;
  trace: ReplayTrace;
  m: ReplayMetrics;
  wallSeconds: number;
  jobsPerSecond: number | null;
  parseSeconds: number;
}

/** jsonResult is the `--json` object of a replay (its keys in this order). */
function jsonResult({ opts, loaded, trace, m, wallSeconds, jobsPerSecond, parseSeconds }: Result) {
  return {
    jobs: m.jobs,
    utilization: m.utilization,
    avgWaitSeconds: m.avgWaitSeconds,
    avgBoundedSlowdown: m.avgBoundedSlowdown,
    makespanSeconds: m.makespanSeconds,
    wallSeconds,
    jobsPerSecond,
    policy: opts.policy,
    trace: basename(opts.trace),
    format: loaded.format,
    machineSize: trace.machineSize,
    repeat: opts.repeat,
    records: loaded.records,
    dropped: loaded.dropped,
    drops: loaded.drops,
    parseSeconds,
  };
}

function main(argv: string[]): number {
  const opts = parseArgs(argv);
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const parseStart = performance.now();
  const loaded = loadTrace(opts);
  const trace = opts.repeat > 1 ? repeatTrace(loaded.trace, opts.repeat) : loaded.trace;
  const parseSeconds = (performance.now() - parseStart) / 1000;

  if (opts.powerCapKw !== null) return mainCapped(opts, loaded, trace, parseSeconds);

  const simStart = performance.now();
  const starts = replayTrace(trace, opts.policy);
  const wallSeconds = (performance.now() - simStart) / 1000;
  const m = replayMetrics(trace, starts);
  const jobsPerSecond = wallSeconds > 0 ? Math.round(m.jobs / wallSeconds) : null;

  if (opts.json) {
    process.stdout.write(`${JSON.stringify(jsonResult({ opts, loaded, trace, m, wallSeconds, jobsPerSecond, parseSeconds }))}\n`);
    return 0;
  }
  const lines = [
    `trace                 ${basename(opts.trace)} (${loaded.format}${opts.repeat > 1 ? `, ×${opts.repeat}` : ''}), machine ${trace.machineSize} ${loaded.format === 'swf' ? 'processors' : 'GPUs'}`,
    `policy                ${opts.policy}`,
    `jobs                  ${m.jobs} (of ${loaded.records} records; dropped ${loaded.dropped})`,
    `utilization           ${fmt(m.utilization * 100, 2)} %`,
    `avg wait              ${fmt(m.avgWaitSeconds, 1)} s`,
    `avg bounded slowdown  ${fmt(m.avgBoundedSlowdown, 2)} (threshold 10 s)`,
    `makespan              ${m.makespanSeconds} s (${fmt(m.makespanSeconds / 86400, 1)} days)`,
    `wall (simulation)     ${fmt(wallSeconds * 1000, 1)} ms (parsing ${fmt(parseSeconds * 1000, 1)} ms)`,
    `rate                  ${jobsPerSecond === null ? 'n/a' : jobsPerSecond.toLocaleString('en-GB')} jobs/s`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

const DEFAULT_GPU_POWER: PowerModel = { gpusPerNode: 1, gpuIdlePowerW: 100, gpuMaxPowerW: 700, nodeBasePowerW: 0 };

// A separate path, so the uncapped replay and its output stay exactly as they were.
function mainCapped(opts: Options, loaded: Loaded, all: ReplayTrace, parseSeconds: number): number {
  const partition = opts.cluster ? readCluster(opts.cluster).partitions[0] : undefined;
  const model: PowerModel = partition ? { ...partition, gpusPerNode: 1, nodeBasePowerW: 0 } : DEFAULT_GPU_POWER;
  const pueMilli = Math.round(opts.pue * 1000);
  const capW = Math.round(opts.powerCapKw! * 1000);
  const capCentiW = capItCentiW({ powerCapW: capW, pueMilli })!;
  const idleCentiW = all.machineSize * model.gpuIdlePowerW * 100;
  if (capCentiW < idleCentiW) throw new UsageError(`--power-cap-kw ${opts.powerCapKw} is below the idle pool's ${(idleCentiW * pueMilli) / 1e8} kW`);
  const trace = selectJobs(all, (i) => idleCentiW + jobPowerCentiW(model, all.processors[i]!, 100) <= capCentiW);
  const powerDropped = all.jobCount - trace.jobCount;
  const jobCentiW = Float64Array.from(trace.processors, (g) => jobPowerCentiW(model, g, 100));
  const power = { capCentiW, idleCentiW, jobCentiW };

  const simStart = performance.now();
  const r = replayTraceCapped(trace, opts.policy, power);
  const wallSeconds = (performance.now() - simStart) / 1000;
  const m = replayMetrics(trace, r.start);
  const jobsPerSecond = wallSeconds > 0 ? Math.round(m.jobs / wallSeconds) : null;
  const peakFacilityPowerW = Math.round((r.peakCentiW * pueMilli) / 100_000);
  const energyWh = replayFacilityEnergyWh(trace, r.start, power, pueMilli);
  let jobsDelayedByPowerCap = 0;
  for (const d of r.delayed) jobsDelayedByPowerCap += d;

  if (opts.json) {
    const out = {
      ...jsonResult({ opts, loaded, trace, m, wallSeconds, jobsPerSecond, parseSeconds }),
      dropped: loaded.dropped + powerDropped,
      drops: { ...loaded.drops, powerCap: powerDropped },
      powerCapW: capW,
      pue: opts.pue,
      peakFacilityPowerW,
      energyWh,
      jobsDelayedByPowerCap,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  }
  const lines = [
    `trace                 ${basename(opts.trace)} (${loaded.format}${opts.repeat > 1 ? `, ×${opts.repeat}` : ''}), machine ${trace.machineSize}`,
    `policy                ${opts.policy}, power cap ${fmt(capW / 1000, 1)} kW at PUE ${opts.pue}`,
    `jobs                  ${m.jobs} (dropped ${loaded.dropped} + ${powerDropped} above the cap)`,
    `utilization           ${fmt(m.utilization * 100, 2)} %`,
    `avg wait              ${fmt(m.avgWaitSeconds, 1)} s`,
    `avg bounded slowdown  ${fmt(m.avgBoundedSlowdown, 2)} (threshold 10 s)`,
    `peak facility power   ${fmt(peakFacilityPowerW / 1000, 1)} kW`,
    `facility energy       ${fmt(energyWh / 1000, 1)} kWh`,
    `delayed by the cap    ${jobsDelayedByPowerCap} jobs`,
    `wall (simulation)     ${fmt(wallSeconds * 1000, 1)} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof UsageError || e instanceof SimInputError) {
    process.stderr.write(`sim: ${message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`sim: unexpected error: ${message}\n`);
    process.exitCode = 1;
  }
}
