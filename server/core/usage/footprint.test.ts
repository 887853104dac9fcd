import { describe, expect, it } from 'vitest';
import { divRoundHalfUp, jobFootprint } from './footprint';

describe('jobFootprint', () => {
  it('derives facility energy, reused heat and CO2e to the watt-hour and gram', () => {
    // Jena: PUE 1.08, 70 % heat recovered, 380 g/kWh. 5,640 Wh IT → 6,091.2 → 6,091 Wh facility;
    // heat 6,091 × 0.7 = 4,263.7 → 4,264 Wh; CO2e 6.091 kWh × 380 = 2,314.58 → 2,315 g.
    expect(jobFootprint(5640, { pueMilli: 1080, heatReusePermille: 700, gridGco2PerKwh: 380 })).toEqual({ facilityEnergyWh: 6091, heatReusedWh: 4264, co2eGrams: 2315 });
  });
  it('gives zero for a job that used nothing', () => {
    expect(jobFootprint(0, { pueMilli: 1200, heatReusePermille: 0, gridGco2PerKwh: 40 })).toEqual({ facilityEnergyWh: 0, heatReusedWh: 0, co2eGrams: 0 });
  });
  it('rounds half up', () => {
    expect(divRoundHalfUp(5, 2)).toBe(3);
    expect(divRoundHalfUp(4, 3)).toBe(1);
    expect(divRoundHalfUp(5, 3)).toBe(2);
  });
});
