// The portal's Prometheus metrics (prom-client): one registry per process, kept on globalThis because
// Next bundles every route (and the worker, through instrumentation) separately and they must all
// count into the one registry /api/metrics reads. Counters and histograms are updated where things
// happen; the figures read from the database and the scheduler are set at scrape time
// (server/observability/scrape.ts). Labels are bounded sets only: route templates, procedure paths,
// message keys, states, partitions — never ids.
import { hostname } from 'node:os';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { jobKind } from '~/db/schema';

/** Seconds: from a fast API answer to the scheduler's 20 s time-out. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];

function createMetrics() {
  const registry = new Registry();
  const metrics = createFamilies(registry);
  // Which process answered: behind a load balancer every web process is scraped on its own port, and the
  // series of one process name it (PORTAL_INSTANCE, else host:pid) beside the target's `instance`.
  metrics.processInfo.set({ name: process.env.PORTAL_INSTANCE || `${hostname()}:${process.pid}` }, 1);
  metrics.workerLeader.set(0);
  // Every kind from the start at 0, so rate() sees the first submission of a kind as an increase.
  for (const kind of jobKind.enumValues) metrics.submissions.inc({ kind }, 0);
  return metrics;
}

function createFamilies(registry: Registry) {
  // The Node process's own (CPU, memory, event-loop lag, GC), under their usual names.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpDuration: new Histogram({
      name: 'portal_http_request_duration_seconds',
      help: 'HTTP requests answered by the portal’s API route handlers, by route template, method and status (the _count is the number of requests).',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    procedureDuration: new Histogram({
      name: 'portal_trpc_call_duration_seconds',
      help: 'tRPC procedure calls (over HTTP, from server-rendered pages and through /api/v1), by procedure path, type and the HTTP status their outcome maps to.',
      labelNames: ['procedure', 'type', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    submissions: new Counter({
      name: 'portal_job_submissions_total',
      help: 'Jobs accepted (created with their reservation and handed over), by kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
    refusals: new Counter({
      name: 'portal_job_refusals_total',
      help: 'Job submissions refused, by reason (the refusal’s message key, e.g. job.overBudget).',
      labelNames: ['reason'] as const,
      registers,
    }),
    schedulerDuration: new Histogram({
      name: 'portal_scheduler_call_duration_seconds',
      help: 'Calls to the scheduler adapter, by adapter (simulated, slurm) and method; failed calls included.',
      labelNames: ['adapter', 'method'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    schedulerErrors: new Counter({
      name: 'portal_scheduler_call_errors_total',
      help: 'Failed calls to the scheduler adapter, by adapter, method and error (unavailable: no answer; refused: refused for good; other).',
      labelNames: ['adapter', 'method', 'error'] as const,
      registers,
    }),
    // ---- set at scrape time (server/observability/scrape.ts) ----
    jobs: new Gauge({
      name: 'portal_jobs',
      help: 'Jobs not yet settled (handed over, queued, running, or ended and awaiting settlement), by state.',
      labelNames: ['state'] as const,
      registers,
    }),
    reconcilerLag: new Gauge({
      name: 'portal_reconciler_lag_seconds',
      help: 'Age of the oldest job in a final state that is not yet settled (0: none).',
      registers,
    }),
    jobsOldestAge: new Gauge({
      name: 'portal_jobs_oldest_age_seconds',
      help: 'Seconds since the oldest job not yet settled in each state was submitted (a stuck hand-over shows in SUBMITTING, a long queue in PENDING).',
      labelNames: ['state'] as const,
      registers,
    }),
    workerHeartbeatAge: new Gauge({
      name: 'portal_worker_heartbeat_age_seconds',
      help: 'Seconds since the worker last recorded a round (written at least once a minute while it runs); absent before its first round.',
      registers,
    }),
    processInfo: new Gauge({ name: 'portal_process_info', help: 'Always 1: the name of the process these series come from (PORTAL_INSTANCE, else host:pid).', labelNames: ['name'] as const, registers }),
    workerLeader: new Gauge({ name: 'portal_worker_leader', help: '1 while this process holds the worker lock and runs the reconciler (one process of a deployment at a time), else 0.', registers }),
    outboxPending: new Gauge({ name: 'portal_mail_outbox_pending', help: 'Mails in the outbox not yet sent (and not given up).', registers }),
    outboxOldestAge: new Gauge({
      name: 'portal_mail_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest mail in the outbox not yet sent (0: none).',
      registers,
    }),
    ledgerGpuSeconds: new Gauge({
      name: 'portal_ledger_gpu_seconds',
      help: 'GPU-hour allocations’ cached balances summed over all allocations, in GPU-seconds, by kind (granted, charged, reserved, expired, overrun).',
      labelNames: ['kind'] as const,
      registers,
    }),
    ledgerCents: new Gauge({
      name: 'portal_ledger_cents',
      help: 'Credit lines’ cached balances summed over all allocations, in cents, by kind (granted, charged, reserved, expired, overrun).',
      labelNames: ['kind'] as const,
      registers,
    }),
    schedulerUp: new Gauge({
      name: 'portal_scheduler_up',
      help: '1 when the scheduler described its cluster within the scrape’s time-out, else 0 (the partition series are then absent).',
      registers,
    }),
    clusterGpus: new Gauge({
      name: 'portal_cluster_gpus',
      help: 'GPUs per partition as the scheduler reports them: busy (allocated), idle, down.',
      labelNames: ['partition', 'state'] as const,
      registers,
    }),
    clusterPower: new Gauge({ name: 'portal_cluster_power_watts', help: 'Power drawn by each partition’s nodes, in watts.', labelNames: ['partition'] as const, registers }),
    clusterJobs: new Gauge({ name: 'portal_cluster_jobs', help: 'Jobs the scheduler holds, pending or running (all of them, not only the portal’s).', labelNames: ['state'] as const, registers }),
    // The OpenAI-compatible gateway (issue #29), per model and site: the models are the running services'
    // (a bounded set: one name per service), the sites the catalogue's.
    gatewayRequests: new Counter({
      name: 'portal_gateway_requests_total',
      help: 'Model calls the gateway forwarded, by model, site and the model server’s status.',
      labelNames: ['model', 'site', 'status'] as const,
      registers,
    }),
    gatewayTokens: new Counter({
      name: 'portal_gateway_tokens_total',
      help: 'Tokens of the forwarded calls as their model servers reported them (usage), by model, site and direction (prompt, completion).',
      labelNames: ['model', 'site', 'direction'] as const,
      registers,
    }),
    gatewayFirstToken: new Histogram({
      name: 'portal_gateway_time_to_first_token_seconds',
      help: 'From the gateway taking a call to the first answer piece passing back (a whole answer: its first byte), by model and site.',
      labelNames: ['model', 'site'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    gatewayTokensPerSecond: new Histogram({
      name: 'portal_gateway_tokens_per_second',
      help: 'Completion tokens per second of a call, from its first answer piece to its end, by model and site.',
      labelNames: ['model', 'site'] as const,
      buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000],
      registers,
    }),
    gatewayErrors: new Counter({
      name: 'portal_gateway_errors_total',
      help: 'Model calls that failed, by model, site and kind: unreachable (no answer; another replica is tried), server_error (5xx), aborted (the client left mid-answer).',
      labelNames: ['model', 'site', 'kind'] as const,
      registers,
    }),
  };
}

export type PortalMetrics = ReturnType<typeof createMetrics>;

/** metrics returns the process's one set of metrics. */
export function metrics(): PortalMetrics {
  const holder = globalThis as { __portalMetrics?: PortalMetrics };
  holder.__portalMetrics ??= createMetrics();
  return holder.__portalMetrics;
}

