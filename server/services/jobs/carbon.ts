// Low-carbon starts: when, within a window, a job that may wait should start. Loads the job's class and
// site, reads the site's grid through co2e-saved.ts (gridOfSite), and asks server/core/carbon for the maths.
import type { DbOrTx } from '~/db/client';
import { jobFacilityPowerW, lowCarbonStart } from '~/server/core/carbon/start';
import { ASSUMED_GPU_UTIL_PERCENT } from '~/server/core/jobs/estimates';
import type { TenantActor } from '~/server/services/actor';
import { gridOfSite } from './co2e-saved';
import { jobContext } from './jobs';

/** The longest a suggestion looks ahead, in hours. */
export const MAX_WINDOW_HOURS = 48;

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
