// /api/metrics scraped as Prometheus would: refused without the bearer secret (401), absent without
// one configured (404), and with it every series family of the issue present with the figures of a
// small centre built here — a job submitted through the API, a refusal, a mail waiting, an ended job
// not yet settled, the cluster's partitions — on PGlite and, with TEST_DATABASE_URL, on Postgres.
// The tRPC handler answers with the request's id and is counted per route and per procedure.
import { randomUUID } from 'node:crypto';
import { count, eq, isNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, mailOutbox } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { createContextInner, type Context } from '~/server/api/trpc';
import { SchedulerUnavailableError, type ClusterDescription, type SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import type * as EnvModule from '~/server/env.js';
import { instrumentScheduler } from './scheduler';

const SECRET = 'metrics-test-secret-0123456789';

// The route reads the process's database, scheduler, configuration and request context; here the test supplies them.
const current = vi.hoisted((): { db?: unknown; scheduler?: unknown; token?: string; context?: unknown } => ({}));
vi.mock('~/server/db', () => ({ getDb: () => Promise.resolve(current.db) }));
vi.mock('~/server/scheduler', () => ({ getScheduler: () => Promise.resolve(current.scheduler) }));
vi.mock('~/server/env.js', async (importOriginal) => {
  const original = await importOriginal<typeof EnvModule>();
  return { ...original, env: () => ({ ...original.parseEnv({}), METRICS_TOKEN: current.token }) };
});
vi.mock('~/server/api/context', () => ({
  createRequestContext: () => Promise.resolve(current.context),
  requestLocale: () => Promise.resolve('en'),
}));
const { GET: scrape } = await import('~/app/api/metrics/route');
const { GET: trpcGet } = await import('~/app/api/trpc/[trpc]/route');

type Sample = { name: string; labels: Record<string, string>; value: number };

/** parseExposition reads Prometheus's text format into samples (comments and HELP/TYPE lines skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

const authorized = (token = SECRET) => new Request('http://portal.test/api/metrics', { headers: { authorization: `Bearer ${token}` } });

async function scrapeSamples(): Promise<Sample[]> {
  const response = await scrape(authorized());
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parseExposition(await response.text());
}

/** valueOf is the one sample of a series with these labels (at least), or undefined. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} series`);
  return found[0]?.value;
}

describe.each(dbTargets())('/api/metrics on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let port: SchedulerPort;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let allocation: Awaited<ReturnType<typeof activeAllocation>>;
  const now = () => new Date();

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    const cluster = await clusterConfigFromCatalogue(db);
    port = instrumentScheduler(createSimulatedScheduler({ db, cluster, speed: 60, now, clusterId: `metrics-${randomUUID().slice(0, 8)}` }), 'simulated');
    current.db = db;
    current.scheduler = port;
    current.token = SECRET;
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db);
    allocation = await activeAllocation(db, owner, admin, { gpuHours: 100, today: now().toISOString().slice(0, 10), scheduler: port });
  });
  afterAll(async () => handle?.close());

  function submit(overrides: { gpus?: number; nodes?: number } = {}) {
    return callerFor(db, { userId: owner.userId, orgId: owner.orgId, scheduler: port }).job.submit({
      allocationId: allocation.allocationId,
      resourceClassId: 'h100',
      name: 'metrics-probe',
      kind: 'training',
      gpus: overrides.gpus ?? 4,
      nodes: overrides.nodes ?? 1,
      walltimeMinutes: 60,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3',
      command: 'python train.py',
      env: {},
      idempotencyKey: randomUUID(),
    });
  }

  it('answers 401 without the bearer secret or with a wrong one, 404 when none is configured', async () => {
    for (const request of [new Request('http://portal.test/api/metrics'), authorized('metrics-test-secret-0123456788'), new Request('http://portal.test/api/metrics', { headers: { authorization: SECRET } })]) {
      const response = await scrape(request);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await response.text()).not.toContain('portal_');
    }
    current.token = undefined;
    try {
      expect((await scrape(authorized())).status).toBe(404);
    } finally {
      current.token = SECRET;
    }
    const samples = await scrapeSamples();
    expect(valueOf(samples, 'portal_http_request_duration_seconds_count', { route: '/api/metrics', method: 'GET', status: '401' })).toBeGreaterThanOrEqual(3);
    expect(valueOf(samples, 'portal_http_request_duration_seconds_count', { route: '/api/metrics', method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
  });

  it('holds every series family with the figures of the centre', async () => {
    const before = await scrapeSamples();
    const submitted = (samples: Sample[]) => valueOf(samples, 'portal_job_submissions_total', { kind: 'training' }) ?? 0;
    const refused = (samples: Sample[]) => valueOf(samples, 'portal_job_refusals_total', { reason: 'job.gpusNotDivisible' }) ?? 0;

    const job = await submit();
    await expect(submit({ gpus: 3, nodes: 2 })).rejects.toThrow();
    // A job that ended 90 s ago and is not settled yet (the reconciler is behind), and a mail waiting.
    const lagging = await submit({ gpus: 1 });
    await db.update(jobs).set({ state: 'COMPLETED', endedAt: new Date(Date.now() - 90_000) }).where(eq(jobs.id, lagging.id));
    await db.insert(mailOutbox).values({ kind: 'test', toAddress: 'ops@example.org', locale: 'en', subject: 'Waiting', textBody: 'x', htmlBody: 'x', createdAt: new Date(Date.now() - 600_000) });
    // A scheduler call that fails, counted by its kind.
    const unreachable: SchedulerPort = { ...port, cancel: () => Promise.reject(new SchedulerUnavailableError('slurmrestd unreachable')) };
    const broken = instrumentScheduler(unreachable, 'simulated');
    await expect(broken.cancel(job.id)).rejects.toThrow('unreachable');

    const samples = await scrapeSamples();
    // Submissions and refusals by reason.
    expect(submitted(samples) - submitted(before)).toBe(2);
    expect(refused(samples) - refused(before)).toBe(1);
    for (const kind of jobs.kind.enumValues) expect(valueOf(samples, 'portal_job_submissions_total', { kind }), kind).toBeGreaterThanOrEqual(0);
    // Jobs by state: what the database holds open, state by state.
    const open = await db.select({ state: jobs.state, n: count() }).from(jobs).where(isNull(jobs.settledAt)).groupBy(jobs.state);
    expect(open.reduce((s, r) => s + r.n, 0)).toBe(2);
    for (const state of jobs.state.enumValues) expect(valueOf(samples, 'portal_jobs', { state }), state).toBe(open.find((r) => r.state === state)?.n ?? 0);
    expect((valueOf(samples, 'portal_jobs', { state: 'PENDING' }) ?? 0) + (valueOf(samples, 'portal_jobs', { state: 'RUNNING' }) ?? 0)).toBe(1);
    expect(valueOf(samples, 'portal_jobs_oldest_age_seconds', { state: 'COMPLETED' })).toBeGreaterThanOrEqual(0);
    // Reconciler lag: the job that ended 90 s ago.
    expect(valueOf(samples, 'portal_reconciler_lag_seconds')).toBeGreaterThanOrEqual(90);
    expect(valueOf(samples, 'portal_reconciler_lag_seconds')).toBeLessThan(600);
    // Outbox backlog: every pending row, the oldest ten minutes old.
    const [pending] = await db.select({ n: count() }).from(mailOutbox).where(eq(mailOutbox.status, 'pending'));
    expect(valueOf(samples, 'portal_mail_outbox_pending')).toBe(pending!.n);
    expect(valueOf(samples, 'portal_mail_outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(600);
    // Ledger totals: the allocations' cached balances, summed.
    const [ledger] = await db
      .select({ granted: sql<string>`sum(${allocations.granted})`, reserved: sql<string>`sum(${allocations.reserved})` })
      .from(allocations)
      .where(eq(allocations.unit, 'gpu_seconds'));
    expect(valueOf(samples, 'portal_ledger_gpu_seconds', { kind: 'granted' })).toBe(Number(ledger!.granted));
    expect(valueOf(samples, 'portal_ledger_gpu_seconds', { kind: 'granted' })).toBeGreaterThanOrEqual(100 * 3600);
    expect(valueOf(samples, 'portal_ledger_gpu_seconds', { kind: 'reserved' })).toBe(Number(ledger!.reserved));
    expect(valueOf(samples, 'portal_ledger_gpu_seconds', { kind: 'reserved' })).toBeGreaterThanOrEqual(4 * 3600);
    expect(valueOf(samples, 'portal_ledger_cents', { kind: 'charged' })).toBe(0);
    // Scheduler calls: the hand-overs timed, the failed cancel counted.
    expect(valueOf(samples, 'portal_scheduler_call_duration_seconds_count', { adapter: 'simulated', method: 'submit' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'portal_scheduler_call_errors_total', { adapter: 'simulated', method: 'cancel', error: 'unavailable' })).toBeGreaterThanOrEqual(1);
    // The cluster: the 4-GPU job runs or waits on h100 (16 nodes × 8 GPUs); busy + idle + down = all.
    expect(valueOf(samples, 'portal_scheduler_up')).toBe(1);
    const gpus = (state: string) => valueOf(samples, 'portal_cluster_gpus', { partition: 'h100', state }) ?? Number.NaN;
    expect(gpus('busy') + gpus('idle') + gpus('down')).toBe(128);
    expect(gpus('busy')).toBe((await port.describeCluster()).nodes.filter((n) => n.partition === 'h100').reduce((s, n) => s + n.allocatedGpus, 0));
    expect(gpus('busy')).toBeGreaterThanOrEqual(4);
    expect(valueOf(samples, 'portal_cluster_power_watts', { partition: 'h100' })).toBeGreaterThan(0);
    for (const partition of ['b200', 'h100-ch']) expect(valueOf(samples, 'portal_cluster_gpus', { partition, state: 'idle' })).toBeGreaterThan(0);
    // Per procedure, as errorMapping left the outcome; and Node's own process metrics.
    expect(valueOf(samples, 'portal_trpc_call_duration_seconds_count', { procedure: 'job.submit', type: 'mutation', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'portal_trpc_call_duration_seconds_count', { procedure: 'job.submit', type: 'mutation', status: '400' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    // No label carries an id: every label value is short and none is a job's or a tenant's uuid.
    for (const sample of samples) for (const value of Object.values(sample.labels)) expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('leaves the cluster out instead of hanging when the scheduler does not answer in time', async () => {
    let answer: (d: ClusterDescription) => void = () => undefined;
    const stuck = new Promise<ClusterDescription>((resolve) => (answer = resolve));
    current.scheduler = { ...port, describeCluster: () => stuck };
    try {
      const started = Date.now();
      const samples = await scrapeSamples();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(valueOf(samples, 'portal_scheduler_up')).toBe(0);
      expect(samples.some((s) => s.name === 'portal_cluster_gpus')).toBe(false);
      expect(valueOf(samples, 'portal_jobs', { state: 'COMPLETED' })).toBe(1); // the database's figures are still there
    } finally {
      answer(await port.describeCluster());
      await stuck;
      current.scheduler = port;
    }
  });

  it('answers tRPC calls with their request id and counts them by route', async () => {
    current.context = createContextInner({ db, userId: null, locale: 'en' }) satisfies Context;
    const url = `http://portal.test/api/trpc/account.resetLinkUsable?input=${encodeURIComponent(JSON.stringify({ json: { token: 'x'.repeat(43) } }))}`;
    const kept = await trpcGet(new Request(url, { headers: { 'x-request-id': 'probe-123' } }));
    expect(kept.status).toBe(200);
    expect(kept.headers.get('x-request-id')).toBe('probe-123');
    // An id that is not short and plain is replaced by a fresh one.
    const replaced = await trpcGet(new Request(url, { headers: { 'x-request-id': 'no spaces allowed' } }));
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const samples = await scrapeSamples();
    expect(valueOf(samples, 'portal_http_request_duration_seconds_count', { route: '/api/trpc', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(2);
    expect(valueOf(samples, 'portal_trpc_call_duration_seconds_count', { procedure: 'account.resetLinkUsable', type: 'query', status: '200' })).toBeGreaterThanOrEqual(2);
  });
});
