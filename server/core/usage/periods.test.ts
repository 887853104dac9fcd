import { describe, expect, it } from 'vitest';
import { resolvePeriod, splitByMonths } from './periods';

describe('resolvePeriod', () => {
  it.each([
    [{ month: '2026-02' }, { from: '2026-02-01', to: '2026-02-28' }],
    [{ month: '2028-02' }, { from: '2028-02-01', to: '2028-02-29' }],
    [{ quarter: '2026-Q4' }, { from: '2026-10-01', to: '2026-12-31' }],
    [{ from: '2026-01-15', to: '2026-03-15' }, { from: '2026-01-15', to: '2026-03-15' }],
  ])('%o → %o', (input, expected) => {
    expect(resolvePeriod(input)).toEqual(expected);
  });
  it.each([
    [{ from: '2026-03-01', to: '2026-02-01' }, 'period.endBeforeStart', 'to'],
    [{ from: '1990-01-01', to: '2040-01-01' }, 'period.tooLong', 'to'],
    [{ from: '2026-02-30', to: '2026-03-01' }, 'period.invalid', 'from'],
    [{ month: '2026-13' }, 'period.invalid', 'month'],
    [{ quarter: '2026-Q5' }, 'period.invalid', 'quarter'],
  ])('refuses %o', (input, key, field) => {
    expect(resolvePeriod(input)).toMatchObject({ key, field });
  });
});

describe('splitByMonths', () => {
  it('reads whole months as months and the days around them as days', () => {
    expect(splitByMonths('2026-03-01', '2026-03-31')).toEqual({ months: { first: '2026-03-01', last: '2026-03-01' }, days: [] });
    expect(splitByMonths('2026-01-01', '2026-12-31')).toEqual({ months: { first: '2026-01-01', last: '2026-12-01' }, days: [] });
    expect(splitByMonths('2025-12-06', '2026-12-05')).toEqual({
      months: { first: '2026-01-01', last: '2026-11-01' },
      days: [
        { from: '2025-12-06', to: '2025-12-31' },
        { from: '2026-12-01', to: '2026-12-05' },
      ],
    });
    // February's end, in a leap year and not.
    expect(splitByMonths('2028-02-01', '2028-02-29')).toEqual({ months: { first: '2028-02-01', last: '2028-02-01' }, days: [] });
    expect(splitByMonths('2026-02-01', '2026-02-28').months).toEqual({ first: '2026-02-01', last: '2026-02-01' });
  });

  it('keeps a range without a whole month in days', () => {
    expect(splitByMonths('2026-03-02', '2026-03-31')).toEqual({ months: null, days: [{ from: '2026-03-02', to: '2026-03-31' }] });
    expect(splitByMonths('2026-03-15', '2026-04-14')).toEqual({ months: null, days: [{ from: '2026-03-15', to: '2026-04-14' }] });
    expect(splitByMonths('2026-03-03', '2026-03-03')).toEqual({ months: null, days: [{ from: '2026-03-03', to: '2026-03-03' }] });
  });

  it('covers every day of the range exactly once', () => {
    for (const [from, to] of [['2025-11-17', '2026-02-03'], ['2026-01-01', '2026-01-30'], ['2026-01-31', '2026-03-01'], ['2024-12-31', '2026-12-31']] as const) {
      const split = splitByMonths(from, to);
      const covered: string[] = [];
      for (const d of split.days) for (let t = Date.parse(`${d.from}T00:00:00Z`); t <= Date.parse(`${d.to}T00:00:00Z`); t += 86_400_000) covered.push(new Date(t).toISOString().slice(0, 10));
      if (split.months) {
        const end = new Date(`${split.months.last}T00:00:00Z`);
        end.setUTCMonth(end.getUTCMonth() + 1);
        for (let t = Date.parse(`${split.months.first}T00:00:00Z`); t < end.getTime(); t += 86_400_000) covered.push(new Date(t).toISOString().slice(0, 10));
      }
      const expected: string[] = [];
      for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) expected.push(new Date(t).toISOString().slice(0, 10));
      expect(covered.sort()).toEqual(expected);
    }
  });
});
