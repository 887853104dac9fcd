/**
 * Live job path benchmark, service side (issue #8): job submissions through the tRPC `job.submit`
 * procedure (the server-side caller, as the integration tests call it) from concurrent clients until
 * N jobs are queued behind a full partition, once with the simulated scheduler and once with a
 * scheduler that does nothing; then reconciler passes over those active jobs. Writes the sections
 * "## Job submission (service path)" and "## Reconciler (service path)" of BENCHMARKS.md.
 * The case "one person" (issue #26) runs the same load with every client the same person submitting
 * into one allocation, and compares its median around 100 queued with its median around --queued in
 * that one run; it writes "## Job submission, one person into one allocation (service path)".
 *
 *   npm run bench:submit -- [--queued 10000] [--clients 16] [--tenants 5] [--warmup 2×clients]
 *                           [--cases mixed,one-person] [--settle-batch 1000] [--adapters simulated,noop] [--pool 20]
 *                           [--max-seconds 1800] [--stall-seconds 60] [--database-url URL] [--keep] [--no-write]
 *
 * The load stops early, and says so, after --max-seconds, or when no submit succeeded for
 * --stall-seconds (clients that keep failing, e.g. deadlocking each other, would otherwise spin).
 *
 * Each adapter gets a database of its own, `portal_bench_<random>` on the Postgres of --database-url
 * (else BENCH_ADMIN_URL, else postgres://postgres@127.0.0.1:5432/postgres), created, migrated and
 * dropped at the end — also after a failure or Ctrl-C; --keep keeps them.
 * Run it through npm (or `node --import tsx`): the `tsx` wrapper process kills its child 30 ms
 * after relaying a SIGTERM, too soon for that clean-up.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRPCError } from '@trpc/server';
import { and, count, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import { migrateDb, openDb, type Db, type DbHandle } from '~/db/client';
import { allocations, jobs, ledgerEntries } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler, type SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { AppError } from '~/server/errors';
import { syncCatalogue } from '~/server/services/catalogue';
import { reconcileOnce, type RoundResult } from '~/server/services/jobs/reconciler';
import { callerFor } from '~/server/testing/harness';
import { atInterrupt, createBenchDatabase, DEFAULT_ADMIN_URL, describeServer, wasInterrupted, type BenchDatabase } from './database';
import { loadAverage, machine, mark, writeSection } from './markdown';
import { createNoopScheduler } from './noop-scheduler';
import { ascending, median, num, quantile } from './stats';
import { JOB_GPUS, JOB_RUNTIME_SECONDS, jobInput, PARTITION, PARTITION_GPUS } from './job-input';
import { buildWorld, fillPartition, FILLER_JOBS, FILLER_WALLTIME_MINUTES, onePersonWorld, type Client, type World } from './submit-setup';
import { flag, intFlag, UsageError } from './args';

const SUBMIT_SECTION = '## Job submission (service path)';
const RECONCILE_SECTION = '## Reconciler (service path)';
const ONE_PERSON_SECTION = '## Job submission, one person into one allocation (service path)';
const ARRAY_SECTION = '## Job arrays (service path)';
/** The array case: arrays of this many tasks, submitted one request each, between single jobs. */
const ARRAY_TASKS = 10_000;
const ARRAY_TARGET_MS = 100;
const SIM_SPEED = 60;
const TARGET = { submitsPerSecond: 250, p99Ms: 100, growth: 1.25, adapterOverhead: 1.5, reconcileMs: 1000 } as const;

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

// ---- options -----------------------------------------------------------------------------------

type AdapterName = 'simulated' | 'noop';
/** mixed: half the clients one tenant's people, the rest other tenants'; one-person: every client the same person, one allocation; array: 10,000-task arrays. */
type CaseName = 'mixed' | 'one-person' | 'array';

interface Options {
  adminUrl: string;
  queued: number;
  clients: number;
  tenants: number;
  warmup: number;
  settleBatch: number;
  pool: number;
  maxSeconds: number;
  stallSeconds: number;
  adapters: AdapterName[];
  cases: CaseName[];
  /** The array case: how many 10,000-task arrays. */
  arrays: number;
  keep: boolean;
  write: boolean;
}

function options(): Options {
  const clients = intFlag('--clients', 16);
  const queued = intFlag('--queued', 10_000);
  if (queued > 90_000) throw new UsageError('--queued must be at most 90,000 (the allocation limits stop at 100,000)');
  const maxSeconds = intFlag('--max-seconds', 1_800);
  // The fillers hold the partition for 48 simulated hours, 48 minutes at 60×: the load must end before.
  if (maxSeconds > 2_400) throw new UsageError('--max-seconds must be at most 2,400 (the fillers end after 48 simulated hours = 48 minutes)');
  const adapters = (flag('--adapters') ?? 'simulated,noop').split(',').map((a) => a.trim());
  for (const a of adapters) if (a !== 'simulated' && a !== 'noop') throw new UsageError(`--adapters: unknown adapter "${a}" (simulated, noop)`);
  const cases = (flag('--cases') ?? 'mixed,one-person,array').split(',').map((c) => c.trim());
  for (const c of cases) if (c !== 'mixed' && c !== 'one-person' && c !== 'array') throw new UsageError(`--cases: unknown case "${c}" (mixed, one-person, array)`);
  return {
    adminUrl: flag('--database-url') ?? process.env.BENCH_ADMIN_URL ?? DEFAULT_ADMIN_URL,
    queued,
    clients,
    tenants: intFlag('--tenants', 5),
    warmup: intFlag('--warmup', 2 * clients, 0),
    settleBatch: intFlag('--settle-batch', 1_000),
    pool: intFlag('--pool', 20),
    maxSeconds,
    stallSeconds: intFlag('--stall-seconds', 60),
    adapters: adapters as AdapterName[],
    cases: cases as CaseName[],
    arrays: intFlag('--arrays', 8),
    keep: process.argv.includes('--keep'),
    write: !process.argv.includes('--no-write'),
  };
}

// ---- errors ------------------------------------------------------------------------------------

/** The innermost cause that carries a Postgres SQLSTATE, if any (drizzle wraps the driver's error). */
function sqlState(error: unknown): { code: string; message: string } | undefined {
  let found: { code: string; message: string } | undefined;
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) found = { code, message: (e as Error).message };
  }
  return found;
}

