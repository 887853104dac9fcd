/**
 * Report benchmark at 1 million jobs: on the database filled by `npm run bench:data`, times
 * (a) one tenant's monthly report — `usageReport` grouped by project, `reportJobs` with limit 200,
 *     and both together as the usage page asks for them — for the busiest tenant of the month and
 *     for a typical one (the median tenant by jobs that month), and
 * (b) the staff centre dashboard (`centreDashboard`) for a month, a quarter and the data's year (365 days);
 * each after 3 warm-ups, ~30 timed runs, one after another; reports median / p90 / min in ms and
 * writes the "## Reports at 1 million jobs" section of BENCHMARKS.md (other sections untouched).
 *
 *   npx tsx bench/reports.ts [--database-url URL] [--reps N] [--no-write] [--explain]
 *
 * Database: --database-url, else BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/portal_bench.
 * --explain prints EXPLAIN (ANALYZE, BUFFERS) of the busy tenant's report queries (also done
 * when the target is not met).
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, asc, desc, eq, gte, isNotNull, lt, lte, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openDb, type Db } from '~/db/client';
import { jobs, memberships, organisations, projects, usageRollups, users } from '~/db/schema';
import type { TenantActor } from '~/server/services/actor';
import { centreDashboard } from '~/server/services/usage/centre';
import { reportJobs, rollupSums, usageReport } from '~/server/services/usage/reports';
import { cpuModel, writeSection } from './markdown';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/portal_bench';
/** The section is named by the data's size: `## Reports at 1 million jobs`, `## Reports at 10 million jobs`. */
const sectionOf = (jobCount: number) => `## Reports at ${num(Math.round(jobCount / 1_000_000))} million jobs`;
/** A tenant's monthly report (the usage page), at any size. */
const TARGET_MS = 100;
/** The centre dashboard (issue #30): at 10 M jobs a month ≤ 100 ms, a quarter ≤ 150, a year ≤ 300; at 1 M a quarter ≤ 100. */
function centreTargets(jobCount: number): { month?: number; quarter: number; year?: number } {
  return jobCount >= 5_000_000 ? { month: 100, quarter: 150, year: 300 } : { quarter: 100 };
}
const WARMUP = 3;

/**
 * The comparison with the code before the centre's rollups (issue #30), per data size in millions of
 * jobs: measured on the same database and machine in the same hour, that commit's bench/reports.ts run
 * from a worktree beside this one (the year through its `centreDashboard` alone).
 */
const HISTORY: Record<number, string> = {
  1: 'Before the centre\'s rollups (dbd0979, the dashboard read `usage_rollups` and sorted the jobs\' waits; same database, same machine, same hour, 2026-12-06, 10 runs): month 72.4 ms, quarter 227.0 ms.',
  10: 'Before the centre\'s rollups (dbd0979, the dashboard read `usage_rollups` and sorted the jobs\' waits; same database, same machine, same hour, 2026-12-06): month 1,603.5 ms, quarter 2,549.3 ms, year about 7,900 ms (4 runs: 8,312 / 7,768 / 7,995 / 7,480 ms).',
};

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const num = (n: number, digits = 0): string => n.toLocaleString('en-GB', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function quantile(sorted: number[], p: number): number {
  // Nearest rank, like percentile_disc.
  return sorted[Math.max(0, Math.min(sorted.length, Math.ceil(p * sorted.length)) - 1)]!;
}

function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Case {
  group: 'tenant' | 'centre';
  label: string;
  detail: string;
  /** Counts towards the target: a tenant's monthly report as the usage page loads it. */
  target: boolean;
  /** The centre dashboard's target for this period (median), when it has one. */
  targetMs?: number;
  run: () => Promise<unknown>;
}

interface Timing extends Case {
  runs: number;
  medianMs: number;
  p90Ms: number;
  minMs: number;
}

async function measure(c: Case, reps: number): Promise<Timing> {
  for (let i = 0; i < WARMUP; i++) await c.run();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await c.run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ...c, runs: reps, medianMs: median(times), p90Ms: quantile(times, 0.9), minMs: times[0]! };
}


