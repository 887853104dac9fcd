// One scrape of /api/metrics: the counters kept since the process started, plus what is read now from
// the database (server/services/cluster/monitoring.ts) and from the scheduler (its partitions). The scheduler
// gets a short time-out, so a slow one leaves its series out instead of hanging the scrape, and one
// question at a time, so scrapes against a stuck scheduler do not pile up calls.
import type { Db } from '~/db/client';
import type { ClusterDescription, SchedulerPort } from '~/server/core/scheduler/port';
import { monitoringFigures } from '~/server/services/cluster/monitoring';
import { logger } from './log';
import { metrics, metricsText } from './metrics';

/** How long a scrape waits for the scheduler to describe its cluster. */
export const CLUSTER_TIMEOUT_MS = 2000;

const pending: { describe?: Promise<ClusterDescription> } = ((globalThis as { __portalScrape?: { describe?: Promise<ClusterDescription> } }).__portalScrape ??= {});

const ageSeconds = (since: Date | null, now: Date) => (since ? Math.max(0, (now.getTime() - since.getTime()) / 1000) : 0);

/** describeWithin asks the scheduler for its cluster, or gives up after `ms` (null); a question still out is shared, not repeated. */
async function describeWithin(scheduler: SchedulerPort, ms: number): Promise<ClusterDescription | null> {
  pending.describe ??= scheduler.describeCluster().finally(() => {
    pending.describe = undefined;
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([pending.describe, timeout]);
  } catch (error) {
    logger().warn({ err: error }, 'metrics: the scheduler did not describe its cluster');
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** setClusterGauges sets the per-partition series from the scheduler's description (none when it did not answer). */
function setClusterGauges(cluster: ClusterDescription | null): void {
  const m = metrics();
  m.clusterGpus.reset();
  m.clusterPower.reset();
  m.clusterJobs.reset();
  m.schedulerUp.set(cluster ? 1 : 0);
  if (!cluster) return;
  for (const partition of cluster.partitions) {
    const nodes = cluster.nodes.filter((n) => n.partition === partition.name);
    const total = (list: typeof nodes, figure: (n: (typeof nodes)[number]) => number) => list.reduce((s, n) => s + figure(n), 0);
    const down = total(nodes.filter((n) => n.state === 'down'), (n) => n.gpus);
    const up = nodes.filter((n) => n.state !== 'down');
    const busy = total(up, (n) => n.allocatedGpus);
    m.clusterGpus.set({ partition: partition.name, state: 'busy' }, busy);
    m.clusterGpus.set({ partition: partition.name, state: 'idle' }, total(up, (n) => n.gpus) - busy);
    m.clusterGpus.set({ partition: partition.name, state: 'down' }, down);
    m.clusterPower.set({ partition: partition.name }, Math.round(total(nodes, (n) => n.powerW)));
  }
  m.clusterJobs.set({ state: 'pending' }, cluster.pendingJobs);
  m.clusterJobs.set({ state: 'running' }, cluster.runningJobs);
}

/** scrapeMetrics refreshes the figures read at scrape time and renders every metric in Prometheus's text format. */
export async function scrapeMetrics(db: Db, scheduler: () => Promise<SchedulerPort>, options: { now?: Date; clusterTimeoutMs?: number } = {}): Promise<string> {
  const now = options.now ?? new Date();
  const [figures, cluster] = await Promise.all([
    monitoringFigures(db),
    scheduler().then(
      (port) => describeWithin(port, options.clusterTimeoutMs ?? CLUSTER_TIMEOUT_MS),
      (error: unknown) => {
        logger().warn({ err: error }, 'metrics: no scheduler adapter');
        return null;
      },
    ),
  ]);
  const m = metrics();
  for (const [state, open] of Object.entries(figures.openJobs)) {
    m.jobs.set({ state }, open.count);
    m.jobsOldestAge.set({ state }, ageSeconds(open.oldestSubmittedAt, now));
  }
  m.reconcilerLag.set(ageSeconds(figures.oldestUnsettledEndedAt, now));
  m.workerHeartbeatAge.reset();
  if (figures.workerCheckedAt) m.workerHeartbeatAge.set(ageSeconds(figures.workerCheckedAt, now));
  m.outboxPending.set(figures.outbox.pending);
  m.outboxOldestAge.set(ageSeconds(figures.outbox.oldestPendingAt, now));
  for (const [unit, balance] of Object.entries(figures.ledger)) {
    const gauge = unit === 'cents' ? m.ledgerCents : m.ledgerGpuSeconds;
    for (const [kind, amount] of Object.entries(balance)) gauge.set({ kind }, amount);
  }
  setClusterGauges(cluster);
  return metricsText();
}
