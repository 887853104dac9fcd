/**
 * Submissions to a real Slurm (issue #11), in one run: `sbatch` and slurmrestd straight (held jobs, the
 * baseline; bench/slurm-raw.ts), then the portal's `job.submit` (tRPC caller → admission and reservation
 * in Postgres → slurmrestd), and the adapter's submit with the duplicate lookup a retry makes (why it
 * looks only on retries). Writes "## Slurm submission (real Slurm)" of BENCHMARKS.md.
 *
 *   node --import tsx bench/slurm-submit.ts [--jobs 100] [--concurrency 8] [--database-url URL] [--no-write]
 *
 * Needs the test cluster (`scripts/slurm-test-cluster.sh start`; its env file is read when SLURM_REST_URL
 * is unset) and a Postgres (BENCH_ADMIN_URL, else the local one) for a database of its own, dropped at the
 * end. Every Slurm job it made is cancelled at the end, also after a failure.
 * The portal's clients are separate tenants (one client each), so the figure is the portal's own cost per
 * submit, not one allocation's lock.
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
import { parseEnv } from '~/server/env.js';
import { syncCatalogue } from '~/server/services/catalogue';
import { activeAllocation, callerFor, createStaff, createTenant } from '~/server/testing/harness';
import { flag, intFlag } from './args';
import { atInterrupt, createBenchDatabase, DEFAULT_ADMIN_URL, describeServer, type BenchDatabase } from './database';
import { loadAverage, machine, mark, writeSection } from './markdown';
import { cancelJobs, measurePath, rawSlurmResults, slurmBenchEnv, slurmBenchTable, type PathResult } from './slurm-raw';
import { num } from './stats';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);
const run = promisify(execFile);

async function main() {
  const jobs = intFlag('--jobs', 100);
  const concurrency = intFlag('--concurrency', 8, 2);
  const adminUrl = flag('--database-url') ?? process.env.BENCH_ADMIN_URL ?? DEFAULT_ADMIN_URL;
  if (!process.env.SLURM_REST_URL) throw new Error('source the Slurm test cluster\'s env file first: set -a; . "$(scripts/slurm-test-cluster.sh env)"; set +a');
  const benchEnv = slurmBenchEnv();
  const settings = slurmSettings(parseEnv({ ...process.env, SCHEDULER: 'slurm' }));
  const load = loadAverage();
  const results: PathResult[] = [];
  let database: BenchDatabase | null = null;
  let handle: DbHandle | null = null;
  const accounts: string[] = [];
  try {
    results.push(...(await rawSlurmResults(benchEnv, jobs, concurrency)));

    database = await createBenchDatabase(adminUrl, { keep: false, log });
    handle = await openDb({ driver: 'postgres', url: database.url, max: concurrency + 2 });
    atInterrupt(handle.close);
    const db = handle.db;
    await migrateDb(handle);
    await syncCatalogue(db, DEFAULT_CATALOGUE);
    const port = createSlurmScheduler(settings, await slurmClassesFromCatalogue(db));
    const today = new Date().toISOString().slice(0, 10);
    const admin = await createStaff(db, 'admin');
    // One tenant per client, each with a project whose Slurm account the grant creates.
    const clients = await Promise.all(
      Array.from({ length: concurrency }, async (_, i) => {
        const owner = await createTenant(db, { name: `Slurm bench ${i} ${randomUUID().slice(0, 6)}` });
        const { allocationId, projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100_000, today, scheduler: port });
        accounts.push(projectId);
        return { caller: callerFor(db, { userId: owner.userId, orgId: owner.orgId, scheduler: port }), allocationId };
      }),
    );
    let turn = 0;
    const submit = async () => {
      const client = clients[turn++ % clients.length]!;
      const job = await client.caller.job.submit({ allocationId: client.allocationId, resourceClassId: 'h100', name: 'bench', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'sleep 600', env: {}, idempotencyKey: randomUUID() });
      if (job.state !== 'PENDING') throw new Error(`the job is ${job.state}, not handed over`);
      return job.id;
    };
    await submit(); // warm the statements and the token
    for (const c of [1, concurrency]) results.push(await measurePath('portal job.submit (Postgres) + slurmrestd', jobs, c, submit));
    // The lookup a retried hand-over makes before it may submit (slurmctld's jobs, slurmdbd, /diag).
    const lookup = (i: number) => port.submit({ portalJobId: `bench-lookup-${process.pid}-${i}`, attempt: 2, name: 'bench', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 600, account: benchEnv.account, user: 'bench', image: 'img', command: 'sleep 600', env: {} }).then((r) => r.schedulerJobId);
    results.push(await measurePath('adapter submit with the retry lookup', jobs, 1, lookup));
  } finally {
    // The raw and lookup rows answer Slurm job ids; the portal's jobs are cancelled by their accounts.
    await cancelJobs(benchEnv, results.filter((r) => !r.path.startsWith('portal')).flatMap((r) => r.jobIds)).catch((error: unknown) => log(`cancelling failed: ${String(error)}`));
    if (accounts.length) await run('scancel', ['-A', accounts.join(',')], { env: { ...process.env, SLURM_CONF: benchEnv.conf } }).catch((error: unknown) => log(`cancelling failed: ${String(error)}`));
    await handle?.close();
    await database?.drop();
  }

  const rest = (c: number) => results.find((r) => r.path.startsWith('slurmrestd') && r.concurrency === c)!;
  const portal = (c: number) => results.find((r) => r.path.startsWith('portal') && r.concurrency === c)!;
  const ratio = portal(concurrency).perSecond / rest(concurrency).perSecond;
  const addedMs = portal(1).medianMs - rest(1).medianMs;
  const table = slurmBenchTable(results);
  const text = [
    '## Slurm submission (real Slurm)',
    '',
    `Machine: ${machine()}; load average before the run: ${load}. Slurm 22.05.8 test cluster (scripts/slurm-test-cluster.sh: 2 nodes × 4 fake GPUs, slurmdbd on MariaDB), ${await describeServer(adminUrl)}; ${jobs} submissions per cell, \`node --import tsx bench/slurm-submit.ts\`, ${new Date().toISOString().slice(0, 10)}.`,
    '',
    table,
    '',
    '| target | figure | |',
    '|---|---:|---|',
    `| portal ≥ 0.5 × slurmrestd's submits/s at ${concurrency} concurrent clients | ${num(ratio, 2)} × | ${mark(ratio >= 0.5)} |`,
    `| portal adds ≤ 15 ms to the median submit (sequential) | ${num(addedMs, 1)} ms | ${mark(addedMs <= 15)} |`,
    '',
    'Notes: sbatch and slurmrestd submit held jobs straight to Slurm (the baseline); the portal path is the whole `job.submit` (admission, reservation and ledger row in Postgres under the locks, the hand-over to slurmrestd, the job queued) from one tenant per client, its jobs real (1 GPU, queued behind the 8 GPUs). The last row is the adapter alone making the lookup a retried hand-over needs before it may submit again (slurmctld\'s job list, slurmdbd by name, `/diag`): that is why the first attempt submits without it. Every job was cancelled afterwards.',
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
