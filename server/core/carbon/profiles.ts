// A site's grid over a typical day: which profile of carbon intensity and energy price applies, in
// which time zone. Pure: the catalogue's figures come in as values.
import { DEMO_PROFILES_BY_COUNTRY, type HourlyProfile } from './demo-profiles';

export type { HourlyProfile } from './demo-profiles';

const MONTHS = 12;
const HOURS = 24;

/** What the catalogue says about a site's grid (server/catalogue.ts). */
export interface SiteGridConfig {
  country: string;
  /** Annual mean grid intensity, g CO2e/kWh: the figure a job's CO2e is settled with. */
  gridGco2PerKwh: number;
  /** Mean energy price at the meter, €/MWh; none configured: no cost figures. */
  energyPriceEurPerMwh?: number | undefined;
  /** IANA time zone the profiles' hours are in; default from the country. */
  timeZone?: string | undefined;
  /** An hourly profile of the site's own (12 × 24 g/kWh, local time), used as given. */
  gridProfile?: HourlyProfile | undefined;
}

/** A site's grid, resolved: hourly intensity and price (12 × 24, local time) and the time zone. */
export interface SiteGrid {
  timeZone: string;
  gco2PerKwh: HourlyProfile;
  /** €/MWh per month and hour, or null when the site has no energy price. */
  priceEurPerMwh: HourlyProfile | null;
}

const TIME_ZONE_OF_COUNTRY: Readonly<Record<string, string>> = {
  AT: 'Europe/Vienna',
  BE: 'Europe/Brussels',
  CH: 'Europe/Zurich',
  CZ: 'Europe/Prague',
  DE: 'Europe/Berlin',
  DK: 'Europe/Copenhagen',
  ES: 'Europe/Madrid',
  FI: 'Europe/Helsinki',
  FR: 'Europe/Paris',
  IT: 'Europe/Rome',
  NL: 'Europe/Amsterdam',
  NO: 'Europe/Oslo',
  PL: 'Europe/Warsaw',
  SE: 'Europe/Stockholm',
};

/** timeZoneOfCountry names the time zone of a country's sites (UTC for a country not listed: configure `timeZone`). */
export function timeZoneOfCountry(country: string): string {
  return TIME_ZONE_OF_COUNTRY[country] ?? 'UTC';
}

/** isHourlyProfile tells whether a value is 12 rows of 24 non-negative integers. */
export function isHourlyProfile(profile: readonly (readonly number[])[]): boolean {
  return profile.length === MONTHS && profile.every((row) => row.length === HOURS && row.every((v) => Number.isInteger(v) && v >= 0));
}

/** profileSum adds up a profile's 288 values (its mean is the sum / 288, each month weighing the same). */
export function profileSum(profile: HourlyProfile): number {
  return profile.reduce((sum, row) => sum + row.reduce((a, b) => a + b, 0), 0);
}

/** scaleProfile keeps a profile's shape and moves its mean to `meanValue` (each value rounded half up). */
export function scaleProfile(profile: HourlyProfile, meanValue: number): HourlyProfile {
  const sum = profileSum(profile);
  if (sum === 0) return flatProfile(meanValue);
  const target = meanValue * MONTHS * HOURS;
  if (target === sum) return profile;
  return profile.map((row) => row.map((v) => Math.floor((2 * v * target + sum) / (2 * sum))));
}

/** flatProfile is the same value every hour of the year. */
export function flatProfile(value: number): HourlyProfile {
  return Array.from({ length: MONTHS }, () => Array.from({ length: HOURS }, () => value));
}

/**
 * priceProfile shapes a mean price by the grid's intensity: half of the price (network charges, taxes)
 * is flat, the other half (the wholesale energy) follows the intensity relative to the month's daily
 * mean Ī, so price(h) = P × (Ī + I(h)) / (2 Ī). Dirty hours are the expensive ones, as when gas sets
 * the price; a month with a flat intensity has a flat price.
 */
export function priceProfile(intensity: HourlyProfile, meanPriceEurPerMwh: number): HourlyProfile {
  return intensity.map((row) => {
    const daySum = row.reduce((a, b) => a + b, 0);
    if (daySum === 0) return row.map(() => meanPriceEurPerMwh);
    // P × (S/24 + I) / (2 S/24) = P × (S + 24 I) / (2 S), rounded half up.
    return row.map((v) => Math.floor((meanPriceEurPerMwh * (daySum + HOURS * v) + daySum) / (2 * daySum)));
  });
}

/**
 * siteGrid resolves a site's grid: its own profile if the catalogue gives one, else the demo profile of
 * its country scaled so its mean is the site's `gridGco2PerKwh` (the catalogue's figure stays the annual
 * mean), else that figure every hour; the price shaped by the intensity (`priceProfile`).
 */
export function siteGrid(site: SiteGridConfig): SiteGrid {
  const demo = DEMO_PROFILES_BY_COUNTRY[site.country];
  const gco2PerKwh = site.gridProfile ?? (demo ? scaleProfile(demo, site.gridGco2PerKwh) : flatProfile(site.gridGco2PerKwh));
  return {
    timeZone: site.timeZone ?? timeZoneOfCountry(site.country),
    gco2PerKwh,
    priceEurPerMwh: site.energyPriceEurPerMwh === undefined ? null : priceProfile(gco2PerKwh, site.energyPriceEurPerMwh),
  };
}