const general = (text: string) =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '…')
    .replace(/\d+/g, 'N')
    .slice(0, 120);

/** errorKind names a failed submit by tRPC code and cause, without ids, so equal failures count together. */
function errorKind(error: unknown): string {
  if (error instanceof TRPCError) {
    if (error.cause instanceof AppError) return `${error.code} ${error.cause.key}`;
    const pg = sqlState(error);
    if (pg) return `${error.code}: ${general(pg.message)} (SQLSTATE ${pg.code})`;
    return `${error.code}: ${general(error.cause instanceof Error ? error.cause.message : error.message)}`;
  }
  return `not a tRPC error: ${general(error instanceof Error ? `${error.name}: ${error.message}` : String(error))}`;
}

// ---- the load ----------------------------------------------------------------------------------

interface Sample {
  ms: number;
  /** Jobs queued by the load when this submit returned. */
  pos: number;
  ok: boolean;
  group: Client['group'];
}

interface LoadResult {
  adapter: AdapterName;
  samples: Sample[];
  warmupSubmits: number;
  timedMs: number;
  queued: number;
  attempts: number;
  errors: Map<string, number>;
  stoppedBy: string | null;
  consoleErrors: { count: number; first: string[] };
  states: Record<string, number>;
  checks: string[];
  cluster: string;
  loadStart: string;
  loadEnd: string;
}

/** silenceConsoleErrors counts what the server code logs with console.error during the load (a sample is kept). */
function silenceConsoleErrors() {
  const original = console.error;
  const seen = { count: 0, first: [] as string[] };
  console.error = (...args: unknown[]) => {
    seen.count++;
    if (seen.first.length < 3) seen.first.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(' ').replace(/\s+/g, ' ').slice(0, 300));
  };
  return { seen, restore: () => void (console.error = original) };
}

async function runLoad(db: Db, scheduler: SchedulerPort, world: World, o: Options, adapter: AdapterName): Promise<Omit<LoadResult, 'states' | 'checks' | 'cluster'>> {
  const samples: Sample[] = [];
  const errors = new Map<string, number>();
  let queued = 0;
  let failed = 0;
  let claimed = 0;
  let attempts = 0;
  let stoppedBy: string | null = null;
  let firstTimedStart: number | null = null;
  const maxAttempts = 2 * o.queued + 1_000;
  const deadline = performance.now() + o.maxSeconds * 1000;
  const progressEvery = Math.max(1, Math.round(o.queued / 10));
  const loadStart = loadAverage();
  const started = performance.now();
  let lastSuccess = started;

  async function client(c: Client): Promise<void> {
    for (;;) {
      if (stoppedBy || claimed >= o.queued) return;
      if (attempts >= maxAttempts) stoppedBy ??= `${num(maxAttempts)} attempts`;
      if (performance.now() > deadline) stoppedBy ??= `--max-seconds ${o.maxSeconds}`;
      if (performance.now() - lastSuccess > o.stallSeconds * 1000) stoppedBy ??= `no submit succeeded for ${o.stallSeconds} s (--stall-seconds)`;
      if (stoppedBy) return;
      claimed++;
      const n = attempts++;
      const warm = n < o.warmup;
      const input = jobInput(c.allocationId, n);
      const start = performance.now();
      if (!warm) firstTimedStart ??= start;
      let failure: string | null = null;
      try {
        // A new caller per request, as the HTTP handler builds a new context per request.
        const job = await callerFor(db, { userId: c.userId, orgId: c.orgId, scheduler }).job.submit(input);
        if (job.state !== 'PENDING') failure = `job left ${job.state} (not handed to the scheduler)`;
      } catch (error) {
        failure = errorKind(error);
      }
      const ms = performance.now() - start;
      if (failure === null) {
        queued++;
        lastSuccess = performance.now();
      } else {
        failed++;
        claimed--;
        errors.set(failure, (errors.get(failure) ?? 0) + 1);
      }
      if (!warm) samples.push({ ms, pos: queued, ok: failure === null, group: c.group });
      if (failure === null && queued % progressEvery === 0) {
        const recent = ascending(samples.slice(-200).map((s) => s.ms));
        const seconds = (performance.now() - started) / 1000;
        log(`  ${adapter}: ${num(queued)} queued, ${num(failed)} failed, ${num(queued / seconds, 1)} submits/s, last 200: p50 ${num(median(recent), 1)} ms, p99 ${num(quantile(recent, 0.99), 1)} ms`);
      }
    }
  }

  const quiet = silenceConsoleErrors();
  const ticker = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    log(`  ${adapter}: ${num(seconds)} s: ${num(queued)} queued, ${num(failed)} failed, ${num(claimed - queued)} in flight`);
  }, 30_000);
  try {
    await Promise.all(world.clients.map((c) => client(c)));
  } finally {
    clearInterval(ticker);
    quiet.restore();
  }
  const end = performance.now();
  return {
    adapter,
    samples,
    warmupSubmits: Math.min(o.warmup, attempts),
    timedMs: firstTimedStart === null ? 0 : end - firstTimedStart,
    queued,
    attempts,
    errors,
    stoppedBy,
    consoleErrors: quiet.seen,
    loadStart,
    loadEnd: loadAverage(),
  };
}

