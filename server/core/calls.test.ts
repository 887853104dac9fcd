// Rounds of a call: which round a submission joins at and around a cut-off, which rounds are due to close,
// and what makes a call staff are opening wrong.
import { describe, expect, it } from 'vitest';
import { checkCall, MAX_CUTOFFS, roundFor, roundsToClose, type RoundLike } from './calls';

const first: RoundLike = { id: 'first', cutoffAt: new Date('2027-01-15T16:00:00Z'), status: 'open' };
const second: RoundLike = { id: 'second', cutoffAt: new Date('2027-01-31T16:00:00Z'), status: 'open' };
const third: RoundLike = { id: 'third', cutoffAt: new Date('2027-02-15T16:00:00Z'), status: 'open' };
const rounds = [third, first, second];

describe('roundFor', () => {
  it('puts a submission up to and at the cut-off in that round, one second later in the next', () => {
    expect(roundFor(rounds, new Date('2027-01-02T10:00:00Z'))?.id).toBe('first');
    expect(roundFor(rounds, new Date('2027-01-15T15:59:59Z'))?.id).toBe('first');
    expect(roundFor(rounds, new Date('2027-01-15T16:00:00Z'))?.id).toBe('first');
    expect(roundFor(rounds, new Date('2027-01-15T16:00:01Z'))?.id).toBe('second');
    expect(roundFor(rounds, new Date('2027-02-15T16:00:01Z'))).toBeNull();
  });

  it('skips a closed round even before its cut-off (closed early by staff)', () => {
    expect(roundFor([{ ...first, status: 'closed' }, second], new Date('2027-01-10T00:00:00Z'))?.id).toBe('second');
  });
});

describe('roundsToClose', () => {
  it('lists the open rounds past their cut-off, earliest first', () => {
    const now = new Date('2027-02-01T00:00:00Z');
    expect(roundsToClose(rounds, now).map((r) => r.id)).toEqual(['first', 'second']);
    expect(roundsToClose([{ ...first, status: 'closed' }, second], now).map((r) => r.id)).toEqual(['second']);
    // At the cut-off itself the round still takes submissions.
    expect(roundsToClose(rounds, first.cutoffAt)).toEqual([]);
  });
});

describe('checkCall', () => {
  const now = new Date('2027-01-01T00:00:00Z');
  const rounds = { id: 'large-scale', intake: 'rounds' as const };
  const good = { accessModeId: 'large-scale', title: 'Large Scale 2027', description: '', gpuHoursPerRound: 150_000, cutoffs: [first.cutoffAt, second.cutoffAt] };

  it('accepts a call with future, distinct cut-offs', () => {
    expect(checkCall(good, rounds, now)).toEqual([]);
  });

  it('names the field and the fix for each problem', () => {
    expect(checkCall(good, { id: 'fast-lane', intake: 'first_come' }, now)).toEqual([{ field: 'accessModeId', key: 'call.modeNotRounds', params: { mode: 'fast-lane' } }]);
    expect(checkCall({ ...good, title: '  ' }, rounds, now)).toEqual([{ field: 'title', key: 'call.titleMissing' }]);
    expect(checkCall({ ...good, gpuHoursPerRound: 0 }, rounds, now)).toEqual([{ field: 'gpuHoursPerRound', key: 'call.budgetNotPositive' }]);
    expect(checkCall({ ...good, cutoffs: [] }, rounds, now)).toEqual([{ field: 'cutoffs', key: 'call.noCutoffs' }]);
    expect(checkCall({ ...good, cutoffs: [now] }, rounds, now)).toEqual([{ field: 'cutoffs', key: 'call.cutoffPast', params: { cutoff: now.toISOString() } }]);
    expect(checkCall({ ...good, cutoffs: [first.cutoffAt, first.cutoffAt] }, rounds, now)).toEqual([{ field: 'cutoffs', key: 'call.cutoffTwice', params: { cutoff: first.cutoffAt.toISOString() } }]);
    const many = Array.from({ length: MAX_CUTOFFS + 1 }, (_, i) => new Date(first.cutoffAt.getTime() + i * 86_400_000));
    expect(checkCall({ ...good, cutoffs: many }, rounds, now)).toEqual([{ field: 'cutoffs', key: 'call.tooManyCutoffs', params: { max: MAX_CUTOFFS } }]);
  });
});
