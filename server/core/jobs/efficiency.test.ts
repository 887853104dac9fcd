import { describe, expect, it } from 'vitest';
import { jobEfficiency, jobRunSeconds, meanGpuUtilPercent } from './efficiency';
import { jobEnergyEstimateWh, type PowerModel } from './estimates';
import { inferenceTraffic } from './inference';

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

describe('inferenceTraffic', () => {
  it('grows with the time the service served, the same every time', () => {
    const id = '3f2a9c1e-0000-4000-8000-000000000000';
    const early = inferenceTraffic({ jobId: id, gpus: 8, runSeconds: 600 });
    const later = inferenceTraffic({ jobId: id, gpus: 8, runSeconds: 1200 });
    expect(early).toEqual(inferenceTraffic({ jobId: id, gpus: 8, runSeconds: 600 }));
    expect(early.requests).toBeGreaterThanOrEqual(600 * 8 * 0.5);
    expect(early.requests).toBeLessThanOrEqual(600 * 8 * 1.5);
    expect(later.requests).toBeGreaterThan(early.requests);
    expect(later.tokens).toBeGreaterThan(early.tokens);
    expect(inferenceTraffic({ jobId: id, gpus: 8, runSeconds: 0 })).toMatchObject({ requests: 0, tokens: 0 });
  });
});
