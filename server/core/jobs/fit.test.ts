import { describe, expect, it } from 'vitest';
import { maxWalltimeFitting, reservationShortfalls, type ReservationRoom } from './fit';

const gpuHours = (h: number) => Math.round(h * 3600);
const grant: ReservationRoom = { unit: 'gpu_seconds', available: gpuHours(24.5), monthCapLeftCents: null, gpusAtOnce: { limit: 32, inUse: 16 } };
const credit: ReservationRoom = { unit: 'cents', available: 12_000, monthCapLeftCents: 8_000, gpusAtOnce: null };
const creditWithBudgets: ReservationRoom = { ...credit, budgetsLeftCents: [{ limit: 'projectMonthly', leftCents: 6_000 }, { limit: 'personMonthly', leftCents: 2_000 }] };
const grantWithBudget: ReservationRoom = { ...grant, budgetsLeftCents: [{ limit: 'projectTotal', leftCents: 0 }] };

describe('reservationShortfalls', () => {
  it.each([
    ['a job within every limit', grant, { gpus: 8, walltimeSeconds: 3 * 3600, centsPerGpuHour: 250 }, []],
    [
      'more GPU-hours than are left: 3 h on 8 GPUs fit 24.5 GPU-h',
      grant,
      { gpus: 8, walltimeSeconds: 4 * 3600, centsPerGpuHour: 250 },
      [{ limit: 'budget', unit: 'gpu_seconds', needed: gpuHours(32), left: gpuHours(24.5), gpus: 8, maxWalltimeSeconds: 3 * 3600 + 3 * 60 }],
    ],
    [
      'more GPUs at once than the allocation allows',
      grant,
      { gpus: 24, walltimeSeconds: 3600, centsPerGpuHour: 250 },
      [{ limit: 'gpusAtOnce', limitGpus: 32, inUseGpus: 16, requestedGpus: 24, maxGpus: 16 }],
    ],
    [
      'a credit line over its monthly cap but within its balance',
      credit,
      { gpus: 8, walltimeSeconds: 5 * 3600, centsPerGpuHour: 250 },
      [{ limit: 'monthlyCap', unit: 'cents', needed: 10_000, left: 8_000, gpus: 8, maxWalltimeSeconds: 4 * 3600 }],
    ],
    [
      'a credit line over both balance and cap',
      credit,
      { gpus: 8, walltimeSeconds: 10 * 3600, centsPerGpuHour: 250 },
      [
        { limit: 'budget', unit: 'cents', needed: 20_000, left: 12_000, gpus: 8, maxWalltimeSeconds: 6 * 3600 },
        { limit: 'monthlyCap', unit: 'cents', needed: 20_000, left: 8_000, gpus: 8, maxWalltimeSeconds: 4 * 3600 },
      ],
    ],
    [
      'a credit line within its cap but over the project’s monthly budget and the person’s limit: both listed, the person’s binds',
      creditWithBudgets,
      { gpus: 8, walltimeSeconds: 3 * 3600 + 1800, centsPerGpuHour: 250 },
      [
        { limit: 'projectMonthly', unit: 'cents', needed: 7_000, left: 6_000, gpus: 8, maxWalltimeSeconds: 3 * 3600 },
        { limit: 'personMonthly', unit: 'cents', needed: 7_000, left: 2_000, gpus: 8, maxWalltimeSeconds: 3600 },
      ],
    ],
    [
      'project budgets do not apply to GPU-hour allocations',
      grantWithBudget,
      { gpus: 8, walltimeSeconds: 3 * 3600, centsPerGpuHour: 250 },
      [],
    ],
    [
      'an overdrawn allocation: nothing fits',
      { ...grant, available: -500, gpusAtOnce: null },
      { gpus: 1, walltimeSeconds: 60, centsPerGpuHour: 250 },
      [{ limit: 'budget', unit: 'gpu_seconds', needed: 60, left: 0, gpus: 1, maxWalltimeSeconds: 0 }],
    ],
  ] as const)('%s', (_label, room, asked, expected) => {
    expect(reservationShortfalls(room, asked)).toEqual(expected);
  });
});

describe('maxWalltimeFitting', () => {
  it.each([
    ['GPU-seconds, whole minutes down', 'gpu_seconds', gpuHours(24.5), 8, 250, 3 * 3600 + 3 * 60],
    ['cents at the tariff', 'cents', 2_000, 8, 250, 3600],
    ['cents where rounding up would overshoot', 'cents', 100, 3, 333, 6 * 60],
    ['nothing left', 'cents', 0, 8, 250, 0],
  ] as const)('%s', (_label, unit, left, gpus, cph, expected) => {
    expect(maxWalltimeFitting(unit, left, gpus, cph)).toBe(expected);
  });
});
