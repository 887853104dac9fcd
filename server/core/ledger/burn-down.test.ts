import { describe, expect, it } from 'vitest';
import { fillDays, projectExhaustion, thresholdsCrossed, unusedAtEnd } from './burn-down';
import { costCents, gpuHoursToSeconds } from './units';

describe('projectExhaustion', () => {
  const today = new Date('2026-03-15T12:00:00Z');
  it('projects at the average of the last 14 days', () => {
    // 14 days × 3,600 GPU-s = 50,400 used in the window → 3,600 per day; 36,000 remain → 10 days.
    const usage = Array.from({ length: 14 }, (_, i) => ({ day: `2026-03-${String(2 + i).padStart(2, '0')}`, amount: 3600 }));
    expect(projectExhaustion(36_000, usage, today)).toEqual({ ratePerDay: 3600, exhaustsOn: '2026-03-25' });
  });
  it('makes no projection without recent usage', () => {
    expect(projectExhaustion(1000, [{ day: '2026-01-01', amount: 500 }], today)).toEqual({ ratePerDay: 0, exhaustsOn: null });
  });
  it('says today when nothing remains', () => {
    expect(projectExhaustion(0, [{ day: '2026-03-15', amount: 14 }], today).exhaustsOn).toBe('2026-03-15');
  });
});

describe('fillDays', () => {
  it('fills gaps with zero', () => {
    expect(fillDays([{ day: '2026-03-02', amount: 5 }], new Date('2026-03-01T10:00Z'), new Date('2026-03-03T01:00Z'))).toEqual([
      { day: '2026-03-01', amount: 0 },
      { day: '2026-03-02', amount: 5 },
      { day: '2026-03-03', amount: 0 },
    ]);
  });
});

describe('thresholdsCrossed', () => {
  it.each([
    [700, 850, [800]],
    [850, 1000, [1000]],
    [700, 1200, [800, 1000]],
    [800, 900, []],
  ])('%i ‰ → %i ‰ crosses %o', (before, after, expected) => {
    expect(thresholdsCrossed(before, after)).toEqual(expected);
  });
});

describe('units', () => {
  it('converts GPU-hours and prices to the cent', () => {
    expect(gpuHoursToSeconds(400)).toBe(1_440_000);
    expect(costCents(3600, 250)).toBe(250);
    expect(costCents(1, 250)).toBe(0); // 0.069 ct rounds to 0
    expect(costCents(8, 250)).toBe(1); // 0.56 ct rounds half up to 1
  });
});

describe('unusedAtEnd', () => {
  const today = new Date('2026-12-01T09:30:00Z');
  it('is what the current rate leaves over when the period ends', () => {
    // 45 days from 1 Dec to the period end on 15 Jan (the first day outside the period).
    expect(unusedAtEnd(1000, 10, today, '2027-01-15')).toBe(550);
    expect(unusedAtEnd(1000, 10.5, today, '2027-01-15')).toBe(527);
  });
  it('is nothing when the budget runs out first, and everything when nothing is used', () => {
    expect(unusedAtEnd(100, 10, today, '2027-01-15')).toBe(0);
    expect(unusedAtEnd(1000, 0, today, '2027-01-15')).toBe(1000);
    expect(unusedAtEnd(1000, 10, today, '2026-11-01')).toBe(1000);
  });
});
