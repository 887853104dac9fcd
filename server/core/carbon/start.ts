// When to start a job that may wait: the start within its window whose run emits the least CO2e under
// its site's hourly grid profile. Pure; times are Unix seconds, power W, CO2e grams, money cents.
// Each sum is exact (integers, BigInt where it may pass 2^53) and rounded half up once.
import { gpuPowerCentiW } from '../sim/energy';
import type { PowerModel } from '../jobs/estimates';
import { localHourAt } from './local-time';
import type { SiteGrid } from './profiles';

const SECONDS_PER_HOUR = 3600;

/**
 * jobFacilityPowerW is a job's draw at the meter in whole W: its GPUs at the utilisation plus its share
 * of the node's base power (as jobEnergyEstimateWh models IT energy), times the PUE; rounded half up.
 */
export function jobFacilityPowerW(power: PowerModel, gpus: number, gpuUtilPercent: number, pueMilli: number): number {
  const itCentiW = gpus * gpuPowerCentiW(power, gpuUtilPercent) + Math.round((gpus * power.nodeBasePowerW * 100) / power.gpusPerNode);
  return Math.floor((2 * itCentiW * pueMilli + 100_000) / 200_000);
}

/** One local hour (or the part of it inside the span) with its intensity and price. */
interface Slice {
  fromSeconds: number;
  toSeconds: number;
  gco2PerKwh: number;
  priceEurPerMwh: number;
  /** Σ seconds × g/kWh and Σ seconds × €/MWh of the slices before this one. */
  gco2SecondsBefore: number;
  priceSecondsBefore: number;
}

/** The grid over a span of time, cut at local hour boundaries, with running integrals. */
export interface GridTimeline {
  slices: readonly Slice[];
  hasPrice: boolean;
}

/** gridTimeline cuts [fromSeconds, toSeconds) at the site's local hour boundaries and looks up each hour's intensity and price. */
export function gridTimeline(grid: SiteGrid, fromSeconds: number, toSeconds: number): GridTimeline {
  const slices: Slice[] = [];
  let gco2SecondsBefore = 0;
  let priceSecondsBefore = 0;
  for (let at = fromSeconds; at < toSeconds; ) {
    const local = localHourAt(grid.timeZone, at);
    const end = Math.min(local.nextHourSeconds, toSeconds);
    const gco2PerKwh = grid.gco2PerKwh[local.month]![local.hour]!;
    const priceEurPerMwh = grid.priceEurPerMwh ? grid.priceEurPerMwh[local.month]![local.hour]! : 0;
    slices.push({ fromSeconds: at, toSeconds: end, gco2PerKwh, priceEurPerMwh, gco2SecondsBefore, priceSecondsBefore });
    gco2SecondsBefore += (end - at) * gco2PerKwh;
    priceSecondsBefore += (end - at) * priceEurPerMwh;
    at = end;
  }
  return { slices, hasPrice: grid.priceEurPerMwh !== null };
}

/** The running integrals (Σ seconds × g/kWh, Σ seconds × €/MWh) from the timeline's start to an instant inside it. */
function integralsTo(timeline: GridTimeline, atSeconds: number): { gco2Seconds: number; priceSeconds: number } {
  const { slices } = timeline;
  let lo = 0;
  let hi = slices.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (slices[mid]!.fromSeconds <= atSeconds) lo = mid;
    else hi = mid - 1;
  }
  const slice = slices[lo];
  if (!slice) return { gco2Seconds: 0, priceSeconds: 0 };
  const into = Math.min(atSeconds, slice.toSeconds) - slice.fromSeconds;
  return { gco2Seconds: slice.gco2SecondsBefore + into * slice.gco2PerKwh, priceSeconds: slice.priceSecondsBefore + into * slice.priceEurPerMwh };
}

/** divideHalfUp divides two non-negative BigInts and rounds half up. */
function divideHalfUp(numerator: bigint, denominator: bigint): number {
  return Number((BigInt(2) * numerator + denominator) / (BigInt(2) * denominator));
}

/** What a run of a given draw emits and costs. */
export interface RunFootprint {
  co2eGrams: number;
  /** Null when the site has no energy price. */
  energyCostCents: number | null;
}

