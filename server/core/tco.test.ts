import { describe, expect, it } from 'vitest';
import { breakEvenBp, costCurve, CURVE_POINTS_BP, deliveredGpuSeconds, fractionToBp, itEnergyWhPerYear, overheadSharesCents, tcoAt, type TcoClass, type TcoSite } from './tco';

// A small class worked by hand: 2 nodes × 4 GPUs = 8 GPUs; GPU 100 W idle, 600 W max; node base 1,000 W.
const RC: TcoClass = { nodes: 2, gpusPerNode: 4, gpuIdlePowerW: 100, gpuMaxPowerW: 600, nodeBasePowerW: 1000, capitalCostPerNodeEur: 100_000, depreciationYears: 5, maintenancePerNodePerYearEur: 5000 };
// PUE 1.2, half the facility energy reused as heat; €200/MWh, heat worth €50/MWh.
const SITE: TcoSite = { pueMilli: 1200, heatReusePermille: 500, energyPriceEurPerMwh: 200, heatValueEurPerMwh: 50, overheadPerYearEur: 80_000 };
// The site has another class of 8 GPUs: by GPU count this one carries half of the €80,000, 4,000,000 cents.
const OVERHEAD = 4_000_000;

describe('TCO per delivered GPU-hour', () => {
  it('apportions a site’s overhead by GPU count, adding up exactly', () => {
    expect(overheadSharesCents(80_000, [32, 32])).toEqual([4_000_000, 4_000_000]);
    // €1 over 3 equal classes: 34 + 33 + 33 cents (largest remainder, ties to the first).
    expect(overheadSharesCents(1, [8, 8, 8])).toEqual([34, 33, 33]);
    expect(overheadSharesCents(100, [0, 0])).toEqual([0, 0]);
  });

  it('models IT energy: nodes’ base and idle GPUs all year, busy GPUs at 90 % of their range', () => {
    // Fixed: 2 × 1,000 + 8 × 100 = 2,800 W × 8,760 h = 24,528,000 Wh.
    expect(itEnergyWhPerYear(RC, 0)).toBe(24_528_000);
    // At 50 %: + 8 × 500 W × 0.9 × 0.5 = 1,800 W × 8,760 h = 15,768,000 Wh.
    expect(itEnergyWhPerYear(RC, 5000)).toBe(40_296_000);
    // 8 GPUs × 8,760 h × 50 % = 35,040 GPU-h.
    expect(deliveredGpuSeconds(8, 5000)).toBe(35_040 * 3600);
  });

  it('computes the yearly cost and the cost per delivered GPU-hour at 50 % by hand', () => {
    const at = tcoAt(RC, SITE, OVERHEAD, 5000);
    expect(at.yearly).toEqual({
      capitalCents: 4_000_000, // 2 × €100,000 ÷ 5 years
      maintenanceCents: 1_000_000, // 2 × €5,000
      itEnergyWh: 40_296_000,
      facilityEnergyWh: 48_355_200, // × 1.2
      heatReusedWh: 24_177_600, // × 0.5
      electricityCents: 967_104, // 48,355.2 kWh × €0.20
      heatCreditCents: 120_888, // 24,177.6 kWh × €0.05
      energyCents: 846_216,
      overheadCents: 4_000_000,
      totalCents: 9_846_216,
    });
    // 9,846,216 cents ÷ 35,040 GPU-h = 280.9993 → 281 cents; parts by largest remainder:
    // 114.157 + 28.539 + 24.150 + 114.157 → 114, 29, 24, 114.
    expect(at.perGpuHour).toEqual({ capitalCents: 114, maintenanceCents: 29, energyCents: 24, overheadCents: 114, totalCents: 281 });
  });

  it('spreads the fixed costs over fewer hours at lower utilisation, and delivers nothing at 0 %', () => {
    const curve = costCurve(RC, SITE, OVERHEAD, CURVE_POINTS_BP);
    expect(curve[0]!.utilisationBp).toBe(1000);
    expect(curve.at(-1)!.utilisationBp).toBe(10_000);
    for (let i = 1; i < curve.length; i++) expect(curve[i]!.totalCents).toBeLessThan(curve[i - 1]!.totalCents);
    expect(tcoAt(RC, SITE, OVERHEAD, 0).perGpuHour).toBeNull();
    expect(() => tcoAt(RC, SITE, OVERHEAD, 10_001)).toThrow(RangeError);
  });

  it('finds the break-even utilisation per tariff', () => {
    // cost(u) = (F + E0 + E1·u) ÷ (H·u) with F = 9,000,000 (capital, maintenance, overhead),
    // E0 = 515,088 (net energy at 0 %), E1 = 662,256 (net energy per unit of u), H = 70,080 GPU-h.
    // Tariff 300: u = 9,515,088 ÷ (300 × 70,080 − 662,256) = 0.467302 → 46.74 %.
    expect(breakEvenBp(RC, SITE, OVERHEAD, 300)).toBe(4674);
    // Tariff 281, the cost at 50 % computed above: 0.499999 → 50.00 %.
    expect(breakEvenBp(RC, SITE, OVERHEAD, 281)).toBe(5000);
    // Tariff 130: u would be 1.126 — never within 100 %.
    expect(breakEvenBp(RC, SITE, OVERHEAD, 130)).toBeNull();
    // A tariff below the marginal energy cost never breaks even.
    expect(breakEvenBp(RC, SITE, OVERHEAD, 5)).toBeNull();
  });

  it('turns the dashboard’s fraction into basis points within 0..100 %', () => {
    expect(fractionToBp(0.123456)).toBe(1235);
    expect(fractionToBp(1.2)).toBe(10_000);
    expect(fractionToBp(0)).toBe(0);
    expect(fractionToBp(Number.NaN)).toBe(0);
  });
});
