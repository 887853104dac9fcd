import { describe, expect, it } from 'vitest';
import { scheduleCycle, type CycleInput } from './cycle';
import { testPartition } from './fixtures';
import { canPlace, placeJob } from './placement';
import { policyFromName } from './policy';
import { backfillKeepsReservation, easyReservation } from './reservation';

describe('placeJob (best fit)', () => {
  const free = [4, 2, 3, -1];
  const nodes = [0, 1, 2, 3];
  it.each([
    { nodeCount: 1, perNode: 2, expected: [1] },
    { nodeCount: 2, perNode: 3, expected: [2, 0] },
    { nodeCount: 3, perNode: 2, expected: [1, 2, 0] },
    { nodeCount: 1, perNode: 5, expected: null },
    { nodeCount: 4, perNode: 1, expected: null }, // node 3 is down
  ])('$nodeCount node(s) × $perNode GPUs → $expected', ({ nodeCount, perNode, expected }) => {
    expect(placeJob(free, nodes, nodeCount, perNode)).toEqual(expected);
    expect(canPlace(free, nodes, nodeCount, perNode)).toBe(expected !== null);
  });
});

describe('easyReservation', () => {
  // Two 4-GPU nodes: node 0 busy until 100 (estimate), node 1 down until its repair at 50.
  const free = [0, -1];
  const releases = [
    { atSeconds: 100, nodeIndices: [0], gpusPerNode: 4, repair: false },
    { atSeconds: 50, nodeIndices: [1], gpusPerNode: 4, repair: true },
  ];
  it('counts repairs and running jobs in time order', () => {
    expect(easyReservation(free, { partitionNodes: [0, 1], nodeCount: 1, gpusPerNode: 4 }, releases, 10)).toEqual({
      shadowSeconds: 50,
      freeAtShadow: [0, 4],
    });
    expect(easyReservation(free, { partitionNodes: [0, 1], nodeCount: 2, gpusPerNode: 4 }, releases, 10)?.shadowSeconds).toBe(100);
  });

  it('an estimated end already passed counts as now', () => {
    expect(easyReservation([0, 0], { partitionNodes: [0, 1], nodeCount: 1, gpusPerNode: 4 }, releases.slice(0, 1), 120)?.shadowSeconds).toBe(120);
  });

  it('backfill: ending by the shadow time is always fine; otherwise the head must still fit', () => {
    const head = { partitionNodes: [0, 1], nodeCount: 1, gpusPerNode: 4 };
    const reservation = { shadowSeconds: 100, freeAtShadow: [4, 2] };
    expect(backfillKeepsReservation(reservation, head, { nodeIndices: [1], gpusPerNode: 2, estimatedEndSeconds: 100 })).toEqual([4, 2]);
    expect(backfillKeepsReservation(reservation, head, { nodeIndices: [1], gpusPerNode: 2, estimatedEndSeconds: 500 })).toEqual([4, 0]);
    expect(backfillKeepsReservation(reservation, head, { nodeIndices: [0], gpusPerNode: 1, estimatedEndSeconds: 500 })).toBeNull();
  });
});

describe('scheduleCycle', () => {
  it('is a pure decision over its input', () => {
    const input: CycleInput = {
      nowSeconds: 10,
      policy: policyFromName('easy'),
      partitions: [testPartition()],
      nodes: [
        { partition: 0, freeGpus: 0, down: false, repairAtSeconds: null },
        { partition: 0, freeGpus: 4, down: false, repairAtSeconds: null },
      ],
      running: [{ id: 'r', partition: 0, user: 'u', account: 'a', gpus: 4, nodeIndices: [0], walltimeLimitSeconds: 100, startTimeSeconds: 0 }],
      pending: [
        { id: 'head', seq: 1, submitTimeSeconds: 5, partition: 0, user: 'u', account: 'a', gpus: 8, nodes: 2, walltimeLimitSeconds: 50 },
        { id: 'short', seq: 2, submitTimeSeconds: 6, partition: 0, user: 'u', account: 'a', gpus: 4, nodes: 1, walltimeLimitSeconds: 90 },
        { id: 'long', seq: 3, submitTimeSeconds: 7, partition: 0, user: 'u', account: 'a', gpus: 4, nodes: 1, walltimeLimitSeconds: 91 },
      ],
      accounts: new Map([['a', { shares: 1, limits: undefined, decayedUsageGpuSeconds: 0, finishedGpuSeconds: 0 }]]),
    };
    const before = JSON.stringify({ ...input, accounts: [...input.accounts] });
    const decision = scheduleCycle(input);
    // Shadow = 100 (r's estimated end). "short" ends at 10 + 90 = 100 ≤ 100 → backfills on node 1; "long" then finds no room.
    expect(decision.starts).toEqual([{ id: 'short', nodeIndices: [1] }]);
    expect(decision.waits).toEqual([
      { id: 'head', reason: 'Resources', priority: 0 },
      { id: 'long', reason: 'Priority', priority: 0 },
    ]);
    expect(JSON.stringify({ ...input, accounts: [...input.accounts] })).toBe(before);
    expect(scheduleCycle(input)).toEqual(decision);
  });
});
