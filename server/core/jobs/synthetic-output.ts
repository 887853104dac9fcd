// The simulated cluster's job output: plausible log lines, the same every time for the same job.
import { hashToUnit } from './estimates';

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
}

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
  if (input.state === 'COMPLETED') lines.push('[portal] finished, exit code 0');
  else if (input.state === 'FAILED') lines.push(`[portal] the program exited with code ${input.exitCode ?? 1}`);
  else if (input.state === 'TIMEOUT') lines.push('[portal] walltime reached: the job was stopped (TIMEOUT)');
  else if (input.state === 'CANCELLED') lines.push('[portal] cancelled');
  else if (input.state === 'NODE_FAIL') lines.push('[portal] a node failed: the job was stopped (NODE_FAIL)');
  return lines;
}
