/**
 * EASY backfilling on nodes. The blocked head job gets a reservation at the
 * earliest time ("shadow time") it fits, judged by releasing the running jobs
 * at their estimated ends (start + walltime limit; an end already passed counts
 * as now) and down nodes at their repair times. A later job may start now only
 * if it fits now and either ends by its estimate no later than the shadow time,
 * or the head job still fits at the shadow time with it in place (on a flat
 * pool: it uses only the "extra" processors the head job will not need).
 *
 * `easyReservation` and `backfillKeepsReservation` state the rule over whole arrays of free GPUs;
 * cycles use their incremental equals (`ReleaseWalk`, `ShadowReservation`), which touch only the nodes
 * released or taken, and the tests hold the two to the same answers.
 */
import type { Repair, RunningRelease } from './cycle-state';
import type { FreeGpus } from './free-gpus';
import { canPlace } from './placement';

/** Resources that come back at a known time: a running job's nodes, or a repaired node. */
export interface Release {
  atSeconds: number;
  nodeIndices: readonly number[];
  /** GPUs returned on each node (for a repair: the node's full GPU count). */
  gpusPerNode: number;
  repair: boolean;
}

/** The head job's reservation: when it starts and the free GPUs per node at that time. */
export interface Reservation {
  shadowSeconds: number;
  freeAtShadow: number[];
}

/** The shape of the job a reservation is for. */
export interface HeadShape {
  partitionNodes: readonly number[];
  nodeCount: number;
  gpusPerNode: number;
}

/** easyReservation finds the head job's shadow time and the free GPUs then, or null if it never fits within the known releases. */
export function easyReservation(
  freeGpus: readonly number[],
  head: HeadShape,
  releases: readonly Release[],
  nowSeconds: number,
): Reservation | null {
  const free = freeGpus.slice();
  const ordered = releases
    .map((r) => ({ ...r, atSeconds: Math.max(r.atSeconds, nowSeconds) }))
    .sort((a, b) => a.atSeconds - b.atSeconds);
  if (canPlace(free, head.partitionNodes, head.nodeCount, head.gpusPerNode)) {
    return { shadowSeconds: nowSeconds, freeAtShadow: free };
  }
  let i = 0;
  while (i < ordered.length) {
    const t = ordered[i]!.atSeconds;
    while (i < ordered.length && ordered[i]!.atSeconds === t) {
      const r = ordered[i]!;
      for (const node of r.nodeIndices) free[node] = r.repair ? r.gpusPerNode : (free[node] ?? 0) + r.gpusPerNode;
      i++;
    }
    if (canPlace(free, head.partitionNodes, head.nodeCount, head.gpusPerNode)) {
      return { shadowSeconds: t, freeAtShadow: free };
    }
  }
  return null;
}

/** Inputs of `backfillKeepsReservation`: the candidate's placement now and its estimated end. */
export interface BackfillCandidate {
  nodeIndices: readonly number[];
  gpusPerNode: number;
  estimatedEndSeconds: number;
}

// Returns the free GPUs at the shadow time with the candidate in place (unchanged if it ends by then).
/** backfillKeepsReservation tells whether a candidate that fits now may start without delaying the head job (null: it must not). */
export function backfillKeepsReservation(
  reservation: Reservation,
  head: HeadShape,
  candidate: BackfillCandidate,
): number[] | null {
  if (candidate.estimatedEndSeconds <= reservation.shadowSeconds) return reservation.freeAtShadow;
  const free = reservation.freeAtShadow.slice();
  for (const node of candidate.nodeIndices) free[node] = (free[node] ?? 0) - candidate.gpusPerNode;
  return canPlace(free, head.partitionNodes, head.nodeCount, head.gpusPerNode) ? free : null;
}

/** A head job as the incremental walk sees it: its partition and shape. */
export interface NodeHead {
  partition: number;
  nodeCount: number;
  gpusPerNode: number;
}

/**
 * ReleaseWalk finds a head job's shadow time without copying the free GPUs: it walks the partition's
 * running jobs by estimated end (and its repairs) from now, keeping only the nodes they touch (an
 * overlay on the current free GPUs) and how many nodes would fit the head. Each release costs its
 * nodes; the result is `easyReservation`'s over the same releases (`incremental.test.ts`).
 */
export class ReleaseWalk {
  private readonly overlay = new Map<number, number>();
  private fit: number;
  private nextRun = 0;
  private nextRepair = 0;

