/**
 * Raw Slurm submission benchmark (issue #11): held jobs submitted straight to the test cluster, without
 * the portal, as the baseline for the portal's Slurm path in BENCHMARKS.md.
 *
 *   node --import tsx bench/slurm-raw.ts [--jobs 100] [--concurrency 8]
 *
 * Paths, each N jobs sequentially and then N jobs from `--concurrency` concurrent clients:
 * - `sbatch --hold` through child_process, as root with `-A <account>`;
 * - slurmrestd `POST /slurm/v0.0.38/job/submit` with `"hold": true`, as SLURM_REST_USER, with a JWT
 *   minted in-process from SLURM_JWT_KEY_FILE (HS256 over {exp, iat, sun}).
 * Every job it submitted is cancelled at the end, also after a failure. Jobs are held so that they
 * neither run nor use GPU minutes: the figures are slurmctld's submit path only.
 *
 * Reads the variables of the test cluster's env file (`source "$(scripts/slurm-test-cluster.sh env)"`);
 * when SLURM_REST_URL is unset it reads `<repo>/.slurm-test/env.sh` itself. Needs root (the JWT key file
 * and sbatch -A for another user's account).
 *
 * The lead's portal rows join the same run and table: `measurePath(...)` around the portal's submit,
 * then `slurmBenchTable([...raw, ...portal])`; `cancelJobs` removes the jobs afterwards.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { intFlag, UsageError } from './args';
import { loadAverage, machine } from './markdown';
import { ascending, median, num, quantile } from './stats';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

// ---- environment -------------------------------------------------------------------------------

/** The test cluster as the env file describes it. */
export interface SlurmBenchEnv {
  conf: string;
  restUrl: string;
  restUser: string;
  jwtKeyFile: string;
  jobDir: string;
  partition: string;
  account: string;
}

/** parseEnvFile reads the `export K=V` lines of the cluster's env file. */
function parseEnvFile(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) vars[m[1]!] = m[2]!.replace(/^'(.*)'$/, '$1');
  }
  return vars;
}

/** slurmBenchEnv takes the cluster from the environment, else from `<repo>/.slurm-test/env.sh`. */
export function slurmBenchEnv(env: NodeJS.ProcessEnv = process.env): SlurmBenchEnv {
  let vars: Record<string, string | undefined> = env;
  if (!env.SLURM_REST_URL) {
    const file = resolve(env.SLURM_TEST_DIR ?? resolve(root, '.slurm-test'), 'env.sh');
    if (!existsSync(file)) throw new UsageError(`SLURM_REST_URL is not set and ${file} does not exist: start the cluster (scripts/slurm-test-cluster.sh start) and source its env file`);
    vars = { ...parseEnvFile(file), ...env };
  }
  const need = (name: string): string => {
    const value = vars[name];
    if (!value) throw new UsageError(`${name} is not set (source the Slurm test cluster's env file)`);
    return value;
  };
  // SLURM_PARTITIONS maps classes to partitions (`h100=gpu,...`); the first partition is benchmarked.
  const partition = need('SLURM_PARTITIONS').split(',')[0]!.split('=')[1];
  if (!partition) throw new UsageError(`SLURM_PARTITIONS must look like class=partition, got ${vars.SLURM_PARTITIONS}`);
  return {
    conf: need('SLURM_CONF'),
    restUrl: need('SLURM_REST_URL').replace(/\/$/, ''),
    restUser: need('SLURM_REST_USER'),
    jwtKeyFile: need('SLURM_JWT_KEY_FILE'),
    jobDir: need('SLURM_JOB_DIR'),
    partition,
    account: vars.SLURM_BENCH_ACCOUNT ?? 'contract-account',
  };
}

/** cliEnv is the environment for Slurm's CLIs: SLURM_JWT would switch them to JWT auth ("Invalid user id"). */
function cliEnv(env: SlurmBenchEnv): NodeJS.ProcessEnv {
  const { SLURM_JWT: _dropped, ...rest } = process.env;
  return { ...rest, SLURM_CONF: env.conf };
}

