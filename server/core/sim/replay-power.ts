/**
 * Fast trace replay under a facility power cap: `replayTrace` with power as a
 * second resource (power.ts gives the model). Kept apart so the uncapped replay
 * stays exactly as it is, in results and in speed.
 *
 * Each job draws a fixed IT power increment while it runs (its GPUs from idle to
 * busy); the pool's idle draw is always there. A job starts only if the free GPUs
 * and the free power (cap − draw) both cover it. EASY: the head job's shadow time
 * is the earliest estimated end at which both suffice; `extra` GPUs and `extra`
 * power are what is left then beyond the head's need; a later job starts now if it
 * fits now and either ends by its estimate by the shadow time or fits in both
 * extras (which it consumes). Without repairs the projected draw only falls after
 * now, so this keeps the head's reservation exactly as in the node engine.
 *
 * A job is marked "delayed by the cap" when a pass finds it fitting in GPUs (and,
 * behind a blocked head, in the GPU reservation) but not in power.
 */
import { TimeHeap } from './heap';
import type { ReplayPolicy } from './replay';
import type { ReplayTrace } from './trace';

/** The pool's power for a capped replay, in IT centiwatts. */
export interface ReplayPower {
  /** The most IT power the pool may draw (the facility cap ÷ PUE). */
  capCentiW: number;
  /** The pool's draw with every GPU idle. */
  idleCentiW: number;
  /** Each job's increment while it runs (index-aligned with the trace). */
  jobCentiW: Float64Array;
}

/** What a capped replay returns. */
export interface CappedReplay {
  start: Float64Array;
  /** 1 for each job that waited at least once because of the cap. */
  delayed: Uint8Array;
  /** The highest IT draw reached. */
  peakCentiW: number;
}

/** replayTraceCapped simulates the trace under the policy and the power cap; every job must fit under the cap on an idle pool. */
export function replayTraceCapped(trace: ReplayTrace, policy: ReplayPolicy, power: ReplayPower): CappedReplay {
  const n = trace.jobCount;
  const machine = trace.machineSize;
  const submit = trace.submitSeconds;
  const runtime = trace.runtimeSeconds;
  const estimate = trace.estimateSeconds;
  const size = trace.processors;
  const watts = power.jobCentiW;
  const start = new Float64Array(n);
  const delayed = new Uint8Array(n);
  const easy = policy === 'easy';

  const capacity = Math.min(n, machine) + 1;
  const ends = new TimeHeap(capacity);
  const runEst = new Float64Array(capacity);
  const runJob = new Int32Array(capacity);
  let runCount = 0;
  const qNext = new Int32Array(n);
  const qPrev = new Int32Array(n);
  let qHead = -1;
  let qTail = -1;

  let free = machine;
  let freePower = power.capCentiW - power.idleCentiW;
  let peak = power.idleCentiW;
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
    freePower -= watts[j]!;
    ends.push(now + runtime[j]!, j);
    const est = now + estimate[j]!;
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
      freePower += watts[j]!;
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
    if (qHead < 0) continue;
    while (qHead >= 0 && size[qHead]! <= free && watts[qHead]! <= freePower) {
      const j = qHead;
      unlink(j);
      startJob(j, now);
    }
    if (qHead >= 0 && size[qHead]! <= free) delayed[qHead] = 1;
    if (easy && qHead >= 0 && free > 0) {
      // EASY: shadow time and extra GPUs and power for the head job.
      const need = size[qHead]!;
      const needPower = watts[qHead]!;
      let avail = free;
      let availPower = freePower;
      let shadow = now;
      let i = 0;
      while (i < runCount) {
        const r = runJob[i]!;
        avail += size[r]!;
        availPower += watts[r]!;
        const e = runEst[i]!;
        i++;
        if (avail >= need && availPower >= needPower) {
          shadow = e > now ? e : now;
          while (i < runCount && runEst[i]! <= shadow) {
            const s = runJob[i++]!;
            avail += size[s]!;
            availPower += watts[s]!;
          }
          break;
        }
      }
      let extra = avail - need;
      let extraPower = availPower - needPower;

      for (let j = qNext[qHead]!; j >= 0 && free > 0; ) {
        const next = qNext[j]!;
        const s = size[j]!;
        const w = watts[j]!;
        if (s <= free) {
          const short = now + estimate[j]! <= shadow;
          if (short || s <= extra) {
            if (w > freePower || (!short && w > extraPower)) {
              delayed[j] = 1;
            } else {
              if (!short) {
                extra -= s;
                extraPower -= w;
              }
              unlink(j);
              startJob(j, now);
            }
          }
        }
        j = next;
      }
    }
    const draw = power.capCentiW - freePower;
    if (draw > peak) peak = draw;
  }
  return { start, delayed, peakCentiW: peak };
}

/** replayFacilityEnergyWh is the pool's facility energy from the first submit to the last end: (idle draw × span + Σ job increment × runtime) × PUE, in whole Wh. */
export function replayFacilityEnergyWh(trace: ReplayTrace, start: Float64Array, power: ReplayPower, pueMilli: number): number {
  const n = trace.jobCount;
  if (n === 0) return 0;
  let first = Infinity;
  let last = -Infinity;
  let jobsCentiWs = 0;
  for (let i = 0; i < n; i++) {
    first = Math.min(first, trace.submitSeconds[i]!);
    last = Math.max(last, start[i]! + trace.runtimeSeconds[i]!);
    jobsCentiWs += power.jobCentiW[i]! * trace.runtimeSeconds[i]!;
  }
  const itCentiWs = power.idleCentiW * (last - first) + jobsCentiWs;
  return Math.round((itCentiWs * pueMilli) / (1000 * 100 * 3600));
}

/** selectJobs returns the trace's jobs for which keep(i) holds, in the same order. */
export function selectJobs(trace: ReplayTrace, keep: (i: number) => boolean): ReplayTrace {
  const idx: number[] = [];
  for (let i = 0; i < trace.jobCount; i++) if (keep(i)) idx.push(i);
  const pick = <T extends Float64Array | Int32Array>(a: T, make: (n: number) => T): T => {
    const out = make(idx.length);
    idx.forEach((src, k) => (out[k] = a[src]!));
    return out;
  };
  return {
    jobCount: idx.length,
    machineSize: trace.machineSize,
    submitSeconds: pick(trace.submitSeconds, (k) => new Float64Array(k)),
    runtimeSeconds: pick(trace.runtimeSeconds, (k) => new Float64Array(k)),
    estimateSeconds: pick(trace.estimateSeconds, (k) => new Float64Array(k)),
    processors: pick(trace.processors, (k) => new Int32Array(k)),
    jobNumber: pick(trace.jobNumber, (k) => new Int32Array(k)),
  };
}
