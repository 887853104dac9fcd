import { describe, expect, it } from 'vitest';
import { flatProfile, siteGrid, type SiteGrid } from './profiles';
import { gridTimeline, jobFacilityPowerW, lowCarbonStart, runFootprint } from './start';

const at = (iso: string) => Date.parse(iso) / 1000;
const HOUR = 3600;

/** A hand-made grid in UTC: 100 g/kWh, but 400 at 02:00 and 200 at 03:00; 100 €/MWh, but 300 at 02:00. */
const handGrid: SiteGrid = {
  timeZone: 'UTC',
  gco2PerKwh: flatProfile(100).map((row) => row.map((v, h) => (h === 2 ? 400 : h === 3 ? 200 : v))),
  priceEurPerMwh: flatProfile(100).map((row) => row.map((v, h) => (h === 2 ? 300 : v))),
};

describe('jobFacilityPowerW', () => {
  it('is the modelled IT draw times the PUE', () => {
    // 8 × (70 + 630 × 0.9 = 637 W) + 1,500 W base = 6,596 W IT; × 1.08 = 7,123.68 → 7,124 W.
    expect(jobFacilityPowerW({ gpusPerNode: 8, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500 }, 8, 90, 1080)).toBe(7124);
    // 1 of 8 GPUs: 637 + 187.5 = 824.5 W IT; × 1.04 = 857.48 → 857 W.
    expect(jobFacilityPowerW({ gpusPerNode: 8, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500 }, 1, 90, 1040)).toBe(857);
  });
});

describe('runFootprint', () => {
  it('integrates across hour boundaries: 2.5 h from 01:30 spans hours 1–3 partly', () => {
    const now = at('2026-01-10T01:30:00Z');
    const timeline = gridTimeline(handGrid, now, now + 10 * HOUR);
    // 1 kW: 0.5 kWh × 100 + 1 kWh × 400 + 1 kWh × 200 = 650 g; 0.5 × 100 + 1 × 300 + 1 × 100 = 450 €/MWh·kWh = €0.45.
    expect(runFootprint(timeline, 1000, now, 2.5 * HOUR)).toEqual({ co2eGrams: 650, energyCostCents: 45 });
    // From 04:00: 2.5 kWh × 100 = 250 g, 25 cents.
    expect(runFootprint(timeline, 1000, now + 2.5 * HOUR, 2.5 * HOUR)).toEqual({ co2eGrams: 250, energyCostCents: 25 });
    // Rounded half up once: 1 W for 1 h at 100 g/kWh is 0.1 g → 0; 5 W → 0.5 g → 1.
    expect(runFootprint(timeline, 5, now + 2.5 * HOUR, HOUR).co2eGrams).toBe(1);
  });

  it('gives no cost where the site has no price', () => {
    const timeline = gridTimeline({ ...handGrid, priceEurPerMwh: null }, 0, HOUR);
    expect(runFootprint(timeline, 1000, 0, HOUR)).toEqual({ co2eGrams: 100, energyCostCents: null });
  });
});

