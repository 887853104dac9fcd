import { describe, expect, it } from 'vitest';
import {
  byteDaysByMonth,
  daysBetweenMeasurements,
  daysInMonth,
  gbOneDecimal,
  milliTbMonths,
  periodMilliTbMonths,
  periodStorageCents,
  storageAlertStep,
  storageCents,
  storageLevel,
  storageQuotaRefusal,
  usedPercent,
} from './storage';

const GB = 1_000_000_000;

describe('storageQuotaRefusal', () => {
  it.each([
    ['a write that fits', { usedBytes: 3 * GB, askedBytes: 4 * GB, grantedGb: 10 }, null],
    ['a write that fills the quota to the byte', { usedBytes: 6 * GB, askedBytes: 4 * GB, grantedGb: 10 }, null],
    ['an empty file into a full workspace', { usedBytes: 10 * GB, askedBytes: 0, grantedGb: 10 }, null],
    ['one byte too many', { usedBytes: 6 * GB, askedBytes: 4 * GB + 1, grantedGb: 10 }, { usedBytes: 6 * GB, askedBytes: 4 * GB + 1, grantedBytes: 10 * GB, leftBytes: 4 * GB }],
    ['the issue’s example: 12.4 GB into 3.1 GB left of 10', { usedBytes: 6_900_000_000, askedBytes: 12_400_000_000, grantedGb: 10 }, { usedBytes: 6_900_000_000, askedBytes: 12_400_000_000, grantedBytes: 10 * GB, leftBytes: 3_100_000_000 }],
    ['anything into a workspace a job filled past its quota', { usedBytes: 11 * GB, askedBytes: 0, grantedGb: 10 }, { usedBytes: 11 * GB, askedBytes: 0, grantedBytes: 10 * GB, leftBytes: 0 }],
    ['anything where nothing was granted', { usedBytes: 0, askedBytes: 1, grantedGb: 0 }, { usedBytes: 0, askedBytes: 1, grantedBytes: 0, leftBytes: 0 }],
  ] as const)('%s', (_label, input, expected) => {
    expect(storageQuotaRefusal(input)).toEqual(expected);
  });

  it('refuses figures that are not whole non-negative bytes', () => {
    expect(() => storageQuotaRefusal({ usedBytes: -1, askedBytes: 0, grantedGb: 1 })).toThrow(RangeError);
    expect(() => storageQuotaRefusal({ usedBytes: 0, askedBytes: 0.5, grantedGb: 1 })).toThrow(RangeError);
  });

  it.each([
    [12_400_000_000, 12.4],
    [3_149_999_999, 3.1],
    [3_150_000_000, 3.2],
    [0, 0],
    [49_999_999, 0],
  ])('gbOneDecimal(%d) = %d', (bytes, gb) => {
    expect(gbOneDecimal(bytes)).toBe(gb);
  });
});

describe('storage alerts, once per crossing', () => {
  it.each([
    ['below 80 %', 0, 7.99, 0, null],
    ['crossing 80 %', 0, 8, 80, 80],
    ['still above 80 %: no second alert', 80, 9, 80, null],
    ['crossing 100 % after 80 %', 80, 10, 100, 100],
    ['from below 80 % straight past 100 %: the 100 % alert only', 0, 12, 100, 100],
    ['above 100 % again: nothing', 100, 11, 100, null],
    ['falling back between 80 and 100 %: the kept level drops, no alert', 100, 9, 80, null],
    ['falling below 80 %: reset', 80, 5, 0, null],
  ] as const)('%s', (_label, alertedPercent, usedGb, level, alert) => {
    expect(storageAlertStep({ alertedPercent, usedBytes: Math.round(usedGb * GB), grantedGb: 10 })).toEqual({ level, alert });
  });

  it('alerts again after the usage fell below a share and crossed it again', () => {
    let alerted = 0;
    const sent: number[] = [];
    for (const usedGb of [8.5, 9, 6, 8.2, 8.3]) {
      const step = storageAlertStep({ alertedPercent: alerted, usedBytes: usedGb * GB, grantedGb: 10 });
      if (step.alert) sent.push(step.alert);
      alerted = step.level;
    }
    expect(sent).toEqual([80, 80]);
  });

  it('counts any usage without a quota as over it, and nothing as nothing', () => {
    expect(storageLevel(1, 0)).toBe(100);
    expect(storageLevel(0, 0)).toBe(0);
    expect(usedPercent(1, 0)).toBeNull();
    expect(usedPercent(8_499_999_999, 10)).toBe(84);
  });
});

