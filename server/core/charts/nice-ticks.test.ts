import { describe, expect, it } from 'vitest';
import { niceTicks } from './nice-ticks';

describe('niceTicks', () => {
  it.each([
    // max, count, step, top
    [1, 5, 0.2, 1],
    [0.83, 5, 0.2, 1],
    [1.0961, 5, 0.25, 1.25],
    [7, 5, 2, 8],
    [10, 5, 2, 10],
    [96, 5, 20, 100],
    [101, 5, 25, 125],
    [1234, 5, 250, 1250],
    [3072, 4, 1000, 4000],
    [46_000, 5, 10_000, 50_000],
    [0.003, 3, 0.001, 0.003],
  ])('max %d in about %i steps: step %d, top %d', (max, count, step, top) => {
    const t = niceTicks(max, count);
    expect(t.step).toBe(step);
    expect(t.top).toBe(top);
    expect(t.top).toBeGreaterThanOrEqual(max);
    expect(t.ticks[0]).toBe(0);
    expect(t.ticks.at(-1)).toBe(top);
    expect(t.ticks).toHaveLength(Math.round(top / step) + 1);
  });
  it('gives round decimals, never binary leftovers', () => {
    expect(niceTicks(0.3, 3).ticks).toEqual([0, 0.1, 0.2, 0.3]);
  });
  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY])('gives 0 to 1 for %d', (max) => {
    expect(niceTicks(max)).toEqual({ step: 1, top: 1, ticks: [0, 1] });
  });
});
