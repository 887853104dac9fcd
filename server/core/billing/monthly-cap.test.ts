import { describe, expect, it } from 'vitest';
import { capMonth, monthlyCapReached } from './monthly-cap';

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
