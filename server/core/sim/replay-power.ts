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

/** Up to this many running entries are moved by hand, more through copyWithin. */
const SHORT_SHIFT = 32;

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

  // EASY's backfill pass must find, in queue order, each job that starts and each not yet marked job to mark. A marked
  // job needs no visit unless it can start, so the pass walks only the unmarked pending jobs (a list in submit order,
  // `up` being the one before j, −1 for the first) and asks `marked` for the first marked job that can start now.
  const uNext = new Int32Array(easy ? n : 0);
  let uHead = -1;
  let uTail = -1;
  const marked = new MarkedJobs(size, watts, estimate, delayed, qNext);
  // Ends, and ends and starts, so far; the last shadow scan (reused while nothing has ended or started since and its
  // estimated end is still ahead); what the last backfill pass ended with (see `calm` below).
  let endCount = 0;
  let changes = 0;
  let scanChanges = -1;
  let scanShadowEnd = -Infinity;
  let scanExtra = 0;
  let scanExtraPower = 0;
  let calmEnds = -1;
  let calmHead = -1;
  let calmShadow = 0;
  let calmExtra = 0;
  let calmExtraPower = 0;
  let calmUTail = -1;
  const leaveUnmarked = (j: number, up: number): void => {
    const x = uNext[j]!;
    if (up >= 0) uNext[up] = x;
    else uHead = x;
    if (uTail === j) uTail = up;
  };

  const startJob = (j: number, now: number): void => {
    changes++;
    start[j] = now;
    free -= size[j]!;
    freePower -= watts[j]!;
    ends.push(now + runtime[j]!, j);
    const est = now + estimate[j]!;
    // After the last entry ≤ est (a short shift is cheaper by hand than through copyWithin).
    let lo = runCount;
    if (runCount > SHORT_SHIFT) {
      lo = 0;
      let hi = runCount;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (runEst[mid]! <= est) lo = mid + 1;
        else hi = mid;
      }
      runEst.copyWithin(lo + 1, lo, runCount);
      runJob.copyWithin(lo + 1, lo, runCount);
    } else {
      while (lo > 0 && runEst[lo - 1]! > est) {
        runEst[lo] = runEst[lo - 1]!;
        runJob[lo] = runJob[lo - 1]!;
        lo--;
      }
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
    runCount--;
    if (runCount - lo > SHORT_SHIFT) {
      runEst.copyWithin(lo, lo + 1, runCount + 1);
      runJob.copyWithin(lo, lo + 1, runCount + 1);
    } else {
      for (; lo < runCount; lo++) {
        runEst[lo] = runEst[lo + 1]!;
        runJob[lo] = runJob[lo + 1]!;
      }
    }
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
      endCount++;
      changes++;
    }
    // 2. Arrivals.
    while (nextArrival < n && submit[nextArrival] === now) {
      const j = nextArrival++;
      qNext[j] = -1;
      qPrev[j] = qTail;
      if (qTail >= 0) qNext[qTail] = j;
      else qHead = j;
      qTail = j;
      if (easy) {
        uNext[j] = -1;
        if (uTail >= 0) uNext[uTail] = j;
        else uHead = j;
        uTail = j;
        marked.cover(qHead, j);
      }
    }
    // 3. One scheduling pass.
    if (qHead < 0) continue;
    // The head, when unmarked, is the first unmarked job.
    while (qHead >= 0 && size[qHead]! <= free && watts[qHead]! <= freePower) {
      const j = qHead;
      unlink(j);
      if (easy) {
        if (delayed[j]) marked.remove(j);
        else leaveUnmarked(j, -1);
      }
      startJob(j, now);
    }
    if (qHead >= 0 && size[qHead]! <= free && !delayed[qHead]) {
      delayed[qHead] = 1;
      if (easy) {
        leaveUnmarked(qHead, -1);
        marked.add(qHead);
      }
    }
    if (easy && qHead >= 0 && free > 0) {
      // EASY: shadow time and extra GPUs and power for the head job.
      let shadow = now;
      let extra = scanExtra;
      let extraPower = scanExtraPower;
      if (changes === scanChanges && scanShadowEnd > now) {
        shadow = scanShadowEnd;
      } else {
        const need = size[qHead]!;
        const needPower = watts[qHead]!;
        let avail = free;
        let availPower = freePower;
        let shadowEnd = -Infinity;
        let i = 0;
        while (i < runCount) {
          const r = runJob[i]!;
          avail += size[r]!;
          availPower += watts[r]!;
          const e = runEst[i]!;
          i++;
          if (avail >= need && availPower >= needPower) {
            shadowEnd = e;
            shadow = e > now ? e : now;
            while (i < runCount && runEst[i]! <= shadow) {
              const s = runJob[i++]!;
              avail += size[s]!;
              availPower += watts[s]!;
            }
            break;
          }
        }
        extra = avail - need;
        extraPower = availPower - needPower;
        scanChanges = changes;
        scanShadowEnd = shadowEnd;
        scanExtra = extra;
        scanExtraPower = extraPower;
      }
      // A calm pass: nothing has ended since the last backfill pass, which saw every job behind the same head, and the
      // shadow time is the same with no more extra: what is free can only have shrunk since (by starts) and `now` grown
      // (so a short job can only turn long), so each job that pass saw would do nothing again. Only the jobs that
      // arrived since (after the unmarked list's tail then) are visited, and no marked job can start.
      const calm = endCount === calmEnds && qHead === calmHead && shadow === calmShadow && extra <= calmExtra && extraPower <= calmExtraPower;

      // The jobs behind the head in queue order, visiting only the unmarked ones (u) and the marked ones that can start (m):
      // a marked job that cannot start would only be marked again. A start lowers what is free, so m is looked up again,
      // from m on when an unmarked job before it started (nothing between could start with more free).
      const last = nextArrival - 1;
      let up = -1;
      let u = uHead;
      if (calm) {
        up = calmUTail;
        u = up >= 0 ? uNext[up]! : uHead;
      } else if (u === qHead) {
        up = u;
        u = uNext[u]!;
      }
      let m = calm ? -1 : marked.firstStartable(qHead + 1, last, now, shadow, free, freePower, extra, extraPower);
      while (free > 0 && (u >= 0 || m >= 0)) {
        if (m < 0 || (u >= 0 && u < m)) {
          const j = u;
          u = uNext[j]!;
          const s = size[j]!;
          const short = now + estimate[j]! <= shadow;
          if (s > free || (!short && s > extra)) {
            up = j;
            continue;
          }
          const w = watts[j]!;
          leaveUnmarked(j, up);
          if (w > freePower || (!short && w > extraPower)) {
            delayed[j] = 1;
            marked.add(j);
            continue;
          }
          if (!short) {
            extra -= s;
            extraPower -= w;
          }
          unlink(j);
          startJob(j, now);
          if (m >= 0) m = marked.firstStartable(m, last, now, shadow, free, freePower, extra, extraPower);
        } else {
          const j = m;
          if (now + estimate[j]! > shadow) {
            extra -= size[j]!;
            extraPower -= watts[j]!;
          }
          unlink(j);
          marked.remove(j);
          startJob(j, now);
          m = marked.firstStartable(j + 1, last, now, shadow, free, freePower, extra, extraPower);
        }
      }
      if (free > 0) {
        calmEnds = endCount;
        calmHead = qHead;
        calmShadow = shadow;
        calmExtra = extra;
        calmExtraPower = extraPower;
        calmUTail = uTail;
      } else {
        calmEnds = -1;
      }
    }
    const draw = power.capCentiW - freePower;
    if (draw > peak) peak = draw;
  }
  return { start, delayed, peakCentiW: peak };
}

