import { describe, expect, it } from 'vitest';
import { APPORTIONED, apportionUsage, largestRemainder, runDays, type RunUsage } from './apportion';

const at = (iso: string) => new Date(iso);
const usage = (startedAt: string | null, endedAt: string, q: Partial<RunUsage> = {}): RunUsage => ({
  startedAt: startedAt ? at(startedAt) : null,
  endedAt: at(endedAt),
  waitSeconds: startedAt ? 600 : null,
  gpuSeconds: 0,
  costCents: 0,
  energyWh: 0,
  facilityEnergyWh: 0,
  heatReusedWh: 0,
  co2eGrams: 0,
  ...q,
});

describe('largestRemainder', () => {
  it.each([
    // total, weights, parts
    [10, [1, 1, 1], [4, 3, 3]], // 3⅓ each: the one left over goes to the first on a tie
    [10, [1, 2], [3, 7]], // 3⅓ and 6⅔: the larger remainder wins
    [100, [1, 1], [50, 50]],
    [0, [5, 7], [0, 0]],
    [1, [1, 1, 1, 1], [1, 0, 0, 0]],
    [7, [0, 3, 0], [0, 7, 0]],
    [5, [3, 3, 4], [2, 1, 2]], // 1.5, 1.5, 2 → 1, 1, 2 and one left: the first of the tied halves
    [9_000_000_000, [86_400_000, 86_400_000, 1], [4_499_999_974, 4_499_999_974, 52]],
  ])('%i over %j → %j', (total, weights, parts) => {
    const got = largestRemainder(total, weights);
    expect(got).toEqual(parts);
    expect(got.reduce((s, p) => s + p, 0)).toBe(total);
  });
  it('refuses weights that are all zero', () => {
    expect(() => largestRemainder(1, [0, 0])).toThrow(RangeError);
  });
});

describe('runDays', () => {
  it.each([
    ['2026-11-30T22:00:00Z', '2026-12-01T03:00:00Z', [['2026-11-30', 7_200_000], ['2026-12-01', 10_800_000]]],
    ['2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z', [['2026-12-01', 3_600_000]]],
    ['2026-12-01T23:00:00Z', '2026-12-02T00:00:00Z', [['2026-12-01', 3_600_000]]], // ends on midnight: nothing on the 2nd
    ['2026-12-30T12:00:00Z', '2027-01-01T06:00:00Z', [['2026-12-30', 43_200_000], ['2026-12-31', 86_400_000], ['2027-01-01', 21_600_000]]],
  ])('%s – %s', (start, end, days) => {
    expect(runDays(Date.parse(start), Date.parse(end)).map((d) => [d.day, d.ms])).toEqual(days);
  });
});

describe('apportionUsage', () => {
  it('splits a job across midnight by the hours in each day; the job and its wait on the day it ended', () => {
    // 8 GPUs from 22:00 to 04:00: 2 h before midnight, 4 h after; 1,000 ct, 9,001 Wh, 9,721 Wh facility, 6,805 Wh heat, 3,694 g.
    const parts = apportionUsage(usage('2026-11-30T22:00:00Z', '2026-12-01T04:00:00Z', { gpuSeconds: 172_800, costCents: 1000, energyWh: 9001, facilityEnergyWh: 9721, heatReusedWh: 6805, co2eGrams: 3694 }));
    expect(parts).toEqual([
      { day: '2026-11-30', jobs: 0, waitSeconds: 0, startedJobs: 0, gpuSeconds: 57_600, costCents: 333, energyWh: 3000, facilityEnergyWh: 3240, heatReusedWh: 2268, co2eGrams: 1231 },
      { day: '2026-12-01', jobs: 1, waitSeconds: 600, startedJobs: 1, gpuSeconds: 115_200, costCents: 667, energyWh: 6001, facilityEnergyWh: 6481, heatReusedWh: 4537, co2eGrams: 2463 },
    ]);
  });
  it.each([
    ['a job within one day', '2026-12-01T01:00:00Z', '2026-12-01T05:00:00Z', ['2026-12-01']],
    ['a job ending at midnight (count on the next day, no usage there)', '2026-12-01T20:00:00Z', '2026-12-02T00:00:00Z', ['2026-12-01', '2026-12-02']],
    ['a job over three days', '2026-12-01T20:00:00Z', '2026-12-03T01:00:00Z', ['2026-12-01', '2026-12-02', '2026-12-03']],
    ['a job cancelled before it started', null, '2026-12-04T08:00:00Z', ['2026-12-04']],
    ['a job that ran for no time', '2026-12-04T08:00:00Z', '2026-12-04T08:00:00Z', ['2026-12-04']],
  ])('%s: parts sum to the totals exactly', (_name, start, end, days) => {
    const job = usage(start, end, { gpuSeconds: 1_234_567, costCents: 98_765, energyWh: 54_321, facilityEnergyWh: 58_667, heatReusedWh: 41_067, co2eGrams: 22_293 });
    const parts = apportionUsage(job);
    expect(parts.map((p) => p.day)).toEqual(days);
    for (const q of APPORTIONED) expect(parts.reduce((s, p) => s + p[q], 0)).toBe(job[q]);
    expect(parts.reduce((s, p) => s + p.jobs, 0)).toBe(1);
    expect(parts.at(-1)).toMatchObject({ jobs: 1, startedJobs: start ? 1 : 0, waitSeconds: start ? 600 : 0 });
  });
});
