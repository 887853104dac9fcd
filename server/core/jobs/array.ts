// A job array's task indexes as Slurm's --array writes them: "0-9999%64" (tasks 0 to 9999, at most 64
// running at once), "1,3,5-11:2" (a list, a range with a step), "7". Pure: the job form, the API and
// both schedulers read an array through parseArray, so they agree on its tasks and its throttle.

/** Most tasks one array may have (Slurm's MaxArraySize must be above the highest index). */
export const MAX_ARRAY_TASKS = 10_000;
/** The highest task index accepted. */
export const MAX_ARRAY_INDEX = 99_999;

export interface ArrayRange {
  start: number;
  end: number;
  step: number;
}

export interface JobArray {
  /** Disjoint ranges in ascending order. */
  ranges: ArrayRange[];
  /** How many tasks (distinct indexes). */
  count: number;
  /** Most tasks running at once (Slurm's `%N`), or null: as many as fit. */
  throttle: number | null;
  /** The canonical text Slurm is given ("0-9999%64"). */
  text: string;
}

/** Why an array text is refused: a message key of the catalogue and its parameters. */
export type ArrayProblem = { key: 'job.arrayFormat' } | { key: 'job.arrayOverlap' } | { key: 'job.arrayTooMany'; params: { max: number } } | { key: 'job.arrayIndexTooHigh'; params: { max: number } } | { key: 'job.arrayThrottle' };

const PART = /^(\d{1,6})(?:-(\d{1,6})(?::(\d{1,6}))?)?$/;

/** parseArray reads an array text; a problem names what to fix. */
export function parseArray(input: string): JobArray | ArrayProblem {
  const text = input.replace(/\s+/g, '');
  const [list = '', throttleText, ...extra] = text.split('%');
  if (list === '' || extra.length > 0) return { key: 'job.arrayFormat' };
  let throttle: number | null = null;
  if (throttleText !== undefined) {
    if (!/^\d{1,6}$/.test(throttleText)) return { key: 'job.arrayFormat' };
    throttle = Number(throttleText);
    if (throttle < 1) return { key: 'job.arrayThrottle' };
  }
  const ranges: ArrayRange[] = [];
  for (const part of list.split(',')) {
    const m = PART.exec(part);
    if (!m) return { key: 'job.arrayFormat' };
    const start = Number(m[1]);
    const end = m[2] === undefined ? start : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (end < start || step < 1) return { key: 'job.arrayFormat' };
    if (end > MAX_ARRAY_INDEX) return { key: 'job.arrayIndexTooHigh', params: { max: MAX_ARRAY_INDEX } };
    // A stepped range ends on its last index, so ranges compare by what they hold.
    ranges.push({ start, end: start + Math.floor((end - start) / step) * step, step });
  }
  // Parts in ascending order, none overlapping another: each task index once, as written.
  for (let i = 1; i < ranges.length; i++) if (ranges[i]!.start <= ranges[i - 1]!.end) return { key: 'job.arrayOverlap' };
  const count = ranges.reduce((sum, r) => sum + rangeCount(r), 0);
  if (count > MAX_ARRAY_TASKS) return { key: 'job.arrayTooMany', params: { max: MAX_ARRAY_TASKS } };
  if (throttle !== null && throttle > count) throttle = count;
  return { ranges, count, throttle, text: `${ranges.map(rangeText).join(',')}${throttle !== null ? `%${throttle}` : ''}` };
}

/** isArrayProblem tells a refusal from an array. */
export function isArrayProblem(value: JobArray | ArrayProblem): value is ArrayProblem {
  return 'key' in value;
}

/** arrayIndexes yields the task indexes in ascending order (lazily: an array may hold 10,000). */
export function* arrayIndexes(array: Pick<JobArray, 'ranges'>): Generator<number> {
  for (const r of array.ranges) for (let i = r.start; i <= r.end; i += r.step) yield i;
}

function rangeCount(r: ArrayRange): number {
  return Math.floor((r.end - r.start) / r.step) + 1;
}

function rangeText(r: ArrayRange): string {
  if (r.start === r.end) return String(r.start);
  return r.step === 1 ? `${r.start}-${r.end}` : `${r.start}-${r.end}:${r.step}`;
}
