// Whether the scheduler answers: the worker notes each round's outcome in a row per cluster
// (scheduler_status), so every process's pages can say "scheduler unreachable" (staff) and "waiting to
// be handed over" (a submitted job) instead of failing, and staff see which cluster, since when and why.
import { asc, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { schedulerStatus } from '~/db/schema';
import { env } from '~/server/env.js';

/** The cluster of a single-cluster portal (its one scheduler). */
export const DEFAULT_CLUSTER = 'default';

/** clusterOfSite names the cluster that runs a site's jobs: one of SLURM_CLUSTERS, else the one scheduler. */
export function clusterOfSite(siteId: string): string {
  const config = env();
  if (config.SCHEDULER !== 'slurm' || !config.SLURM_CLUSTERS) return DEFAULT_CLUSTER;
  return config.SLURM_CLUSTERS.find((c) => c.sites.includes(siteId))?.cluster ?? DEFAULT_CLUSTER;
}

export interface ClusterStatus extends SchedulerStatus {
  cluster: string;
}

export interface SchedulerStatus {
  reachable: boolean;
  lastOkAt: Date | null;
  unreachableSince: Date | null;
  lastError: string | null;
  checkedAt: Date;
}

/** How often an unchanged outcome is written again (so checkedAt tells that the worker is alive). */
const REWRITE_MS = 60_000;

/** What this process last wrote, per database and cluster. */
const memo: { last: WeakMap<Db, Map<string, { reachable: boolean; writtenAt: number }>> } = ((globalThis as { __portalSchedulerStatus?: typeof memo }).__portalSchedulerStatus ??= { last: new WeakMap() });

/**
 * noteSchedulerOutcome records whether a cluster's scheduler answered at `now` (error null: it did); an
 * unchanged outcome is written at most once a minute.
 */
export async function noteSchedulerOutcome(db: Db, now: Date, error: unknown, cluster: string = DEFAULT_CLUSTER): Promise<void> {
  const reachable = error === null || error === undefined;
  const written = memo.last.get(db) ?? new Map<string, { reachable: boolean; writtenAt: number }>();
  memo.last.set(db, written);
  const last = written.get(cluster);
  if (last && last.reachable === reachable && now.getTime() - last.writtenAt < REWRITE_MS) return;
  const message = reachable ? null : (error instanceof Error ? error.message : JSON.stringify(error)).split('\n')[0]!.slice(0, 500);
  await db
    .insert(schedulerStatus)
    .values({ cluster, reachable, lastOkAt: reachable ? now : null, unreachableSince: reachable ? null : now, lastError: message, checkedAt: now })
    .onConflictDoUpdate({
      target: schedulerStatus.cluster,
      set: reachable
        ? { reachable, lastOkAt: now, unreachableSince: null, checkedAt: now }
        : // The first failure after answers starts the outage; later ones keep its start.
          { reachable, unreachableSince: sql`coalesce(${schedulerStatus.unreachableSince}, ${now.toISOString()}::timestamptz)`, lastError: message, checkedAt: now },
    });
  written.set(cluster, { reachable, writtenAt: now.getTime() });
}

/** readClusterStatuses returns each cluster's last recorded outcome, by name. */
export async function readClusterStatuses(db: DbOrTx): Promise<ClusterStatus[]> {
  const rows = await db.select().from(schedulerStatus).orderBy(asc(schedulerStatus.cluster));
  return rows.map((row) => ({ cluster: row.cluster, reachable: row.reachable, lastOkAt: row.lastOkAt, unreachableSince: row.unreachableSince, lastError: row.lastError, checkedAt: row.checkedAt }));
}

/**
 * readSchedulerStatus returns the last recorded outcome of one cluster, or of all together when none is
 * named (reachable only when every cluster is; the earliest outage, the latest check); null before the
 * worker's first round.
 */
export async function readSchedulerStatus(db: DbOrTx, cluster?: string): Promise<SchedulerStatus | null> {
  const rows = cluster === undefined ? await readClusterStatuses(db) : (await readClusterStatuses(db)).filter((r) => r.cluster === cluster);
  if (rows.length === 0) return null;
  const down = rows.filter((r) => !r.reachable);
  const earliest = (dates: (Date | null)[]) => dates.reduce<Date | null>((a, d) => (d && (!a || d < a) ? d : a), null);
  const latest = (dates: (Date | null)[]) => dates.reduce<Date | null>((a, d) => (d && (!a || d > a) ? d : a), null);
  return {
    reachable: down.length === 0,
    lastOkAt: latest(rows.map((r) => r.lastOkAt)),
    unreachableSince: earliest(down.map((r) => r.unreachableSince)),
    lastError: down.length === 0 ? null : down.map((r) => (rows.length > 1 ? `${r.cluster}: ${r.lastError ?? ''}` : (r.lastError ?? ''))).join('; '),
    checkedAt: latest(rows.map((r) => r.checkedAt))!,
  };
}