/** checkDatabase counts jobs by state and checks the ledger: one reservation per job, reserved = open reservations, within the grant. */
async function checkDatabase(db: Db): Promise<{ states: Record<string, number>; checks: string[] }> {
  const stateRows = await db.select({ state: jobs.state, n: count() }).from(jobs).groupBy(jobs.state);
  const states = Object.fromEntries(stateRows.map((r) => [r.state, r.n]));
  const checks: string[] = [];
  const [jobCount] = await db.select({ n: count() }).from(jobs);
  const [reserveCount] = await db.select({ n: count(), jobs: sql<number>`count(distinct ${ledgerEntries.jobId})`.mapWith(Number) }).from(ledgerEntries).where(eq(ledgerEntries.kind, 'reserve'));
  if (jobCount!.n !== reserveCount!.n || reserveCount!.n !== reserveCount!.jobs) checks.push(`${num(jobCount!.n)} jobs but ${num(reserveCount!.n)} reservations for ${num(reserveCount!.jobs)} jobs`);
  // An array's tasks release their shares as they end: what is left of its reservation is open.
  const open = await db
    .select({
      allocationId: jobs.allocationId,
      amount: sql<number>`sum(${jobs.reservedAmount} - coalesce((select sum(t.amount) from ${ledgerEntries} t where t.job_id = "jobs"."id" and t.kind = 'release' and t.task_index is not null), 0))`.mapWith(Number),
    })
    .from(jobs)
    .where(isNull(jobs.settledAt))
    .groupBy(jobs.allocationId);
  const openOf = new Map(open.map((r) => [r.allocationId, r.amount]));
  // The counters of jobs in flight admission reads (drizzle/0042) against the jobs themselves.
  const inFlight = await db
    .select({
      allocationId: jobs.allocationId,
      // One job: its GPUs, queued while SUBMITTING or PENDING; an array: its tasks that may run at once, its waiting tasks (drizzle/0049).
      gpus: sql<number>`sum(jobs_in_flight_gpus(${jobs.gpus}, ${jobs.arrayTasks}, ${jobs.arrayThrottle}, ${jobs.tasksEnded}))`.mapWith(Number),
      queued: sql<number>`sum(jobs_in_flight_queued(${jobs.state}, ${jobs.arrayTasks}, ${jobs.tasksRunning}, ${jobs.tasksEnded}))`.mapWith(Number),
    })
    .from(jobs)
    .where(and(isNull(jobs.settledAt), inArray(jobs.state, ['SUBMITTING', 'PENDING', 'RUNNING'])))
    .groupBy(jobs.allocationId);
  const inFlightOf = new Map(inFlight.map((r) => [r.allocationId, r]));
  const balances = await db.select({ id: allocations.id, granted: allocations.granted, charged: allocations.charged, reserved: allocations.reserved, activeGpus: allocations.activeGpus, queuedJobs: allocations.queuedJobs }).from(allocations);
  for (const b of balances) {
    const openAmount = openOf.get(b.id) ?? 0;
    if (b.charged + b.reserved > b.granted) checks.push(`allocation ${b.id}: charged + reserved ${num(b.charged + b.reserved)} > granted ${num(b.granted)}`);
    if (b.reserved !== openAmount) checks.push(`allocation ${b.id}: reserved ${num(b.reserved)} ≠ open reservations of its jobs ${num(openAmount)}`);
    const counted = inFlightOf.get(b.id) ?? { gpus: 0, queued: 0 };
    if (b.activeGpus !== counted.gpus || b.queuedJobs !== counted.queued) checks.push(`allocation ${b.id}: counters ${num(b.activeGpus)} GPUs, ${num(b.queuedJobs)} queued ≠ its jobs in flight ${num(counted.gpus)} GPUs, ${num(counted.queued)} queued`);
  }
  return { states, checks };
}

async function describeQueue(scheduler: SchedulerPort): Promise<string> {
  const c = await scheduler.describeCluster();
  const partition = c.nodes.filter((n) => n.partition === PARTITION);
  const busy = partition.reduce((s, n) => s + n.allocatedGpus, 0);
  return partition.length
    ? `scheduler: ${num(c.pendingJobs)} pending, ${num(c.runningJobs)} running; ${PARTITION} ${num(busy)}/${num(partition.reduce((s, n) => s + n.gpus, 0))} GPUs busy`
    : `scheduler: ${num(c.pendingJobs)} jobs known (no cluster behind it)`;
}

// ---- reconciler --------------------------------------------------------------------------------

interface Pass {
  label: string;
  detail: string;
  active: number;
  ms: number;
  result?: RoundResult;
  target: boolean;
}

async function activeJobs(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(jobs).where(and(isNull(jobs.settledAt), inArray(jobs.state, ['PENDING', 'RUNNING'])));
  return row!.n;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await run();
  return { value, ms: performance.now() - t0 };
}

/**
 * reconcilerPasses times reconcileOnce after the load: the first pass (every queued job gets its
 * pending reason recorded), a pass with nothing new, then — after moving the simulated clock past the
 * fillers' end and far enough for about `settleBatch` queued jobs to run — the cluster catching up
 * and the pass that settles what finished.
 */
async function reconcilerPasses(db: Db, scheduler: SimulatedScheduler, clock: { skewMs: number; now: () => Date }, fillersAtMs: number, o: Options, passes: Pass[]): Promise<Pass[]> {
  const pass = async (label: string, detail: string, target: boolean) => {
    const active = await activeJobs(db);
    const { value, ms } = await timed(() => reconcileOnce(db, scheduler, clock.now()));
    passes.push({ label, detail, active, ms, result: value, target });
    log(`  ${label}: ${num(active)} active jobs, ${num(ms)} ms, ${value.updated} updated, ${value.settled} settled, ${value.submitted} handed over`);
  };
  await pass('first pass after the burst', 'records the pending reason of every queued job', true);
  await pass('steady pass', 'nothing changed since the last pass', true);
  const avgGpus = JOB_GPUS.reduce((s, g) => s + g, 0) / JOB_GPUS.length;
  const simSeconds = FILLER_WALLTIME_MINUTES * 60 + (Math.ceil((o.settleBatch * avgGpus) / PARTITION_GPUS) + 0.5) * JOB_RUNTIME_SECONDS;
  clock.skewMs = fillersAtMs + (simSeconds * 1000) / SIM_SPEED - Date.now();
  const active = await activeJobs(db);
  const advance = await timed(() => scheduler.advance());
  passes.push({ label: 'simulated cluster catches up', detail: `\`advance()\`: ${num(simSeconds / 3600, 1)} simulated hours after the fillers started (the fillers end, queued jobs run)`, active, ms: advance.ms, target: false });
  log(`  cluster advance: ${num(advance.ms)} ms`);
  await pass('settling pass', 'settles the jobs that finished (and records those that started)', false);
  return passes;
}

// ---- one adapter, one database -----------------------------------------------------------------

interface AdapterRun {
  load: LoadResult;
  passes: Pass[];
  /** A failed pass, errors the reconciler logged. */
  reconcilerProblems: string[];
}

