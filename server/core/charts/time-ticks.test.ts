import { describe, expect, it } from 'vitest';
import { timeTicks } from './time-ticks';

const at = (hhmm: string) => Date.parse(`2026-12-01T${hhmm}:00Z`);

describe('timeTicks', () => {
  it.each([
    // A day from 08:03 to 08:03 the next day in 6 steps: every 4 hours from 12:00.
    ['a day', at('08:03'), at('08:03') + 86_400_000, 6, ['12:00', '16:00', '20:00', '00:00', '04:00', '08:00']],
    // Two hours: every half hour (1 h would give only 2 ticks, but 30 min gives 4 ≤ 6).
    ['two hours', at('10:10'), at('12:10'), 6, ['10:30', '11:00', '11:30', '12:00']],
    // A round start and end are both ticks.
    ['ninety minutes from a round start', at('10:00'), at('11:30'), 6, ['10:00', '10:15', '10:30', '10:45', '11:00', '11:15', '11:30']],
  ])('%s', (_label, from, to, count, expected) => {
    expect(timeTicks(from, to, count).map((t) => new Date(t).toISOString().slice(11, 16))).toEqual(expected);
  });

  it('has no ticks for an empty span', () => {
    expect(timeTicks(at('10:00'), at('10:00'))).toEqual([]);
  });
});