/**
 * runFootprint integrates a run at a constant facility power over [begin, begin + runtime) exactly
 * across hour boundaries: CO2e = W × Σ seconds × g/kWh / 3.6e6, cost = W × Σ seconds × €/MWh / 3.6e7 cents.
 * The run must lie inside the timeline.
 */
export function runFootprint(timeline: GridTimeline, facilityPowerW: number, beginSeconds: number, runtimeSeconds: number): RunFootprint {
  const from = integralsTo(timeline, beginSeconds);
  const to = integralsTo(timeline, beginSeconds + runtimeSeconds);
  const watts = BigInt(facilityPowerW);
  return {
    co2eGrams: divideHalfUp(watts * BigInt(to.gco2Seconds - from.gco2Seconds), BigInt(3_600_000)),
    energyCostCents: timeline.hasPrice ? divideHalfUp(watts * BigInt(to.priceSeconds - from.priceSeconds), BigInt(36_000_000)) : null,
  };
}

/** Inputs of `lowCarbonStart`. */
export interface LowCarbonInput {
  grid: SiteGrid;
  /** The job's draw at the meter (jobFacilityPowerW). */
  facilityPowerW: number;
  /** How long it is expected to run: its runtime estimate, else its walltime. */
  runtimeSeconds: number;
  /** The submit instant. */
  nowSeconds: number;
  /** How long it may wait, whole hours (0: start now). */
  windowHours: number;
}

/** The suggested start and what it saves against starting now. */
export interface LowCarbonStart {
  beginSeconds: number;
  co2eNowGrams: number;
  co2eAtBeginGrams: number;
  savedGrams: number;
  /** savedGrams / co2eNowGrams in whole percent, rounded half up (0 when nothing is emitted). */
  savedPercent: number;
  energyCostNowCents: number | null;
  energyCostAtBeginCents: number | null;
}

/**
 * candidateBegins lists the starts considered: now, and every local hour boundary after now up to now
 * + the window (a job is suggested to start on the hour, as a person would type it).
 */
export function candidateBegins(timeline: GridTimeline, nowSeconds: number, windowHours: number): number[] {
  const latest = nowSeconds + windowHours * SECONDS_PER_HOUR;
  const begins = [nowSeconds];
  for (const slice of timeline.slices) {
    if (slice.fromSeconds > nowSeconds && slice.fromSeconds <= latest) begins.push(slice.fromSeconds);
  }
  return begins;
}

/**
 * lowCarbonStart finds the start in the window that minimises the run's CO2e under the site's hourly
 * profile (ties: the earliest, so now wins when waiting saves nothing), with the CO2e and energy cost
 * of starting now and then.
 */
export function lowCarbonStart(input: LowCarbonInput): LowCarbonStart {
  const { grid, facilityPowerW, runtimeSeconds, nowSeconds } = input;
  const windowHours = Math.max(0, Math.floor(input.windowHours));
  const timeline = gridTimeline(grid, nowSeconds, nowSeconds + windowHours * SECONDS_PER_HOUR + runtimeSeconds);
  const now = runFootprint(timeline, facilityPowerW, nowSeconds, runtimeSeconds);
  let beginSeconds = nowSeconds;
  let best = now;
  for (const begin of candidateBegins(timeline, nowSeconds, windowHours)) {
    const footprint = runFootprint(timeline, facilityPowerW, begin, runtimeSeconds);
    if (footprint.co2eGrams < best.co2eGrams) {
      best = footprint;
      beginSeconds = begin;
    }
  }
  const savedGrams = now.co2eGrams - best.co2eGrams;
  return {
    beginSeconds,
    co2eNowGrams: now.co2eGrams,
    co2eAtBeginGrams: best.co2eGrams,
    savedGrams,
    savedPercent: now.co2eGrams === 0 ? 0 : Math.floor((200 * savedGrams + now.co2eGrams) / (2 * now.co2eGrams)),
    energyCostNowCents: now.energyCostCents,
    energyCostAtBeginCents: best.energyCostCents,
  };
}