async function runAdapter(adapter: AdapterName, o: Options, kind: CaseName = 'mixed'): Promise<AdapterRun> {
  let database: BenchDatabase | undefined;
  let handle: DbHandle | undefined;
  let unregisterHandle = () => {};
  try {
    const setupStart = performance.now();
    database = await createBenchDatabase(o.adminUrl, { keep: o.keep, log });
    log(`\n${adapter}${kind === 'mixed' ? '' : ` (${kind})`}: database ${database.name}`);
    handle = await openDb({ driver: 'postgres', url: database.url, max: o.pool });
    // On Ctrl-C: close the pool before the database is dropped under it.
    unregisterHandle = atInterrupt(handle.close);
    const db = handle.db;
    await migrateDb(handle);
    await syncCatalogue(db, DEFAULT_CATALOGUE);
    const clock = { skewMs: 0, now: () => new Date(Date.now() + clock.skewMs) };
    const simulated = adapter === 'simulated' ? createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: SIM_SPEED, now: clock.now, nodeFailures: null }) : null;
    const scheduler: SchedulerPort = simulated ?? createNoopScheduler(clock.now);
    const today = clock.now().toISOString().slice(0, 10);
    const world = await (kind === 'mixed' ? buildWorld : onePersonWorld)(db, { queued: o.queued, clients: o.clients, tenants: o.tenants, today });
    const fillersAtMs = clock.now().getTime();
    await fillPartition(db, scheduler, world.filler);
    const setupSeconds = (performance.now() - setupStart) / 1000;
    log(`  set up in ${num(setupSeconds, 1)} s: ${world.tenants} tenants (big one: ${world.bigMembers} people), ${world.clients.length} clients, ${FILLER_JOBS} fillers; ${await describeQueue(scheduler)}`);

    const load = await runLoad(db, scheduler, world, o, adapter);
    const { states, checks } = await checkDatabase(db).catch((error: unknown) => ({ states: {}, checks: [`could not check the database: ${errorKind(error)}`] }));
    const cluster = await describeQueue(scheduler).catch((error: unknown) => `scheduler: could not describe the cluster (${errorKind(error)})`);
    log(`  ${adapter}: ${num(load.queued)} queued after ${num(load.attempts)} submits; jobs by state ${JSON.stringify(states)}; ${cluster}`);
    for (const c of checks) log(`  CHECK FAILED: ${c}`);
    const result: AdapterRun = { load: { ...load, states, checks, cluster }, passes: [], reconcilerProblems: [] };
    if (simulated && kind === 'mixed') {
      const silence = silenceConsoleErrors();
      try {
        result.passes = await reconcilerPasses(db, simulated, clock, fillersAtMs, o, result.passes);
      } catch (error) {
        result.reconcilerProblems.push(`a pass failed: ${errorKind(error)}`);
        log(`  reconciler passes failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      } finally {
        silence.restore();
        if (silence.seen.count) result.reconcilerProblems.push(`the reconciler logged ${num(silence.seen.count)} error(s); first: \`${silence.seen.first[0]?.replaceAll('`', "'")}\``);
      }
    }
    return result;
  } finally {
    unregisterHandle();
    await handle?.close().catch(() => undefined);
    await database?.drop().catch((error: unknown) => log(`could not drop ${database?.name}: ${String(error)}`));
  }
}

// ---- figures and report ------------------------------------------------------------------------

/**
 * windowOf returns the submits that returned while the load's queue held `around` jobs (±100, within
 * the run); none when the run stopped before its queue reached `around`.
 */
function windowOf(samples: Sample[], around: number, total: number): { from: number; to: number; ms: number[] } {
  if (around > total) return { from: around, to: around, ms: [] };
  const half = Math.min(100, Math.floor(around / 2));
  let from = around - half + 1;
  let to = around + half;
  if (to > total) {
    from = Math.max(1, from - (to - total));
    to = total;
  }
  return { from, to, ms: ascending(samples.filter((s) => s.pos >= from && s.pos <= to).map((s) => s.ms)) };
}

interface Figures {
  timed: number;
  ok: number;
  errors: number;
  perSecond: number;
  /** Wall time per queued submit (1 / throughput), ms. */
  perSubmitMs: number;
  p50: number;
  p99: number;
  max: number;
  windows: { around: number; from: number; to: number; median: number; n: number }[];
  growth: number;
  groups: Record<Client['group'], number>;
}

function windowPoints(queued: number): number[] {
  return [...new Set([100, 1_000, 10_000, queued].filter((p) => p <= queued))].sort((a, b) => a - b);
}

function figures(load: LoadResult, target: number): Figures {
  const all = ascending(load.samples.map((s) => s.ms));
  const ok = load.samples.filter((s) => s.ok).length;
  const errors = [...load.errors.values()].reduce((s, n) => s + n, 0);
  const windows = windowPoints(target).map((around) => {
    const w = windowOf(load.samples, around, load.queued);
    return { around, from: w.from, to: w.to, median: median(w.ms), n: w.ms.length };
  });
  const at = (p: number) => windows.find((w) => w.around === p)?.median ?? Number.NaN;
  const group = (g: Client['group']) => median(ascending(load.samples.filter((s) => s.group === g).map((s) => s.ms)));
  const perSecond = load.timedMs > 0 ? ok / (load.timedMs / 1000) : Number.NaN;
  return {
    timed: load.samples.length,
    ok,
    errors,
    perSecond,
    perSubmitMs: 1000 / perSecond,
    p50: median(all),
    p99: quantile(all, 0.99),
    max: all[all.length - 1] ?? Number.NaN,
    windows,
    growth: at(target) / at(100),
    groups: { big: group('big'), other: group('other') },
  };
}

const ms = (n: number) => `${num(n, 1)} ms`;

