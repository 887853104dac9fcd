import { describe, expect, it } from 'vitest';
import { translate } from '~/server/i18n';
import { formatGpuHours, roundGpuHours } from './format';

describe('GPU-hours: one rounding rule', () => {
  it.each([
    [662.66 * 3600, 663],
    [9.994 * 3600, 9.99],
    [99.94 * 3600, 99.9],
    [99.96 * 3600, 100],
    [12.345 * 3600, 12.3],
    [1.234 * 3600, 1.23],
    [0, 0],
  ])('roundGpuHours(%d s) = %d h', (gpuSeconds, hours) => {
    expect(roundGpuHours(gpuSeconds)).toBe(hours);
  });

  it.each(['en', 'de'] as const)('the estimate and the refusal show the same figure for the same amount (%s)', (locale) => {
    for (const gpuSeconds of [2_385_576, 662.66 * 3600, 45_000, 4_000, 17]) {
      const estimate = formatGpuHours(locale, gpuSeconds);
      const refusal = translate(locale, 'ledger.insufficientGpu', { needed: roundGpuHours(gpuSeconds + 3600), remaining: roundGpuHours(gpuSeconds) });
      expect(refusal).toContain(estimate);
    }
  });

  it('renders "663 GPU-h" for 662.66 GPU-hours, in both places', () => {
    expect(formatGpuHours('en', 662.66 * 3600)).toBe('663 GPU-h');
    expect(translate('en', 'ledger.insufficientGpu', { needed: 700, remaining: roundGpuHours(662.66 * 3600) })).toContain('663 GPU-h remain');
  });
});