const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** lastFullMonth and lastFullQuarter: the latest calendar month / quarter that lies wholly inside [from, to]. */
function lastFullPeriod(from: string, to: string, months: 1 | 3): { from: string; to: string; label: string } {
  const end = new Date(`${to}T00:00:00Z`);
  let year = end.getUTCFullYear();
  let month = end.getUTCMonth();
  // The month of `to` counts only if `to` is its last day.
  if (isoDay(Date.UTC(year, month + 1, 0)) !== to) month -= 1;
  // Align to a quarter's last month.
  if (months === 3) month -= (((month + 1) % 3) + 3) % 3;
  const startMonth = month - months + 1;
  const start = Date.UTC(year, startMonth, 1);
  const last = Date.UTC(year, month + 1, 0);
  if (isoDay(start) < from) throw new Error(`the data (${from} … ${to}) holds no full ${months === 1 ? 'month' : 'quarter'}`);
  year = new Date(start).getUTCFullYear();
  const label = months === 1 ? isoDay(start).slice(0, 7) : `${year}-Q${Math.floor(new Date(start).getUTCMonth() / 3) + 1}`;
  return { from: isoDay(start), to: isoDay(last), label };
}

interface Meta {
  loadSeconds?: number;
  from?: string;
  to?: string;
  seed?: number;
  tenants?: number;
  loadedAt?: string;
}

async function readMeta(client: ReturnType<typeof postgres>): Promise<Meta> {
  const [row] = await client<{ comment: string | null }[]>`select shobj_description(oid, 'pg_database') as comment from pg_database where datname = current_database()`;
  try {
    return row?.comment ? (JSON.parse(row.comment) as Meta) : {};
  } catch {
    return {};
  }
}

interface TenantPick {
  id: string;
  name: string;
  kind: 'academic' | 'company';
  jobs: number;
  rollupRows: number;
  projects: number;
}

/** pickTenants returns the busiest tenant of the month (by jobs) and the median one among tenants with jobs that month. */
async function pickTenants(db: Db, month: { from: string; to: string }): Promise<{ busy: TenantPick; typical: TenantPick }> {
  const rows = await db
    .select({
      id: organisations.id,
      name: organisations.name,
      kind: organisations.kind,
      jobs: sql<number>`sum(${usageRollups.jobs})::int`.mapWith(Number),
      rollupRows: sql<number>`count(*)::int`.mapWith(Number),
      projects: sql<number>`count(distinct ${usageRollups.projectId})::int`.mapWith(Number),
    })
    .from(usageRollups)
    .innerJoin(organisations, eq(organisations.id, usageRollups.orgId))
    .where(and(gte(usageRollups.day, month.from), lte(usageRollups.day, month.to)))
    .groupBy(organisations.id)
    .orderBy(desc(sql`sum(${usageRollups.jobs})`), asc(organisations.id));
  if (rows.length === 0) throw new Error('no usage in the month: run `npm run bench:data -- --fresh` first');
  return { busy: rows[0]!, typical: rows[rows.length >> 1]! };
}

async function ownerActor(db: Db, tenant: TenantPick): Promise<TenantActor> {
  const [owner] = await db
    .select({ id: users.id, email: users.email, name: users.name })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.orgId, tenant.id), eq(memberships.role, 'owner')))
    .limit(1);
  if (!owner) throw new Error(`tenant ${tenant.name} has no owner`);
  return { userId: owner.id, email: owner.email, name: owner.name, staffRoles: [], org: { id: tenant.id, name: tenant.name, kind: tenant.kind, status: 'active' }, role: 'owner' };
}

/**
 * tenantQueries rebuilds, with the same builders and conditions, the queries `usageReport` (owner:
 * no scope query) and `reportJobs` send for a tenant and period, for EXPLAIN.
 */
function tenantQueries(db: Db, orgId: string, period: { from: string; to: string }): { label: string; query: { sql: string; params: unknown[] } }[] {
  const where = and(eq(usageRollups.orgId, orgId), gte(usageRollups.day, period.from), lte(usageRollups.day, period.to));
  const sums = rollupSums;
  const gpu = rollupSums.gpuSeconds;
  const end = new Date(Date.parse(`${period.to}T00:00:00Z`) + 86_400_000);
  return [
    { label: 'usageReport: totals', query: db.select(sums).from(usageRollups).where(where).toSQL() },
    { label: 'usageReport: groups by project', query: db.select({ key: usageRollups.projectId, ...sums }).from(usageRollups).where(where).groupBy(usageRollups.projectId).orderBy(desc(gpu)).toSQL() },
    {
      label: 'usageReport: daily series',
      query: db
        .select({ day: usageRollups.day, projectId: usageRollups.projectId, gpuSeconds: gpu, costCents: sums.costCents, energyWh: sums.energyWh })
        .from(usageRollups)
        .where(where)
        .groupBy(usageRollups.day, usageRollups.projectId)
        .orderBy(asc(usageRollups.day))
        .toSQL(),
    },
    {
      label: 'reportJobs: limit 200',
      query: db
        .select({ id: jobs.id, name: jobs.name, projectTitle: projects.title, userName: users.name, endedAt: jobs.endedAt, gpuSeconds: jobs.gpuSeconds, costCents: jobs.costCents })
        .from(jobs)
        .innerJoin(projects, eq(projects.id, jobs.projectId))
        .innerJoin(users, eq(users.id, jobs.userId))
        .where(and(eq(jobs.orgId, orgId), isNotNull(jobs.settledAt), gte(jobs.endedAt, new Date(`${period.from}T00:00:00Z`)), lt(jobs.endedAt, end)))
        .orderBy(desc(jobs.endedAt))
        .limit(200)
        .toSQL(),
    },
  ];
}