function submitSection(o: Options, runs: Partial<Record<AdapterName, AdapterRun>>, pgVersion: string, failures: string[]): string {
  const sim = runs.simulated;
  const noop = runs.noop;
  const fs = sim ? figures(sim.load, o.queued) : undefined;
  const fn = noop ? figures(noop.load, o.queued) : undefined;
  const overhead = fs && fn ? fs.perSubmitMs / fn.perSubmitMs : Number.NaN;
  const medianRatio = fs && fn ? fs.p50 / fn.p50 : Number.NaN;
  const date = new Date().toISOString().slice(0, 10);
  const cell = (f: Figures | undefined, pick: (f: Figures) => string) => (f ? pick(f) : 'not run');
  const met = (f: Figures | undefined, ok: (f: Figures) => boolean) => (f ? mark(ok(f)) : '—');
  const rows: string[][] = [
    ['throughput (queued submits/s)', `≥ ${TARGET.submitsPerSecond}`, cell(fs, (f) => num(f.perSecond, 1)), met(fs, (f) => f.perSecond >= TARGET.submitsPerSecond), cell(fn, (f) => num(f.perSecond, 1)), met(fn, (f) => f.perSecond >= TARGET.submitsPerSecond)],
    ['latency p50', '—', cell(fs, (f) => ms(f.p50)), '', cell(fn, (f) => ms(f.p50)), ''],
    ['latency p99', `≤ ${TARGET.p99Ms} ms`, cell(fs, (f) => ms(f.p99)), met(fs, (f) => f.p99 <= TARGET.p99Ms), cell(fn, (f) => ms(f.p99)), met(fn, (f) => f.p99 <= TARGET.p99Ms)],
    ['latency max', '—', cell(fs, (f) => ms(f.max)), '', cell(fn, (f) => ms(f.max)), ''],
    ...windowPoints(o.queued).map((p, i) => [
      `median around ${num(p)} queued`,
      '—',
      cell(fs, (f) => `${ms(f.windows[i]!.median)} (n = ${f.windows[i]!.n})`),
      '',
      cell(fn, (f) => `${ms(f.windows[i]!.median)} (n = ${f.windows[i]!.n})`),
      '',
    ]),
    [`median@${num(o.queued)} ÷ median@100`, `≤ ${TARGET.growth}`, cell(fs, (f) => num(f.growth, 2)), met(fs, (f) => f.growth <= TARGET.growth), cell(fn, (f) => num(f.growth, 2)), met(fn, (f) => f.growth <= TARGET.growth)],
    ['errors (all submits, warm-up included)', '0', cell(fs, (f) => num(f.errors)), met(fs, (f) => f.errors === 0), cell(fn, (f) => num(f.errors)), met(fn, (f) => f.errors === 0)],
  ];
  const lines = [
    SUBMIT_SECTION,
    '',
    `Measured by \`npm run bench:submit\` (\`bench/submit.ts\`) on ${date}. Machine: ${machine()}; ${pgVersion} on the same machine, a fresh database per adapter (\`portal_bench_<random>\`, dropped after the run), postgres.js pool of ${o.pool}.`,
    `Load average at the start / end of the load: simulated ${sim ? `${sim.load.loadStart} → ${sim.load.loadEnd}` : '—'}; no-op ${noop ? `${noop.load.loadStart} → ${noop.load.loadEnd}` : '—'}.`,
    '',
    `Load: ${o.clients} concurrent clients call the tRPC procedure \`job.submit\` through the server-side caller (a new context per call, as the HTTP handler builds one per request), one after another each, until ${num(o.queued)} jobs are queued (state PENDING) behind the ${PARTITION} partition, whose ${PARTITION_GPUS} GPUs run ${FILLER_JOBS} filler jobs of 8 GPUs. ${Math.ceil(o.clients / 2)} clients are people of one tenant (one project, one allocation); the others are people of ${o.tenants - 1} other tenants with an allocation each. Jobs: fine-tuning, ${JOB_GPUS.join('/')} GPUs in turn, 1 h walltime. The first ${num(o.warmup)} submits are a warm-up (queued, not timed). Latency is the wall time of one call in the benchmark process; failed submits are timed too and count in p50/p99; throughput is queued submits per second of the timed part.`,
    '',
    '| figure | target | simulated adapter | | no-op adapter | |',
    '| --- | --- | ---: | --- | ---: | --- |',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    `| time per submit, simulated ÷ no-op | ≤ ${TARGET.adapterOverhead} | ${num(overhead, 2)} | ${Number.isNaN(overhead) ? '—' : mark(overhead <= TARGET.adapterOverhead)} | | |`,
    `| median latency, simulated ÷ no-op | — | ${num(medianRatio, 2)} | | | |`,
    '',
    ...(failures.length ? [`**${failures.join('; ')}.**`, ''] : []),
  ];
  for (const [name, run] of [['simulated', sim] as const, ['no-op', noop] as const]) {
    if (!run) continue;
    const l = run.load;
    const f = name === 'simulated' ? fs! : fn!;
    lines.push(
      `**${name} adapter**: ${num(l.queued)} queued in ${num(l.timedMs / 1000, 1)} s after ${num(l.attempts)} submits${l.stoppedBy ? ` — **stopped early (${l.stoppedBy}), the target queue was not reached**` : ''}; median of the big tenant's clients ${ms(f.groups.big)}, of the other tenants' ${ms(f.groups.other)}. Jobs in the database by state: ${Object.entries(l.states).map(([s, n]) => `${s} ${num(n)}`).join(', ')} (fillers and warm-up included); ${l.cluster}. Ledger checks: ${l.checks.length ? `**${l.checks.join('; ')}**` : 'one reservation per job, each allocation\'s reserved = its open reservations ≤ granted'}.`,
      '',
    );
    if (l.errors.size) {
      lines.push(`Errors of the ${name} run by kind:`, '', '| kind | count |', '| --- | ---: |', ...[...l.errors].sort((a, b) => b[1] - a[1]).map(([k, n]) => `| ${k.replaceAll('|', '\\|')} | ${num(n)} |`), '');
    }
    if (l.consoleErrors.count) lines.push(`The server code logged ${num(l.consoleErrors.count)} error(s) during the ${name} run; first: \`${l.consoleErrors.first[0]?.replaceAll('`', "'")}\`.`, '');
  }
  lines.push(
    'Notes:',
    '- "around N queued": the submits that returned while the load had queued N − 100 … N + 100 jobs (N/2 … 3N/2 for N = 100; the last 200 for the end of the run).',
    `- The no-op adapter accepts every job and reports it PENDING for ever (\`bench/noop-scheduler.ts\`); the simulated one is the portal's default (\`createSimulatedScheduler\`, ${SIM_SPEED}× speed, no node failures). "Time per submit" is wall time per queued submit (1 / throughput) under the same load.`,
    '- History (issue #8): before it, this load failed (with 16 clients one tenant\'s 8 clients livelocked in deadlocks, and the simulated adapter\'s median doubled from 100 to 500 queued). Then 146 submits/s, p99 281 ms: drizzle sent every statement unnamed, which postgres.js runs as two round trips (describe, then execute) and Postgres plans each time, and the busiest allocation\'s lock was held for three round trips. Now statements are prepared (`db/prepared.ts`) and a new job\'s reservation goes out with its locks (two round trips under the lock).',
    '- Issue #9: every tenant call now runs in one transaction as the role portal_tenant (row-level security on reads and writes), and the policies bind the table owner too (FORCE), so a run as a role that is no superuser measures what a deployment does. On the machine of this run and in the same hour, the code before that change gave 168 submits/s, p99 182 ms, first reconciler pass 1,252 ms (simulated adapter, as `portal_ci`); the cost is the tenant settings statement and the policies\' checks. Two planner traps were found and fixed on the way: a child row\'s policy as `IN (SELECT …)` hashed every parent row per statement (submits slowed as the queue grew), and a per-row "no tenant set" test in the owner\'s policy made the planner misjudge its queries (first pass 18 s).',
    `- Sizes of this run: \`--queued ${o.queued} --clients ${o.clients} --tenants ${o.tenants}\`. Regenerate with \`npm run bench:submit\`.`,
    '',
  );
  return lines.join('\n');
}

function reconcileSection(o: Options, run: AdapterRun | undefined, pgVersion: string): string {
  const date = new Date().toISOString().slice(0, 10);
  const lines = [
    RECONCILE_SECTION,
    '',
    `Measured by \`npm run bench:submit\` (\`bench/submit.ts\`) on ${date}, right after the simulated adapter's submission load, on its database. Machine: ${machine()}; ${pgVersion} on the same machine.`,
    '',
  ];
  if (!run || run.passes.length === 0) {
    lines.push(`Not measured in this run (${run ? `its passes failed: ${run.reconcilerProblems.join('; ')}` : 'the simulated adapter was not run, or failed'}).`, '');
    return lines.join('\n');
  }
  lines.push(
    'Each row is one call of `reconcileOnce` (or of the simulated cluster\'s `advance`) with the simulated adapter, one after another.',
    '',
    '| pass | what | active jobs | time | updated | settled | settled/s | target | |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |',
    ...run.passes.map((p) =>
      [
        '',
        p.label,
        p.detail,
        num(p.active),
        ms(p.ms),
        p.result ? num(p.result.updated) : '—',
        p.result ? num(p.result.settled) : '—',
        p.result && p.result.settled ? num(p.result.settled / (p.ms / 1000), 1) : '—',
        p.target ? `≤ ${num(TARGET.reconcileMs)} ms` : '—',
        p.target ? mark(p.ms <= TARGET.reconcileMs) : '',
        '',
      ]
        .join(' | ')
        .trim(),
    ),
    '',
    ...(run.reconcilerProblems.length ? [`**Problems:** ${run.reconcilerProblems.join('; ')}.`, ''] : []),
    `Notes: the active jobs are the load's ${num(run.load.queued)} queued jobs, the warm-up and the ${FILLER_JOBS} running fillers. For the settling pass the adapter's clock is moved forward (the fillers end at their walltime, ${FILLER_WALLTIME_MINUTES / 60} simulated hours after they started, then queued jobs of ~${JOB_RUNTIME_SECONDS / 60} simulated minutes run), aiming at about ${num(o.settleBatch)} finished jobs (\`--settle-batch\`); settled/s is jobs settled per second of that pass.`,
    '',
  );
  return lines.join('\n');
}

/**
 * onePersonSection reports the case "one person": every client is the same person and submits into one
 * allocation, so each submission waits for the one allocation lock and reads its counters of jobs in
 * flight. The figure is the growth of the median from around 100 to around --queued queued, both from
 * the same run (the machine is shared and noisy: runs an hour apart differ more than the growth).
 */
function onePersonSection(o: Options, runs: Partial<Record<AdapterName, AdapterRun>>, pgVersion: string, failures: string[]): string {
  const date = new Date().toISOString().slice(0, 10);
  const measured = o.adapters.flatMap((a) => (runs[a] ? [{ adapter: a, run: runs[a], f: figures(runs[a].load, o.queued) }] : []));
  const label = (a: AdapterName) => (a === 'noop' ? 'no-op adapter' : 'simulated adapter');
  const at = (f: Figures, p: number) => f.windows.find((w) => w.around === p);
  const median = (f: Figures, p: number) => {
    const w = at(f, p);
    return w ? `${ms(w.median)} (n = ${w.n})` : '—';
  };
  const rows: string[][] = [
    ['median around 100 queued', '—', ...measured.flatMap((m) => [median(m.f, 100), ''])],
    [`median around ${num(o.queued)} queued`, '—', ...measured.flatMap((m) => [median(m.f, o.queued), ''])],
    [`median@${num(o.queued)} ÷ median@100`, `≤ ${TARGET.growth}`, ...measured.flatMap((m) => [num(m.f.growth, 2), Number.isNaN(m.f.growth) ? '—' : mark(m.f.growth <= TARGET.growth)])],
    ['throughput (queued submits/s)', '—', ...measured.flatMap((m) => [num(m.f.perSecond, 1), ''])],
    ['latency p50 / p99', '—', ...measured.flatMap((m) => [`${ms(m.f.p50)} / ${ms(m.f.p99)}`, ''])],
    ['errors (all submits, warm-up included)', '0', ...measured.flatMap((m) => [num(m.f.errors), mark(m.f.errors === 0)])],
  ];
  const lines = [
    ONE_PERSON_SECTION,
    '',
    `Measured by \`npm run bench:submit\` (\`bench/submit.ts\`, case \`one-person\`) on ${date}. Machine: ${machine()}; ${pgVersion} on the same machine, a fresh database per adapter, postgres.js pool of ${o.pool}.`,
    `Load average at the start / end of the load: ${measured.map((m) => `${label(m.adapter)} ${m.run.load.loadStart} → ${m.run.load.loadEnd}`).join('; ') || '—'}.`,
    '',
    `Load: ${o.clients} concurrent clients, all of them **one person** of one tenant, call \`job.submit\` through the server-side caller into **one allocation**, one after another each, until ${num(o.queued)} jobs are queued behind the full ${PARTITION} partition (the same jobs and warm-up as "Job submission (service path)"). Every submission locks that allocation and decides its limits (GPUs at once, queued jobs) from the allocation's counters of jobs in flight, kept by triggers on jobs in the statement that changes a job (\`drizzle/0042_allocation_in_flight.sql\`), instead of counting the allocation's active jobs. Both medians come from the same run.`,
    '',
    `| figure | target | ${measured.map((m) => `${label(m.adapter)} | `).join('| ')}|`,
    `| --- | --- | ${measured.map(() => '---: | --- | ').join('')}`.trim(),
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
    ...(failures.length ? [`**${failures.join('; ')}.**`, ''] : []),
  ];
  for (const { adapter, run } of measured) {
    const l = run.load;
    lines.push(
      `**${label(adapter)}**: ${num(l.queued)} queued in ${num(l.timedMs / 1000, 1)} s after ${num(l.attempts)} submits${l.stoppedBy ? ` — **stopped early (${l.stoppedBy}), the target queue was not reached**` : ''}. Jobs by state: ${Object.entries(l.states).map(([st, n]) => `${st} ${num(n)}`).join(', ')}. Checks: ${l.checks.length ? `**${l.checks.join('; ')}**` : "one reservation per job, reserved = open reservations ≤ granted, each allocation's counters of jobs in flight = its jobs"}.`,
      '',
    );
    if (l.errors.size) lines.push(`Errors of the ${label(adapter)} run by kind: ${[...l.errors].map(([k, n]) => `${k} (${num(n)})`).join('; ')}.`, '');
  }
  lines.push(
    'Notes:',
    '- Before the counters (issue #26, part 5), each submission counted the allocation\'s active jobs under its lock (`activeUsage`): the median grew with the queue. The same case with that code (the triggers in place, no-op adapter, the same machine within the hour, 2026-12-03): 58.3 ms around 100 queued, 183.6 ms around 10,000, ratio 3.15, 111.7 submits/s.',
    `- Sizes of this run: \`--cases one-person --queued ${o.queued} --clients ${o.clients} --adapters ${o.adapters.join(',')}\`.`,
    '',
  );
  return lines.join('\n');
}

// ---- job arrays --------------------------------------------------------------------------------

interface ArrayRun {
  /** Wall time of each array's submit (one request each) and of the single jobs submitted between them. */
  arrayMs: number[];
  jobMs: number[];
  /** One reconciler round with the arrays queued (simulated adapter only), and the tasks its scheduler reported waiting. */
  roundMs: number | null;
  waitingTasks: number | null;
  checks: string[];
  states: Record<string, number>;
  loadStart: string;
  loadEnd: string;
}

/**
 * runArrayCase submits `--arrays` arrays of 10,000 one-GPU tasks (throttled to 64) as one person into one
 * allocation behind the full partition, one request each, with a single job between two arrays, then
 * times a reconciler round that follows them all.
 */
async function runArrayCase(adapter: AdapterName, o: Options): Promise<ArrayRun> {
  let database: BenchDatabase | undefined;
  let handle: DbHandle | undefined;
  let unregisterHandle = () => {};
  try {
    database = await createBenchDatabase(o.adminUrl, { keep: o.keep, log });
    log(`\n${adapter} (array): database ${database.name}`);
    handle = await openDb({ driver: 'postgres', url: database.url, max: o.pool });
    unregisterHandle = atInterrupt(handle.close);
    const db = handle.db;
    await migrateDb(handle);
    await syncCatalogue(db, DEFAULT_CATALOGUE);
    const clock = { now: () => new Date() };
    const simulated = adapter === 'simulated' ? createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: SIM_SPEED, now: clock.now, nodeFailures: null }) : null;
    const scheduler: SchedulerPort = simulated ?? createNoopScheduler(clock.now);
    const world = await onePersonWorld(db, { queued: (o.arrays + 1) * ARRAY_TASKS, clients: 1, tenants: 1, today: clock.now().toISOString().slice(0, 10) });
    await fillPartition(db, scheduler, world.filler);
    const person = world.clients[0]!;
    const caller = () => callerFor(db, { userId: person.userId, orgId: person.orgId, scheduler });
    const loadStart = loadAverage();
    const arrayMs: number[] = [];
    const jobMs: number[] = [];
    // A warm-up of each kind first (prepared statements, the JIT), not timed.
    for (let i = -1; i < o.arrays; i++) {
      const one = await timed(() => caller().job.submit({ ...jobInput(person.allocationId, i + 1), gpus: 1 }));
      const array = await timed(() => caller().job.submit({ ...jobInput(person.allocationId, i + 1), name: `bench-sweep-${i + 1}`, kind: 'batch', gpus: 1, array: `0-${ARRAY_TASKS - 1}%64` }));
      if (array.value.state !== 'PENDING' || one.value.state !== 'PENDING') throw new Error(`a submit left ${array.value.state} / ${one.value.state}`);
      if (i >= 0) {
        arrayMs.push(array.ms);
        jobMs.push(one.ms);
      }
    }
    let roundMs: number | null = null;
    let waitingTasks: number | null = null;
    if (simulated) {
      await reconcileOnce(db, simulated, clock.now());
      const round = await timed(() => reconcileOnce(db, simulated, clock.now()));
      roundMs = round.ms;
      const ids = (await db.select({ id: jobs.id }).from(jobs).where(isNotNull(jobs.arrayTasks))).map((r) => r.id);
      waitingTasks = (await simulated.jobs(ids)).reduce((n, st) => n + (st.tasksWaiting ?? 0), 0);
    }
    const { states, checks } = await checkDatabase(db);
    for (const c of checks) log(`  CHECK FAILED: ${c}`);
    log(`  ${adapter}: array submit median ${ms(median(ascending(arrayMs)))}, single job ${ms(median(ascending(jobMs)))}${roundMs !== null ? `; a reconciler round ${ms(roundMs)}` : ''}`);
    return { arrayMs, jobMs, roundMs, waitingTasks, checks, states, loadStart, loadEnd: loadAverage() };
  } finally {
    unregisterHandle();
    await handle?.close().catch(() => undefined);
    await database?.drop().catch((error: unknown) => log(`could not drop ${database?.name}: ${String(error)}`));
  }
}

