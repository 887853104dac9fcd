// What a job that waited for its `begin` saved against starting at once. Pure.
import { gridTimeline } from './start';
import type { SiteGrid } from './profiles';

/** Inputs of `co2eSavedByWaiting`. */
export interface WaitedRun {
  grid: SiteGrid;
  /** The run's energy at the meter (measured, or the estimate before it ran). */
  facilityEnergyWh: number;
  runSeconds: number;
  /** When it was submitted: starting at once would have run from here. */
  submittedAtSeconds: number;
  /** When it started (or, before it started, its begin). */
  startedAtSeconds: number;
}

/** CO2e of the run as it went and as it would have gone from the submit instant, under the site's profile. */
export interface Co2eSaved {
  co2eAtOnceGrams: number;
  co2eAsRunGrams: number;
  /** Negative when starting later emitted more. */
  savedGrams: number;
}

/**
 * co2eSavedByWaiting spreads the run's energy evenly over its run time and weighs it by the site's hourly
 * intensity from the submit instant and from its start: CO2e = Wh × Σ seconds × g/kWh / (run × 1000).
 * Both figures use the profile, not the flat annual mean the job's own CO2e is settled with.
 */
export function co2eSavedByWaiting(run: WaitedRun): Co2eSaved {
  const runSeconds = Math.max(1, run.runSeconds);
  const co2e = (from: number) => {
    const timeline = gridTimeline(run.grid, from, from + runSeconds);
    const gco2Seconds = timeline.slices.reduce((sum, s) => sum + (s.toSeconds - s.fromSeconds) * s.gco2PerKwh, 0);
    const numerator = BigInt(run.facilityEnergyWh) * BigInt(gco2Seconds);
    const denominator = BigInt(runSeconds) * BigInt(1000);
    return Number((BigInt(2) * numerator + denominator) / (BigInt(2) * denominator));
  };
  const co2eAtOnceGrams = co2e(run.submittedAtSeconds);
  const co2eAsRunGrams = co2e(run.startedAtSeconds);
  return { co2eAtOnceGrams, co2eAsRunGrams, savedGrams: co2eAtOnceGrams - co2eAsRunGrams };
}