async function explain(client: ReturnType<typeof postgres>, db: Db, orgId: string, period: { from: string; to: string }): Promise<string> {
  const out: string[] = [];
  for (const { label, query } of tenantQueries(db, orgId, period)) {
    const params = query.params.map((p) => (p instanceof Date ? p.toISOString() : p)) as postgres.ParameterOrJSON<never>[];
    const rows = await client.unsafe<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${query.sql}`, params);
    out.push(`-- ${label}`, ...rows.map((r) => r['QUERY PLAN']), '');
  }
  return out.join('\n');
}

/** targetCell says a centre case's target and whether its median met it. */
function targetCell(t: Timing): string {
  if (t.target) return `≤ ${TARGET_MS} ms: ${t.medianMs <= TARGET_MS ? 'met' : '**missed**'}`;
  if (t.targetMs === undefined) return '—';
  return `≤ ${t.targetMs} ms: ${t.medianMs <= t.targetMs ? 'met' : '**missed**'}`;
}

function section(input: {
  timings: Timing[];
  reps: number;
  pgVersion: string;
  settings: string;
  counts: Record<string, number>;
  dbSize: string;
  meta: Meta;
  month: { from: string; to: string; label: string };
  quarter: { from: string; to: string; label: string };
  year: { from: string; to: string };
  busy: TenantPick;
  typical: TenantPick;
  loadBefore: number[];
}): string {
  const { timings, meta } = input;
  const date = new Date().toISOString().slice(0, 10);
  const ramGiB = totalmem() / 1024 ** 3;
  const targetRows = timings.filter((t) => t.target);
  const met = targetRows.every((t) => t.medianMs <= TARGET_MS);
  const c = input.counts;
  const lines = [
    sectionOf(input.counts.jobs!),
    '',
    `Measured by \`npx tsx bench/reports.ts\` on ${date} against the database filled by \`npm run bench:data\` (\`scripts/bench-data.ts --fresh\`).`,
    `Machine: ${cpuModel()}, ${cpus().length} cores (shared), ${num(ramGiB, 1)} GiB RAM, Node ${process.version}, ${input.pgVersion} on the same machine (${input.settings}); load average ${input.loadBefore.map((l) => num(l, 2)).join(' / ')} (1/5/15 min) when the timing started.`,
    '',
    `Data set: ${num(c.tenants!)} tenants (${num(c.academic!)} academic, ${num(c.company!)} company), ${num(c.users!)} users, ${num(c.projects!)} projects, ${num(c.allocations!)} allocations, ${num(c.jobs!)} settled jobs (${meta.from ?? '?'} … ${meta.to ?? '?'}) on ${num(c.gpus!)} GPUs, ${num(c.rollups!)} usage rollup rows; the centre's rollups: ${num(c.centreDays!)} and ${num(c.centreMonths!)} rows by day and by month × partition × tenant kind, ${num(c.centreTenantDays!)} and ${num(c.centreTenantMonths!)} by day and by month × partition × tenant; database size ${input.dbSize}.`,
    `Load time of \`bench:data\` (create, migrate, centre, ${num(c.jobs! / 1_000_000)} M jobs, indexes, rollups, VACUUM ANALYZE): ${meta.loadSeconds === undefined ? 'unknown' : `${num(meta.loadSeconds, 1)} s`}.`,
    `Periods: month ${input.month.label} (${input.month.from} … ${input.month.to}), quarter ${input.quarter.label} (${input.quarter.from} … ${input.quarter.to}), year ${input.year.from} … ${input.year.to}. Busy tenant: the one with most jobs that month (${num(input.busy.jobs)} jobs, ${num(input.busy.projects)} projects, ${num(input.busy.rollupRows)} rollup rows); typical tenant: the median one (${num(input.typical.jobs)} jobs, ${num(input.typical.projects)} projects, ${num(input.typical.rollupRows)} rollup rows). Reports run as the tenant's owner.`,
    `Each case: ${WARMUP} warm-up runs, then ${input.reps} timed runs one after another, through drizzle on postgres.js (pool of 10); wall time of the service call in the benchmark process.`,
    '',
    '| case | what | runs | median (ms) | p90 (ms) | min (ms) | target (median) |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
    ...timings.map((t) => `| ${t.label} | ${t.detail} | ${t.runs} | ${num(t.medianMs, 1)} | ${num(t.p90Ms, 1)} | ${num(t.minMs, 1)} | ${targetCell(t)} |`),
    '',
    `Target: a tenant's monthly report (the usage page: \`usageReport\` + \`reportJobs\`, in parallel) ≤ ${TARGET_MS} ms median — ${met ? 'met' : 'NOT met'} (busy ${num(targetRows[0]?.medianMs ?? NaN, 1)} ms, typical ${num(targetRows[1]?.medianMs ?? NaN, 1)} ms).`,
    `The centre dashboard reads only the centre's rollups (maintained as jobs settle: by day and by month, per partition × tenant kind and per partition × tenant; a range's whole months from the month rows, its other days from the day rows) and the jobs still open; wait percentiles from bucketed counts (exact below 128 s, within 1.6 % above; server/core/usage/wait-buckets.ts).`,
    ...(HISTORY[Math.round(c.jobs! / 1_000_000)] ? ['', HISTORY[Math.round(c.jobs! / 1_000_000)]!] : []),
    '',
    'Notes:',
    '- The benchmark data bypasses the ledger: jobs are bulk-inserted already settled (no ledger entries, job events or applications), and each allocation\'s cached balance is set to match the sums charged to it (granted ≥ charged, the unused rest of an ended allocation written off as expired, nothing reserved). Usage, energy, facility energy, heat, CO2e, cost and charge of every job follow `jobEnergyEstimateWh`, `jobFootprint` and `chargeFor`; the rollups are built with `rebuildRollups`.',
    '- Workload: heavy-tailed tenant activity (log-normal weights), 2–10 users and 1–5 projects per tenant, resource classes allowed by each tenant\'s residency, mostly 1–8 GPUs with a tail to 64–128, log-normal runtimes (minutes to the 48 h limit), queue waits growing with size, quieter weekends and holidays; about 80–90 % utilisation over the year of the demo catalogue\'s partitions with (jobs ÷ 1 M) times their nodes (224 GPUs at 1 M jobs).',
    `- Regenerate with \`npm run bench:data -- --fresh${c.jobs! === 1_000_000 ? '' : ` --jobs ${c.jobs}`}${meta.tenants && meta.tenants !== 300 ? ` --tenants ${meta.tenants}` : ''}\`, then \`npx tsx bench/reports.ts\`${c.jobs! === 1_000_000 ? '' : ' --database-url <that database>'}.`,
    '',
  ];
  return lines.join('\n');
}


