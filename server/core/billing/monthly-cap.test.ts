import { describe, expect, it } from 'vitest';
import { capMonth, monthlyCapReached, monthsBefore, suggestedMonthlyCapCents } from './monthly-cap';

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

describe('months before', () => {
  it('lists the three months before, across a year end, newest first', () => {
    expect(monthsBefore('2027-02-15', 3)).toEqual(['2027-01', '2026-12', '2026-11']);
    expect(monthsBefore('2026-12-01', 3)).toEqual(['2026-11', '2026-10', '2026-09']);
  });
});
