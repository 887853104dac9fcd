// Low-carbon starts: when a job that may wait should start, and what a job that waited saved. Loads
// the job's class and site, reads the site's grid (profile, price, time zone) from the catalogue at run
// time (no database columns), and asks server/core/carbon for the maths.
import type { DbOrTx } from '~/db/client';
import { configuredCatalogue } from '~/server/catalogue';
import { co2eSavedByWaiting, type Co2eSaved } from '~/server/core/carbon/saved';
import { siteGrid, type SiteGrid } from '~/server/core/carbon/profiles';
import { jobFacilityPowerW, lowCarbonStart } from '~/server/core/carbon/start';
import { ASSUMED_GPU_UTIL_PERCENT } from '~/server/core/jobs/estimates';
import type { TenantActor } from '~/server/services/actor';
import { jobContext } from './jobs';

/** The longest a suggestion looks ahead, in hours. */
export const MAX_WINDOW_HOURS = 48;

/**
 * gridOfSite resolves a site's hourly grid: the figures the database holds (country, annual intensity)
 * with what only the catalogue says (energy price, time zone, a profile of its own).
 */
export function gridOfSite(site: { id: string; country: string; gridGco2PerKwh: number }): SiteGrid {
  const configured = configuredCatalogue().sites.find((s) => s.id === site.id);
  return siteGrid({
    country: site.country,
    gridGco2PerKwh: site.gridGco2PerKwh,
    energyPriceEurPerMwh: configured?.energyPriceEurPerMwh,
    timeZone: configured?.timeZone,
    gridProfile: configured?.gridProfile,
  });
}

export interface LowCarbonStartInput {
  allocationId: string;
  resourceClassId: string;
  gpus: number;
  walltimeSeconds: number;
  runtimeSeconds?: number | undefined;
  windowHours: number;
}

/**
 * suggestLowCarbonStart answers when, within the next `windowHours`, the job would emit the least CO2e
 * at its site (its modelled draw at the meter over its runtime estimate, else its walltime), and what
 * that saves in CO2e and energy cost against starting now. Same checks as the estimate: the actor must
 * be able to submit to the allocation and class.
 */
export async function suggestLowCarbonStart(db: DbOrTx, actor: TenantActor, input: LowCarbonStartInput, now: Date) {
  const { rc, site } = await jobContext(db, actor, input);
  const grid = gridOfSite(site);
  const runtimeSeconds = Math.min(input.runtimeSeconds ?? input.walltimeSeconds, input.walltimeSeconds);
  const facilityPowerW = jobFacilityPowerW(rc, input.gpus, ASSUMED_GPU_UTIL_PERCENT, site.pueMilli);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const start = lowCarbonStart({ grid, facilityPowerW, runtimeSeconds, nowSeconds, windowHours: Math.min(input.windowHours, MAX_WINDOW_HOURS) });
  return {
    begin: new Date(start.beginSeconds * 1000),
    startsNow: start.beginSeconds === nowSeconds,
    timeZone: grid.timeZone,
    co2eNowGrams: start.co2eNowGrams,
    co2eAtBeginGrams: start.co2eAtBeginGrams,
    savedGrams: start.savedGrams,
    savedPercent: start.savedPercent,
    energyCostNowCents: start.energyCostNowCents,
    energyCostAtBeginCents: start.energyCostAtBeginCents,
    facilityPowerW,
    runtimeSeconds,
    assumedGpuUtilPercent: ASSUMED_GPU_UTIL_PERCENT,
  };
}

/** What the job page needs of a job to show what waiting for its begin saved. */
export interface WaitedJob {
  begin: Date | null;
  submittedAt: Date;
  startedAt: Date | null;
  /** Measured once it ran; before, the estimate (expected facility energy and runtime). */
  facilityEnergyWh: number | null;
  runSeconds: number | null;
}

/**
 * co2eSavedForJob is the CO2e a job with a `begin` saved against starting at once (at its submit
 * instant), under its site's hourly profile; null for a job without a begin or without energy figures.
 * Started: from its actual start; not yet: from its begin.
 */
export function co2eSavedForJob(site: { id: string; country: string; gridGco2PerKwh: number }, job: WaitedJob): Co2eSaved | null {
  if (!job.begin || job.facilityEnergyWh === null || !job.runSeconds) return null;
  const from = job.startedAt ?? job.begin;
  return co2eSavedByWaiting({
    grid: gridOfSite(site),
    facilityEnergyWh: job.facilityEnergyWh,
    runSeconds: job.runSeconds,
    submittedAtSeconds: Math.floor(job.submittedAt.getTime() / 1000),
    startedAtSeconds: Math.floor(from.getTime() / 1000),
  });
}
