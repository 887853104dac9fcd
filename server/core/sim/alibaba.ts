/**
 * Alibaba cluster-trace-gpu-v2023 (openb) pod CSV → replay trace on a flat
 * pool of GPUs. GPUs = ceil(num_gpu × gpu_milli / 1000) (a shared GPU
 * fraction rounds up to one whole GPU); submit = creation_time; runtime =
 * deletion_time − scheduled_time; estimate = runtime (the trace has no user
 * estimates). Pods with 0 GPUs, a missing time, runtime ≤ 0, or more GPUs than
 * the machine are dropped.
 */
import { SimInputError } from './errors';
import { traceFromJobs, type ReplayJob, type ReplayTrace } from './trace';

/** How many pods were dropped, by rule (first rule that applies). */
export interface AlibabaDrops {
  noGpu: number;
  noTimes: number;
  noRuntime: number;
  tooLarge: number;
}

/** What `parseAlibabaPods` returns. */
export interface AlibabaParseResult {
  trace: ReplayTrace;
  records: number;
  dropped: number;
  drops: AlibabaDrops;
}

function columns(headerLine: string, wanted: readonly string[], what: string): number[] {
  const names = headerLine.trim().split(',');
  return wanted.map((w) => {
    const i = names.indexOf(w);
    if (i < 0) throw new SimInputError(`${what}: missing column "${w}"`);
    return i;
  });
}

function dataLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}

/** parseAlibabaPods reads the pod CSV into a trace for a machine of `machineGpus` GPUs. */
export function parseAlibabaPods(text: string, machineGpus: number): AlibabaParseResult {
  const lines = dataLines(text);
  const [head, ...rows] = lines;
  if (head === undefined) throw new SimInputError('Alibaba pod CSV is empty');
  const [cNumGpu, cMilli, cCreate, cDelete, cSched] = columns(
    head,
    ['num_gpu', 'gpu_milli', 'creation_time', 'deletion_time', 'scheduled_time'],
    'Alibaba pod CSV',
  ) as [number, number, number, number, number];
  const drops: AlibabaDrops = { noGpu: 0, noTimes: 0, noRuntime: 0, tooLarge: 0 };
  const jobs: ReplayJob[] = [];
  const num = (s: string | undefined): number => (s === undefined || s.trim() === '' ? Number.NaN : Number(s));
  rows.forEach((line, row) => {
    const f = line.trim().split(',');
    const numGpu = num(f[cNumGpu]);
    const milli = num(f[cMilli]);
    const gpus = Math.ceil(((Number.isFinite(numGpu) ? numGpu : 0) * (Number.isFinite(milli) ? milli : 1000)) / 1000);
    const created = num(f[cCreate]);
    const deleted = num(f[cDelete]);
    const scheduled = num(f[cSched]);
    if (!(gpus > 0)) drops.noGpu++;
    else if (!Number.isFinite(created) || !Number.isFinite(deleted) || !Number.isFinite(scheduled)) drops.noTimes++;
    else if (deleted - scheduled <= 0) drops.noRuntime++;
    else if (gpus > machineGpus) drops.tooLarge++;
    else {
      const runtime = deleted - scheduled;
      jobs.push({ jobNumber: row + 1, submitSeconds: created, runtimeSeconds: runtime, estimateSeconds: runtime, processors: gpus });
    }
  });
  const dropped = drops.noGpu + drops.noTimes + drops.noRuntime + drops.tooLarge;
  return { trace: traceFromJobs(jobs, machineGpus), records: rows.length, dropped, drops };
}

/** alibabaNodeGpus sums the `gpu` column of the GPU nodes CSV: the machine size for pod replay. */
export function alibabaNodeGpus(text: string): number {
  const [head, ...rows] = dataLines(text);
  if (head === undefined) throw new SimInputError('Alibaba nodes CSV is empty');
  const [cGpu] = columns(head, ['gpu'], 'Alibaba nodes CSV') as [number];
  let total = 0;
  for (const line of rows) {
    const v = Number(line.trim().split(',')[cGpu]);
    if (Number.isFinite(v) && v > 0) total += v;
  }
  if (total <= 0) throw new SimInputError('Alibaba nodes CSV lists no GPUs');
  return total;
}