describe('lowCarbonStart', () => {
  const job = { grid: handGrid, facilityPowerW: 1000, runtimeSeconds: 2.5 * HOUR, nowSeconds: at('2026-01-10T01:30:00Z') };

  it('moves the start to the cleanest whole hour in the window', () => {
    // Starts: 01:30 → 650 g, 02:00 → 400 + 200 + 50 = 650 g, 03:00 → 200 + 100 + 50 = 350 g, 04:00 → 250 g.
    expect(lowCarbonStart({ ...job, windowHours: 3 })).toEqual({
      beginSeconds: at('2026-01-10T04:00:00Z'),
      co2eNowGrams: 650,
      co2eAtBeginGrams: 250,
      savedGrams: 400,
      savedPercent: 62, // 400 / 650 = 61.5 %
      energyCostNowCents: 45,
      energyCostAtBeginCents: 25,
    });
  });

  it('keeps the earliest start on a tie, and now when it may not wait', () => {
    // In a 1-hour window 02:00 ties with now (650 g): now wins.
    expect(lowCarbonStart({ ...job, windowHours: 1 })).toMatchObject({ beginSeconds: job.nowSeconds, savedGrams: 0, savedPercent: 0 });
    expect(lowCarbonStart({ ...job, windowHours: 0 })).toMatchObject({ beginSeconds: job.nowSeconds, savedGrams: 0 });
    // In 2 hours, 03:00 is the best start there is.
    expect(lowCarbonStart({ ...job, windowHours: 2 })).toMatchObject({ beginSeconds: at('2026-01-10T03:00:00Z'), co2eAtBeginGrams: 350 });
  });

  // 8 H100 in Jena: 7,124 W at the meter (jobFacilityPowerW above), 2 h.
  const jena = { grid: siteGrid({ country: 'DE', gridGco2PerKwh: 380, energyPriceEurPerMwh: 190 }), facilityPowerW: 7124, runtimeSeconds: 2 * HOUR };

  it('a German job at 18:00 in January with 12 h to wait moves to the night minimum, 02:00', () => {
    // January: 18:00 527, 19:00 536 g/kWh; the cheapest two hours by 06:00 are 02:00 416 + 03:00 411
    // (03:00 + 04:00 is as low, 827: the earlier wins). 7,124 W × 1,063 / 1,000 = 7,572.8 → 7,573 g;
    // 7,124 × 827 / 1,000 = 5,891.5 → 5,892 g; 1,681 g saved = 22.2 %.
    const start = lowCarbonStart({ ...jena, nowSeconds: at('2026-01-14T17:00:00Z'), windowHours: 12 });
    expect(start).toMatchObject({ beginSeconds: at('2026-01-15T01:00:00Z'), co2eNowGrams: 7573, co2eAtBeginGrams: 5892, savedGrams: 1681, savedPercent: 22 });
    // The price follows the intensity: the night is cheaper too.
    expect(start.energyCostAtBeginCents!).toBeLessThan(start.energyCostNowCents!);
  });

  it('a German job at 06:00 in June moves to the solar dip at noon', () => {
    // June 12:00 and 13:00: 195 g/kWh each; 06:00 323 + 07:00 336 = 659 → 7,124 × 659 / 1,000 = 4,694.7 → 4,695 g.
    const start = lowCarbonStart({ ...jena, nowSeconds: at('2026-06-15T04:00:00Z'), windowHours: 12 });
    expect(start).toMatchObject({ beginSeconds: at('2026-06-15T10:00:00Z'), co2eNowGrams: 4695, co2eAtBeginGrams: 2778 });
  });

  it("a Finnish job at 18:00 saves little: Finland's grid is low and flat", () => {
    // January Kajaani: 18:00 + 19:00 = 75 + 75; 00:00 + 01:00 = 67 + 68: 15 of 150 g/kWh-hours, 10 %.
    const kajaani = siteGrid({ country: 'FI', gridGco2PerKwh: 60, energyPriceEurPerMwh: 90 });
    const start = lowCarbonStart({ ...jena, grid: kajaani, nowSeconds: at('2026-01-14T16:00:00Z'), windowHours: 12 });
    expect(start.beginSeconds).toBe(at('2026-01-14T22:00:00Z'));
    expect(start.savedPercent).toBe(10);
    expect(start.savedGrams).toBeLessThan(120);
  });

  it('a start between hours is integrated exactly (18:17 for 1 h)', () => {
    // January Berlin 18:17–19:17: 43 min at 527 + 17 min at 536 = (2580 × 527 + 1020 × 536) s·g/kWh; × 3,600 W / 3.6e6.
    const start = lowCarbonStart({ ...jena, facilityPowerW: 3600, runtimeSeconds: HOUR, nowSeconds: at('2026-01-14T17:17:00Z'), windowHours: 0 });
    expect(start.co2eNowGrams).toBe(Math.round((2580 * 527 + 1020 * 536) / 1000));
  });
});
