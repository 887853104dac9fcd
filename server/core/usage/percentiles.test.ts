import { describe, expect, it } from 'vitest';
import { addDays, daysOf, defaultRange, fixedDecimal, isDay, kwhPerGpuHour, MAX_RANGE_DAYS, nearestRank, pue, rangeDays, rangePresets, rangeProblem, utilisation } from './percentiles';

describe('nearestRank', () => {
  const ten = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
  it('returns the ⌈p·n⌉-th value of a sorted array', () => {
    expect(nearestRank(ten, 0.5)).toBe(50);
    expect(nearestRank(ten, 0.9)).toBe(90);
    expect(nearestRank(ten, 0.91)).toBe(100);
    expect(nearestRank(ten, 1)).toBe(100);
    expect(nearestRank(ten, 0.01)).toBe(10);
    expect(nearestRank([...ten, 110], 0.9)).toBe(100);
  });
  it('is not fooled by binary floating point (0.7 × 10 is 7.000000000000001)', () => {
    expect(nearestRank(ten, 0.7)).toBe(70);
  });
  it('handles one value and none', () => {
    expect(nearestRank([7], 0.5)).toBe(7);
    expect(nearestRank([7], 0.9)).toBe(7);
    expect(nearestRank([], 0.5)).toBeNull();
  });
  it('refuses a percentile outside (0, 1]', () => {
    expect(() => nearestRank(ten, 0)).toThrow(RangeError);
    expect(() => nearestRank(ten, 1.5)).toThrow(RangeError);
  });
});

describe('utilisation and energy', () => {
  it('divides used GPU-seconds by capacity × seconds', () => {
    // 128 GPUs for a day = 11,059,200 GPU-seconds; a quarter of it used.
    expect(utilisation(2_764_800, 128, 86_400)).toBe(0.25);
    expect(utilisation(0, 128, 86_400)).toBe(0);
    expect(utilisation(100, 0, 86_400)).toBe(0);
    expect(utilisation(2 * 11_059_200, 128, 86_400)).toBe(2);
  });
  it('gives kWh per GPU-hour, null without GPU time', () => {
    expect(kwhPerGpuHour(7000, 36_000)).toBeCloseTo(0.7, 12); // 7 kWh over 10 GPU-hours
    expect(kwhPerGpuHour(0, 3600)).toBe(0);
    expect(kwhPerGpuHour(500, 0)).toBeNull();
  });
});

describe('ranges', () => {
  it('validates calendar days', () => {
    expect(isDay('2024-02-29')).toBe(true);
    expect(isDay('2025-02-29')).toBe(false);
    expect(isDay('2025-13-01')).toBe(false);
    expect(isDay('25-01-01')).toBe(false);
  });
  it('counts and lists the days of an inclusive range', () => {
    expect(rangeDays('2026-03-01', '2026-03-01')).toBe(1);
    expect(rangeDays('2026-03-28', '2026-04-02')).toBe(6);
    expect(daysOf('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(defaultRange('2026-03-30')).toEqual({ from: '2026-03-01', to: '2026-03-30' });
  });
  it('names the field and the problem', () => {
    expect(rangeProblem('2026-03-01', '2026-03-31')).toBeNull();
    expect(rangeProblem('2026-03-02', '2026-03-01')).toEqual({ field: 'to', problem: 'toBeforeFrom' });
    expect(rangeProblem('1990-01-01', '2040-01-01')).toEqual({ field: 'to', problem: 'tooLong' });
    expect(rangeProblem('2024-01-01', '2025-12-31')).toBeNull(); // 731 days, leap year included
    expect(rangeDays('2024-01-01', '2025-12-31')).toBe(MAX_RANGE_DAYS);
    expect(rangeProblem('2024-01-01', '2026-01-01')).toEqual({ field: 'to', problem: 'tooLong' });
    expect(rangeProblem('2026-02-30', '2026-03-01')).toEqual({ field: 'from', problem: 'invalid' });
    expect(rangeProblem('2026-03-01', 'soon')).toEqual({ field: 'to', problem: 'invalid' });
  });
});

describe('pue', () => {
  it.each([
    [1080, 1000, 1.08],
    [0, 0, null],
    [5, 0, null],
    [1_246_000, 1_000_000, 1.246],
  ])('facility %i Wh over IT %i Wh → %s', (facility, it_, expected) => {
    expect(pue(facility, it_)).toBe(expected);
  });
});

describe('rangePresets', () => {
  it.each([
    ['2026-12-01', { last30Days: { from: '2026-11-02', to: '2026-12-01' }, thisMonth: { from: '2026-12-01', to: '2026-12-01' }, lastMonth: { from: '2026-11-01', to: '2026-11-30' }, last90Days: { from: '2026-09-03', to: '2026-12-01' } }],
    ['2027-01-15', { last30Days: { from: '2026-12-17', to: '2027-01-15' }, thisMonth: { from: '2027-01-01', to: '2027-01-15' }, lastMonth: { from: '2026-12-01', to: '2026-12-31' }, last90Days: { from: '2026-10-18', to: '2027-01-15' } }],
    ['2028-03-31', { last30Days: { from: '2028-03-02', to: '2028-03-31' }, thisMonth: { from: '2028-03-01', to: '2028-03-31' }, lastMonth: { from: '2028-02-01', to: '2028-02-29' }, last90Days: { from: '2028-01-02', to: '2028-03-31' } }],
  ])('as of %s', (today, expected) => {
    expect(rangePresets(today)).toEqual(expected);
  });
});

describe('fixedDecimal', () => {
  it('renders integer ratios exactly with fixed decimals', () => {
    expect(fixedDecimal(1234, 1000, 3)).toBe('1.234');
    expect(fixedDecimal(5, 1000, 3)).toBe('0.005');
    expect(fixedDecimal(123_456, 100, 2)).toBe('1234.56');
    expect(fixedDecimal(0, 3600, 2)).toBe('0.00');
    expect(fixedDecimal(7, 1, 0)).toBe('7');
  });
  it('rounds half away from zero', () => {
    expect(fixedDecimal(18, 3600, 2)).toBe('0.01'); // 0.005 GPU-h
    expect(fixedDecimal(17, 3600, 2)).toBe('0.00');
    expect(fixedDecimal(1, 3, 2)).toBe('0.33');
    expect(fixedDecimal(2, 3, 2)).toBe('0.67');
    expect(fixedDecimal(-1250, 1000, 2)).toBe('-1.25');
    expect(fixedDecimal(-1255, 1000, 2)).toBe('-1.26');
  });
  it('stays exact beyond 2^53 intermediate products', () => {
    expect(fixedDecimal(9_007_199_254_740_991, 1000, 3)).toBe('9007199254740.991');
  });
  it('refuses non-integers and zero denominators', () => {
    expect(() => fixedDecimal(1.5, 2, 1)).toThrow(RangeError);
    expect(() => fixedDecimal(1, 0, 1)).toThrow(RangeError);
  });
});
