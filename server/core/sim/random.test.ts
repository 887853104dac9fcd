import { describe, expect, it } from 'vitest';
import { createRng, exponentialSeconds, nextFloat, nextInt, nextUint32 } from './random';

describe('random', () => {
  it('same seed gives the same sequence; different seeds differ', () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const sa = Array.from({ length: 5 }, () => nextUint32(a));
    const sb = Array.from({ length: 5 }, () => nextUint32(b));
    const sc = Array.from({ length: 5 }, () => nextUint32(c));
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
  });

  it('state is one JSON-safe integer and resumes exactly', () => {
    const a = createRng(7);
    nextUint32(a);
    const copy = JSON.parse(JSON.stringify(a)) as typeof a;
    expect(nextUint32(copy)).toBe(nextUint32(a));
  });

  it('floats are in [0, 1), ints in range, exponential has about the right mean', () => {
    const r = createRng(1);
    let sum = 0;
    let bad = 0;
    for (let i = 0; i < 20000; i++) {
      const f = nextFloat(r);
      const k = nextInt(r, 3, 5);
      if (f < 0 || f >= 1 || k < 3 || k > 5) bad++;
      sum += exponentialSeconds(r, 1000);
    }
    expect(bad).toBe(0);
    expect(sum / 20000).toBeGreaterThan(950);
    expect(sum / 20000).toBeLessThan(1050);
  });
});
