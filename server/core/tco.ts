// Total cost of ownership per delivered GPU-hour. Pure; money in whole cents, energy in Wh, power in W,
// utilisation in basis points (1 bp = 0.01 %, 10,000 = every GPU busy all year).
//
// A resource class costs per year, at a utilisation u:
//   capital      nodes × price ÷ years of depreciation (straight line)
//   maintenance  nodes × support per node and year
//   energy       IT energy at u × PUE × price, less the heat reused × its value (net; heat reused =
//                facility × recoverable share, as server/core/usage/footprint.ts books a job's)
//   overhead     the site's floor space and staff per year, apportioned to its classes by GPU count
//                (not by power: the share should not move with utilisation or with a job mix; a site's
//                staff look after GPUs, not watts)
// and delivers GPUs × 8,760 h × u GPU-hours; cost per delivered GPU-hour = yearly cost ÷ those hours.
//
// IT power at u (the price list's and the energy model's power model, server/core/jobs/estimates.ts):
// every node draws its base power all year (nodes are up whether or not jobs run); a busy GPU draws
// idle + (max − idle) × the assumed job GPU utilisation (ASSUMED_GPU_UTIL_PERCENT, 90 %), an idle one its
// idle power. So energy grows linearly with u and the fixed part is spread over fewer hours at low u.
//
// Reusable for what-if planning: everything comes in as values (a proposed class is just another
// TcoClass; another PUE or price another TcoSite).
import { ASSUMED_GPU_UTIL_PERCENT, type PowerModel } from './jobs/estimates';
import { largestRemainder } from './usage/apportion';
import { divRoundHalfUp, jobFootprint } from './usage/footprint';

export const HOURS_PER_YEAR = 8760;
/** Full utilisation in basis points. */
export const FULL_BP = 10_000;

export interface TcoSite {
  pueMilli: number;
  heatReusePermille: number;
  energyPriceEurPerMwh: number;
  heatValueEurPerMwh: number;
  overheadPerYearEur: number;
}

export interface TcoClass extends PowerModel {
  nodes: number;
  capitalCostPerNodeEur: number;
  depreciationYears: number;
  maintenancePerNodePerYearEur: number;
}

/** Yearly costs in cents at one utilisation; energyCents is net of the heat's value (may be negative in theory). */
export interface YearlyCost {
  capitalCents: number;
  maintenanceCents: number;
  /** Electricity bought (facility energy × price). */
  electricityCents: number;
  /** Value of the heat reused, deducted from the electricity. */
  heatCreditCents: number;
  /** electricity − heat credit. */
  energyCents: number;
  overheadCents: number;
  totalCents: number;
  itEnergyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
}

export interface PerGpuHour {
  capitalCents: number;
  maintenanceCents: number;
  energyCents: number;
  overheadCents: number;
  /** Sum of the four parts: total yearly cost ÷ delivered GPU-hours, rounded half up. */
  totalCents: number;
}

export interface TcoAt {
  utilisationBp: number;
  yearly: YearlyCost;
  /** Delivered GPU-hours per year at this utilisation, in GPU-seconds (an integer). */
  deliveredGpuSeconds: number;
  /** Null at 0 % (nothing delivered). */
  perGpuHour: PerGpuHour | null;
}

/** gpusOf is a class's GPU count. */
export function gpusOf(rc: Pick<TcoClass, 'nodes' | 'gpusPerNode'>): number {
  return rc.nodes * rc.gpusPerNode;
}

/**
 * overheadSharesCents apportions a site's yearly overhead (whole €) to one of its classes by GPU count,
 * in cents, by largest remainder over all the site's classes so the shares add up to the overhead.
 */
export function overheadSharesCents(overheadPerYearEur: number, classGpus: readonly number[]): number[] {
  if (classGpus.every((g) => g === 0)) return classGpus.map(() => 0);
  return largestRemainder(overheadPerYearEur * 100, classGpus);
}

/** itEnergyWhPerYear is a class's IT energy over a year at a utilisation, rounded half up to whole Wh. */
export function itEnergyWhPerYear(rc: TcoClass, utilisationBp: number): number {
  const gpus = gpusOf(rc);
  const fixedW = rc.nodes * rc.nodeBasePowerW + gpus * rc.gpuIdlePowerW;
  // Busy GPUs' extra draw: gpus × (max − idle) × util% ÷ 100 × bp ÷ 10,000, kept as an integer numerator.
  // BigInt: the product passes 2^53 for a few thousand GPUs.
  const busyNumerator = BigInt(gpus) * BigInt(rc.gpuMaxPowerW - rc.gpuIdlePowerW) * BigInt(ASSUMED_GPU_UTIL_PERCENT) * BigInt(utilisationBp) * BigInt(HOURS_PER_YEAR);
  return fixedW * HOURS_PER_YEAR + bigDivRoundHalfUp(busyNumerator, BigInt(100 * FULL_BP));
}

function bigDivRoundHalfUp(numerator: bigint, denominator: bigint): number {
  return Number((2n * numerator + denominator) / (2n * denominator));
}

/** centsOfMwh prices Wh at whole € per MWh (cents = Wh × € ÷ 10,000), rounded half up. */
function centsOfMwh(wh: number, eurPerMwh: number): number {
  return divRoundHalfUp(wh * eurPerMwh, 10_000);
}

