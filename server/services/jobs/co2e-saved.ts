// What a job that waited for a cleaner hour (`begin`) saved, as the job page shows it, and the site's
// hourly grid it is measured on: the figures the database holds joined with what only the catalogue says
// (energy price, time zone, a profile of its own), read at run time. Both jobs.ts (the job page) and
// carbon.ts (the low-carbon start) use the grid; the maths is server/core/carbon.
import { configuredCatalogue } from '~/server/catalogue';
import { co2eSavedByWaiting, type Co2eSaved } from '~/server/core/carbon/saved';
import { siteGrid, type SiteGrid } from '~/server/core/carbon/profiles';

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
