import { describe, expect, it } from 'vitest';
import { swfLine } from './fixtures';
import { parseSwf } from './swf';

// Fields: 1 job, 2 submit, 3 wait, 4 runtime, 5 allocated procs, 6 cpu, 7 mem, 8 requested procs, 9 requested time.
const text = [
  '; Version: 2.2',
  '; MaxNodes: 12',
  '; MaxProcs: 10',
  swfLine([1, 0, 0, 100, 6, -1, -1, 6, 200]),
  swfLine([2, 5, 0, 50, -1, -1, -1, 4, -1]), // size from field 8; estimate falls back to runtime
  swfLine([3, 7, 0, -1, 2, -1, -1, 2, 60]), // no runtime → dropped
  swfLine([4, 8, 0, 0, 2, -1, -1, 2, 60]), // runtime 0 → dropped
  swfLine([5, 8, 0, 10, 0, -1, -1, 3, 60]), // allocated 0 → dropped (no size)
  swfLine([6, 9, 0, 10, -1, -1, -1, -1, 60]), // both sizes missing → dropped
  swfLine([7, 9, 0, 10, 12, -1, -1, 12, 60]), // larger than MaxProcs → dropped
  swfLine([8, 3, 0, 30, 1, -1, -1, 1, 0]), // earlier submit than job 2: sorted in; estimate 0 → runtime
  '',
].join('\n');

describe('parseSwf', () => {
  it('applies the drop rules and −1 fallbacks', () => {
    const r = parseSwf(text);
    expect(r.records).toBe(8);
    expect(r.drops).toEqual({ noRuntime: 2, noSize: 2, tooLarge: 1 });
    expect(r.dropped).toBe(5);
    const t = r.trace;
    expect(t.machineSize).toBe(10);
    expect(t.jobCount).toBe(3);
    expect(Array.from(t.jobNumber)).toEqual([1, 8, 2]);
    expect(Array.from(t.submitSeconds)).toEqual([0, 3, 5]);
    expect(Array.from(t.processors)).toEqual([6, 1, 4]);
    expect(Array.from(t.runtimeSeconds)).toEqual([100, 30, 50]);
    expect(Array.from(t.estimateSeconds)).toEqual([200, 30, 50]);
    expect(r.header['MaxProcs']).toBe('10');
  });

  it('a machine size option overrides the header', () => {
    const r = parseSwf(text, { machineSize: 20 });
    expect(r.trace.machineSize).toBe(20);
    expect(r.drops.tooLarge).toBe(0);
  });

  it('rejects malformed records and a missing machine size', () => {
    expect(() => parseSwf('; MaxProcs: 4\n1 2 3\n')).toThrow(/line 2/);
    expect(() => parseSwf('; MaxProcs: 4\n' + swfLine([1, 0, 0, 'x' as unknown as number, 1, -1, -1, 1, 1]))).toThrow(/field 4/);
    expect(() => parseSwf(swfLine([1, 0, 0, 10, 1, -1, -1, 1, 10]))).toThrow(/MaxProcs/);
  });
});
