import { describe, expect, it } from 'vitest';
import { chargeFor, fineTuneEstimate, hashToUnit, jobEnergyEstimateWh, jobReservation, RUNS_UNTIL_STOPPED_SECONDS, simulatedOutcome } from './estimates';

describe('jobReservation and chargeFor', () => {
  it('reserves GPUs × walltime on GPU-hour budgets and its price on credit lines', () => {
    expect(jobReservation({ unit: 'gpu_seconds', gpus: 8, walltimeSeconds: 7200, centsPerGpuHour: 290 })).toBe(57_600);
    expect(jobReservation({ unit: 'cents', gpus: 8, walltimeSeconds: 7200, centsPerGpuHour: 290 })).toBe(4640); // 16 GPU-h × €2.90
    expect(jobReservation({ unit: 'cents', gpus: 1, walltimeSeconds: 1, centsPerGpuHour: 290 })).toBe(1); // rounded up
  });
  it('charges actual GPU-seconds, or their price rounded half up', () => {
    expect(chargeFor({ unit: 'gpu_seconds', gpuSeconds: 12_345, centsPerGpuHour: 290 })).toBe(12_345);
    expect(chargeFor({ unit: 'cents', gpuSeconds: 3600, centsPerGpuHour: 290 })).toBe(290);
    expect(chargeFor({ unit: 'cents', gpuSeconds: 6, centsPerGpuHour: 290 })).toBe(0); // 0.48 ct
    expect(chargeFor({ unit: 'cents', gpuSeconds: 7, centsPerGpuHour: 290 })).toBe(1); // 0.56 ct
  });
});

describe('jobEnergyEstimateWh', () => {
  it('models GPUs plus their share of the node to the watt-hour', () => {
    // 4 GPUs at 100 + 600 × 0.8 = 580 W each = 2,320 W; base 1,000 W × 4/8 = 500 W; 2,820 W × 2 h = 5,640 Wh.
    expect(jobEnergyEstimateWh({ gpusPerNode: 8, gpuIdlePowerW: 100, gpuMaxPowerW: 700, nodeBasePowerW: 1000 }, 4, 7200, 80)).toBe(5640);
  });
});

describe('fineTuneEstimate', () => {
  it('follows 6 × parameters × tokens over peak × utilisation', () => {
    // 7B × 1B tokens × 6 = 4.2e19 FLOPs; H100 989 TFLOP/s × 40 % = 3.956e14 FLOP/s per GPU → 106,168 GPU-s.
    const e = fineTuneEstimate({ paramsBillions: 7, tokensBillions: 1, gpus: 8, peakTflops: 989, utilisationPercent: 40 });
    expect(e.totalFlops).toBe(4.2e19);
    expect(e.gpuSeconds).toBe(106_168);
    expect(e.runtimeSeconds).toBe(13_271);
    expect(e.walltimeSeconds).toBe(5 * 3600); // 13,271 s × 1.2 = 4.4 h → 5 h
  });
});

describe('simulatedOutcome', () => {
  it('is the same for the same job and keeps within the walltime except for services', () => {
    const a = simulatedOutcome({ jobId: 'job-1', kind: 'training', walltimeSeconds: 3600 });
    expect(simulatedOutcome({ jobId: 'job-1', kind: 'training', walltimeSeconds: 3600 })).toEqual(a);
    expect(a.runtimeSeconds).toBeGreaterThanOrEqual(1800);
    expect(a.runtimeSeconds).toBeLessThanOrEqual(3420);
    // A service and a session run until stopped: past any time limit, also one extended to a class's longest.
    expect(simulatedOutcome({ jobId: 'x', kind: 'inference', walltimeSeconds: 600 }).runtimeSeconds).toBe(RUNS_UNTIL_STOPPED_SECONDS);
    expect(simulatedOutcome({ jobId: 'x', kind: 'interactive', walltimeSeconds: 600 }).runtimeSeconds).toBeGreaterThan(365 * 86_400);
    expect(hashToUnit('abc')).toBe(hashToUnit('abc'));
  });
});