/** yearlyCost is a class's cost over a year at a utilisation, given its share of the site's overhead in cents. */
export function yearlyCost(rc: TcoClass, site: TcoSite, overheadCents: number, utilisationBp: number): YearlyCost {
  const capitalCents = divRoundHalfUp(rc.nodes * rc.capitalCostPerNodeEur * 100, rc.depreciationYears);
  const maintenanceCents = rc.nodes * rc.maintenancePerNodePerYearEur * 100;
  const itEnergyWh = itEnergyWhPerYear(rc, utilisationBp);
  const { facilityEnergyWh, heatReusedWh } = jobFootprint(itEnergyWh, { pueMilli: site.pueMilli, heatReusePermille: site.heatReusePermille, gridGco2PerKwh: 0 });
  const electricityCents = centsOfMwh(facilityEnergyWh, site.energyPriceEurPerMwh);
  const heatCreditCents = centsOfMwh(heatReusedWh, site.heatValueEurPerMwh);
  const energyCents = electricityCents - heatCreditCents;
  return {
    capitalCents,
    maintenanceCents,
    electricityCents,
    heatCreditCents,
    energyCents,
    overheadCents,
    totalCents: capitalCents + maintenanceCents + energyCents + overheadCents,
    itEnergyWh,
    facilityEnergyWh,
    heatReusedWh,
  };
}

/** deliveredGpuSeconds is the GPU time a class delivers in a year at a utilisation (GPUs × 8,760 h × u). */
export function deliveredGpuSeconds(gpus: number, utilisationBp: number): number {
  return bigDivRoundHalfUp(BigInt(gpus) * BigInt(HOURS_PER_YEAR * 3600) * BigInt(utilisationBp), BigInt(FULL_BP));
}

/**
 * tcoAt is a class's yearly cost and cost per delivered GPU-hour at a utilisation. The per-GPU-hour
 * total is the yearly total ÷ delivered GPU-hours rounded half up to cents; the four parts are split
 * from it by largest remainder in proportion to their yearly amounts, so they add up to it (a negative
 * net energy part — heat worth more than the electricity — is shown as it is, outside the split).
 */
export function tcoAt(rc: TcoClass, site: TcoSite, overheadCents: number, utilisationBp: number): TcoAt {
  if (!Number.isInteger(utilisationBp) || utilisationBp < 0 || utilisationBp > FULL_BP) throw new RangeError(`utilisation must be 0..${FULL_BP} bp, got ${utilisationBp}`);
  const yearly = yearlyCost(rc, site, overheadCents, utilisationBp);
  const delivered = deliveredGpuSeconds(gpusOf(rc), utilisationBp);
  if (delivered === 0) return { utilisationBp, yearly, deliveredGpuSeconds: 0, perGpuHour: null };
  return { utilisationBp, yearly, deliveredGpuSeconds: delivered, perGpuHour: perGpuHour(yearly, delivered) };
}

function perGpuHour(yearly: YearlyCost, delivered: number): PerGpuHour {
  const per = (cents: number) => (cents >= 0 ? divRoundHalfUp(cents * 3600, delivered) : -divRoundHalfUp(-cents * 3600, delivered));
  const totalCents = per(yearly.totalCents);
  const parts = [yearly.capitalCents, yearly.maintenanceCents, yearly.energyCents, yearly.overheadCents];
  if (totalCents < 0 || parts.some((p) => p < 0) || parts.every((p) => p === 0)) {
    const [capitalCents, maintenanceCents, energyCents, overheadCents] = parts.map(per) as [number, number, number, number];
    return { capitalCents, maintenanceCents, energyCents, overheadCents, totalCents: capitalCents + maintenanceCents + energyCents + overheadCents };
  }
  const [capitalCents, maintenanceCents, energyCents, overheadCents] = largestRemainder(totalCents, parts) as [number, number, number, number];
  return { capitalCents, maintenanceCents, energyCents, overheadCents, totalCents };
}

/**
 * breakEvenBp is the lowest utilisation (bp) at which the cost per delivered GPU-hour is at most the
 * tariff (cents per GPU-hour): yearly cost ≤ tariff × delivered GPU-hours, compared exactly in
 * integers; null when even 100 % costs more. The cost per delivered hour falls as u rises (the fixed
 * costs are spread wider), so a binary search over 1..10,000 finds it.
 */
export function breakEvenBp(rc: TcoClass, site: TcoSite, overheadCents: number, tariffCentsPerGpuHour: number): number | null {
  const covers = (bp: number) => {
    const delivered = deliveredGpuSeconds(gpusOf(rc), bp);
    return delivered > 0 && BigInt(yearlyCost(rc, site, overheadCents, bp).totalCents) * 3600n <= BigInt(tariffCentsPerGpuHour) * BigInt(delivered);
  };
  if (!covers(FULL_BP)) return null;
  let lo = 1;
  let hi = FULL_BP;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (covers(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** curve is the cost per delivered GPU-hour at each of the given utilisations (bp), for a chart. */
export function costCurve(rc: TcoClass, site: TcoSite, overheadCents: number, pointsBp: readonly number[]): { utilisationBp: number; totalCents: number }[] {
  return pointsBp.map((bp) => ({ utilisationBp: bp, totalCents: tcoAt(rc, site, overheadCents, bp).perGpuHour?.totalCents ?? 0 }));
}

/** The chart's utilisations: 10 %, 15 %, … 100 %. */
export const CURVE_POINTS_BP: readonly number[] = Array.from({ length: 19 }, (_, i) => 1000 + i * 500);

/** fractionToBp turns a utilisation fraction (the centre dashboard's) into basis points, rounded half up and kept within 0..100 %. */
export function fractionToBp(fraction: number): number {
  if (!Number.isFinite(fraction) || fraction <= 0) return 0;
  return Math.min(FULL_BP, Math.round(fraction * FULL_BP));
}
