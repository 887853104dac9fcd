import { describe, expect, it } from 'vitest';
import { accessModeConfigProblem, checkApplicationRequest, classAllocationLimits, creditLineLimits, checkDecision, decisionRefusal, defaultModeStorage, reviewRouteFor, storageOfLine, reviewTargetWorkingDays, SECOND_REQUEST_TARGET_WORKING_DAYS, type HeldAllocation, type ReviewRoute } from './applications';

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
  it('keeps Large Scale for more than 50,000 GPU-h, summed over the lines, but lets a top-up add less', () => {
    const largeScale = { maxGpuSeconds: null, minGpuSeconds: 50_001 * 3600, durationDays: 365 };
    const small = checkApplicationRequest({ ...base, mode: largeScale, lines: [{ resourceClassId: 'h100', gpuSeconds: 30_000 * 3600 }, { resourceClassId: 'b200', gpuSeconds: 20_000 * 3600 }] });
    expect(small).toEqual([{ field: 'lines', key: 'application.underModeMinimum', params: { requested: 50_000, minimum: 50_001 } }]);
    expect(checkApplicationRequest({ ...base, mode: largeScale, lines: [{ resourceClassId: 'h100', gpuSeconds: 30_001 * 3600 }, { resourceClassId: 'b200', gpuSeconds: 20_000 * 3600 }] })).toEqual([]);
    expect(checkApplicationRequest({ ...base, mode: largeScale, kind: 'top_up', lines: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600 }] })).toEqual([]);
    expect(checkApplicationRequest({ ...base, mode: largeScale, kind: 'renewal', lines: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600 }] }).map((p) => p.key)).toEqual(['application.underModeMinimum']);
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
    expect(accessModeConfigProblem({ id: 'odd', reviewPath: 'single', maxGpuHours: 100, minGpuHours: 101 })).toMatch(/minGpuHours 101 is above maxGpuHours 100/);
    expect(accessModeConfigProblem({ id: 'pg', reviewPath: 'instant', maxGpuHours: 100, intake: 'rounds' })).toMatch(/cannot take requests in rounds/);
    expect(accessModeConfigProblem({ id: 'large', reviewPath: 'full', maxGpuHours: null, minGpuHours: 50_001, intake: 'rounds' })).toBeNull();
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

describe('storage lines (issue #27)', () => {
  const playground = { maxGpuSeconds: 100 * 3600, durationDays: 30, defaultStorageGb: 50, maxStorageGb: 100 };
  it('gives a line that names no storage its mode’s default, a top-up none', () => {
    expect(storageOfLine({ resourceClassId: 'h100', gpuSeconds: 3600 }, playground, 'new')).toBe(50);
    expect(storageOfLine({ resourceClassId: 'h100', gpuSeconds: 3600 }, playground, 'renewal')).toBe(50);
    expect(storageOfLine({ resourceClassId: 'h100', gpuSeconds: 3600 }, playground, 'top_up')).toBe(0);
    expect(storageOfLine({ resourceClassId: 'h100', gpuSeconds: 3600, storageGb: 80 }, playground, 'top_up')).toBe(80);
    expect(storageOfLine({ resourceClassId: 'h100', gpuSeconds: 3600, storageGb: 0 }, playground, 'new')).toBe(0);
  });
  it('refuses a line asking more storage than its mode allows per line, naming both', () => {
    const lines = [{ resourceClassId: 'h100', gpuSeconds: 10 * 3600, storageGb: 101 }, { resourceClassId: 'b200', gpuSeconds: 10 * 3600, storageGb: 100 }];
    expect(checkApplicationRequest({ ...base, periodEnd: '2026-12-20', mode: playground, lines })).toEqual([{ field: 'lines', key: 'application.storageOverModeCap', params: { requested: 101, cap: 100 } }]);
    expect(checkApplicationRequest({ ...base, periodEnd: '2026-12-20', mode: playground, lines: [lines[1]!] })).toEqual([]);
    expect(checkApplicationRequest({ ...base, mode: { ...development, maxStorageGb: null }, lines: [{ ...base.lines[0]!, storageGb: 10 ** 7 }] })).toEqual([]);
  });
  it('lets a reviewer grant less storage with a comment, never more, and the asked storage by default', () => {
    const requested = [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600, storageGb: 1000 }];
    expect(checkDecision({ outcome: 'approved', requested, granted: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600 }], comment: '' })).toEqual([]);
    expect(checkDecision({ outcome: 'approved', requested, granted: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600, storageGb: 1000 }], comment: '' })).toEqual([]);
    expect(checkDecision({ outcome: 'approved', requested, granted: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600, storageGb: 500 }], comment: '' }).map((p) => p.key)).toEqual(['decision.commentRequired']);
    expect(checkDecision({ outcome: 'approved', requested, granted: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600, storageGb: 500 }], comment: 'Half for now' })).toEqual([]);
    expect(checkDecision({ outcome: 'approved', requested, granted: [{ resourceClassId: 'h100', gpuSeconds: 500 * 3600, storageGb: 1001 }], comment: 'More' })).toEqual([{ field: 'grantedLines', key: 'decision.storageOverRequest', params: { resourceClassId: 'h100' } }]);
  });
  it.each([
    ['instant', { defaultStorageGb: 50, maxStorageGb: 100 }],
    ['single', { defaultStorageGb: 1000, maxStorageGb: 5000 }],
    ['full', { defaultStorageGb: 20_000, maxStorageGb: 200_000 }],
  ] as const)('gives a %s mode without figures of its own the built-in storage', (path, expected) => {
    expect(defaultModeStorage(path)).toEqual(expected);
  });
  it('refuses a catalogue mode whose default storage passes its cap, or an instant one without a cap', () => {
    expect(accessModeConfigProblem({ id: 'dev', reviewPath: 'single', maxGpuHours: 10, defaultStorageGb: 200, maxStorageGb: 100 })).toMatch(/defaultStorageGb 200 is above maxStorageGb 100/);
    expect(accessModeConfigProblem({ id: 'pg', reviewPath: 'instant', maxGpuHours: 10, defaultStorageGb: 50, maxStorageGb: null })).toMatch(/needs maxStorageGb/);
    expect(accessModeConfigProblem({ id: 'big', reviewPath: 'full', maxGpuHours: null, defaultStorageGb: 50, maxStorageGb: null })).toBeNull();
  });
});
