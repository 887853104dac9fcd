/**
 * Job arrays on the general engine (Slurm's --array), the parts that need no engine: reading the
 * array text, walking its indexes one at a time, and the rule for how an array ended. The engine
 * keeps an array as one record and makes its tasks jobs of their own lazily (engine.ts), so an
 * array of 10,000 tasks costs one record at submit.
 */
import { isArrayProblem, parseArray, type ArrayRange } from '../jobs/array';
import { SimInputError } from './errors';
import type { JobState } from './types';

/** How many waiting tasks of one array are made jobs at a time (at most its throttle): the rest wait inside the array record. */
export const ARRAY_WINDOW = 16;

/** An array's task bookkeeping inside its (serialised) record. */
export interface ArrayTasks {
  /** parseArray's canonical text. */
  text: string;
  ranges: ArrayRange[];
  count: number;
  /** Most tasks running at once, or null: as many as fit. */
  throttle: number | null;
  /** The next index to make a job of, and its range; null once every task has been. */
  next: { range: number; index: number } | null;
  /** Tasks made jobs that wait to start, by index. */
  waiting: number[];
  /** Tasks that started (running, or ended after running), in start order. */
  started: number[];
  /** Tasks running now. */
  running: number;
  /** Tasks that ended without ever starting (cancelled while waiting). */
  neverRan: number;
}

/** newArrayTasks reads an array text into its bookkeeping; a text parseArray refuses is a SimInputError. */
export function newArrayTasks(text: string): ArrayTasks {
  const parsed = typeof text === 'string' ? parseArray(text) : null;
  if (parsed === null || isArrayProblem(parsed)) throw new SimInputError(`array "${String(text)}" is not a valid array (${parsed?.key ?? 'not a string'})`);
  const first = parsed.ranges[0]!;
  return {
    text: parsed.text,
    ranges: parsed.ranges,
    count: parsed.count,
    throttle: parsed.throttle,
    next: { range: 0, index: first.start },
    waiting: [],
    started: [],
    running: 0,
    neverRan: 0,
  };
}

/** takeNextIndex returns the next index to make a job of and moves past it (null when none is left). */
export function takeNextIndex(a: ArrayTasks): number | null {
  const next = a.next;
  if (!next) return null;
  const range = a.ranges[next.range]!;
  const following = next.index + range.step;
  if (following <= range.end) a.next = { range: next.range, index: following };
  else {
    const r = a.ranges[next.range + 1];
    a.next = r ? { range: next.range + 1, index: r.start } : null;
  }
  return next.index;
}

/** How many tasks have not started yet (made jobs or not), cancelled ones excluded. */
export function tasksWaiting(a: ArrayTasks): number {
  return a.count - a.started.length - a.neverRan;
}

/** How many waiting tasks the array keeps as jobs: a small window, never more than its throttle. */
export function arrayWindow(a: ArrayTasks): number {
  return Math.min(ARRAY_WINDOW, a.throttle ?? ARRAY_WINDOW);
}

/** How many of its waiting tasks the array lets a scheduling cycle start now (its throttle less the running ones). */
export function arraySlots(a: ArrayTasks): number {
  return a.throttle === null ? a.waiting.length : Math.max(0, Math.min(a.waiting.length, a.throttle - a.running));
}

/**
 * arrayEndState: how an array ended once every task has, the rule of core/scheduler/array-status.ts
 * (summariseArray), so that a dependency on an array and the portal read it alike: CANCELLED when a
 * task was cancelled or never ran, COMPLETED when all completed, else as its first task that did not
 * complete (by index).
 */
export function arrayEndState(tasksByIndex: readonly JobState[], neverRan: number): JobState {
  if (neverRan > 0 || tasksByIndex.includes('CANCELLED')) return 'CANCELLED';
  return tasksByIndex.find((s) => s !== 'COMPLETED') ?? 'COMPLETED';
}

/** taskId is a task's job id on the engine (Slurm shows tasks as `<array job id>_<index>`). */
export function taskId(arrayId: string, index: number): string {
  return `${arrayId}_${index}`;
}
