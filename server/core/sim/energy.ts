/**
 * Power and energy. A GPU draws idle + (max − idle) × utilisation; a node
 * draws its base power plus its GPUs; a down node draws nothing. Utilisation
 * is in whole percent, so powers are exact integers in centiwatts (W × 100).
 */
import type { Partition } from './types';

/** The part of a partition that determines power. */
export type PowerModel = Pick<Partition, 'gpusPerNode' | 'gpuIdlePowerW' | 'gpuMaxPowerW' | 'nodeBasePowerW'>;

/** One job's share of a node: how many GPUs it holds there and how busy they are. */
export interface GpuAllocation {
  gpus: number;
  gpuUtilPercent: number;
}

/** gpuPowerCentiW is one GPU's draw in centiwatts: 100 × idle + (max − idle) × utilisation percent. */
export function gpuPowerCentiW(model: PowerModel, gpuUtilPercent: number): number {
  return model.gpuIdlePowerW * 100 + (model.gpuMaxPowerW - model.gpuIdlePowerW) * gpuUtilPercent;
}

/** nodePowerCentiW is a node's draw in centiwatts: base + idle GPUs + busy GPUs (0 when the node is down). */
export function nodePowerCentiW(model: PowerModel, allocations: readonly GpuAllocation[], down: boolean): number {
  if (down) return 0;
  let busyGpus = 0;
  let power = model.nodeBasePowerW * 100;
  for (const a of allocations) {
    busyGpus += a.gpus;
    power += a.gpus * gpuPowerCentiW(model, a.gpuUtilPercent);
  }
  power += Math.max(0, model.gpusPerNode - busyGpus) * model.gpuIdlePowerW * 100;
  return power;
}

/** nodePowerW is a node's draw in whole watts (rounded half up from centiwatts). */
export function nodePowerW(model: PowerModel, allocations: readonly GpuAllocation[], down: boolean): number {
  return Math.round(nodePowerCentiW(model, allocations, down) / 100);
}

/** Inputs of `jobEnergyWh`. */
export interface JobEnergyInput {
  model: PowerModel;
  gpus: number;
  gpuUtilPercent: number;
  runSeconds: number;
}

// Exact: numerator in centiwatt-seconds × gpusPerNode (BigInt, no overflow), one rounding at the end.
/** jobEnergyWh is a job's energy in whole Wh: run × (gpus × GPU power + node base × gpus / gpusPerNode) / 3600, rounded half up once. */
export function jobEnergyWh(input: JobEnergyInput): number {
  const { model, gpus, gpuUtilPercent, runSeconds } = input;
  const perNode = BigInt(model.gpusPerNode);
  const gpuCentiW = BigInt(gpuPowerCentiW(model, gpuUtilPercent));
  const hundred = BigInt(100);
  const two = BigInt(2);
  const numerator =
    BigInt(runSeconds) * (BigInt(gpus) * perNode * gpuCentiW + BigInt(model.nodeBasePowerW) * hundred * BigInt(gpus));
  const denominator = perNode * hundred * BigInt(3600);
  return Number((two * numerator + denominator) / (two * denominator));
}
