import { describe, expect, it } from 'vitest';
import { compareUsage } from './usage-check';

describe('compareUsage', () => {
  it('sums each side per account and class, keeps equal rows, and puts the largest differences first', () => {
    const rows = compareUsage(
      [
        { account: 'p1', partition: 'h100', gpuSeconds: 100 },
        { account: 'p1', partition: 'h100', gpuSeconds: 50 },
        { account: 'p2', partition: 'b200', gpuSeconds: 400 },
        { account: 'p3', partition: 'h100', gpuSeconds: 10 },
      ],
      [
        { account: 'p1', partition: 'h100', gpuSeconds: 150 },
        { account: 'p2', partition: 'b200', gpuSeconds: 300 },
        { account: 'p4', partition: 'gpu', gpuSeconds: 20 },
      ],
    );
    expect(rows).toEqual([
      { account: 'p2', partition: 'b200', portalGpuSeconds: 400, schedulerGpuSeconds: 300, differenceGpuSeconds: -100 },
      { account: 'p4', partition: 'gpu', portalGpuSeconds: 0, schedulerGpuSeconds: 20, differenceGpuSeconds: 20 },
      { account: 'p3', partition: 'h100', portalGpuSeconds: 10, schedulerGpuSeconds: 0, differenceGpuSeconds: -10 },
      { account: 'p1', partition: 'h100', portalGpuSeconds: 150, schedulerGpuSeconds: 150, differenceGpuSeconds: 0 },
    ]);
  });

  it('is empty when neither side has anything', () => {
    expect(compareUsage([], [])).toEqual([]);
  });
});
