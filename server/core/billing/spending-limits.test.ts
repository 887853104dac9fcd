import { describe, expect, it } from 'vitest';
import { alertPeriod, alertThresholdsReached, bindingLimit, spendingRefusal, type SpendingLimit } from './spending-limits';

const cap: SpendingLimit = { kind: 'monthlyCap', limitCents: 100_000, spentCents: 40_000 };
const projectMonthly: SpendingLimit = { kind: 'projectMonthly', limitCents: 5_000, spentCents: 3_000 };
const projectTotal: SpendingLimit = { kind: 'projectTotal', limitCents: 20_000, spentCents: 18_500 };
const personMonthly: SpendingLimit = { kind: 'personMonthly', limitCents: 10_000, spentCents: 9_000 };

describe('spendingRefusal', () => {
  it.each([
    ['no limits: nothing binds', [], 1_000_000, null],
    ['within every limit', [cap, projectMonthly, projectTotal, personMonthly], 1_000, null],
    ['exactly what the tightest leaves fits', [cap, projectMonthly, personMonthly], 1_000, null],
    ['past the person’s limit only', [cap, projectMonthly, personMonthly], 1_001, { ...personMonthly, leftCents: 1_000 }],
    ['past two: the one with less left binds (project total €15 left, project month €20)', [cap, projectMonthly, projectTotal], 2_500, { ...projectTotal, leftCents: 1_500 }],
    ['past the tenant cap only', [cap, { ...projectMonthly, limitCents: 100_000 }], 60_001, { ...cap, leftCents: 60_000 }],
    ['an overspent limit leaves 0, never less', [{ kind: 'projectMonthly', limitCents: 5_000, spentCents: 6_000 }], 1, { kind: 'projectMonthly', limitCents: 5_000, spentCents: 6_000, leftCents: 0 }],
    ['a budget of 0 refuses any job', [{ kind: 'projectTotal', limitCents: 0, spentCents: 0 }], 1, { kind: 'projectTotal', limitCents: 0, spentCents: 0, leftCents: 0 }],
  ] as const)('%s', (_name, limits, amount, expected) => {
    expect(spendingRefusal(limits, amount)).toEqual(expected);
  });
});

describe('bindingLimit', () => {
  it.each([
    ['none', [], null],
    ['the least left', [cap, projectMonthly, projectTotal, personMonthly], { ...personMonthly, leftCents: 1_000 }],
    ['a tie goes to the tenant cap, then the project', [{ ...cap, spentCents: 99_000 }, { ...personMonthly }], { ...cap, spentCents: 99_000, leftCents: 1_000 }],
  ] as const)('%s', (_name, limits, expected) => {
    expect(bindingLimit(limits)).toEqual(expected);
  });
});

describe('alertThresholdsReached', () => {
  const budget = (spentCents: number): SpendingLimit => ({ kind: 'projectMonthly', limitCents: 5_000, spentCents });
  it.each([
    ['below half', budget(0), 2_499, []],
    ['exactly half', budget(0), 2_500, [50]],
    ['past 80 from 50', budget(2_500), 1_500, [50, 80]],
    ['used up', budget(4_000), 1_000, [50, 80, 100]],
    ['a limit of 0 is used up by any job', { kind: 'personMonthly', limitCents: 0, spentCents: 0 }, 1, [50, 80, 100]],
  ] as const)('%s', (_name, limit, amount, expected) => {
    expect(alertThresholdsReached(limit, amount)).toEqual(expected);
  });
});

describe('alertPeriod', () => {
  it('is the month for monthly limits and `total` for a project’s total budget', () => {
    expect(alertPeriod('projectMonthly', '2026-12-03')).toBe('2026-12');
    expect(alertPeriod('monthlyCap', '2026-12-31')).toBe('2026-12');
    expect(alertPeriod('personMonthly', '2027-01-01')).toBe('2027-01');
    expect(alertPeriod('projectTotal', '2026-12-03')).toBe('total');
  });
});
