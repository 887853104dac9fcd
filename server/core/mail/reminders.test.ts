import { describe, expect, it } from 'vitest';
import { allocationsAtMark, daysLeft, lastUsableDay, markedPeriodEnds, remindersByPerson } from './reminders';

describe('expiry reminders', () => {
  it.each([
    // periodEnd is exclusive: an allocation ending on 2026-12-09 is last usable on 2026-12-08.
    ['2026-12-09', '2026-12-01', 7],
    ['2026-12-02', '2026-12-01', 0],
    ['2026-12-31', '2026-12-01', 29],
    ['2027-01-01', '2026-12-01', 30],
    ['2026-12-01', '2026-12-01', -1],
  ])('ending %s, on %s: %i days left', (periodEnd, today, expected) => {
    expect(daysLeft(periodEnd, today)).toBe(expected);
  });

  it('names the period ends at a mark, across a month and a year', () => {
    expect(markedPeriodEnds('2026-12-20')).toEqual(['2027-01-20', '2027-01-04', '2026-12-28', '2026-12-21']);
    for (const end of markedPeriodEnds('2026-12-20')) expect([30, 14, 7, 0]).toContain(daysLeft(end, '2026-12-20'));
  });

  it('names the last usable day of a period', () => {
    expect(lastUsableDay('2027-01-01')).toBe('2026-12-31');
  });

  const today = '2026-12-01';
  const candidates = [
    { id: 'a30', periodStart: '2026-01-01', periodEnd: '2027-01-01' },
    { id: 'a29', periodStart: '2026-01-01', periodEnd: '2026-12-31' },
    { id: 'a14', periodStart: '2026-01-01', periodEnd: '2026-12-16' },
    { id: 'a7', periodStart: '2026-11-01', periodEnd: '2026-12-09' },
    { id: 'a0', periodStart: '2026-11-01', periodEnd: '2026-12-02' },
    { id: 'ended', periodStart: '2026-11-01', periodEnd: '2026-12-01' },
    { id: 'not-yet', periodStart: '2026-12-05', periodEnd: '2026-12-09' },
  ];

  it('keeps the allocations in their period at 30, 14, 7 and 0 days', () => {
    expect(allocationsAtMark(candidates, today).map((a) => [a.id, a.daysLeft])).toEqual([
      ['a30', 30],
      ['a14', 14],
      ['a7', 7],
      ['a0', 0],
    ]);
  });

  it('groups them into one reminder per person, soonest first, a person named twice once', () => {
    const atMark = allocationsAtMark(candidates, today);
    const people: Record<string, string[]> = { a30: ['pi', 'owner'], a14: ['owner'], a7: ['pi', 'pi', 'owner'], a0: ['lead'] };
    const byPerson = remindersByPerson(atMark, (a) => people[a.id] ?? []);
    expect(Object.fromEntries([...byPerson].map(([p, list]) => [p, list.map((a) => a.id)]))).toEqual({
      pi: ['a7', 'a30'],
      owner: ['a7', 'a14', 'a30'],
      lead: ['a0'],
    });
  });
});
