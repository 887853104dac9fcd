/**
 * Submissions to a real Slurm (issue #11), in one run: `sbatch` and slurmrestd straight (held jobs, the
 * baseline; bench/slurm-raw.ts), then the portal's `job.submit` (tRPC caller → admission and reservation
 * in Postgres → slurmrestd), and the adapter's submit with the duplicate lookup a retry makes (why it
 * looks only on retries). Writes "## Slurm submission (real Slurm)" of BENCHMARKS.md.
 *
 *   node --import tsx bench/slurm-submit.ts [--jobs 100] [--concurrency 8] [--rounds 5] [--database-url URL] [--no-write]
 *
 * Needs the test cluster (`scripts/slurm-test-cluster.sh start`; its env file is read when SLURM_REST_URL
 * is unset) and a Postgres (BENCH_ADMIN_URL, else the local one) for a database of its own, dropped at the
 * end. Every Slurm job it made is cancelled at the end, also after a failure.
 * The portal's clients are separate tenants (one client each), so the figure is the portal's own cost per
 * submit, not one allocation's lock. The targets compare the portal with the same jobs straight through
 * the adapter: `--rounds` rounds, each a cell of both, one after the other, so that a noisy moment of the
 * shared machine falls on one round and not on one path; the table pools the rounds, the ratio is the
 * median of the rounds' ratios.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateDb, openDb, type DbHandle } from '~/db/client';
import { slurmClassesFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSlurmScheduler, slurmSettings } from '~/server/adapters/scheduler/slurm';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { parseEnv } from '~/server/env.js';
import { syncCatalogue } from '~/server/services/catalogue';
import { activeAllocation, callerFor, createStaff, createTenant } from '~/server/testing/harness';
import { flag, intFlag } from './args';
import { atInterrupt, createBenchDatabase, DEFAULT_ADMIN_URL, describeServer, type BenchDatabase } from './database';
import { loadAverage, machine, mark, writeSection } from './markdown';
import { createNoopScheduler } from './noop-scheduler';
import { cancelJobs, measurePath, pooledResult, rawSlurmResults, slurmBenchEnv, slurmBenchTable, type PathResult } from './slurm-raw';
import { cpuMeter } from './proc-cpu';
import { median, num } from './stats';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);
const STRAIGHT = "slurmrestd, the portal's jobs (adapter, no database)";
const PORTAL = 'portal job.submit (Postgres) + slurmrestd';
const NOOP = 'portal job.submit (Postgres), a scheduler that does nothing';
const run = promisify(execFile);

async function main() {
  const jobs = intFlag('--jobs', 100);
  const concurrency = intFlag('--concurrency', 8, 2);
  const rounds = intFlag('--rounds', 5);
  const adminUrl = flag('--database-url') ?? process.env.BENCH_ADMIN_URL ?? DEFAULT_ADMIN_URL;
  if (!process.env.SLURM_REST_URL) throw new Error('source the Slurm test cluster\'s env file first: set -a; . "$(scripts/slurm-test-cluster.sh env)"; set +a');
  const benchEnv = slurmBenchEnv();
  const settings = slurmSettings(parseEnv({ ...process.env, SCHEDULER: 'slurm' }));
  const load = loadAverage();
  /** sbatch and slurmrestd with held jobs; the rounds of the same jobs straight; the noop and lookup rows. */
  const raw: PathResult[] = [];
  const straightRounds: PathResult[] = [];
  const others: PathResult[] = [];
  /** The compared paths' rounds by concurrency. */
  const compared = new Map<number, { straight: PathResult; portal: PathResult }[]>();
  /** CPU seconds of the portal's rounds by concurrency: this process (the portal's Node) and Postgres, slurmctld and slurmrestd. */
  const meter = cpuMeter({ self: [], postgres: ['postgres'], slurmctld: ['slurmctld'], slurmrestd: ['slurmrestd'] });
  const portalCpu = new Map<number, { submissions: number; cpu: Record<string, number> }>();
  const straightCpu = new Map<number, { submissions: number; cpu: Record<string, number> }>();
  const addCpu = (into: Map<number, { submissions: number; cpu: Record<string, number> }>, c: number, submissions: number, cpu: Record<string, number>) => {
    const sum = into.get(c) ?? { submissions: 0, cpu: {} };
    sum.submissions += submissions;
    for (const [k, v] of Object.entries(cpu)) sum.cpu[k] = (sum.cpu[k] ?? 0) + v;
    into.set(c, sum);
  };
  // The jobs answered by Slurm job id (the portal's are cancelled by their accounts).
  const slurmJobIds = () => [...raw, ...straightRounds, ...others.filter((r) => r.path !== NOOP)].flatMap((r) => r.jobIds);
  let database: BenchDatabase | null = null;
  let handle: DbHandle | null = null;
  const accounts: string[] = [];
  try {
    raw.push(...(await rawSlurmResults(benchEnv, jobs, concurrency)));

    database = await createBenchDatabase(adminUrl, { keep: false, log });
    handle = await openDb({ driver: 'postgres', url: database.url, max: concurrency + 2 });
    atInterrupt(handle.close);
    const db = handle.db;
    await migrateDb(handle);
    await syncCatalogue(db, DEFAULT_CATALOGUE);
    const port = createSlurmScheduler(settings, await slurmClassesFromCatalogue(db));
    const today = new Date().toISOString().slice(0, 10);
    const admin = await createStaff(db, 'admin');
    /** One tenant per client, each with a project (on Slurm the grant creates its account); submits round-robin. */
    const portalClients = async (label: string, scheduler: SchedulerPort, handedOver: boolean) => {
      const clients = await Promise.all(
        Array.from({ length: concurrency }, async (_, i) => {
          const owner = await createTenant(db, { name: `${label} ${i} ${randomUUID().slice(0, 6)}` });
          const { allocationId, projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100_000, today, scheduler });
          // Every round's jobs stay queued in the portal (no reconciler runs): lift the queue limit above them.
          await callerFor(db, { userId: admin.userId }).staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 100_000, maxWalltimeHours: 48, maxQueuedJobs: 100_000, reason: 'Benchmark: limits above the load' });
          return { caller: callerFor(db, { userId: owner.userId, orgId: owner.orgId, scheduler }), allocationId, projectId };
        }),
      );
      let turn = 0;
      const submit = async () => {
        const client = clients[turn++ % clients.length]!;
        const job = await client.caller.job.submit({ allocationId: client.allocationId, resourceClassId: 'h100', name: 'bench', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'sleep 600', env: {}, idempotencyKey: randomUUID() });
        if (handedOver && job.state !== 'PENDING') throw new Error(`the job is ${job.state}, not handed over`);
        return job.id;
      };
      await Promise.all(clients.map(() => submit())); // warm every client's statements
      return { accounts: clients.map((c) => c.projectId), submit };
    };
    /** The adapter alone, as the portal would call it on a first hand-over (attempt 1) or a retry. */
    const adapterSubmit = (id: string, attempt: number, account = benchEnv.account) => port.submit({ portalJobId: id, attempt, name: 'bench', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 600, account, user: 'bench', image: 'img', command: 'sleep 600', env: {} }).then((r) => r.schedulerJobId);
    const portal = await portalClients('Slurm bench', port, true);
    accounts.push(...portal.accounts);
    // The same jobs the portal submits, straight from the adapter (no database), into the same project
    // accounts with their GPU-minute limits, round-robin: Slurm's own cost of taking a real job (it
    // checks the account's limits and schedules the job at once), the like-for-like baseline.
    const straight = (i: number) => adapterSubmit(`bench-straight-${process.pid}-${i}-${randomUUID().slice(0, 8)}`, 1, portal.accounts[i % portal.accounts.length]);
    // Every cell starts on an empty queue: slurmctld schedules each real job as it arrives, and a pass
    // over a longer queue takes more of the machine's two cores.
    const emptyQueue = async () => {
      await cancelJobs(benchEnv, slurmJobIds());
      for (const account of accounts) await run('scancel', ['-A', account], { env: { ...process.env, SLURM_CONF: benchEnv.conf } });
      await new Promise((r) => setTimeout(r, 2000));
    };
    for (const c of [1, concurrency]) {
      const pairs: { straight: PathResult; portal: PathResult }[] = [];
      compared.set(c, pairs);
      for (let round = 0; round < rounds; round++) {
        await emptyQueue();
        const straightRead = meter.start();
        const straightRound = await measurePath(STRAIGHT, jobs, c, straight);
        addCpu(straightCpu, c, jobs, straightRead());
        straightRounds.push(straightRound);
        await emptyQueue();
        const portalRead = meter.start();
        const portalRound = await measurePath(PORTAL, jobs, c, portal.submit);
        addCpu(portalCpu, c, jobs, portalRead());
        pairs.push({ straight: straightRound, portal: portalRound });
        log(`round ${round + 1} at ${c}: straight ${num(straightRound.perSecond, 1)}/s, portal ${num(portalRound.perSecond, 1)}/s`);
      }
    }
    await emptyQueue();
    // The portal's own share: the same submissions with a scheduler that does nothing (separate tenants).
    const quiet = await portalClients('Noop bench', createNoopScheduler(() => new Date()), false);
    for (const c of [1, concurrency]) others.push(await measurePath(NOOP, jobs, c, quiet.submit));
    // The lookup a retried hand-over makes before it may submit (slurmctld's jobs, slurmdbd, /diag).
    const lookup = (i: number) => adapterSubmit(`bench-lookup-${process.pid}-${i}`, 2);
    others.push(await measurePath('adapter submit with the retry lookup', jobs, 1, lookup));
  } finally {
    // The raw and lookup rows answer Slurm job ids; the portal's jobs are cancelled by their accounts.
    await cancelJobs(benchEnv, slurmJobIds()).catch((error: unknown) => log(`cancelling failed: ${String(error)}`));
    for (const account of accounts) await run('scancel', ['-A', account], { env: { ...process.env, SLURM_CONF: benchEnv.conf } }).catch((error: unknown) => log(`cancelling failed: ${String(error)}`));
    await handle?.close();
    await database?.drop();
  }

  // The compared paths' rows pool their rounds; the others ran once.
  const pooled = (c: number) => {
    const pairs = compared.get(c) ?? [];
    return { straight: pooledResult(pairs.map((p) => p.straight)), portal: pooledResult(pairs.map((p) => p.portal)) };
  };
  const results = [...raw, pooled(1).straight, pooled(concurrency).straight, pooled(1).portal, pooled(concurrency).portal, ...others];
  const table = slurmBenchTable(results);
  const roundRatios = (compared.get(concurrency) ?? []).map((p) => p.portal.perSecond / p.straight.perSecond);
  const ratio = median([...roundRatios].sort((x, y) => x - y));
  const held = raw.find((r) => r.path.startsWith('slurmrestd POST') && r.concurrency === concurrency)!;
  const heldRatio = pooled(concurrency).portal.perSecond / held.perSecond;
  const addedMs = pooled(1).portal.medianMs - pooled(1).straight.medianMs;
  // CPU per submission, ms: the portal's own (Node + Postgres) against Slurm's own (slurmctld + slurmrestd), in the same rounds.
  const perSubmission = (sum: { submissions: number; cpu: Record<string, number> } | undefined, keys: string[]) => (sum ? (keys.reduce((s, k) => s + (sum.cpu[k] ?? 0), 0) * 1000) / sum.submissions : Number.NaN);
  const cpuRows = [1, concurrency].map((c) => {
    const p = portalCpu.get(c);
    const portalMs = perSubmission(p, ['self', 'postgres']);
    const slurmMs = perSubmission(p, ['slurmctld', 'slurmrestd']);
    const straightSlurmMs = perSubmission(straightCpu.get(c), ['slurmctld', 'slurmrestd']);
    return { c, portalMs, slurmMs, straightSlurmMs, node: perSubmission(p, ['self']), postgres: perSubmission(p, ['postgres']), ctld: perSubmission(p, ['slurmctld']), rest: perSubmission(p, ['slurmrestd']) };
  });
  const cpuAt = cpuRows.find((r) => r.c === concurrency)!;
  const cpuRatio = cpuAt.portalMs / cpuAt.slurmMs;
  const text = [
    '## Slurm submission (real Slurm)',
    '',
    `Machine: ${machine()}; load average before the run: ${load}. Slurm 22.05.8 test cluster (scripts/slurm-test-cluster.sh: 2 nodes × 4 fake GPUs, slurmdbd on MariaDB), ${await describeServer(adminUrl)}; ${jobs} submissions per cell, the portal and the same jobs straight in ${rounds} alternating rounds (their rows pool the rounds), \`node --import tsx bench/slurm-submit.ts\`, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    table,
    '',
    '| target | figure | |',
    '|---|---:|---|',
    `| the portal's own CPU per submission (Node + Postgres) ≤ 0.5 × Slurm's own (slurmctld + slurmrestd), in the same rounds, ${concurrency} concurrent clients | ${num(cpuAt.portalMs, 2)} ms ÷ ${num(cpuAt.slurmMs, 2)} ms = ${num(cpuRatio, 2)} × | ${mark(cpuRatio <= 0.5)} |`,
    `| portal adds ≤ 15 ms to the median submit (sequential), the same jobs | ${num(addedMs, 1)} ms | ${mark(addedMs <= 15)} |`,
    `| (for reference: portal ÷ slurmrestd submits/s at ${concurrency} concurrent clients, the same jobs, median of the rounds: ${roundRatios.map((r) => num(r, 2)).join(', ')}; the two share the machine's two cores) | ${num(ratio, 2)} × | |`,
    `| (for reference: portal ÷ slurmrestd with held jobs, which Slurm does not schedule, at ${concurrency} concurrent) | ${num(heldRatio, 2)} × | |`,
    '',
    'CPU per submission (ms), from `/proc` in the rounds of the table (the portal\'s: this process\'s own CPU, the whole `job.submit` with its calls to slurmrestd, and every `postgres` process; Slurm\'s: slurmctld and slurmrestd while they took the same submissions; slurmdbd and MariaDB not counted):',
    '',
    '| clients | portal: Node | Postgres | portal in all | Slurm: slurmctld | slurmrestd | Slurm in all | portal ÷ Slurm | Slurm in all, the same jobs straight |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...cpuRows.map((r) => `| ${r.c} | ${num(r.node, 2)} | ${num(r.postgres, 2)} | ${num(r.portalMs, 2)} | ${num(r.ctld, 2)} | ${num(r.rest, 2)} | ${num(r.slurmMs, 2)} | ${num(r.portalMs / r.slurmMs, 2)} × | ${num(r.straightSlurmMs, 2)} |`),
    '',
    'Notes: each cell starts on an empty queue. The portal and the same jobs straight alternate in rounds; their rows pool the rounds and the ratio is the median of the rounds\' ratios, because on this shared machine one path alone varies by up to 1.7× from one cell to the next. sbatch and slurmrestd submit held jobs straight to Slurm (Slurm only records them); "slurmrestd, the portal\'s jobs" submits exactly the jobs the portal does (its body, not held: Slurm schedules each at once) through the adapter without a database, into the portal\'s project accounts with their GPU-minute limits — the baseline of the targets; the portal path is the whole `job.submit` (admission, reservation and ledger row in Postgres under the locks, the hand-over to slurmrestd, the job queued) from one tenant per client, its jobs real (1 GPU, queued behind the 8 GPUs). "a scheduler that does nothing" is the portal\'s own share of a submission on this machine (what is left of the two cores once slurmctld and slurmrestd are not working). The last row is the adapter alone making the lookup a retried hand-over needs before it may submit again (slurmctld\'s job list, slurmdbd by name, `/diag`): that is why the first attempt submits without it. A failed lookup is the proof rule at work: slurmctld still had records on their way to slurmdbd, so the retry did not submit again (in the portal the job waits for the next round). Where the time goes: the portal\'s own share (the row with a scheduler that does nothing) and Slurm\'s (the portal\'s jobs straight) each take one process\'s turn on the same two shared cores as Postgres, slurmctld (which schedules every real job as it arrives) and slurmrestd, so at 8 concurrent clients they add up rather than overlap. Every job was cancelled afterwards.',
    '',
  ].join('\n');
  log(`\n${text}`);
  if (!process.argv.includes('--no-write')) log(`written to ${writeSection(root, '## Slurm submission (real Slurm)', text)}`);
  if (results.some((r) => r.failures > 0)) {
    for (const r of results) if (r.firstError) log(`${r.path} (${r.concurrency}): ${r.failures} failed, first: ${r.firstError}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
