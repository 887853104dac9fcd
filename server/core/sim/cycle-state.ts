/**
 * What a scheduling cycle reads about the machine, kept across cycles instead of rebuilt from every
 * node and running job each time: free GPUs indexed for placement (free-gpus.ts), each partition's
 * running jobs in order of estimated end (the releases EASY walks), the down nodes' repairs, the
 * quota counters (running GPUs per user, GPU-seconds committed by running jobs per account) and each
 * site's IT draw. The engine changes it at every start, end, failure, repair and time-limit change;
 * a cycle changes it for the jobs it starts. All counters are integers, so the order of the changes
 * never matters: the state always equals what a rebuild from the nodes and running jobs would give.
 */
import { nodePowerCentiW } from './energy';
import { FreeGpus } from './free-gpus';
import type { Partition } from './types';

/** A running job as the cycle sees it. */
export interface CycleRunningJob {
  id: string;
  partition: number;
  user: string;
  account: string;
  gpus: number;
  nodeIndices: readonly number[];
  walltimeLimitSeconds: number;
  startTimeSeconds: number;
  /** IT power increment in centiW (power.ts); only read at capped sites. */
  powerCentiW?: number;
}

/** A running job in its partition's list, with its estimated end (start + walltime limit). */
export interface RunningRelease extends CycleRunningJob {
  endSeconds: number;
  gpusPerNode: number;
  /** Order of insertion: breaks ties of estimated end so a job is found again. */
  order: number;
}

/** A down node and when it comes back. */
export interface Repair {
  node: number;
  atSeconds: number;
}

/** The key of one user's running GPUs within an account. */
export function userKey(account: string, user: string): string {
  return `${account}\u0000${user}`;
}

/** Where a release sorts: by estimated end, then insertion order. */
function before(a: RunningRelease, endSeconds: number, order: number): boolean {
  return a.endSeconds < endSeconds || (a.endSeconds === endSeconds && a.order < order);
}

