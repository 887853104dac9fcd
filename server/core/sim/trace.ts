/**
 * A workload trace for fast replay on a flat pool of processors (or GPUs):
 * columns in typed arrays, jobs sorted by submit time.
 */
import { SimInputError } from './errors';

/** A replayable trace. Column i describes job i; jobs are in submit order. */
export interface ReplayTrace {
  jobCount: number;
  /** Size of the flat pool (processors or GPUs). */
  machineSize: number;
  submitSeconds: Float64Array;
  runtimeSeconds: Float64Array;
  /** The user's estimate (requested time), used by EASY. */
  estimateSeconds: Float64Array;
  processors: Int32Array;
  /** The job's number in the source (SWF field 1, or CSV row). */
  jobNumber: Int32Array;
}

/** One job when building a trace from plain values. */
export interface ReplayJob {
  submitSeconds: number;
  runtimeSeconds: number;
  estimateSeconds: number;
  processors: number;
  jobNumber?: number;
}

/** traceFromJobs builds a trace (stably sorted by submit time) from plain job values. */
export function traceFromJobs(jobs: readonly ReplayJob[], machineSize: number): ReplayTrace {
  if (!Number.isInteger(machineSize) || machineSize < 1) throw new SimInputError('machine size must be an integer ≥ 1');
  const order = jobs.map((_, i) => i);
  order.sort((a, b) => jobs[a]!.submitSeconds - jobs[b]!.submitSeconds || a - b);
  const n = jobs.length;
  const trace: ReplayTrace = {
    jobCount: n,
    machineSize,
    submitSeconds: new Float64Array(n),
    runtimeSeconds: new Float64Array(n),
    estimateSeconds: new Float64Array(n),
    processors: new Int32Array(n),
    jobNumber: new Int32Array(n),
  };
  order.forEach((src, i) => {
    const j = jobs[src]!;
    trace.submitSeconds[i] = j.submitSeconds;
    trace.runtimeSeconds[i] = j.runtimeSeconds;
    trace.estimateSeconds[i] = j.estimateSeconds;
    trace.processors[i] = j.processors;
    trace.jobNumber[i] = j.jobNumber ?? src + 1;
  });
  return trace;
}

// The copies follow one another with the original's arrival pattern; their tails may overlap.
/** repeatTrace concatenates `times` copies of a trace, copy k shifted by k × (last submit − first submit + 1) seconds. */
export function repeatTrace(trace: ReplayTrace, times: number): ReplayTrace {
  if (!Number.isInteger(times) || times < 1) throw new SimInputError('repeat count must be an integer ≥ 1');
  const n = trace.jobCount;
  const total = n * times;
  const span = n === 0 ? 0 : trace.submitSeconds[n - 1]! - trace.submitSeconds[0]! + 1;
  const out: ReplayTrace = {
    jobCount: total,
    machineSize: trace.machineSize,
    submitSeconds: new Float64Array(total),
    runtimeSeconds: new Float64Array(total),
    estimateSeconds: new Float64Array(total),
    processors: new Int32Array(total),
    jobNumber: new Int32Array(total),
  };
  for (let k = 0; k < times; k++) {
    const offset = k * n;
    for (let i = 0; i < n; i++) out.submitSeconds[offset + i] = trace.submitSeconds[i]! + k * span;
    out.runtimeSeconds.set(trace.runtimeSeconds, offset);
    out.estimateSeconds.set(trace.estimateSeconds, offset);
    out.processors.set(trace.processors, offset);
    for (let i = 0; i < n; i++) out.jobNumber[offset + i] = offset + i + 1;
  }
  return out;
}
