/**
 * Replay metrics as the literature reports them: utilisation = Σ size × runtime
 * / (machine × makespan), makespan = last end − first submit, wait = start −
 * submit, bounded slowdown = max(1, (wait + run) / max(run, threshold)).
 */
import type { ReplayTrace } from './trace';

/** Metrics of one replay. */
export interface ReplayMetrics {
  jobs: number;
  utilization: number;
  avgWaitSeconds: number;
  avgBoundedSlowdown: number;
  makespanSeconds: number;
  firstSubmitSeconds: number;
  lastEndSeconds: number;
}

/** replayMetrics computes the metrics from a trace and its start times (bounded-slowdown threshold 10 s by default). */
export function replayMetrics(trace: ReplayTrace, startSeconds: Float64Array, slowdownThresholdSeconds = 10): ReplayMetrics {
  const n = trace.jobCount;
  if (n === 0) {
    return { jobs: 0, utilization: 0, avgWaitSeconds: 0, avgBoundedSlowdown: 0, makespanSeconds: 0, firstSubmitSeconds: 0, lastEndSeconds: 0 };
  }
  let firstSubmit = Infinity;
  let lastEnd = -Infinity;
  let work = 0;
  let waitSum = 0;
  let bsldSum = 0;
  for (let i = 0; i < n; i++) {
    const submit = trace.submitSeconds[i]!;
    const run = trace.runtimeSeconds[i]!;
    const begin = startSeconds[i]!;
    const end = begin + run;
    if (submit < firstSubmit) firstSubmit = submit;
    if (end > lastEnd) lastEnd = end;
    work += trace.processors[i]! * run;
    const wait = begin - submit;
    waitSum += wait;
    bsldSum += Math.max(1, (wait + run) / Math.max(run, slowdownThresholdSeconds));
  }
  const makespan = lastEnd - firstSubmit;
  return {
    jobs: n,
    utilization: makespan > 0 ? work / (trace.machineSize * makespan) : 0,
    avgWaitSeconds: waitSum / n,
    avgBoundedSlowdown: bsldSum / n,
    makespanSeconds: makespan,
    firstSubmitSeconds: firstSubmit,
    lastEndSeconds: lastEnd,
  };
}