// ---- JWT ---------------------------------------------------------------------------------------

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** mintJwt signs the token slurmctld's auth/jwt accepts: HS256 over {exp, iat, sun} with the key file's bytes. */
export function mintJwt(key: Buffer, user: string, nowSeconds: number, lifespanSeconds: number): string {
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ exp: nowSeconds + lifespanSeconds, iat: nowSeconds, sun: user }));
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

// ---- measuring ---------------------------------------------------------------------------------

/** One path at one concurrency: throughput over the whole batch, latency per call. */
export interface PathResult {
  path: string;
  jobs: number;
  concurrency: number;
  seconds: number;
  perSecond: number;
  medianMs: number;
  p95Ms: number;
  failures: number;
  firstError?: string;
  jobIds: string[];
  /** Each successful call's latency in ms, in the order they ended. */
  latencies: number[];
}

/** pooledResult merges rounds of one path at one concurrency: their calls, time and latencies together. */
export function pooledResult(rounds: readonly PathResult[]): PathResult {
  const first = rounds[0];
  if (!first) throw new Error('pooledResult: no rounds');
  const latencies = rounds.flatMap((r) => r.latencies);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const sorted = ascending(latencies);
  return {
    path: first.path,
    jobs: rounds.reduce((sum, r) => sum + r.jobs, 0),
    concurrency: first.concurrency,
    seconds,
    perSecond: latencies.length / seconds,
    medianMs: median(sorted),
    p95Ms: quantile(sorted, 0.95),
    failures: rounds.reduce((sum, r) => sum + r.failures, 0),
    firstError: rounds.find((r) => r.firstError)?.firstError,
    jobIds: rounds.flatMap((r) => r.jobIds),
    latencies,
  };
}

/**
 * measurePath calls `submit` `jobs` times from `concurrency` clients (each awaits its call before the next)
 * and returns the Slurm job ids it answered. A failed call counts as a failure and the run goes on.
 */
export async function measurePath(path: string, jobs: number, concurrency: number, submit: (i: number) => Promise<string>): Promise<PathResult> {
  const latencies: number[] = [];
  const jobIds: string[] = [];
  let failures = 0;
  let firstError: string | undefined;
  let next = 0;
  const client = async () => {
    for (let i = next++; i < jobs; i = next++) {
      const t = performance.now();
      try {
        jobIds.push(await submit(i));
        latencies.push(performance.now() - t);
      } catch (error) {
        failures++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs) }, client));
  const seconds = (performance.now() - start) / 1000;
  const sorted = ascending(latencies);
  return { path, jobs, concurrency, seconds, perSecond: latencies.length / seconds, medianMs: median(sorted), p95Ms: quantile(sorted, 0.95), failures, firstError, jobIds, latencies };
}

/** sbatchSubmitter submits a held one-line job with sbatch as the calling user (root) under the account. */
export function sbatchSubmitter(env: SlurmBenchEnv, namePrefix: string): (i: number) => Promise<string> {
  const childEnv = cliEnv(env);
  return async (i) => {
    const { stdout } = await run(
      'sbatch',
      ['--hold', '--parsable', '-A', env.account, '-p', env.partition, '-J', `${namePrefix}-${i}`, '-t', '1', '-o', '/dev/null', '-D', env.jobDir, '--wrap', 'true'],
      { env: childEnv },
    );
    const id = stdout.trim().split(';')[0]!;
    if (!/^\d+$/.test(id)) throw new Error(`sbatch answered ${JSON.stringify(stdout)}`);
    return id;
  };
}

/**
 * The fields read from a v0.0.38 submit answer. A held submit answers error 2042 "Job is in held state,
 * pending scheduler release" next to its job id (the job exists); any other entry means failure.
 */
interface SubmitAnswer {
  job_id?: number;
  errors?: { error_code?: number; error_number?: number; error?: string; description?: string }[];
}

const HELD = 2042;

