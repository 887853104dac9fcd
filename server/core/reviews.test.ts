import { describe, expect, it } from 'vitest';
import { checkScores, conflictState, DEFAULT_RUBRIC, meanHundredths, rankRound, rubricFromNames, type RankInput } from './reviews';

const full = { excellence: 5, feasibility: 4, impact: 3 };

describe('checkScores', () => {
  it('takes every criterion of the rubric scored 1–5 with a comment to the applicant', () => {
    expect(checkScores(DEFAULT_RUBRIC, { scores: full, commentToApplicant: 'Strong case.', internalNote: '' })).toEqual([]);
  });
  it('names the criterion missing, out of range, unknown, and the missing comment', () => {
    expect(checkScores(DEFAULT_RUBRIC, { scores: { excellence: 5, feasibility: 0, novelty: 3 }, commentToApplicant: '  ', internalNote: '' })).toEqual([
      { field: 'scores', key: 'review.scoreRange', params: { criterion: 'Technical feasibility', min: 1, max: 5 } },
      { field: 'scores', key: 'review.scoreMissing', params: { criterion: 'Impact' } },
      { field: 'scores', key: 'review.scoreUnknown', params: { criterion: 'novelty' } },
      { field: 'commentToApplicant', key: 'review.commentMissing' },
    ]);
    expect(checkScores(DEFAULT_RUBRIC, { scores: { ...full, impact: 3.5 }, commentToApplicant: 'x', internalNote: '' })[0]).toMatchObject({ key: 'review.scoreRange' });
  });
});

describe('rubricFromNames', () => {
  it('makes criteria from names, one a line, and refuses none, too many or one twice', () => {
    expect(rubricFromNames(['Scientific merit', ' Energy efficiency ', ''])).toEqual({ rubric: [{ id: 'scientific-merit', name: 'Scientific merit', nameDe: 'Scientific merit' }, { id: 'energy-efficiency', name: 'Energy efficiency', nameDe: 'Energy efficiency' }] });
    expect(rubricFromNames([' '])).toMatchObject({ problem: { field: 'rubric', key: 'call.rubricSize' } });
    expect(rubricFromNames(Array.from({ length: 9 }, (_, i) => `C${i}`))).toMatchObject({ problem: { key: 'call.rubricSize' } });
    expect(rubricFromNames(['Impact', 'impact'])).toMatchObject({ problem: { key: 'call.rubricTwice', params: { criterion: 'impact' } } });
  });
});

describe('conflictState', () => {
  it('excludes a member of the organisation or the project, and one who declared, until an admin overrides', () => {
    expect(conflictState(null, [])).toEqual({ excluded: false, reason: null, overridden: false });
    expect(conflictState('organisation', [])).toEqual({ excluded: true, reason: 'organisation', overridden: false });
    expect(conflictState('project', [{ kind: 'override', seq: 2 }])).toEqual({ excluded: false, reason: 'project', overridden: true });
    expect(conflictState(null, [{ kind: 'declared', seq: 1 }])).toEqual({ excluded: true, reason: 'declared', overridden: false });
    expect(conflictState(null, [{ kind: 'declared', seq: 1 }, { kind: 'override', seq: 2 }])).toEqual({ excluded: false, reason: 'declared', overridden: true });
  });
  it('lets a declaration after an override exclude again', () => {
    expect(conflictState('organisation', [{ kind: 'override', seq: 1 }, { kind: 'declared', seq: 3 }])).toMatchObject({ excluded: true, reason: 'declared' });
  });
  it('ignores an override where there is no conflict', () => {
    expect(conflictState(null, [{ kind: 'override', seq: 1 }])).toEqual({ excluded: false, reason: null, overridden: false });
  });
});

describe('rankRound', () => {
  const H = 3600;
  const at = (minute: number) => new Date(Date.UTC(2027, 0, 10, 10, minute));
  const row = (id: string, hours: number, scores: number[][], extra: Partial<RankInput> = {}): RankInput => ({
    id,
    status: 'submitted',
    submittedAt: at(0),
    gpuSeconds: hours * H,
    reviews: scores.map(([excellence, feasibility, impact]) => ({ excellence: excellence!, feasibility: feasibility!, impact: impact! })),
    ...extra,
  });

  it('ranks by mean score and draws the line where the budget runs out', () => {
    const ranked = rankRound([row('c', 60_000, [[3, 3, 3]]), row('a', 60_000, [[5, 5, 5], [5, 4, 5]]), row('e', 60_000, [[1, 2, 1]]), row('b', 60_000, [[4, 4, 4]]), row('d', 60_000, [[2, 3, 2]])], 180_000 * H);
    expect(ranked.map((r) => [r.row.id, r.rank, r.scoreHundredths, r.aboveLine])).toEqual([
      ['a', 1, 483, true],
      ['b', 2, 400, true],
      ['c', 3, 300, true],
      ['d', 4, 233, false],
      ['e', 5, 133, false],
    ]);
    expect(ranked.map((r) => r.cumulativeGpuSeconds / H)).toEqual([60_000, 120_000, 180_000, 240_000, 300_000]);
  });

  it('puts unscored ones last, breaks ties by the earlier submission, and stops the line at the first that does not fit', () => {
    const ranked = rankRound([row('late', 50_000, [[4, 4, 4]], { submittedAt: at(5) }), row('none', 10_000, []), row('early', 100_000, [[4, 4, 4]], { submittedAt: at(1) }), row('small', 10_000, [[2, 2, 2]])], 120_000 * H);
    expect(ranked.map((r) => [r.row.id, r.aboveLine])).toEqual([
      ['early', true],
      ['late', false],
      // It would fit, but the line is drawn in the order of the ranking.
      ['small', false],
      ['none', false],
    ]);
    expect(ranked[3]!.scoreHundredths).toBeNull();
  });

  it('counts approved ones by what they were granted, and rejected or sent-back ones not at all', () => {
    const ranked = rankRound([row('granted', 40_000, [[5, 5, 5]], { status: 'approved' }), row('rejected', 100_000, [[4, 4, 4]], { status: 'rejected' }), row('waiting', 60_000, [[3, 3, 3]])], 100_000 * H);
    expect(ranked.map((r) => [r.row.id, r.aboveLine, r.cumulativeGpuSeconds / H])).toEqual([
      ['granted', true, 40_000],
      ['rejected', false, 40_000],
      ['waiting', true, 100_000],
    ]);
  });

  it('means every score given, in hundredths', () => {
    expect(meanHundredths([])).toBeNull();
    expect(meanHundredths([{ a: 4, b: 3, c: 4 }])).toBe(367);
  });
});
