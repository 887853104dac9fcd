import { describe, expect, it } from 'vitest';
import { FINLAND_GCO2_PER_KWH, GERMANY_GCO2_PER_KWH, SWITZERLAND_GCO2_PER_KWH } from './demo-profiles';
import { flatProfile, isHourlyProfile, priceProfile, profileSum, scaleProfile, siteGrid } from './profiles';

describe('demo profiles', () => {
  it.each([
    ['Germany', GERMANY_GCO2_PER_KWH, 380],
    ['Finland', FINLAND_GCO2_PER_KWH, 60],
    ['Switzerland', SWITZERLAND_GCO2_PER_KWH, 40],
  ])('%s: 12 × 24 integers whose mean is the site figure %i g/kWh', (_, profile, mean) => {
    expect(isHourlyProfile(profile)).toBe(true);
    expect(profileSum(profile)).toBe(mean * 288);
  });

  it('Germany: winter above summer, a solar dip at noon in summer, the evening above the night', () => {
    const dayMean = (m: number) => profileSum([GERMANY_GCO2_PER_KWH[m]!]) / 24;
    expect(dayMean(0)).toBeGreaterThan(dayMean(6));
    const june = GERMANY_GCO2_PER_KWH[5]!;
    expect(Math.min(...june)).toBe(june[12]);
    const january = GERMANY_GCO2_PER_KWH[0]!;
    expect(january[19]).toBe(Math.max(...january));
    expect(january[19]! - january[3]!).toBeGreaterThan(100);
  });

  it('Finland is low and nearly flat: within ±20 % of its mean every hour', () => {
    for (const v of FINLAND_GCO2_PER_KWH.flat()) expect(Math.abs(v - 60)).toBeLessThanOrEqual(15);
  });
});

describe('scaleProfile', () => {
  it('keeps the shape and moves the mean', () => {
    const profile = flatProfile(10).map((row, m) => (m === 0 ? row.map((_, h) => (h < 12 ? 0 : 20)) : row));
    const scaled = scaleProfile(profile, 20);
    expect(scaled[0]![0]).toBe(0);
    expect(scaled[0]![12]).toBe(40);
    expect(scaled[1]![0]).toBe(20);
    expect(profileSum(scaled)).toBe(20 * 288);
  });

  it('leaves a profile already at the mean as it is', () => {
    expect(scaleProfile(GERMANY_GCO2_PER_KWH, 380)).toBe(GERMANY_GCO2_PER_KWH);
  });
});

describe('priceProfile', () => {
  it('makes half the price follow the intensity: P × (Ī + I) / (2 Ī)', () => {
    // Ī = 24: an hour at 0 g/kWh costs P/2, an hour at 48 g/kWh 1.5 P.
    const intensity = flatProfile(24).map((row, m) => (m === 0 ? row.map((_, h) => (h < 12 ? 0 : 48)) : row));
    const price = priceProfile(intensity, 100);
    expect(price[0]![0]).toBe(50);
    expect(price[0]![12]).toBe(150);
    expect(price[1]).toEqual(Array.from({ length: 24 }, () => 100));
  });
});

describe('siteGrid', () => {
  it("uses the country's demo profile scaled to the site's mean, its time zone, and the price shaped by it", () => {
    const grid = siteGrid({ country: 'DE', gridGco2PerKwh: 190, energyPriceEurPerMwh: 190 });
    expect(grid.timeZone).toBe('Europe/Berlin');
    // Each value rounded half up: the mean within half a gram of the site's figure.
    expect(Math.abs(profileSum(grid.gco2PerKwh) - 190 * 288)).toBeLessThanOrEqual(144);
    expect(grid.gco2PerKwh[0]![19]).toBe(268); // 536 / 2
    expect(grid.priceEurPerMwh![0]![19]!).toBeGreaterThan(grid.priceEurPerMwh![0]![3]!);
  });

  it("takes the site's own profile and time zone as given; without a price, no price", () => {
    const own = flatProfile(123);
    const grid = siteGrid({ country: 'DE', gridGco2PerKwh: 380, timeZone: 'UTC', gridProfile: own });
    expect(grid).toEqual({ timeZone: 'UTC', gco2PerKwh: own, priceEurPerMwh: null });
  });

  it('falls back to the flat annual figure for a country without a demo profile', () => {
    expect(siteGrid({ country: 'IS', gridGco2PerKwh: 28 }).gco2PerKwh).toEqual(flatProfile(28));
  });
});
