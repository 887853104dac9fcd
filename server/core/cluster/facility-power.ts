// Facility power per site from the cluster's samples, for the staff cluster page: the sampled IT power
// of the site's partitions × the site's PUE at each sample time, the figure now, and the site's cap.
// Pure; the IT power is what the scheduler reported (the simulated cluster's model, Slurm's modelled power).
import { facilityPowerW } from '../sim/power';

/** A site as the chart needs it: its PUE and its facility power cap (null: none). */
export interface FacilityPowerSite {
  id: string;
  name: string;
  pueMilli: number;
  capW: number | null;
}

/** One partition's IT power: at a sample time, or now (a node's or a partition's draw; they are summed). */
export interface PartitionPower {
  partition: string;
  powerW: number;
}

/** A site's facility power over time, now, and its cap, in whole watts. */
export interface SiteFacilityPower {
  siteId: string;
  siteName: string;
  pueMilli: number;
  capW: number | null;
  /** Facility power at each sample time at which any of the site's partitions was sampled, oldest first. */
  points: { at: Date; facilityW: number }[];
  /** Facility power now, from the scheduler's answer; null when it did not answer. */
  nowW: number | null;
}

/**
 * facilityPowerBySite sums the IT power of each site's partitions per sample time and now, and turns it
 * into facility power (× PUE, rounded half up once per point). A site is listed when it has a cap or any
 * figure; a partition the map does not place at a site is left out.
 */
export function facilityPowerBySite(input: {
  sites: readonly FacilityPowerSite[];
  /** Partition (resource class id) → site id. */
  partitionSite: ReadonlyMap<string, string>;
  samples: readonly (PartitionPower & { at: Date })[];
  /** The scheduler's answer now; null when it did not answer. */
  now: readonly PartitionPower[] | null;
}): SiteFacilityPower[] {
  const series = new Map<string, Map<number, number>>();
  for (const s of input.samples) {
    const siteId = input.partitionSite.get(s.partition);
    if (siteId === undefined) continue;
    const bySite = series.get(siteId) ?? new Map<number, number>();
    const at = s.at.getTime();
    bySite.set(at, (bySite.get(at) ?? 0) + s.powerW);
    series.set(siteId, bySite);
  }
  const nowIt = new Map<string, number>();
  for (const p of input.now ?? []) {
    const siteId = input.partitionSite.get(p.partition);
    if (siteId !== undefined) nowIt.set(siteId, (nowIt.get(siteId) ?? 0) + p.powerW);
  }
  const facility = (itW: number, pueMilli: number) => facilityPowerW(Math.round(itW * 100), pueMilli);
  return input.sites
    .filter((site) => site.capW !== null || series.has(site.id) || nowIt.has(site.id))
    .map((site) => ({
      siteId: site.id,
      siteName: site.name,
      pueMilli: site.pueMilli,
      capW: site.capW,
      points: [...(series.get(site.id) ?? new Map<number, number>())].sort((a, b) => a[0] - b[0]).map(([at, itW]) => ({ at: new Date(at), facilityW: facility(itW, site.pueMilli) })),
      nowW: input.now === null ? null : facility(nowIt.get(site.id) ?? 0, site.pueMilli),
    }));
}
