/**
 * Standard Workload Format (Parallel Workloads Archive) parsing for replay.
 * Size = allocated processors (field 5), or requested (field 8) when field 5
 * is −1; runtime = field 4; estimate = requested time (field 9), or the
 * runtime when field 9 is missing (≤ 0). Jobs with runtime ≤ 0, size ≤ 0, or
 * size above the machine (header `; MaxProcs:`) are dropped.
 */
import { SimInputError } from './errors';
import { traceFromJobs, type ReplayJob, type ReplayTrace } from './trace';

/** How many jobs were dropped, by rule (each job counted once, first rule that applies). */
export interface SwfDrops {
  noRuntime: number;
  noSize: number;
  tooLarge: number;
}

/** What `parseSwf` returns. */
export interface SwfParseResult {
  trace: ReplayTrace;
  records: number;
  dropped: number;
  drops: SwfDrops;
  header: Record<string, string>;
}

/** Options of `parseSwf`: a machine size overrides the header. */
export interface SwfOptions {
  machineSize?: number;
}

/** parseSwf reads SWF text into a replay trace, applying the drop rules and −1 fallbacks. */
export function parseSwf(text: string, options: SwfOptions = {}): SwfParseResult {
  const header: Record<string, string> = {};
  const rows: number[][] = [];
  const lines = text.split('\n');
  for (let ln = 0; ln < lines.length; ln++) {
    const line = lines[ln]!.trim();
    if (line === '') continue;
    if (line.startsWith(';')) {
      const m = /^;\s*([A-Za-z]+)\s*:\s*(.*)$/.exec(line);
      if (m && header[m[1]!] === undefined) header[m[1]!] = m[2]!.trim();
      continue;
    }
    const fields = line.split(/\s+/);
    if (fields.length < 9) throw new SimInputError(`SWF line ${ln + 1}: expected 18 fields, found ${fields.length}`);
    const row = new Array<number>(9);
    for (let f = 0; f < 9; f++) {
      const v = Number(fields[f]);
      if (!Number.isFinite(v)) throw new SimInputError(`SWF line ${ln + 1}: field ${f + 1} is not a number`);
      row[f] = v;
    }
    rows.push(row);
  }
  const machineSize = options.machineSize ?? headerInt(header['MaxProcs']) ?? headerInt(header['MaxNodes']);
  if (machineSize === undefined) throw new SimInputError('SWF has no "; MaxProcs:" header; give the machine size');

  const drops: SwfDrops = { noRuntime: 0, noSize: 0, tooLarge: 0 };
  const jobs: ReplayJob[] = [];
  for (const r of rows) {
    const runtime = r[3]!;
    const allocated = r[4]!;
    const size = allocated === -1 ? r[7]! : allocated;
    const requestedTime = r[8]!;
    if (runtime <= 0) drops.noRuntime++;
    else if (size <= 0) drops.noSize++;
    else if (size > machineSize) drops.tooLarge++;
    else {
      jobs.push({
        jobNumber: r[0]!,
        submitSeconds: r[1]!,
        runtimeSeconds: runtime,
        estimateSeconds: requestedTime > 0 ? requestedTime : runtime,
        processors: size,
      });
    }
  }
  const dropped = drops.noRuntime + drops.noSize + drops.tooLarge;
  return { trace: traceFromJobs(jobs, machineSize), records: rows.length, dropped, drops, header };
}

function headerInt(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number.parseInt(value, 10);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}
