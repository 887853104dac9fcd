// How well a job used what it held, from the figures it is charged for. Pure; the run time is the
// cluster's (GPU-seconds ÷ GPUs), never the wall clock of a simulated cluster that runs faster.
import type { PowerModel } from './estimates';

export interface JobEfficiency {
  /** Run time in the cluster's time: GPU-seconds ÷ GPUs. */
  runSeconds: number;
  /** Run time as a share of the requested walltime, in whole percent. */
  walltimeUsedPercent: number;
  /** Mean GPU utilisation read back from the IT energy through the power model, whole percent; null before it ran. */
  meanGpuUtilPercent: number | null;
}

/** jobRunSeconds returns a job's run time in the cluster's time: its GPU-seconds ÷ its GPUs, rounded. */
export function jobRunSeconds(gpuSeconds: number, gpus: number): number {
  return gpus > 0 ? Math.round(gpuSeconds / gpus) : 0;
}

/**
 * meanGpuUtilPercent inverts the energy model of jobEnergyEstimateWh: the mean draw (energy ÷ run
 * time) less the GPUs' idle power and their share of the node's base power, over the GPUs' dynamic
 * range; clamped to 0–100 and rounded. Null when nothing ran or the model has no dynamic range.
 */
export function meanGpuUtilPercent(power: PowerModel, gpus: number, runSeconds: number, energyWh: number): number | null {
  const range = gpus * (power.gpuMaxPowerW - power.gpuIdlePowerW);
  if (runSeconds <= 0 || gpus <= 0 || range <= 0) return null;
  const meanW = (energyWh * 3600) / runSeconds;
  const floorW = gpus * power.gpuIdlePowerW + (power.nodeBasePowerW * gpus) / power.gpusPerNode;
  return Math.min(100, Math.max(0, Math.round(((meanW - floorW) * 100) / range)));
}

/** jobEfficiency returns a job's run time in the cluster's time, the share of its walltime it used and its mean GPU utilisation. */
export function jobEfficiency(input: { power: PowerModel; gpus: number; walltimeSeconds: number; gpuSeconds: number; energyWh: number }): JobEfficiency {
  const runSeconds = jobRunSeconds(input.gpuSeconds, input.gpus);
  return {
    runSeconds,
    walltimeUsedPercent: input.walltimeSeconds > 0 ? Math.round((runSeconds * 100) / input.walltimeSeconds) : 0,
    meanGpuUtilPercent: meanGpuUtilPercent(input.power, input.gpus, runSeconds, input.energyWh),
  };
}
