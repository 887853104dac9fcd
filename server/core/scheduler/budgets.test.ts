import { describe, expect, it } from 'vitest';
import { budgetMismatches, creditGpuMinutes, holdDrift, projectBudgets, roomGpuSeconds, type BudgetAllocation, type BudgetProject } from './budgets';

const TODAY = '2026-06-15';

function gpu(partition: string, over: Partial<BudgetAllocation> = {}): BudgetAllocation {
  return { resourceClassId: partition, unit: 'gpu_seconds', status: 'active', periodStart: '2026-06-01', periodEnd: '2026-09-01', granted: 0, charged: 0, reserved: 0, expired: 0, ...over };
}

function credit(over: Partial<BudgetAllocation> = {}): BudgetAllocation {
  return { resourceClassId: null, unit: 'cents', status: 'active', periodStart: '2026-06-01', periodEnd: '2027-06-01', granted: 0, charged: 0, reserved: 0, expired: 0, usedGpuSecondsByClass: {}, ...over };
}

function project(allocations: BudgetAllocation[], over: Partial<BudgetProject> = {}): BudgetProject {
  return { id: 'p1', tenantActive: true, centsPerGpuHour: {}, allocations, ...over };
}

describe('projectBudgets', () => {
  it('gives an active GPU-hour allocation its grant less what expired, rounded up to whole minutes', () => {
    // 100 GPU-hours granted = 360,000 GPU-s = 6,000 GPU-min; 10 GPU-h charged and 1 reserved change nothing.
    expect(projectBudgets(project([gpu('h100', { granted: 360_000, charged: 36_000, reserved: 3_600 })]), TODAY)).toEqual([{ account: 'p1', partition: 'h100', gpuMinutes: 6_000 }]);
    // 301 GPU-s round up to 6 minutes: the scheduler never allows less than the portal.
    expect(projectBudgets(project([gpu('h100', { granted: 301 })]), TODAY)[0]!.gpuMinutes).toBe(6);
  });

  it('adds up every allocation of a class, counting ended ones as what they used and hold', () => {
    const budgets = projectBudgets(
      project([
        gpu('h100', { granted: 360_000, expired: 60_000 }), // active: 300,000
        gpu('h100', { status: 'expired', granted: 720_000, charged: 500_000, reserved: 20_000, expired: 200_000 }), // 520,000
        gpu('h100', { periodEnd: '2026-06-15', granted: 100_000, charged: 40_000, reserved: 2_000 }), // period over, not yet expired: 42,000
        gpu('h100', { status: 'suspended', granted: 50_000, charged: 10_000 }), // 10,000
        gpu('b200', { granted: 7_200 }),
      ]),
      TODAY,
    );
    expect(budgets).toEqual([
      { account: 'p1', partition: 'b200', gpuMinutes: 120 },
      { account: 'p1', partition: 'h100', gpuMinutes: 14_534 }, // 872,000 GPU-s = 14,533⅓ min, rounded up
    ]);
  });

  it('freezes every class of a suspended tenant at what it used and holds reserved', () => {
    const p = project([gpu('h100', { granted: 360_000, charged: 90_000, reserved: 7_230 }), credit({ granted: 100_000, charged: 40_000, usedGpuSecondsByClass: { h100: 72_000 } })], { tenantActive: false, centsPerGpuHour: { h100: 200, b200: 400 } });
    expect(projectBudgets(p, TODAY)).toEqual([
      { account: 'p1', partition: 'b200', gpuMinutes: 0 },
      { account: 'p1', partition: 'h100', gpuMinutes: Math.ceil((90_000 + 7_230 + 72_000) / 60) },
    ]);
  });

  it('gives a credit line, in every class with a tariff, what its credit still buys plus what it used there', () => {
    // €1,000 granted, €300 charged, €50 reserved: €650 left. At €2.00/GPU-h: 325 GPU-h = 19,500 GPU-min; at €3.00: 216.67 h = 13,000 min.
    const p = project([credit({ granted: 100_000, charged: 30_000, reserved: 5_000, usedGpuSecondsByClass: { h100: 540_000 + 90_000 } })], { centsPerGpuHour: { h100: 200, b200: 300 } });
    expect(projectBudgets(p, TODAY)).toEqual([
      { account: 'p1', partition: 'b200', gpuMinutes: 13_000 },
      { account: 'p1', partition: 'h100', gpuMinutes: 10_500 + 19_500 },
    ]);
  });

  it('gives an expired credit line only what it used, and a class without a tariff nothing to buy', () => {
    const p = project([credit({ status: 'expired', granted: 100_000, charged: 30_000, expired: 70_000, usedGpuSecondsByClass: { h100: 540_001 } }), credit({ granted: 10_000 })], { centsPerGpuHour: { b200: 0 } });
    expect(projectBudgets(p, TODAY)).toEqual([
      { account: 'p1', partition: 'b200', gpuMinutes: 0 },
      { account: 'p1', partition: 'h100', gpuMinutes: 9_001 },
    ]);
  });

  it('gives nothing new on an allocation whose period has not started', () => {
    expect(projectBudgets(project([gpu('h100', { periodStart: '2026-07-01', granted: 360_000 })]), TODAY)).toEqual([{ account: 'p1', partition: 'h100', gpuMinutes: 0 }]);
  });
});