/**
 * The pending jobs already marked delayed, in a min-tree of their GPUs, power and estimate over a ring of slots (job j
 * in slot j mod the ring's size, which always covers the pending jobs from the head to the last arrival, so slot order
 * from a job on is queue order): `firstStartable` finds the first one from a job on that can start now without
 * walking the others. A subtree is entered only if its smallest GPUs, power and estimate could let one of its jobs
 * start; at a leaf the test is exactly the pass's. The ring doubles (and is refilled from the queue) when the pending
 * span outgrows it, so its size follows the longest queue, not the trace.
 */
class MarkedJobs {
  private leaves = 0;
  /** Node k (1 the root, leaves + slot a leaf) at 4k: smallest power, GPUs and estimate below it (+∞ for none); 4k + 3 unused. */
  private tree = new Float64Array(0);

  constructor(
    private readonly size: Int32Array,
    private readonly watts: Float64Array,
    private readonly estimate: Float64Array,
    private readonly delayed: Uint8Array,
    private readonly qNext: Int32Array,
  ) {
    this.resize(1024);
  }

  /** cover makes the ring hold every job from first (the queue's head) to last, refilling it from the queue if it must grow. */
  cover(first: number, last: number): void {
    if (last - first < this.leaves) return;
    let leaves = this.leaves;
    while (last - first >= leaves) leaves *= 2;
    this.resize(leaves);
    for (let j = first; j >= 0; j = this.qNext[j]!) if (this.delayed[j]) this.add(j);
  }

