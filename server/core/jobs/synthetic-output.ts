// The simulated cluster's job output: plausible log lines, the same every time for the same job.
// The lines come from pure functions of the job and the simulated minute (`syntheticProgress`,
// `progressText`): the simulated cluster writes them into the job's files as it runs
// (adapters/scheduler/simulated-output.ts); `syntheticOutput` gives a whole log at once, coarser.
import { hashToUnit, type JobKind } from './estimates';
import { exitStatus, type ExitStatus } from './exit-status';

export interface OutputInput {
  jobId: string;
  kind: JobKind;
  image: string;
  nodeList: string[];
  gpus: number;
  state: string;
  /** Seconds the job has run (so far). */
  elapsedSeconds: number;
  exitCode: number | null;
  /** The signal that ended it, as the job page shows it. */
  signal: number | null;
}

/** What a job's progress lines depend on: which job (the seed), what it does, on how many GPUs. */
export type ProgressInput = Pick<OutputInput, 'jobId' | 'kind' | 'gpus'>;

/** One progress report, `minute` simulated minutes into the run. */
export type Progress =
  | { kind: 'train' | 'batch'; minute: number; step: number; loss: number; learningRate: number; tokensPerSecond: number }
  | { kind: 'serve'; minute: number; requestsPerSecond: number; p95LatencyMs: number };

/** Optimizer steps a training job makes per simulated minute. */
export const STEPS_PER_MINUTE = 100;
/** Minutes of linear warm-up before the learning rate peaks and decays as 1/√t. */
const WARMUP_MINUTES = 10;
const PEAK_LEARNING_RATE: Record<JobKind, number> = { training: 3e-4, fine_tuning: 2e-4, batch: 0, inference: 0, interactive: 0 };

/**
 * syntheticProgress is what a simulated job reports `minute` simulated minutes (≥ 1) into its run: for
 * training, fine-tuning and batch the step, a falling loss, the learning rate and the throughput; for an
 * inference service requests per second and the p95 latency. The same job and minute give the same figures.
 */
export function syntheticProgress(input: ProgressInput, minute: number): Progress {
  const seed = hashToUnit(input.jobId);
  if (input.kind === 'inference') {
    return {
      kind: 'serve',
      minute,
      requestsPerSecond: Math.round(40 + 30 * Math.sin(minute / 15 + seed * 6)),
      p95LatencyMs: Math.round(80 + 40 * seed + (Math.floor(minute / 5) % 7) * 3 + 4 * Math.sin(minute * 1.3 + seed * 5)),
    };
  }
  const loss = 2.6 * Math.exp(-minute / (60 + 40 * seed)) + 0.4 + 0.02 * Math.sin(minute / 5) + 0.01 * Math.sin(minute * 1.7 + seed * 7);
  const peak = PEAK_LEARNING_RATE[input.kind];
  const learningRate = peak * Math.min(minute / WARMUP_MINUTES, Math.sqrt(WARMUP_MINUTES / minute));
  const tokensPerSecond = Math.round(2800 * input.gpus * (0.9 + 0.1 * seed) * (1 + 0.03 * Math.sin(minute * 0.9 + seed * 11)));
  return { kind: input.kind === 'batch' ? 'batch' : 'train', minute, step: minute * STEPS_PER_MINUTE, loss: round(loss, 4), learningRate, tokensPerSecond };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** progressText is a progress report as the job prints it (a batch job has no learning rate). */
export function progressText(progress: Progress): string {
  if (progress.kind === 'serve') return `[serve] t+${progress.minute} min  requests/s ${progress.requestsPerSecond}  p95 latency ${progress.p95LatencyMs} ms`;
  const lr = progress.kind === 'train' ? `  lr ${progress.learningRate.toExponential(2)}` : '';
  return `[${progress.kind}] step ${progress.step}  loss ${progress.loss.toFixed(3)}${lr}  throughput ${progress.tokensPerSecond} tokens/s`;
}

/** The lines a job prints as it starts: its image and where it runs. */
export function startLines(input: Pick<OutputInput, 'image' | 'nodeList' | 'gpus'>): string[] {
  return [`[portal] pulling ${input.image}`, `[portal] running on ${input.nodeList.join(', ') || 'the allocated nodes'} with ${input.gpus} GPU(s)`];
}

/** The job's end as the last line says it, in the figures of the job page: "signal 15 (SIGTERM), Slurm 0:15". */
function endText(exit: ExitStatus | null): string {
  if (!exit) return '';
  if (exit.signal === null) return `: exit code ${exit.exitCode}, Slurm ${exit.slurm}`;
  return `: signal ${exit.signal}${exit.signalName ? ` (${exit.signalName})` : ''}, Slurm ${exit.slurm}`;
}

const LAST_LINE: Record<string, string> = {
  COMPLETED: '[portal] finished',
  FAILED: '[portal] the program failed',
  TIMEOUT: '[portal] walltime reached, the job was stopped (TIMEOUT)',
  CANCELLED: '[portal] cancelled',
  NODE_FAIL: '[portal] a node failed, the job was stopped (NODE_FAIL)',
  PREEMPTED: '[portal] preempted, another job took its nodes (PREEMPTED)',
};

/** lastLine is the line that says how a job ended, or null while it has not. */
export function lastLine(state: string, exitCode: number | null, signal: number | null): string | null {
  const last = LAST_LINE[state];
  return last ? `${last}${endText(exitStatus(exitCode, signal))}` : null;
}

/** syntheticOutput returns the log a simulated job would have printed after running elapsedSeconds (a step every 5 minutes, at most 40). */
export function syntheticOutput(input: OutputInput): string[] {
  // A waiting job has printed nothing; the page says so in the reader's language.
  if (input.state === 'PENDING' || input.state === 'SUBMITTING') return [];
  const lines = startLines(input);
  const steps = Math.min(40, Math.floor(input.elapsedSeconds / 300));
  for (let i = 1; i <= steps; i++) lines.push(progressText(syntheticProgress(input, i * 5)));
  const last = lastLine(input.state, input.exitCode, input.signal);
  if (last) lines.push(last);
  return lines;
}
