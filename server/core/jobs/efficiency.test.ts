import { describe, expect, it } from 'vitest';
import { jobEfficiency, jobRunSeconds, meanGpuUtilPercent } from './efficiency';
import { jobEnergyEstimateWh, type PowerModel } from './estimates';

const h100: PowerModel = { gpusPerNode: 8, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1200 };

describe('jobRunSeconds', () => {
  it.each([
    ['8.63 GPU-h on 8 GPUs run 1 h 4 min 43 s', Math.round(8.63 * 3600), 8, 3884],
    ['one GPU', 5400, 1, 5400],
    ['nothing ran', 0, 8, 0],
  ])('%s', (_label, gpuSeconds, gpus, expected) => {
    expect(jobRunSeconds(gpuSeconds, gpus)).toBe(expected);
  });
});

describe('meanGpuUtilPercent', () => {
  it.each([92, 45, 5, 100, 0])('reads %i %% back from the energy the model gives for it', (util) => {
    const energy = jobEnergyEstimateWh(h100, 8, 7200, util);
    expect(meanGpuUtilPercent(h100, 8, 7200, energy)).toBe(util);
  });
  it('is null before the job ran', () => {
    expect(meanGpuUtilPercent(h100, 8, 0, 0)).toBeNull();
  });
});

describe('jobEfficiency', () => {
  it('relates the run time to the walltime requested', () => {
    expect(jobEfficiency({ power: h100, gpus: 8, walltimeSeconds: 4 * 3600, gpuSeconds: 8 * 3 * 3600, energyWh: jobEnergyEstimateWh(h100, 8, 3 * 3600, 80) })).toEqual({
      runSeconds: 3 * 3600,
      walltimeUsedPercent: 75,
      meanGpuUtilPercent: 80,
    });
  });
});
