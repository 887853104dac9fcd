import { describe, expect, it } from 'vitest';
import { gpuPowerCentiW, jobEnergyWh, nodePowerW } from './energy';

const model = { gpusPerNode: 8, gpuIdlePowerW: 100, gpuMaxPowerW: 700, nodeBasePowerW: 1000 };

describe('energy', () => {
  it('a known job to the watt-hour', () => {
    // 4 GPUs at 80 %: each 100 + (700 − 100) × 0.8 = 580 W → 2,320 W.
    // Node base share: 1,000 W × 4 / 8 GPUs = 500 W. Total 2,820 W × 2 h = 5,640 Wh.
    expect(jobEnergyWh({ model, gpus: 4, gpuUtilPercent: 80, runSeconds: 7200 })).toBe(5640);
  });

  it('rounds once at the end, half up', () => {
    // 1 GPU idle (0 %) = 100 W + base share 1000/8 = 125 W → 225 W. 10 s → 2,250 J = 0.625 Wh → 1.
    expect(jobEnergyWh({ model, gpus: 1, gpuUtilPercent: 0, runSeconds: 10 })).toBe(1);
    // 8 s → 1,800 J = 0.5 Wh exactly → rounds up to 1; 7 s → 0.4375 Wh → 0.
    expect(jobEnergyWh({ model, gpus: 1, gpuUtilPercent: 0, runSeconds: 8 })).toBe(1);
    expect(jobEnergyWh({ model, gpus: 1, gpuUtilPercent: 0, runSeconds: 7 })).toBe(0);
  });

  it('stays exact for huge jobs', () => {
    // 1,000 GPUs at 100 % for a year: (700 + 125) W × 1000 × 8760 h = 7,227,000,000 Wh.
    expect(jobEnergyWh({ model, gpus: 1000, gpuUtilPercent: 100, runSeconds: 365 * 24 * 3600 })).toBe(7_227_000_000);
  });

  it('node power: idle, busy, down', () => {
    expect(gpuPowerCentiW(model, 80)).toBe(58000);
    // Idle: 1,000 + 8 × 100 = 1,800 W.
    expect(nodePowerW(model, [], false)).toBe(1800);
    // 4 GPUs at 80 % + 4 idle: 1,000 + 4 × 580 + 4 × 100 = 3,720 W.
    expect(nodePowerW(model, [{ gpus: 4, gpuUtilPercent: 80 }], false)).toBe(3720);
    expect(nodePowerW(model, [{ gpus: 4, gpuUtilPercent: 80 }], true)).toBe(0);
  });
});
