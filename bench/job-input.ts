// The jobs the live-path benchmarks submit, as the browser's job form sends them to `job.submit`.
import { randomUUID } from 'node:crypto';

/** The partition the load queues on (the demo catalogue's H100 partition: 16 nodes × 8 GPUs). */
export const PARTITION = 'h100';
export const PARTITION_GPUS = 128;
/** Sizes the load cycles through, and the walltime and (simulated) runtime of each job. */
export const JOB_GPUS = [1, 2, 4, 8] as const;
export const JOB_WALLTIME_MINUTES = 60;
/** The simulated cluster runs a fine-tuning job 0.9–1.1 × its estimate (server/core/jobs/estimates.ts). */
export const JOB_RUNTIME_SECONDS = 600;

/** The input of the tRPC procedure `job.submit` (server/api/routers/job.ts). */
export interface JobFormInput {
  allocationId: string;
  resourceClassId: string;
  name: string;
  kind: 'training' | 'fine_tuning' | 'inference' | 'batch';
  gpus: number;
  nodes: number;
  walltimeMinutes: number;
  image: string;
  command: string;
  env: Record<string, string>;
  idempotencyKey: string;
  estimate?: { runtimeSeconds?: number; template?: string };
  /** A job array (Slurm's --array text). */
  array?: string;
}

/** jobInput is the n-th job of a load on an allocation, with a fresh idempotency key. */
export function jobInput(allocationId: string, n: number): JobFormInput {
  return {
    allocationId,
    resourceClassId: PARTITION,
    name: `bench-finetune-${n}`,
    kind: 'fine_tuning',
    gpus: JOB_GPUS[n % JOB_GPUS.length]!,
    nodes: 1,
    walltimeMinutes: JOB_WALLTIME_MINUTES,
    image: 'nvcr.io/nvidia/pytorch:24.05-py3',
    command: 'torchrun --nproc-per-node=$GPUS finetune.py --config lora.yaml',
    env: { HF_HOME: '/scratch/hf' },
    idempotencyKey: randomUUID(),
    estimate: { runtimeSeconds: JOB_RUNTIME_SECONDS, template: 'fine-tuning' },
  };
}