/** lowerBound is the first index of a sorted release list not before (endSeconds, order). */
function lowerBound(list: readonly RunningRelease[], endSeconds: number, order: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(list[mid]!, endSeconds, order)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The machine as cycles see it, kept up to date by the engine (see the file comment). */
export class CycleState {
  readonly free: FreeGpus;
  /** Running GPUs per (account, user): userKey. */
  readonly userGpus = new Map<string, number>();
  /** GPU-seconds committed by running jobs per account (GPUs × walltime limit). */
  readonly committedRunning = new Map<string, number>();
  /** IT draw per site in centiW: every up node's idle draw plus the running jobs' increments. */
  readonly siteDrawCentiW: number[];
  private readonly running: RunningRelease[][];
  private readonly byId = new Map<string, RunningRelease>();
  private readonly repairs: Map<number, number>[];
  private nextOrder = 0;

  constructor(
    private readonly partitions: readonly Partition[],
    private readonly partitionOf: ArrayLike<number>,
    private readonly partitionSite: readonly number[],
    sites: number,
  ) {
    this.free = new FreeGpus(partitionOf, partitions.map((p) => p.gpusPerNode));
    this.running = partitions.map(() => []);
    this.repairs = partitions.map(() => new Map<number, number>());
    this.siteDrawCentiW = new Array<number>(sites).fill(0);
    for (let i = 0; i < partitionOf.length; i++) this.addDraw(partitionOf[i]!, this.nodeIdleCentiW(partitionOf[i]!));
  }

  /** runningIn lists a partition's running jobs by estimated end. */
  runningIn(partition: number): readonly RunningRelease[] {
    return this.running[partition] ?? [];
  }

  /** repairsIn lists a partition's down nodes by repair time (few: only failed nodes). */
  repairsIn(partition: number): Repair[] {
    const out: Repair[] = [];
    for (const [node, atSeconds] of this.repairs[partition] ?? []) out.push({ node, atSeconds });
    return out.sort((a, b) => a.atSeconds - b.atSeconds || a.node - b.node);
  }

  /** start takes the nodes' GPUs for a job and counts it running. */
  start(job: CycleRunningJob): void {
    const perNode = job.gpus / job.nodeIndices.length;
    for (const node of job.nodeIndices) this.free.allocate(node, perNode);
    this.track(job);
  }

  /** track counts a job running whose GPUs are already taken (a state built from a snapshot). */
  track(job: CycleRunningJob): void {
    // Its fields named (not spread: the job may be a larger view, and a spread copies all of it).
    const entry: RunningRelease = {
      id: job.id,
      partition: job.partition,
      user: job.user,
      account: job.account,
      gpus: job.gpus,
      nodeIndices: job.nodeIndices,
      walltimeLimitSeconds: job.walltimeLimitSeconds,
      startTimeSeconds: job.startTimeSeconds,
      powerCentiW: job.powerCentiW,
      endSeconds: job.startTimeSeconds + job.walltimeLimitSeconds,
      gpusPerNode: job.gpus / job.nodeIndices.length,
      order: this.nextOrder++,
    };
    this.insert(entry);
    this.byId.set(job.id, entry);
    this.charge(entry, 1);
  }

  /** end gives a running job's GPUs back (a down node's stay out of the index until it is repaired). */
  end(id: string): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    this.byId.delete(id);
    this.remove(entry);
    for (const node of entry.nodeIndices) this.free.allocate(node, -entry.gpusPerNode);
    this.charge(entry, -1);
  }

  /** extend changes a running job's walltime limit: its estimated end and its committed GPU-seconds. */
  extend(id: string, walltimeLimitSeconds: number): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    this.remove(entry);
    this.charge(entry, -1);
    entry.walltimeLimitSeconds = walltimeLimitSeconds;
    entry.endSeconds = entry.startTimeSeconds + walltimeLimitSeconds;
    this.insert(entry);
    this.charge(entry, 1);
  }

  /** nodeDown takes a node out (it draws nothing) until its repair time. */
  nodeDown(node: number, repairAtSeconds: number | null): void {
    const p = this.partitionOf[node]!;
    this.free.setDown(node, true);
    if (repairAtSeconds !== null) this.repairs[p]!.set(node, repairAtSeconds);
    this.addDraw(p, -this.nodeIdleCentiW(p));
  }

  /** nodeUp brings a repaired node back, idle. */
  nodeUp(node: number): void {
    const p = this.partitionOf[node]!;
    this.free.setDown(node, false);
    this.repairs[p]!.delete(node);
    this.addDraw(p, this.nodeIdleCentiW(p));
  }

  private nodeIdleCentiW(partition: number): number {
    return nodePowerCentiW(this.partitions[partition]!, [], false);
  }

  private addDraw(partition: number, centiW: number): void {
    const site = this.partitionSite[partition]!;
    this.siteDrawCentiW[site] = (this.siteDrawCentiW[site] ?? 0) + centiW;
  }

  /** charge adds (sign 1) or removes (−1) a running job's quota use and power. */
  private charge(entry: RunningRelease, sign: 1 | -1): void {
    const key = userKey(entry.account, entry.user);
    this.userGpus.set(key, (this.userGpus.get(key) ?? 0) + sign * entry.gpus);
    this.committedRunning.set(entry.account, (this.committedRunning.get(entry.account) ?? 0) + sign * entry.gpus * entry.walltimeLimitSeconds);
    this.addDraw(entry.partition, sign * (entry.powerCentiW ?? 0));
  }

  private insert(entry: RunningRelease): void {
    const list = this.running[entry.partition]!;
    list.splice(lowerBound(list, entry.endSeconds, entry.order), 0, entry);
  }

  private remove(entry: RunningRelease): void {
    const list = this.running[entry.partition]!;
    list.splice(lowerBound(list, entry.endSeconds, entry.order), 1);
  }
}