/** restSubmitter submits a held job through slurmrestd as env.restUser, with a token it minted itself. */
export function restSubmitter(env: SlurmBenchEnv, namePrefix: string, token: string): (i: number) => Promise<string> {
  const headers = { 'Content-Type': 'application/json', 'X-SLURM-USER-NAME': env.restUser, 'X-SLURM-USER-TOKEN': token };
  return async (i) => {
    const body = {
      script: '#!/bin/bash\ntrue\n',
      job: {
        name: `${namePrefix}-${i}`,
        account: env.account,
        partition: env.partition,
        hold: true,
        time_limit: 1,
        tasks: 1,
        requeue: false,
        current_working_directory: env.jobDir,
        standard_output: '/dev/null',
        environment: { PATH: '/usr/bin:/bin' },
      },
    };
    const response = await fetch(`${env.restUrl}/slurm/v0.0.38/job/submit`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
    const text = await response.text();
    let answer: SubmitAnswer;
    try {
      answer = JSON.parse(text) as SubmitAnswer;
    } catch {
      throw new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`);
    }
    const errors = (answer.errors ?? []).filter((e) => (e.error_code ?? e.error_number) !== HELD);
    if (!response.ok || errors.length > 0 || typeof answer.job_id !== 'number') {
      throw new Error(`HTTP ${response.status}: ${JSON.stringify(errors.length > 0 ? errors : answer).slice(0, 300)}`);
    }
    return String(answer.job_id);
  };
}

/** cancelJobs removes the given jobs with scancel (as root), in chunks of 500 ids. */
export async function cancelJobs(env: SlurmBenchEnv, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await run('scancel', ids.slice(i, i + 500), { env: cliEnv(env) });
  }
}

/**
 * rawSlurmResults measures sbatch and slurmrestd, sequentially and with `concurrency` clients,
 * and cancels every job it submitted before it returns (or throws).
 */
export async function rawSlurmResults(env: SlurmBenchEnv, jobs = 100, concurrency = 8): Promise<PathResult[]> {
  const token = mintJwt(readFileSync(env.jwtKeyFile), env.restUser, Math.floor(Date.now() / 1000), 3600);
  const tag = `bench-raw-${process.pid}`;
  const results: PathResult[] = [];
  try {
    for (const c of [1, concurrency]) {
      results.push(await measurePath('sbatch --hold', jobs, c, sbatchSubmitter(env, `${tag}-sbatch-c${c}`)));
    }
    for (const c of [1, concurrency]) {
      results.push(await measurePath('slurmrestd POST /slurm/v0.0.38/job/submit', jobs, c, restSubmitter(env, `${tag}-rest-c${c}`, token)));
    }
  } finally {
    await cancelJobs(env, results.flatMap((r) => r.jobIds));
  }
  return results;
}

// ---- table -------------------------------------------------------------------------------------

const cell = (r: PathResult | undefined) =>
  r ? [`${num(r.perSecond, 1)}/s`, `${num(r.medianMs, 1)} / ${num(r.p95Ms, 1)}`, r.failures === 0 ? '0' : `**${r.failures}**`] : ['—', '—', '—'];

/** slurmBenchTable prints one row per path: sequential and concurrent throughput, median/p95 latency, failures. */
export function slurmBenchTable(results: readonly PathResult[]): string {
  const paths = [...new Set(results.map((r) => r.path))];
  const concurrent = Math.max(...results.map((r) => r.concurrency));
  const lines = [
    `| path | sequential | median / p95 ms | failed | ${concurrent} concurrent | median / p95 ms | failed |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const path of paths) {
    const seq = results.find((r) => r.path === path && r.concurrency === 1);
    const par = results.find((r) => r.path === path && r.concurrency === concurrent && concurrent > 1);
    lines.push(`| ${path} | ${[...cell(seq), ...cell(par)].join(' | ')} |`);
  }
  return lines.join('\n');
}

// ---- main --------------------------------------------------------------------------------------

async function main() {
  const jobs = intFlag('--jobs', 100);
  const concurrency = intFlag('--concurrency', 8, 2);
  const env = slurmBenchEnv();
  const load = loadAverage();
  const results = await rawSlurmResults(env, jobs, concurrency);
  log(`Raw Slurm submissions (held jobs, ${jobs} per cell; ${env.restUrl}, partition ${env.partition}, account ${env.account})`);
  log(`Machine: ${machine()}; load before: ${load}`);
  log('');
  log(slurmBenchTable(results));
  for (const r of results) if (r.firstError) log(`\n${r.path} (${r.concurrency} clients), first error: ${r.firstError}`);
  log(`\ncancelled ${results.reduce((n, r) => n + r.jobIds.length, 0)} jobs`);
  if (results.some((r) => r.failures > 0)) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof UsageError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
