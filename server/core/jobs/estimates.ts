// Estimates shown before a job is submitted: what it reserves, what it may cost and consume,
// and for fine-tuning how long it should run. Pure; all quantities integers with units.

const SECONDS_PER_HOUR = 3600;

/** jobReservation returns the budget a job holds: GPUs × walltime in GPU-seconds, or its price in cents on a credit line. */
export function jobReservation(input: { unit: 'gpu_seconds' | 'cents'; gpus: number; walltimeSeconds: number; centsPerGpuHour: number }): number {
  const gpuSeconds = input.gpus * input.walltimeSeconds;
  return input.unit === 'gpu_seconds' ? gpuSeconds : Math.ceil((gpuSeconds * input.centsPerGpuHour) / SECONDS_PER_HOUR);
}

/** chargeFor returns what a finished job costs its allocation: its GPU-seconds, or their price in cents (rounded half up). */
export function chargeFor(input: { unit: 'gpu_seconds' | 'cents'; gpuSeconds: number; centsPerGpuHour: number }): number {
  return input.unit === 'gpu_seconds' ? input.gpuSeconds : Math.floor((input.gpuSeconds * input.centsPerGpuHour + SECONDS_PER_HOUR / 2) / SECONDS_PER_HOUR);
}

export interface PowerModel {
  gpusPerNode: number;
  gpuIdlePowerW: number;
  gpuMaxPowerW: number;
  nodeBasePowerW: number;
}

/** The GPU utilisation estimates and the price list assume (measured jobs report their own). */
export const ASSUMED_GPU_UTIL_PERCENT = 90;

/**
 * jobEnergyEstimateWh models a job's IT energy: each GPU at idle + (max − idle) × utilisation, plus
 * its share (GPUs used / GPUs per node) of the node's base power, over the run time; rounded half up.
 */
export function jobEnergyEstimateWh(power: PowerModel, gpus: number, seconds: number, gpuUtilPercent: number): number {
  const gpuW100 = gpus * (power.gpuIdlePowerW * 100 + (power.gpuMaxPowerW - power.gpuIdlePowerW) * gpuUtilPercent);
  const baseW100 = Math.round((gpus * power.nodeBasePowerW * 100) / power.gpusPerNode);
  const wattSeconds100 = (gpuW100 + baseW100) * seconds;
  return Math.floor((wattSeconds100 + 180_000) / 360_000);
}

export interface FineTuneInput {
  /** Model size in billions of parameters (e.g. 7 for a 7B model). */
  paramsBillions: number;
  /** Training tokens in billions (dataset tokens × epochs). */
  tokensBillions: number;
  gpus: number;
  /** Dense BF16 peak of one GPU in TFLOP/s. */
  peakTflops: number;
  /** Model FLOPs utilisation assumed, in percent (30–50 is realistic). */
  utilisationPercent: number;
}

export interface FineTuneEstimate {
  totalFlops: number;
  gpuSeconds: number;
  runtimeSeconds: number;
  /** Suggested walltime: the runtime plus 20 % headroom, rounded up to whole hours. */
  walltimeSeconds: number;
}

/**
 * fineTuneEstimate applies the usual dense-transformer rule: about 6 × parameters × tokens FLOPs,
 * divided by the GPUs' peak rate times the assumed utilisation.
 */
export function fineTuneEstimate(input: FineTuneInput): FineTuneEstimate {
  const totalFlops = 6 * input.paramsBillions * 1e9 * input.tokensBillions * 1e9;
  const effectiveFlopsPerGpu = input.peakTflops * 1e12 * (input.utilisationPercent / 100);
  const gpuSeconds = Math.ceil(totalFlops / effectiveFlopsPerGpu);
  const runtimeSeconds = Math.ceil(gpuSeconds / input.gpus);
  const walltimeSeconds = Math.ceil((runtimeSeconds * 1.2) / SECONDS_PER_HOUR) * SECONDS_PER_HOUR;
  return { totalFlops, gpuSeconds, runtimeSeconds, walltimeSeconds };
}

/** hashToUnit maps a string (a job id) to a number in [0, 1), the same every time. */
export function hashToUnit(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return ((h >>> 0) % 1_000_000) / 1_000_000;
}

export type JobKind = 'training' | 'fine_tuning' | 'inference' | 'batch' | 'interactive';

/**
 * simulatedOutcome decides, deterministically from the job id, what the simulated cluster makes
 * happen: batch and training jobs use 50–95 % of their walltime (1 in 20 batch jobs fails);
 * fine-tuning runs its estimate ±10 %; an inference service runs until stopped or its walltime, and so
 * does an interactive session (issue #28), whose GPUs a person at a notebook keeps mostly waiting.
 */
/** The simulated runtime of a job that runs until it is stopped (a service, a session): beyond any time limit. */
export const RUNS_UNTIL_STOPPED_SECONDS = 10 * 366 * 86_400;

export function simulatedOutcome(input: { jobId: string; kind: JobKind; walltimeSeconds: number; estimatedRuntimeSeconds?: number }): { runtimeSeconds: number; gpuUtilPercent: number; exitCode: number } {
  const u = hashToUnit(input.jobId);
  switch (input.kind) {
    // A service and a session run until they are stopped or their time limit (which may be extended) ends them.
    case 'inference':
      return { runtimeSeconds: RUNS_UNTIL_STOPPED_SECONDS, gpuUtilPercent: 45, exitCode: 0 };
    case 'interactive':
      return { runtimeSeconds: RUNS_UNTIL_STOPPED_SECONDS, gpuUtilPercent: 20, exitCode: 0 };
    case 'fine_tuning': {
      const base = input.estimatedRuntimeSeconds ?? Math.round(input.walltimeSeconds * 0.7);
      return { runtimeSeconds: Math.max(1, Math.round(base * (0.9 + 0.2 * u))), gpuUtilPercent: 88, exitCode: 0 };
    }
    case 'training':
      return { runtimeSeconds: Math.max(1, Math.round(input.walltimeSeconds * (0.5 + 0.45 * u))), gpuUtilPercent: 92, exitCode: 0 };
    case 'batch':
      return { runtimeSeconds: Math.max(1, Math.round(input.walltimeSeconds * (0.5 + 0.45 * u))), gpuUtilPercent: 80, exitCode: u < 0.05 ? 1 : 0 };
  }
}
