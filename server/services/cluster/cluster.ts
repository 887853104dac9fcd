// The staff cluster page: the cluster now as the scheduler describes it, the last day's samples, and
// each site's facility power (IT × PUE) over that day against its cap (server/core/cluster/facility-power.ts).
import { asc, gte } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { clusterSamples, resourceClasses, sites } from '~/db/schema';
import { localName, sitePowerCapW, type Catalogue } from '~/server/catalogue';
import type { Locale } from '~/server/i18n';
import { facilityPowerBySite } from '~/server/core/cluster/facility-power';
import { isSchedulerUnavailable, type SchedulerPort } from '~/server/core/scheduler/port';
import { readSchedulerStatus } from './scheduler-status';

const DAY_MS = 86_400_000;

/** clusterView reads the cluster now (an unreachable scheduler is news, not an error), the last day's samples and each site's facility power against its cap (sites named in `locale`). */
export async function clusterView(db: DbOrTx, scheduler: SchedulerPort, catalogue: Catalogue, now: Date, locale: Locale = 'en') {
  const since = new Date(now.getTime() - DAY_MS);
  const [{ description, error }, samples, status, siteRows, classRows] = await Promise.all([
    scheduler.describeCluster().then(
      (d) => ({ description: d, error: null }),
      (error: unknown) => {
        if (!isSchedulerUnavailable(error)) throw error;
        return { description: null, error: error.message };
      },
    ),
    db.select().from(clusterSamples).where(gte(clusterSamples.at, since)).orderBy(asc(clusterSamples.at)),
    readSchedulerStatus(db),
    db.select({ id: sites.id, name: sites.name, nameDe: sites.nameDe, pueMilli: sites.pueMilli }).from(sites).orderBy(asc(sites.id)),
    // Every class, active or not: a sample of a class retired since still belongs to its site.
    db.select({ id: resourceClasses.id, siteId: resourceClasses.siteId, name: resourceClasses.name, nameDe: resourceClasses.nameDe }).from(resourceClasses),
  ]);
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
      error,
      unreachableSince: error === null ? null : (status?.unreachableSince ?? null),
      lastOkAt: status?.lastOkAt ?? null,
    },
  };
}
