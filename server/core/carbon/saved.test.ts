import { describe, expect, it } from 'vitest';
import { flatProfile } from './profiles';
import { co2eSavedByWaiting } from './saved';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('co2eSavedByWaiting', () => {
  const grid = { timeZone: 'UTC', gco2PerKwh: flatProfile(100).map((row) => row.map((v, h) => (h === 2 ? 400 : h === 3 ? 200 : v))), priceEurPerMwh: null };

  it('weighs the run by the hours it ran in against the hours from the submit instant', () => {
    // 2.5 kWh over 2.5 h = 1 kW: from 01:30 650 g, from 04:00 250 g.
    expect(co2eSavedByWaiting({ grid, facilityEnergyWh: 2500, runSeconds: 9000, submittedAtSeconds: at('2026-01-10T01:30:00Z'), startedAtSeconds: at('2026-01-10T04:00:00Z') })).toEqual({
      co2eAtOnceGrams: 650,
      co2eAsRunGrams: 250,
      savedGrams: 400,
    });
  });

  it('is negative when waiting emitted more', () => {
    expect(co2eSavedByWaiting({ grid, facilityEnergyWh: 1000, runSeconds: 3600, submittedAtSeconds: at('2026-01-10T00:00:00Z'), startedAtSeconds: at('2026-01-10T02:00:00Z') }).savedGrams).toBe(-300);
  });
});