  private resize(leaves: number): void {
    this.leaves = leaves;
    const tree = new Float64Array(8 * leaves);
    for (let i = 0; i < tree.length; i++) tree[i] = Infinity;
    this.tree = tree;
  }

  add(j: number): void {
    const t = this.tree;
    let k = (j & (this.leaves - 1)) + this.leaves;
    const w = this.watts[j]!;
    const g = this.size[j]!;
    const e = this.estimate[j]!;
    t[4 * k] = w;
    t[4 * k + 1] = g;
    t[4 * k + 2] = e;
    // Each ancestor's minima can only fall, and stop falling at the first that none lowers.
    for (k >>= 1; k >= 1; k >>= 1) {
      const x = 4 * k;
      let lowered = false;
      if (w < t[x]!) {
        t[x] = w;
        lowered = true;
      }
      if (g < t[x + 1]!) {
        t[x + 1] = g;
        lowered = true;
      }
      if (e < t[x + 2]!) {
        t[x + 2] = e;
        lowered = true;
      }
      if (!lowered) break;
    }
  }

  remove(j: number): void {
    const t = this.tree;
    let k = (j & (this.leaves - 1)) + this.leaves;
    t[4 * k] = Infinity;
    t[4 * k + 1] = Infinity;
    t[4 * k + 2] = Infinity;
    for (k >>= 1; k >= 1; k >>= 1) {
      const x = 4 * k;
      const l = 8 * k;
      const w = Math.min(t[l]!, t[l + 4]!);
      const g = Math.min(t[l + 1]!, t[l + 5]!);
      const e = Math.min(t[l + 2]!, t[l + 6]!);
      if (w === t[x] && g === t[x + 1] && e === t[x + 2]) break;
      t[x] = w;
      t[x + 1] = g;
      t[x + 2] = e;
    }
  }

  /**
   * The first marked job in from … last (pending jobs, within the ring) that fits the free GPUs and power and either
   * ends by its estimate by the shadow time or fits both extras; −1 if none.
   */
  firstStartable(from: number, last: number, now: number, shadow: number, free: number, freePower: number, extra: number, extraPower: number): number {
    if (from > last) return -1;
    const t = this.tree;
    const w = t[4]!;
    const g = t[5]!;
    if (!(w <= freePower && g <= free && (now + t[6]! <= shadow || (g <= extra && w <= extraPower)))) return -1;
    const mask = this.leaves - 1;
    const a = from & mask;
    const b = last & mask;
    let slot = this.firstSlot(a, now, shadow, free, freePower, extra, extraPower);
    if (a <= b) {
      if (slot > b) slot = -1;
    } else if (slot < 0) {
      slot = this.firstSlot(0, now, shadow, free, freePower, extra, extraPower);
      if (slot > b) slot = -1;
    }
    return slot < 0 ? -1 : from + ((slot - a) & mask);
  }

  /** The first slot ≥ a whose job could start (see firstStartable), or −1. */
  private firstSlot(a: number, now: number, shadow: number, free: number, freePower: number, extra: number, extraPower: number): number {
    const t = this.tree;
    const leaves = this.leaves;
    let k = a + leaves;
    for (;;) {
      const x = 4 * k;
      const w = t[x]!;
      const g = t[x + 1]!;
      if (w <= freePower && g <= free && (now + t[x + 2]! <= shadow || (g <= extra && w <= extraPower))) {
        if (k >= leaves) return k - leaves;
        k *= 2;
        continue;
      }
      while (k & 1) k >>= 1;
      if (k === 0) return -1;
      k++;
    }
  }
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
