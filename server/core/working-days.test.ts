import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, workingDaysBetween } from './working-days';

describe('workingDaysBetween', () => {
  it.each([
    ['2026-11-27T10:00Z', '2026-11-30T09:00Z', 1], // Friday → Monday
    ['2026-11-23T10:00Z', '2026-11-30T09:00Z', 5], // Monday → next Monday
    ['2026-11-28T10:00Z', '2026-11-29T09:00Z', 0], // Saturday → Sunday
    ['2026-11-30T10:00Z', '2026-11-30T18:00Z', 0],
    ['2026-11-30T10:00Z', '2026-11-20T18:00Z', 0],
  ])('%s → %s is %i working days', (from, to, expected) => {
    expect(workingDaysBetween(new Date(from), new Date(to))).toBe(expected);
  });
});

describe('calendar days', () => {
  it('adds and counts across month ends', () => {
    expect(addDays('2026-01-31', 30)).toBe('2026-03-02');
    expect(daysBetween('2026-01-31', '2026-03-02')).toBe(30);
  });
});
