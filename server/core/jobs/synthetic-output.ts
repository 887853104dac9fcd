// The simulated cluster's job output: plausible log lines, the same every time for the same job.
import { hashToUnit } from './estimates';
import { exitStatus, type ExitStatus } from './exit-status';

export interface OutputInput {
  jobId: string;
  kind: 'training' | 'fine_tuning' | 'inference' | 'batch';
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

/** syntheticOutput returns the log a simulated job would have printed after running elapsedSeconds. */
export function syntheticOutput(input: OutputInput): string[] {
  const lines: string[] = [];
  // A waiting job has printed nothing; the page says so in the reader's language.
  if (input.state === 'PENDING' || input.state === 'SUBMITTING') return [];
  lines.push(`[portal] pulling ${input.image}`);
  lines.push(`[portal] running on ${input.nodeList.join(', ') || 'the allocated nodes'} with ${input.gpus} GPU(s)`);
  const seed = hashToUnit(input.jobId);
  const steps = Math.min(40, Math.floor(input.elapsedSeconds / 300));
  for (let i = 1; i <= steps; i++) {
    if (input.kind === 'inference') {
      const rps = Math.round(40 + 30 * Math.sin(i / 3 + seed * 6));
      lines.push(`[serve] t+${i * 5} min  requests/s ${rps}  p95 latency ${Math.round(80 + 40 * seed + (i % 7) * 3)} ms`);
    } else {
      const loss = (2.6 * Math.exp(-i / (12 + seed * 8)) + 0.4 + 0.02 * Math.sin(i)).toFixed(3);
      lines.push(`[${input.kind === 'batch' ? 'batch' : 'train'}] step ${i * 500}  loss ${loss}  throughput ${Math.round(2800 * input.gpus * (0.9 + 0.1 * seed))} tokens/s`);
    }
  }
  const last = LAST_LINE[input.state];
  if (last) lines.push(`${last}${endText(exitStatus(input.exitCode, input.signal))}`);
  return lines;
}
