import { describe, expect, it } from 'vitest';
import { resolvePeriod } from './periods';

describe('resolvePeriod', () => {
  it.each([
    [{ month: '2026-02' }, { from: '2026-02-01', to: '2026-02-28' }],
    [{ month: '2028-02' }, { from: '2028-02-01', to: '2028-02-29' }],
    [{ quarter: '2026-Q4' }, { from: '2026-10-01', to: '2026-12-31' }],
    [{ from: '2026-01-15', to: '2026-03-15' }, { from: '2026-01-15', to: '2026-03-15' }],
  ])('%o → %o', (input, expected) => {
    expect(resolvePeriod(input)).toEqual(expected);
  });
  it.each([
    [{ from: '2026-03-01', to: '2026-02-01' }, 'period.endBeforeStart', 'to'],
    [{ from: '1990-01-01', to: '2040-01-01' }, 'period.tooLong', 'to'],
    [{ from: '2026-02-30', to: '2026-03-01' }, 'period.invalid', 'from'],
    [{ month: '2026-13' }, 'period.invalid', 'month'],
    [{ quarter: '2026-Q5' }, 'period.invalid', 'quarter'],
  ])('refuses %o', (input, key, field) => {
    expect(resolvePeriod(input)).toMatchObject({ key, field });
  });
});