describe('creditGpuMinutes', () => {
  it('floors the minutes a sum buys', () => {
    expect(creditGpuMinutes(100, 300)).toBe(20); // €1 at €3/GPU-h = 20 GPU-min
    expect(creditGpuMinutes(101, 300)).toBe(20);
    expect(creditGpuMinutes(-5, 300)).toBe(0);
    expect(creditGpuMinutes(100, undefined)).toBe(0);
  });
});

describe('budgetMismatches', () => {
  it('lists the budgets read back differently or not at all', () => {
    const asked = [
      { account: 'p1', partition: 'h100', gpuMinutes: 100 },
      { account: 'p1', partition: 'b200', gpuMinutes: 5 },
      { account: 'p2', partition: 'h100', gpuMinutes: 7 },
    ];
    const read = [
      { account: 'p1', partition: 'h100', gpuMinutes: 100, usedGpuMinutes: 3 },
      { account: 'p1', partition: 'b200', gpuMinutes: 4, usedGpuMinutes: null },
    ];
    expect(budgetMismatches(asked, read)).toEqual([
      { account: 'p1', partition: 'b200', asked: 5, read: 4 },
      { account: 'p2', partition: 'h100', asked: 7, read: null },
    ]);
  });
  it('leaves out a class the scheduler runs no jobs of (it enforces nothing there)', () => {
    const asked = [{ account: 'p1', partition: 'h100-ch', gpuMinutes: 50 }];
    expect(budgetMismatches(asked, [{ account: 'p1', partition: 'h100-ch', gpuMinutes: null, usedGpuMinutes: null, notEnforced: true }])).toEqual([]);
  });
});

describe('roomGpuSeconds and holdDrift', () => {
  it('counts the largest usable allocation of the class, or what a credit line buys', () => {
    const p = project([gpu('h100', { granted: 3_600, charged: 600 }), gpu('h100', { granted: 1_200 }), gpu('h100', { status: 'expired', granted: 99_999 }), credit({ granted: 1_000 })], { centsPerGpuHour: { h100: 200 } });
    // €10 at €2/GPU-h = 5 GPU-h = 300 min = 18,000 GPU-s, more than the 3,000 left on the GPU-hour allocation.
    expect(roomGpuSeconds(p, 'h100', TODAY)).toBe(18_000);
    expect(roomGpuSeconds({ ...p, tenantActive: false }, 'h100', TODAY)).toBe(0);
    expect(roomGpuSeconds(p, 'b200', TODAY)).toBe(0);
  });

  it('calls a hold the portal would run a stale limit, and one submitted around it what it is', () => {
    expect(holdDrift({ portalJobId: 'j1' }, true)).toBe('staleLimit');
    expect(holdDrift({ portalJobId: null }, true)).toBe('staleLimit');
    expect(holdDrift({ portalJobId: null }, false)).toBe('aroundPortal');
    expect(holdDrift({ portalJobId: 'j1' }, false)).toBe('agreed');
  });
});
