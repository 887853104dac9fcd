// The price list: what one GPU-hour of a resource class costs a tenant and what it draws and emits at
// its site, from the same models as a job's estimate (energy at the assumed utilisation, the site's PUE
// and grid intensity). Pure.
import { ASSUMED_GPU_UTIL_PERCENT, jobEnergyEstimateWh, type PowerModel } from '../jobs/estimates';
import { jobFootprint, type SiteFigures } from '../usage/footprint';

export interface GpuHourFigures {
  centsPerGpuHour: number;
  /** IT energy of one GPU-hour (the GPU and its share of the node) at the assumed utilisation. */
  itWhPerGpuHour: number;
  /** The same at the meter: IT × PUE. */
  facilityWhPerGpuHour: number;
  co2eGramsPerGpuHour: number;
  assumedGpuUtilPercent: number;
}

/** gpuHourFigures prices one GPU-hour and gives its energy and CO2e at the site, as a one-GPU, one-hour estimate would. */
export function gpuHourFigures(power: PowerModel, site: SiteFigures, centsPerGpuHour: number): GpuHourFigures {
  const itWhPerGpuHour = jobEnergyEstimateWh(power, 1, 3600, ASSUMED_GPU_UTIL_PERCENT);
  const footprint = jobFootprint(itWhPerGpuHour, site);
  return { centsPerGpuHour, itWhPerGpuHour, facilityWhPerGpuHour: footprint.facilityEnergyWh, co2eGramsPerGpuHour: footprint.co2eGrams, assumedGpuUtilPercent: ASSUMED_GPU_UTIL_PERCENT };
}