describe('TB-months', () => {
  it('knows the days of each month', () => {
    expect([daysInMonth('2026-01'), daysInMonth('2026-02'), daysInMonth('2028-02'), daysInMonth('2026-04')]).toEqual([31, 28, 29, 30]);
    expect(() => daysInMonth('2026-13')).toThrow(RangeError);
  });

  it('is 1 TB held for a whole month, whatever its length', () => {
    for (const [month, days] of [['2026-02', 28], ['2026-03', 31]] as const) {
      const byteDays = 10n ** 12n * BigInt(days);
      expect(milliTbMonths(byteDays, daysInMonth(month))).toBe(1000);
      expect(storageCents(byteDays, days, 2000)).toBe(2000);
    }
  });

  it('rounds the figure and the price half up once, from the exact byte-days', () => {
    // 1.2345 TB-months in a 30-day month: 1.2345 × 30 × 10^12 byte-days.
    const byteDays = 37_035_000_000_000n;
    expect(milliTbMonths(byteDays, 30)).toBe(1235); // 1.2345 → 1.235
    expect(storageCents(byteDays, 30, 2000)).toBe(2469); // 24.69 exactly
    expect(storageCents(byteDays, 30, 1999)).toBe(2468); // 24.677655 → 24.68
    // Half a cent rounds up: 0.00025 TB-months × €20 = 0.5 cent.
    expect(storageCents(7_500_000_000n, 30, 2000)).toBe(1);
    expect(storageCents(7_499_999_999n, 30, 2000)).toBe(0);
  });

  it('keeps petabyte-months exact (beyond 2^53 byte-days)', () => {
    const byteDays = 5n * 10n ** 15n * 31n; // 5 PB for all of March
    expect(byteDays > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(milliTbMonths(byteDays, 31)).toBe(5_000_000);
    expect(storageCents(byteDays, 31, 2000)).toBe(10_000_000);
  });

  it('sums a period month by month, each month rounded as its invoice line is', () => {
    const days = [
      { day: '2026-01-31', bytes: 10n ** 12n }, // 1 TB-day of 31: 0.032258 → 0.032
      { day: '2026-02-01', bytes: 2 * 10 ** 12 }, // 2 TB-days of 28
      { day: '2026-02-02', bytes: 10 ** 12 }, // 1 TB-day of 28: together 3/28 = 0.107142 → 0.107
    ];
    expect([...byteDaysByMonth(days)]).toEqual([
      ['2026-01', 10n ** 12n],
      ['2026-02', 3n * 10n ** 12n],
    ]);
    expect(periodMilliTbMonths(days)).toBe(32 + 107);
    // €20: 0.6452 → 65 cents; 2.142857 → 214 cents.
    expect(periodStorageCents(days, 2000)).toBe(65 + 214);
  });

  it('lists the days between two measurements, which keep the earlier one', () => {
    expect(daysBetweenMeasurements('2026-03-29', '2026-04-02')).toEqual(['2026-03-30', '2026-03-31', '2026-04-01']);
    expect(daysBetweenMeasurements('2026-03-29', '2026-03-30')).toEqual([]);
    expect(daysBetweenMeasurements('2026-03-29', '2026-03-29')).toEqual([]);
    expect(daysBetweenMeasurements('2020-01-01', '2026-03-29', 3)).toEqual(['2026-03-26', '2026-03-27', '2026-03-28']);
  });
});
