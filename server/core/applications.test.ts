import { describe, expect, it } from 'vitest';
import { accessModeConfigProblem, checkApplicationRequest, classAllocationLimits, creditLineLimits, checkDecision, decisionRefusal, reviewRouteFor, reviewTargetWorkingDays, SECOND_REQUEST_TARGET_WORKING_DAYS, type HeldAllocation, type ReviewRoute } from './applications';

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

describe('reviewRouteFor', () => {
  const playground = { id: 'playground', reviewPath: 'instant' as const };
  const today = '2026-12-01';
  const request = { kind: 'new' as const, periodStart: '2026-12-01', periodEnd: '2026-12-31' };
  const held = (over: Partial<HeldAllocation>): HeldAllocation => ({ accessModeId: 'playground', status: 'active', periodStart: '2026-11-20', periodEnd: '2026-12-20', ...over });
  it.each<[string, Parameters<typeof reviewRouteFor>[0], ReviewRoute]>([
    ['a first Playground request is approved at once', { mode: playground, request, held: [], today }, { path: 'instant', reason: 'accessMode' }],
    ['a second one while the first runs goes to a reviewer', { mode: playground, request, held: [held({})], today }, { path: 'single', reason: 'instantOnceActive', activeUntil: '2026-12-20' }],
    ['the latest running one is named', { mode: playground, request, held: [held({}), held({ periodEnd: '2026-12-28' })], today }, { path: 'single', reason: 'instantOnceActive', activeUntil: '2026-12-28' }],
    ['a top-up of a running one goes to a reviewer', { mode: playground, request: { ...request, kind: 'top_up' }, held: [held({ periodStart: '2027-01-01', periodEnd: '2027-01-31' })], today }, { path: 'single', reason: 'instantOnceActive', activeUntil: '2027-01-31' }],
    ['one that has ended does not count', { mode: playground, request, held: [held({ periodStart: '2026-10-01', periodEnd: '2026-11-30' })], today }, { path: 'instant', reason: 'accessMode' }],
    ['one that was suspended or expired does not count', { mode: playground, request, held: [held({ status: 'expired' }), held({ status: 'suspended' })], today }, { path: 'instant', reason: 'accessMode' }],
    ['another mode does not count', { mode: playground, request, held: [held({ accessModeId: 'development' }), held({ accessModeId: null })], today }, { path: 'instant', reason: 'accessMode' }],
    ['the next period, after the running one ends, is approved at once', { mode: playground, request: { kind: 'new', periodStart: '2026-12-20', periodEnd: '2027-01-19' }, held: [held({})], today }, { path: 'instant', reason: 'accessMode' }],
    ['a single-review mode keeps its path', { mode: { id: 'development', reviewPath: 'single' }, request, held: [held({ accessModeId: 'development' })], today }, { path: 'single', reason: 'accessMode' }],
    ['a full-review mode keeps its path', { mode: { id: 'large-scale', reviewPath: 'full' }, request, held: [], today }, { path: 'full', reason: 'accessMode' }],
  ])('%s', (_label, input, route) => {
    expect(reviewRouteFor(input)).toEqual(route);
  });

  it('gives a second request working days to decide, and full review to admins only', () => {
    expect(reviewTargetWorkingDays({ reason: 'instantOnceActive' }, 0)).toBe(SECOND_REQUEST_TARGET_WORKING_DAYS);
    expect(reviewTargetWorkingDays({ reason: 'accessMode' }, 30)).toBe(30);
    expect(decisionRefusal('full', false)).toBe('decision.fullReviewAdmin');
    expect(decisionRefusal('full', true)).toBeNull();
    expect(decisionRefusal('single', false)).toBeNull();
  });

  it('refuses an instant access mode without a cap in the catalogue', () => {
    expect(accessModeConfigProblem({ id: 'free', reviewPath: 'instant', maxGpuHours: null })).toMatch(/maxGpuHours/);
    expect(accessModeConfigProblem({ id: 'playground', reviewPath: 'instant', maxGpuHours: 100 })).toBeNull();
  });
});

describe('checkApplicationRequest for a top-up', () => {
  it('does not check the period, which is its allocation’s', () => {
    expect(checkApplicationRequest({ ...base, kind: 'top_up', periodStart: '2026-01-01', periodEnd: '2027-12-31' })).toEqual([]);
  });
});

describe('the limits a new allocation starts with', () => {
  it.each([
    ['a big partition: 64 GPUs at once, its walltime limit', { gpus: 8, nodes: 16, maxWalltimeSeconds: 48 * 3600 }, { maxGpusAtOnce: 64, maxWalltimeSeconds: 48 * 3600, maxQueuedJobs: 50 }],
    ['a small partition: all of its GPUs', { gpus: 4, nodes: 8, maxWalltimeSeconds: 24 * 3600 }, { maxGpusAtOnce: 32, maxWalltimeSeconds: 24 * 3600, maxQueuedJobs: 50 }],
  ])('%s', (_name, resourceClass, limits) => {
    expect(classAllocationLimits(resourceClass)).toEqual(limits);
  });
  it('a credit line (any class): 64 GPUs, 48 h, 50 queued jobs', () => {
    expect(creditLineLimits()).toEqual({ maxGpusAtOnce: 64, maxWalltimeSeconds: 48 * 3600, maxQueuedJobs: 50 });
  });
});
