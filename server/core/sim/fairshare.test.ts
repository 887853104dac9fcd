import { describe, expect, it } from 'vitest';
import { accrueUsage, decayUsage, fairShareFactor } from './fairshare';

describe('fair-share usage', () => {
  it('decays by half every half-life', () => {
    expect(decayUsage(1000, 3600, 3600)).toBe(500);
    expect(decayUsage(1000, 7200, 3600)).toBe(250);
    expect(decayUsage(1000, 1800, 3600)).toBeCloseTo(1000 / Math.SQRT2, 9);
    expect(decayUsage(1000, 7200, 0)).toBe(1000);
  });

  it('accrual of a constant rate matches the closed form and composes over split intervals', () => {
    const H = 3600;
    // 4 GPUs for 1000 s from zero: 4 × H / ln 2 × (1 − 2^(−1000/H)).
    const expected = ((4 * H) / Math.LN2) * (1 - Math.pow(2, -1000 / H));
    expect(accrueUsage(0, 4, 1000, H)).toBeCloseTo(expected, 6);
    const split = accrueUsage(accrueUsage(0, 4, 400, H), 4, 600, H);
    expect(split).toBeCloseTo(expected, 6);
    // Without decay it is plain GPU-seconds.
    expect(accrueUsage(10, 4, 1000, 0)).toBe(4010);
    // Short intervals against a long half-life ≈ raw GPU-seconds.
    expect(accrueUsage(0, 4, 10, 1e9)).toBeCloseTo(40, 5);
  });

  it('factor is 2^(−usage share / shares share)', () => {
    expect(fairShareFactor(0, 0, 1, 2)).toBe(1);
    expect(fairShareFactor(100, 100, 1, 2)).toBe(0.25);
    expect(fairShareFactor(0, 100, 1, 2)).toBe(1);
    expect(fairShareFactor(50, 100, 1, 2)).toBe(0.5);
  });
});
