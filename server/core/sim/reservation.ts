/**
 * EASY backfilling on nodes. The blocked head job gets a reservation at the
 * earliest time ("shadow time") it fits, judged by releasing the running jobs
 * at their estimated ends (start + walltime limit; an end already passed counts
 * as now) and down nodes at their repair times. A later job may start now only
 * if it fits now and either ends by its estimate no later than the shadow time,
 * or the head job still fits at the shadow time with it in place (on a flat
 * pool: it uses only the "extra" processors the head job will not need).
 */
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
