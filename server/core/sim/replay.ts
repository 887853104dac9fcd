/**
 * Fast trace replay on a flat pool of processors (FIFO or EASY), on typed
 * arrays with no allocation per event.
 *
 * Semantics: jobs run for their actual runtime (no kill at the estimate). At
 * each instant all ends are processed first, then all arrivals, then ONE
 * scheduling pass over the queue (submit order):
 *   FIFO — start jobs from the head while they fit; stop at the first that does not.
 *   EASY — as FIFO, then the blocked head job gets a reservation at the
 *          earliest time it fits (shadow time), judged by the running jobs'
 *          estimated ends (start + estimate; one already passed counts as now).
 *          `extra` = processors free at the shadow time beyond the head's need.
 *          A later job starts now if it fits now and either ends by its
 *          estimate no later than the shadow time, or uses at most `extra`
 *          processors (which it then consumes).
 *
 * Data structures: a binary heap of actual ends; the running set kept sorted
 * by estimated end (binary-search insert/remove, so the shadow is one O(running)
 * scan); the queue as a doubly linked list over job indices.
 */
import { TimeHeap } from './heap';
import type { ReplayTrace } from './trace';

/** Replay policies. */
export type ReplayPolicy = 'fifo' | 'easy';

/** replayTrace simulates the trace under the policy and returns each job's start time (index-aligned with the trace). */
export function replayTrace(trace: ReplayTrace, policy: ReplayPolicy): Float64Array {
  const n = trace.jobCount;
  const machine = trace.machineSize;
  const submit = trace.submitSeconds;
  const runtime = trace.runtimeSeconds;
  const estimate = trace.estimateSeconds;
  const size = trace.processors;
  const start = new Float64Array(n);
  const easy = policy === 'easy';

  const capacity = Math.min(n, machine) + 1;
  const ends = new TimeHeap(capacity);
  // Running jobs sorted by estimated end (ties: insertion order).
  const runEst = new Float64Array(capacity);
  const runJob = new Int32Array(capacity);
  let runCount = 0;
  // Pending queue: linked list in submit order.
  const qNext = new Int32Array(n);
  const qPrev = new Int32Array(n);
  let qHead = -1;
  let qTail = -1;

  let free = machine;
  let nextArrival = 0;

  const unlink = (j: number): void => {
    const p = qPrev[j]!;
    const x = qNext[j]!;
    if (p >= 0) qNext[p] = x;
    else qHead = x;
    if (x >= 0) qPrev[x] = p;
    else qTail = p;
  };

  const startJob = (j: number, now: number): void => {
    start[j] = now;
    free -= size[j]!;
    ends.push(now + runtime[j]!, j);
    const est = now + estimate[j]!;
    // Upper bound: first index with runEst > est.
    let lo = 0;
    let hi = runCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runEst[mid]! <= est) lo = mid + 1;
      else hi = mid;
    }
    if (lo < runCount) {
      runEst.copyWithin(lo + 1, lo, runCount);
      runJob.copyWithin(lo + 1, lo, runCount);
    }
    runEst[lo] = est;
    runJob[lo] = j;
    runCount++;
  };

  const removeRunning = (j: number): void => {
    const est = start[j]! + estimate[j]!;
    // Lower bound: first index with runEst >= est, then find j among equals.
    let lo = 0;
    let hi = runCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runEst[mid]! < est) lo = mid + 1;
      else hi = mid;
    }
    while (runJob[lo] !== j) lo++;
    runEst.copyWithin(lo, lo + 1, runCount);
    runJob.copyWithin(lo, lo + 1, runCount);
    runCount--;
  };

  while (nextArrival < n || ends.size > 0) {
    const now =
      ends.size > 0 && (nextArrival >= n || ends.topTime() <= submit[nextArrival]!) ? ends.topTime() : submit[nextArrival]!;

    // 1. Ends.
    while (ends.size > 0 && ends.topTime() === now) {
      const j = ends.topValue();
      ends.pop();
      free += size[j]!;
      removeRunning(j);
    }
    // 2. Arrivals.
    while (nextArrival < n && submit[nextArrival] === now) {
      const j = nextArrival++;
      qNext[j] = -1;
      qPrev[j] = qTail;
      if (qTail >= 0) qNext[qTail] = j;
      else qHead = j;
      qTail = j;
    }
    // 3. One scheduling pass.
    if (qHead < 0 || free === 0) continue;
    while (qHead >= 0 && size[qHead]! <= free) {
      const j = qHead;
      unlink(j);
      startJob(j, now);
    }
    if (!easy || qHead < 0 || free === 0) continue;

    // EASY: shadow time and extra processors for the head job.
    const need = size[qHead]!;
    let avail = free;
    let shadow = now;
    let i = 0;
    while (i < runCount) {
      avail += size[runJob[i]!]!;
      const e = runEst[i]!;
      i++;
      if (avail >= need) {
        shadow = e > now ? e : now;
        while (i < runCount && runEst[i]! <= shadow) avail += size[runJob[i++]!]!;
        break;
      }
    }
    let extra = avail - need;

    for (let j = qNext[qHead]!; j >= 0 && free > 0; ) {
      const next = qNext[j]!;
      const s = size[j]!;
      if (s <= free) {
        if (now + estimate[j]! <= shadow) {
          unlink(j);
          startJob(j, now);
        } else if (s <= extra) {
          extra -= s;
          unlink(j);
          startJob(j, now);
        }
      }
      j = next;
    }
  }
  return start;
}
