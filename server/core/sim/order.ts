/**
 * Phase 2 of a scheduling cycle: the pending jobs in queue order (compareQueue).
 *
 * Whole queue: compute every priority and sort. Bounded (`policy.queueDepth`): the cycle reads
 * only the first `queueDepth` jobs of each partition, merged from per-(partition, account) queues.
 * That merge gives exactly the sorted order because within one account the order never changes:
 * all its jobs share one fair-share factor and age at the same rate, so an earlier submission
 * always has a priority at least as high (and wins the tie on submit time, then seq). So no
 * periodic re-sort (Slurm's PriorityCalcPeriod) is needed: priorities are exact for the jobs read.
 *
 * The depth counts per partition, not per cycle (Slurm's default_queue_depth), so that one full
 * partition with a long queue cannot hide the jobs of an idle one.
 */
import { compareQueue } from './priority';
import type { PolicyConfig } from './types';

/** A pending job as the cycle sees it. */
export interface CyclePendingJob {
  id: string;
  seq: number;
  submitTimeSeconds: number;
  partition: number;
  user: string;
  account: string;
  gpus: number;
  nodes: number;
  walltimeLimitSeconds: number;
  /** IT power increment in centiW (power.ts); only read at capped sites. */
  powerCentiW?: number;
  /** Earliest start (BeginTime until then). */
  beginSeconds?: number;
  /** Waits on other jobs (Dependency), or never may start (DependencyNeverSatisfied). */
  heldBy?: 'Dependency' | 'DependencyNeverSatisfied' | undefined;
}

/** One partition's pending jobs of one account, in arrival order (submit time, then seq); read lazily. */
export interface CycleQueue {
  partition: number;
  account: string;
  jobs: Iterable<CyclePendingJob>;
}

/** A pending job with its priority in this cycle, keyed for compareQueue. */
export interface QueuedJob {
  job: CyclePendingJob;
  priority: number;
  submitTimeSeconds: number;
  seq: number;
}

/** The priority of a pending job in this cycle. */
export type PriorityOf = (job: CyclePendingJob) => number;

function queued(job: CyclePendingJob, priorityOf: PriorityOf): QueuedJob {
  return { job, priority: priorityOf(job), submitTimeSeconds: job.submitTimeSeconds, seq: job.seq };
}

/** sortedQueue returns every pending job in queue order, cut to `policy.queueDepth` per partition when set (adding the partitions cut to `cut`). */
export function sortedQueue(pending: readonly CyclePendingJob[], priorityOf: PriorityOf, policy: PolicyConfig, cut: Set<number>): QueuedJob[] {
  const queue = pending.map((job) => queued(job, priorityOf));
  queue.sort((a, b) => compareQueue(a, b, policy));
  const depth = policy.queueDepth;
  if (depth === undefined) return queue;
  const taken = new Map<number, number>();
  return queue.filter(({ job }) => {
    const n = taken.get(job.partition) ?? 0;
    taken.set(job.partition, n + 1);
    if (n >= depth) cut.add(job.partition);
    return n < depth;
  });
}

/** A queue being merged: its head job with the head's queue key, and the rest of the queue. */
interface Cursor {
  job: CyclePendingJob;
  priority: number;
  submitTimeSeconds: number;
  seq: number;
  /** What the queue's account has for the priority (its fair share), asked once per queue. */
  share: number;
  rest: Iterator<CyclePendingJob>;
  partition: number;
}

/** Cursors between walks (a walk hands each back as its queue is done), so a cycle allocates none. */
const spareCursors: Cursor[] = [];

/** The priority of a pending job in this cycle from its account's share (all jobs of a queue have one account). */
export type PriorityWithShare = (job: CyclePendingJob, share: number) => number;

/** Visits a job of the merged queue with its priority in this cycle. */
export type VisitQueued = (job: CyclePendingJob, priority: number) => void;

