// The staff cluster page: the cluster now as the scheduler describes it, the last day's samples, and
// each site's facility power (IT × PUE) over that day against its cap (server/core/cluster/facility-power.ts).
import { asc, gte } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { clusterSamples, resourceClasses, sites } from '~/db/schema';
import { localName, sitePowerCapW, type Catalogue } from '~/server/catalogue';
import type { Locale } from '~/server/i18n';
import { facilityPowerBySite } from '~/server/core/cluster/facility-power';
import { clustersOf, isSchedulerUnavailable, type ClusterDescription, type SchedulerPort } from '~/server/core/scheduler/port';
import { readClusterStatuses } from './scheduler-status';

const DAY_MS = 86_400_000;

/** clusterView reads the cluster now (an unreachable scheduler is news, not an error), the last day's samples and each site's facility power against its cap (sites named in `locale`). */
export async function clusterView(db: DbOrTx, scheduler: SchedulerPort, catalogue: Catalogue, now: Date, locale: Locale = 'en') {
  const since = new Date(now.getTime() - DAY_MS);
  // Each cluster on its own (one per group of sites, or the one scheduler): one that is down leaves the others' figures.
  const clusters = clustersOf(scheduler);
  const [described, samples, statuses, siteRows, classRows] = await Promise.all([
    Promise.all(
      clusters.map((c) =>
        c.port.describeCluster().then(
          (d) => ({ description: d, error: null }),
          (error: unknown) => {
            if (!isSchedulerUnavailable(error)) throw error;
            return { description: null, error: error.message };
          },
        ),
      ),
    ),
    db.select().from(clusterSamples).where(gte(clusterSamples.at, since)).orderBy(asc(clusterSamples.at)),
    readClusterStatuses(db),
    db.select({ id: sites.id, name: sites.name, nameDe: sites.nameDe, pueMilli: sites.pueMilli }).from(sites).orderBy(asc(sites.id)),
    // Every class, active or not: a sample of a class retired since still belongs to its site.
    db.select({ id: resourceClasses.id, siteId: resourceClasses.siteId, name: resourceClasses.name, nameDe: resourceClasses.nameDe }).from(resourceClasses),
  ]);
  const answered = described.flatMap((d) => (d.description ? [d.description] : []));
  const description = answered.length === 0 ? null : mergeDescriptions(answered);
  const error = described.find((d) => d.error !== null)?.error ?? null;
  const statusOf = new Map(statuses.map((st) => [st.cluster, st]));
  const clusterStates = clusters.map((c, i) => ({
    name: c.name,
    sites: c.sites ? [...c.sites] : null,
    reachable: described[i]!.error === null,
    error: described[i]!.error,
    unreachableSince: described[i]!.error === null ? null : (statusOf.get(c.name)?.unreachableSince ?? null),
    lastOkAt: statusOf.get(c.name)?.lastOkAt ?? null,
  }));
  const sitePower = facilityPowerBySite({
    sites: siteRows.map(({ nameDe, ...s }) => ({ ...s, name: localName(locale, { name: s.name, nameDe }), capW: sitePowerCapW(catalogue, s.id) })),
    partitionSite: new Map(classRows.map((c) => [c.id, c.siteId])),
    samples,
    now: description ? description.nodes.map((n) => ({ partition: n.partition, powerW: n.powerW })) : null,
  });
  // The partition cards are titled by the class the partition serves (its name says the site), in the reader's
  // language: the scheduler's partition names are the class ids; a partition no class names keeps its own name.
  const partitionLabels = classRows.map((c) => ({ partition: c.id, className: localName(locale, c) }));
  return {
    description,
    partitionLabels,
    samples,
    sitePower,
    scheduler: {
      reachable: error === null,
      error: clusters.length > 1 ? clusterStates.filter((c) => c.error !== null).map((c) => `${c.name}: ${c.error}`).join('; ') || null : error,
      unreachableSince: clusterStates.reduce<Date | null>((a, c) => (c.unreachableSince && (!a || c.unreachableSince < a) ? c.unreachableSince : a), null),
      lastOkAt: clusterStates.reduce<Date | null>((a, c) => (c.lastOkAt && (!a || c.lastOkAt > a) ? c.lastOkAt : a), null),
    },
    /** Each cluster's state (one row for a single scheduler). */
    clusters: clusterStates,
  };
}

/** mergeDescriptions is the centre as the clusters that answered describe it together. */
function mergeDescriptions(parts: ClusterDescription[]): ClusterDescription {
  return {
    at: parts.reduce((latest, p) => (p.at > latest ? p.at : latest), parts[0]!.at),
    partitions: parts.flatMap((p) => p.partitions),
    nodes: parts.flatMap((p) => p.nodes),
    pendingJobs: parts.reduce((sum, p) => sum + p.pendingJobs, 0),
    runningJobs: parts.reduce((sum, p) => sum + p.runningJobs, 0),
    powerW: parts.reduce((sum, p) => sum + p.powerW, 0),
  };
}