function arraySection(o: Options, runs: Partial<Record<AdapterName, ArrayRun>>, pgVersion: string, failures: string[]): string {
  const date = new Date().toISOString().slice(0, 10);
  const label = (a: AdapterName) => (a === 'noop' ? 'no-op adapter' : 'simulated adapter');
  const measured = o.adapters.flatMap((a) => (runs[a] ? [{ adapter: a, run: runs[a] }] : []));
  const med = (values: number[]) => median(ascending(values));
  const rows: string[][] = [
    [`${num(ARRAY_TASKS)}-task array, one request: median`, `≤ ${ARRAY_TARGET_MS} ms`, ...measured.flatMap((m) => [ms(med(m.run.arrayMs)), mark(med(m.run.arrayMs) <= ARRAY_TARGET_MS)])],
    [`${num(ARRAY_TASKS)}-task array: slowest of ${o.arrays}`, '—', ...measured.flatMap((m) => [ms(Math.max(...m.run.arrayMs)), ''])],
    ['one job between them: median', '—', ...measured.flatMap((m) => [ms(med(m.run.jobMs)), ''])],
    ['array ÷ one job (medians)', '—', ...measured.flatMap((m) => [num(med(m.run.arrayMs) / med(m.run.jobMs), 2), ''])],
    ['a reconciler round following them', '—', ...measured.flatMap((m) => [m.run.roundMs === null ? '—' : ms(m.run.roundMs), ''])],
  ];
  const lines = [
    ARRAY_SECTION,
    '',
    `Measured by \`npm run bench:submit\` (\`bench/submit.ts\`, case \`array\`) on ${date}. Machine: ${machine()}; ${pgVersion} on the same machine, a fresh database per adapter.`,
    `Load average at the start / end: ${measured.map((m) => `${label(m.adapter)} ${m.run.loadStart} → ${m.run.loadEnd}`).join('; ') || '—'}.`,
    '',
    `Load: one person submits ${o.arrays} job arrays of ${num(ARRAY_TASKS)} one-GPU tasks each (\`0-${ARRAY_TASKS - 1}%64\`) through \`job.submit\` into one allocation, behind the full ${PARTITION} partition, each one request (admission, the whole array's reservation, the hand-over), with a single one-GPU job between two arrays; one warm-up of each first. The array is one job row, its tasks appear as they start (\`job_tasks\`); the simulated cluster makes its tasks lazily. Then one reconciler round follows every open job.`,
    '',
    `| figure | target | ${measured.map((m) => `${label(m.adapter)} | `).join('| ')}|`,
    `| --- | --- | ${measured.map(() => '---: | --- | ').join('')}`.trim(),
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
    ...(failures.length ? [`**${failures.join('; ')}.**`, ''] : []),
  ];
  for (const { adapter, run } of measured) {
    lines.push(
      `**${label(adapter)}**: jobs by state ${Object.entries(run.states).map(([st, n]) => `${st} ${num(n)}`).join(', ')}${run.waitingTasks !== null ? `; the scheduler reports ${num(run.waitingTasks)} tasks waiting` : ''}. Checks: ${run.checks.length ? `**${run.checks.join('; ')}**` : "one reservation per job, reserved = open reservations ≤ granted, each allocation's counters in flight (an array: its tasks) = its jobs"}.`,
      '',
    );
  }
  lines.push(`Sizes of this run: \`--cases array --arrays ${o.arrays} --adapters ${o.adapters.join(',')}\`.`, '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const o = options();
  const pgVersion = await describeServer(o.adminUrl);
  log(`bench/submit — ${num(o.queued)} queued, ${o.clients} clients, ${o.tenants} tenants, adapters ${o.adapters.join(', ')}; ${machine()}; load average ${loadAverage()}`);
  for (const kind of o.cases) {
    if (kind === 'array') {
      const arrayRuns: Partial<Record<AdapterName, ArrayRun>> = {};
      const failures: string[] = [];
      for (const adapter of o.adapters) {
        try {
          arrayRuns[adapter] = await runArrayCase(adapter, o);
        } catch (error) {
          if (wasInterrupted()) throw error;
          failures.push(`the ${adapter} run failed: ${errorKind(error)}`);
          log(`${adapter} array run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        }
      }
      if (failures.length) process.exitCode = 1;
      const section = arraySection(o, arrayRuns, pgVersion, failures);
      log(`\n${section}`);
      if (o.write) log(`wrote ${writeSection(root, ARRAY_SECTION, section)}`);
      continue;
    }
    const runs: Partial<Record<AdapterName, AdapterRun>> = {};
    const failures: string[] = [];
    for (const adapter of o.adapters) {
      try {
        runs[adapter] = await runAdapter(adapter, o, kind);
      } catch (error) {
        if (wasInterrupted()) throw error;
        // One adapter's failure (its set-up, say) must not lose the other's figures.
        failures.push(`the ${adapter} run failed: ${errorKind(error)}`);
        log(`${adapter} run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
    if (failures.length) process.exitCode = 1;
    if (kind === 'one-person') {
      const section = onePersonSection(o, runs, pgVersion, failures);
      log(`\n${section}`);
      if (o.write) log(`wrote ${writeSection(root, ONE_PERSON_SECTION, section)}`);
      continue;
    }
    const submit = submitSection(o, runs, pgVersion, failures);
    const reconcile = reconcileSection(o, runs.simulated, pgVersion);
    log(`\n${submit}\n${reconcile}`);
    if (o.write) {
      writeSection(root, SUBMIT_SECTION, submit);
      log(`wrote ${writeSection(root, RECONCILE_SECTION, reconcile)}`);
    }
  }
}

main().catch((error: unknown) => {
  if (wasInterrupted()) return;
  if (error instanceof UsageError) console.error(`bench/submit: ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
});
