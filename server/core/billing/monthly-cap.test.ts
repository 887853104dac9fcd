import { describe, expect, it } from 'vitest';
import { capMonth, isValidMonthlyCapCents, MAX_MONTHLY_CAP_CENTS, monthlyCapReached, monthsBefore, suggestedCapForLinesChange, suggestedMonthlyCapCents } from './monthly-cap';

describe('monthly cap reached', () => {
  it.each([
    // cap, spent before, this reservation → reached
    [100_000, 0, 10_000, false],
    [100_000, 80_000, 10_000, false], // 10,000 left: another one fits
    [100_000, 81_000, 10_000, true], // 9,000 left: the next one like it is refused
    [100_000, 90_000, 10_000, true], // exactly used up
    [100_000, 0, 60_000, true], // a big job: the next of its size does not fit
  ])('cap %i, spent %i, reserving %i → %s', (capCents, spentBeforeCents, amountCents, expected) => {
    expect(monthlyCapReached({ capCents, spentBeforeCents, amountCents })).toBe(expected);
  });

  it('counts a day towards its calendar month', () => {
    expect(capMonth('2026-12-31')).toBe('2026-12-01');
  });
});

describe('suggested monthly cap with a raised credit line', () => {
  it.each([
    // cap, line, new line → suggested
    [100_000, 100_000, 2_500_000, 2_500_000], // the starter cap grows with the line instead of staying at €1,000
    [500_000, 2_000_000, 3_000_000, 750_000], // a quarter of the line stays a quarter
    [33_333, 100_000, 200_000, 66_700], // whole euros
    [500_000, 1_000_000, 800_000, 500_000], // never below the cap as it is
    [900_000, 100_000, 200_000, 900_000], // a cap above the line stays: it is the owner's, not lowered
    [100_000, 0, 50_000, 100_000], // no line to scale by: the cap as it is
  ])('cap %i on a line of %i raised to %i → %i', (capCents, lineCents, newLineCents, expected) => {
    expect(suggestedMonthlyCapCents({ capCents, lineCents, newLineCents })).toBe(expected);
  });

  it('keeps no cap as no cap', () => {
    expect(suggestedMonthlyCapCents({ capCents: null, lineCents: 100_000, newLineCents: 500_000 })).toBeNull();
  });
});

describe('suggested monthly cap when staff grant or adjust a credit line', () => {
  it.each([
    // cap, all lines now, change → suggested
    [100_000, 100_000, 2_400_000, 2_500_000], // a €24,000 line beside the €1,000 starter: the cap grows with both
    [500_000, 2_000_000, 1_000_000, 750_000], // an adjustment of +€10,000 on €20,000 with a €5,000 cap
    [500_000, 2_000_000, -500_000, 500_000], // a cut keeps the cap as it is
    [500_000, 2_000_000, 0, 500_000],
    [100_000, 0, 2_000_000, 100_000], // the first line of a tenant with a cap: nothing to scale by
    [null, 2_000_000, 1_000_000, null], // no cap stays no cap
    [null, 2_000_000, -1_000_000, null],
  ])('cap %s with lines of %i changed by %i → %s', (capCents, linesCents, changeCents, expected) => {
    expect(suggestedCapForLinesChange({ capCents, linesCents, changeCents })).toBe(expected);
  });
});

describe('a monthly cap staff set', () => {
  it.each([
    [null, true], // no cap
    [0, true], // nothing may be spent
    [400_000, true],
    [MAX_MONTHLY_CAP_CENTS, true],
    [MAX_MONTHLY_CAP_CENTS + 100, false],
    [-100, false],
    [1_250, false], // €12.50: not whole euros
    [0.1 * 100, false], // €0.10 typed as 0.1 arrives as 10.000000000000002 cents
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
  ])('%s → %s', (capCents, expected) => {
    expect(isValidMonthlyCapCents(capCents)).toBe(expected);
  });
});

describe('months before', () => {
  it('lists the three months before, across a year end, newest first', () => {
    expect(monthsBefore('2027-02-15', 3)).toEqual(['2027-01', '2026-12', '2026-11']);
    expect(monthsBefore('2026-12-01', 3)).toEqual(['2026-11', '2026-10', '2026-09']);
  });
});