async function main(): Promise<void> {
  const url = flag('--database-url') ?? process.env.BENCH_DATABASE_URL ?? DEFAULT_URL;
  const reps = Number(flag('--reps') ?? 30);
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const handle = await openDb({ driver: 'postgres', url });
  const client = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const db = handle.db;
    const meta = await readMeta(client);
    const [range] = await db.select({ from: sql<string>`min(${usageRollups.day})::text`, to: sql<string>`max(${usageRollups.day})::text` }).from(usageRollups);
    if (!range?.from) throw new Error(`no usage rollups in ${url}: run \`npm run bench:data -- --fresh\` first`);
    const from = meta.from ?? range.from;
    const to = meta.to ?? range.to;
    const month = lastFullPeriod(from, to, 1);
    const quarter = lastFullPeriod(from, to, 3);
    const { busy, typical } = await pickTenants(db, month);
    const busyActor = await ownerActor(db, busy);
    const typicalActor = await ownerActor(db, typical);
    const monthInput = { from: month.from, to: month.to };
    // The data's year: its last 365 days.
    const yearFrom = isoDay(Date.parse(`${to}T00:00:00Z`) - 364 * 86_400_000);
    const year = { from: yearFrom < from ? from : yearFrom, to };
    const [jobCount] = await client<{ n: number }[]>`select count(*)::int as n from jobs`;
    const targets = centreTargets(jobCount!.n);

    const tenantCases = (who: 'busy' | 'typical', actor: TenantActor, t: TenantPick): Case[] => [
      { group: 'tenant', label: `usage report, ${who} tenant`, detail: `\`usageReport\` ${month.label}, groupBy project (${num(t.jobs)} jobs)`, target: false, run: () => usageReport(db, actor, { ...monthInput, groupBy: 'project' }) },
      { group: 'tenant', label: `job list, ${who} tenant`, detail: `\`reportJobs\` ${month.label}, limit 200`, target: false, run: () => reportJobs(db, actor, { ...monthInput, limit: 200 }) },
      {
        group: 'tenant',
        label: `**monthly report page, ${who} tenant**`,
        detail: 'both of the above in parallel (as `app/(portal)/usage`)',
        target: true,
        run: () => Promise.all([usageReport(db, actor, { ...monthInput, groupBy: 'project' }), reportJobs(db, actor, { ...monthInput, limit: 200 })]),
      },
    ];
    const cases: Case[] = [
      ...tenantCases('busy', busyActor, busy),
      ...tenantCases('typical', typicalActor, typical),
      { group: 'centre', label: 'centre dashboard, month', detail: `\`centreDashboard\` ${month.label}, all partitions and tenants`, target: false, targetMs: targets.month, run: () => centreDashboard(db, monthInput) },
      { group: 'centre', label: 'centre dashboard, quarter', detail: `\`centreDashboard\` ${quarter.label}, all partitions and tenants`, target: false, targetMs: targets.quarter, run: () => centreDashboard(db, { from: quarter.from, to: quarter.to }) },
      { group: 'centre', label: 'centre dashboard, year', detail: `\`centreDashboard\` ${year.from} … ${year.to}, all partitions and tenants`, target: false, targetMs: targets.year, run: () => centreDashboard(db, year) },
    ];

    const [version] = await client<{ v: string }[]>`select version() as v`;
    const pgVersion = /^PostgreSQL [\d.]+/.exec(version?.v ?? '')?.[0] ?? version?.v ?? 'PostgreSQL ?';
    const settingRows = await client<{ name: string; setting: string }[]>`select name, current_setting(name) as setting from unnest(array['shared_buffers', 'work_mem', 'effective_cache_size', 'random_page_cost']) as name`;
    const settings = settingRows.map((r) => `${r.name} ${r.setting}`).join(', ');
    const [counts] = await client<Record<string, number>[]>`
      select (select count(*) from organisations)::int as tenants,
             (select count(*) from organisations where kind = 'academic')::int as academic,
             (select count(*) from organisations where kind = 'company')::int as company,
             (select count(*) from users)::int as users,
             (select count(*) from projects)::int as projects,
             (select count(*) from allocations)::int as allocations,
             (select count(*) from jobs)::int as jobs,
             (select count(*) from usage_rollups)::int as rollups,
             (select count(*) from centre_days)::int as "centreDays",
             (select count(*) from centre_tenant_days)::int as "centreTenantDays",
             (select count(*) from centre_months)::int as "centreMonths",
             (select count(*) from centre_tenant_months)::int as "centreTenantMonths",
             (select sum(nodes * gpus_per_node) from resource_classes)::int as gpus`;
    const [size] = await client<{ size: string }[]>`select pg_size_pretty(pg_database_size(current_database())) as size`;

    const loadBefore = loadavg();
    log(`bench/reports — ${url.replace(/\/\/[^@]*@/, '//')}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
    const timings: Timing[] = [];
    for (const c of cases) {
      const t = await measure(c, reps);
      timings.push(t);
      log(`  ${c.label.replaceAll('*', '')}: median ${num(t.medianMs, 1)} ms, p90 ${num(t.p90Ms, 1)} ms, min ${num(t.minMs, 1)} ms`);
    }
    const text = section({ timings, reps, pgVersion, settings, counts: counts!, dbSize: size!.size, meta, month, quarter, year, busy, typical, loadBefore });
    process.stdout.write(`\n${text}\n`);
    const met = timings.filter((t) => t.target).every((t) => t.medianMs <= TARGET_MS);
    if (process.argv.includes('--explain') || !met) process.stdout.write(`\nEXPLAIN (ANALYZE, BUFFERS), busy tenant, ${month.label}:\n\n${await explain(client, db, busy.id, monthInput)}\n`);
    if (!process.argv.includes('--no-write')) process.stdout.write(`wrote ${writeSection(root, sectionOf(counts!.jobs!), text)}\n`);
  } finally {
    await client.end({ timeout: 5 });
    await handle.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