  constructor(
    private readonly free: FreeGpus,
    private readonly head: NodeHead,
    private readonly running: readonly RunningRelease[],
    private readonly repairs: readonly Repair[],
    private readonly nodeGpus: number,
  ) {
    this.fit = free.fitting(head.partition, head.gpusPerNode);
  }

  /** fits tells whether the head fits with every release so far. */
  fits(): boolean {
    return this.fit >= this.head.nodeCount;
  }

  /** nextAt is the time of the next release not yet applied (its estimated end as is), or null. */
  nextAt(): number | null {
    const run = this.running[this.nextRun]?.endSeconds;
    const repair = this.repairs[this.nextRepair]?.atSeconds;
    if (run === undefined) return repair ?? null;
    return repair === undefined ? run : Math.min(run, repair);
  }

  /** releaseThrough applies every release at or before t. */
  releaseThrough(t: number): void {
    for (let r = this.running[this.nextRun]; r && r.endSeconds <= t; r = this.running[++this.nextRun]) {
      for (const node of r.nodeIndices) this.setAtShadow(node, this.atShadow(node) + r.gpusPerNode);
    }
    for (let r = this.repairs[this.nextRepair]; r && r.atSeconds <= t; r = this.repairs[++this.nextRepair]) this.setAtShadow(r.node, this.nodeGpus);
  }

  /** reservation turns the walk, once the head fits, into its reservation at `shadowSeconds`. */
  reservation(shadowSeconds: number): ShadowReservation {
    return new ShadowReservation(shadowSeconds, this.free, this.head, this.overlay, this.fit);
  }

  private atShadow(node: number): number {
    return this.overlay.get(node) ?? this.free.free(node);
  }

  private setAtShadow(node: number, value: number): void {
    const old = this.atShadow(node);
    const need = this.head.gpusPerNode;
    if (old < need && value >= need) this.fit++;
    this.overlay.set(node, value);
  }
}

/** easyShadow is the incremental `easyReservation`: the head's reservation, or null if it never fits within the known releases. */
export function easyShadow(walk: ReleaseWalk, nowSeconds: number): ShadowReservation | null {
  // As easyReservation: fitting now is judged before any release (even one whose estimated end has passed).
  if (walk.fits()) return walk.reservation(nowSeconds);
  for (let next = walk.nextAt(); next !== null; next = walk.nextAt()) {
    const t = Math.max(next, nowSeconds);
    walk.releaseThrough(t);
    if (walk.fits()) return walk.reservation(t);
  }
  return null;
}

/**
 * A head job's reservation as a cycle keeps it: the shadow time and the free GPUs then, as an overlay
 * on the free GPUs now that holds every node released before the shadow time or taken by a backfill
 * since; the nodes that fit the head at the shadow time are counted, so checking a backfill costs its
 * nodes. `commit` must come before the backfill's start changes the free GPUs.
 */
export class ShadowReservation {
  constructor(
    readonly shadowSeconds: number,
    private readonly free: FreeGpus,
    private readonly head: NodeHead,
    private readonly overlay: Map<number, number>,
    private fit: number,
  ) {}

  /** keeps tells whether a backfill on these nodes leaves the head fitting at the shadow time (as `backfillKeepsReservation`). */
  keeps(nodeIndices: readonly number[], gpusPerNode: number, estimatedEndSeconds: number): boolean {
    if (estimatedEndSeconds <= this.shadowSeconds) return true;
    let lost = 0;
    for (const node of nodeIndices) if (this.losesFit(node, gpusPerNode)) lost++;
    return this.fit - lost >= this.head.nodeCount;
  }

  /** commit records a backfill that `keeps` allowed, before its start takes the GPUs now. */
  commit(nodeIndices: readonly number[], gpusPerNode: number, estimatedEndSeconds: number): void {
    const past = estimatedEndSeconds > this.shadowSeconds;
    for (const node of nodeIndices) {
      const value = this.atShadow(node);
      if (past && this.losesFit(node, gpusPerNode)) this.fit--;
      this.overlay.set(node, past ? value - gpusPerNode : value);
    }
  }

  private atShadow(node: number): number {
    return this.overlay.get(node) ?? this.free.free(node);
  }

  /** losesFit tells whether taking `gpus` more of a node at the shadow time makes it too small for the head. */
  private losesFit(node: number, gpus: number): boolean {
    const value = this.atShadow(node);
    return value >= this.head.gpusPerNode && value - gpus < this.head.gpusPerNode;
  }
}
