/** Node-level placement: a job of N nodes needs N distinct nodes with gpus/N free GPUs each. */

// `freeGpus[i]` is node i's free GPUs, −1 when the node is down.
/** placeJob picks nodes best-fit (fewest free GPUs first, then lowest index), or returns null when the job does not fit. */
export function placeJob(
  freeGpus: ArrayLike<number>,
  partitionNodes: readonly number[],
  nodeCount: number,
  gpusPerNode: number,
): number[] | null {
  const fits: number[] = [];
  for (const node of partitionNodes) {
    if ((freeGpus[node] ?? -1) >= gpusPerNode) fits.push(node);
  }
  if (fits.length < nodeCount) return null;
  fits.sort((a, b) => (freeGpus[a] ?? 0) - (freeGpus[b] ?? 0) || a - b);
  return fits.slice(0, nodeCount);
}

/** canPlace tells whether a job of nodeCount × gpusPerNode fits in the given free GPUs. */
export function canPlace(freeGpus: ArrayLike<number>, partitionNodes: readonly number[], nodeCount: number, gpusPerNode: number): boolean {
  let count = 0;
  for (const node of partitionNodes) {
    if ((freeGpus[node] ?? -1) >= gpusPerNode && ++count >= nodeCount) return true;
  }
  return false;
}
