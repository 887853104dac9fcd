import { describe, expect, it } from 'vitest';
import { checkApplicationRequest, checkDecision } from './applications';

const development = { maxGpuSeconds: 2000 * 3600, durationDays: 91 };
const base = { mode: development, lines: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600 }], periodStart: '2026-12-01', periodEnd: '2027-02-28', today: '2026-11-30' };

describe('checkApplicationRequest', () => {
  it('accepts a Development request of 500 GPU-h for three months', () => {
    expect(checkApplicationRequest(base)).toEqual([]);
  });
  it.each([
    ['no lines', { lines: [] }, ['application.noLines']],
    ['the same class twice', { lines: [base.lines[0]!, base.lines[0]!] }, ['application.duplicateClass']],
    ['more than the mode allows', { lines: [{ resourceClassId: 'h100', gpuSeconds: 2001 * 3600 }] }, ['application.overModeCap']],
    ['an end before the start', { periodEnd: '2026-11-15' }, ['application.endBeforeStart']],
    ['a period longer than the mode', { periodEnd: '2027-06-01' }, ['application.periodTooLong']],
    ['a start in the past', { periodStart: '2026-11-29' }, ['application.startInPast']],
  ])('refuses %s', (_label, override, keys) => {
    expect(checkApplicationRequest({ ...base, ...override }).map((p) => p.key)).toEqual(keys);
  });
  it('gives no cap to large-scale modes', () => {
    expect(checkApplicationRequest({ ...base, mode: { maxGpuSeconds: null, durationDays: 365 }, lines: [{ resourceClassId: 'h100', gpuSeconds: 10 ** 9 }] })).toEqual([]);
  });
});

describe('checkDecision', () => {
  const requested = [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600 }];
  it('lets a reviewer grant less than requested with a comment', () => {
    expect(checkDecision({ outcome: 'approved', requested, granted: [{ resourceClassId: 'h100', gpuSeconds: 400 * 3600 }], comment: 'Scaled to the pilot phase' })).toEqual([]);
  });
  it.each([
    ['less without a comment', 'approved', [{ resourceClassId: 'h100', gpuSeconds: 400 * 3600 }], '', ['decision.commentRequired']],
    ['more than requested', 'approved', [{ resourceClassId: 'h100', gpuSeconds: 600 * 3600 }], 'x', ['decision.grantOverRequest']],
    ['a class not requested', 'approved', [{ resourceClassId: 'b200', gpuSeconds: 1 }], 'x', ['decision.grantUnknownClass']],
    ['nothing at all', 'approved', [{ resourceClassId: 'h100', gpuSeconds: 0 }], 'x', ['decision.grantNothing']],
    ['a rejection without words', 'rejected', [], '  ', ['decision.commentRequired']],
    ['a change request without words', 'changes_requested', [], '', ['decision.commentRequired']],
  ] as const)('refuses %s', (_label, outcome, granted, comment, keys) => {
    expect(checkDecision({ outcome, requested, granted: [...granted], comment }).map((p) => p.key)).toEqual(keys);
  });
  it('approves in full without a comment', () => {
    expect(checkDecision({ outcome: 'approved', requested, granted: requested, comment: '' })).toEqual([]);
  });
});