/**
 * walkMergedQueue visits pending jobs in queue order, at most `depth` per partition, from queues that
 * each hold one partition's jobs of one account in arrival order; it reads each queue only as far as
 * it visits from it, and adds the partitions that had jobs left unread to `cut`. It allocates one
 * cursor per queue and nothing per job read (the cycle's hot path).
 */
export function walkMergedQueue(
  queues: readonly CycleQueue[],
  shareOf: (account: string) => number,
  priorityOf: PriorityWithShare,
  policy: PolicyConfig,
  depth: number,
  cut: Set<number>,
  visit: VisitQueued,
): void {
  // Per partition, a binary min-heap of cursors by their head job; the walk takes the least of the
  // heaps' tops, and drops a partition's whole heap once its depth is read. The order's function is read
  // once per walk: an imported binding read per comparison is a module getter call under tsx's CommonJS.
  const compare = compareQueue;
  const heaps: Cursor[][] = [];
  const siftDown = (heap: Cursor[], from: number): void => {
    const n = heap.length;
    const moving = heap[from]!;
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let m = l;
      const r = l + 1;
      if (r < n && compare(heap[r]!, heap[l]!, policy) < 0) m = r;
      if (compare(heap[m]!, moving, policy) >= 0) break;
      heap[i] = heap[m]!;
      i = m;
    }
    heap[i] = moving;
  };
  const removeTop = (heap: Cursor[]): void => {
    spareCursors.push(heap[0]!);
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    siftDown(heap, 0);
  };
  for (const q of queues) {
    const rest = q.jobs[Symbol.iterator]();
    const first = rest.next();
    if (first.done) continue;
    const job = first.value;
    const share = shareOf(q.account);
    const heap = (heaps[q.partition] ??= []);
    const cursor = spareCursors.pop();
    if (!cursor) heap.push({ job, priority: priorityOf(job, share), submitTimeSeconds: job.submitTimeSeconds, seq: job.seq, share, rest, partition: q.partition });
    else {
      cursor.job = job;
      cursor.priority = priorityOf(job, share);
      cursor.submitTimeSeconds = job.submitTimeSeconds;
      cursor.seq = job.seq;
      cursor.share = share;
      cursor.rest = rest;
      cursor.partition = q.partition;
      heap.push(cursor);
    }
  }
  const open: Cursor[][] = [];
  for (const heap of heaps) {
    if (!heap) continue;
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
    open.push(heap);
  }

  // Jobs taken per partition (partitions are small indices).
  const taken: number[] = [];
  while (open.length > 0) {
    let at = 0;
    for (let h = 1; h < open.length; h++) if (compare(open[h]![0]!, open[at]![0]!, policy) < 0) at = h;
    const heap = open[at]!;
    const top = heap[0]!;
    const n = taken[top.partition] ?? 0;
    if (n >= depth) {
      // The partition's depth is read and jobs are left: cut it, and hand its cursors back.
      cut.add(top.partition);
      for (const c of heap) spareCursors.push(c);
      heap.length = 0;
    } else {
      taken[top.partition] = n + 1;
      visit(top.job, top.priority);
      const next = top.rest.next();
      if (next.done) removeTop(heap);
      else {
        const job = next.value;
        top.job = job;
        top.priority = priorityOf(job, top.share);
        top.submitTimeSeconds = job.submitTimeSeconds;
        top.seq = job.seq;
        siftDown(heap, 0);
      }
    }
    if (heap.length === 0) open.splice(at, 1);
  }
}

/** mergedQueue is walkMergedQueue's order as a list of queued jobs. */
export function mergedQueue(queues: readonly CycleQueue[], priorityOf: PriorityOf, policy: PolicyConfig, depth: number, cut: Set<number>): QueuedJob[] {
  const out: QueuedJob[] = [];
  walkMergedQueue(queues, () => 0, (job) => priorityOf(job), policy, depth, cut, (job, priority) => out.push({ job, priority, submitTimeSeconds: job.submitTimeSeconds, seq: job.seq }));
  return out;
}
