// A job's footprint from its IT energy and its site's figures. Pure; integers, each rounded half up once.

export interface SiteFigures {
  /** Power usage effectiveness × 1000 (1.08 → 1080). */
  pueMilli: number;
  /** Share of facility energy recovered as usable heat, per-mille. */
  heatReusePermille: number;
  /** Grid carbon intensity, grams CO2e per kWh. */
  gridGco2PerKwh: number;
}

export interface Footprint {
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
}

/** roundHalfUp divides two non-negative integers and rounds half up. */
export function divRoundHalfUp(numerator: number, denominator: number): number {
  return Math.floor((2 * numerator + denominator) / (2 * denominator));
}

/**
 * jobFootprint derives facility energy (IT × PUE), heat reused (facility × recoverable share) and
 * CO2e (facility kWh × grid intensity) from a job's IT energy in Wh.
 */
export function jobFootprint(itEnergyWh: number, site: SiteFigures): Footprint {
  const facilityEnergyWh = divRoundHalfUp(itEnergyWh * site.pueMilli, 1000);
  return {
    facilityEnergyWh,
    heatReusedWh: divRoundHalfUp(facilityEnergyWh * site.heatReusePermille, 1000),
    co2eGrams: divRoundHalfUp(facilityEnergyWh * site.gridGco2PerKwh, 1000),
  };
}