/** observeRequest records one answered HTTP request: its route template (never a path with ids), method, status and duration. */
export function observeRequest(route: string, method: string, status: number, seconds: number): void {
  metrics().httpDuration.observe({ route, method: method.toUpperCase(), status: String(status) }, seconds);
}

/**
 * instrumentRoute wraps a route handler so each request it answers is recorded under `route` (the
 * template, such as `/api/invoices/[id]/pdf`); a handler that throws counts as 500.
 */
export function instrumentRoute<A extends unknown[]>(route: string, handler: (...args: A) => Response | Promise<Response>): (...args: A) => Promise<Response> {
  return async (...args: A) => {
    const started = performance.now();
    const request = args[0] as { method?: unknown } | undefined;
    const method = typeof request?.method === 'string' ? request.method : 'GET';
    let status = 500;
    try {
      const response = await handler(...args);
      status = response.status;
      return response;
    } finally {
      observeRequest(route, method, status, (performance.now() - started) / 1000);
    }
  };
}

/** countSubmission records a job accepted. */
export function countSubmission(kind: string): void {
  metrics().submissions.inc({ kind });
}

/** countRefusal records a submission refused, by the refusal's message key. */
export function countRefusal(reason: string): void {
  metrics().refusals.inc({ reason });
}

/** metricsText renders every metric in Prometheus's text format. */
export function metricsText(): Promise<string> {
  return metrics().registry.metrics();
}

/** METRICS_CONTENT_TYPE is the text format's content type. */
export function metricsContentType(): string {
  return metrics().registry.contentType;
}
