/** Checks a cluster configuration and derives its nodes. */
import { SimInputError } from './errors';
import type { ClusterConfig, Partition } from './types';

function isWhole(n: number, min: number): boolean {
  return Number.isInteger(n) && n >= min;
}

/** validateCluster throws SimInputError when the configuration is unusable (unknown site, duplicate partition, non-integer quantities, idle power above max). */
export function validateCluster(cluster: ClusterConfig): void {
  if (!Array.isArray(cluster.sites) || !Array.isArray(cluster.partitions)) {
    throw new SimInputError('cluster config needs "sites" and "partitions" arrays');
  }
  if (cluster.partitions.length === 0) throw new SimInputError('cluster config has no partitions');
  const siteIds = new Set(cluster.sites.map((s) => s.id));
  for (const site of cluster.sites) {
    if (site.powerCapW !== undefined && !isWhole(site.powerCapW, 0)) throw new SimInputError(`site "${site.id}": powerCapW must be an integer ≥ 0`);
    if (site.pueMilli !== undefined && !isWhole(site.pueMilli, 1000)) throw new SimInputError(`site "${site.id}": pueMilli must be an integer ≥ 1000`);
  }
  const names = new Set<string>();
  for (const p of cluster.partitions) {
    if (names.has(p.name)) throw new SimInputError(`duplicate partition "${p.name}"`);
    names.add(p.name);
    if (!siteIds.has(p.siteId)) throw new SimInputError(`partition "${p.name}" names unknown site "${p.siteId}"`);
    const counts: [string, number, number][] = [
      ['nodes', p.nodes, 1],
      ['gpusPerNode', p.gpusPerNode, 1],
      ['cpusPerNode', p.cpusPerNode, 0],
      ['memoryGbPerNode', p.memoryGbPerNode, 0],
      ['gpuIdlePowerW', p.gpuIdlePowerW, 0],
      ['gpuMaxPowerW', p.gpuMaxPowerW, 0],
      ['nodeBasePowerW', p.nodeBasePowerW, 0],
      ['maxWalltimeSeconds', p.maxWalltimeSeconds, 1],
    ];
    for (const [field, value, min] of counts) {
      if (!isWhole(value, min)) throw new SimInputError(`partition "${p.name}": ${field} must be an integer ≥ ${min}`);
    }
    if (p.gpuIdlePowerW > p.gpuMaxPowerW) throw new SimInputError(`partition "${p.name}": gpuIdlePowerW exceeds gpuMaxPowerW`);
  }
}

/** partitionGpuCount is the number of GPUs in a partition. */
export function partitionGpuCount(partition: Partition): number {
  return partition.nodes * partition.gpusPerNode;
}

/** clusterGpuCount is the number of GPUs in the whole cluster. */
export function clusterGpuCount(cluster: ClusterConfig): number {
  let total = 0;
  for (const p of cluster.partitions) total += partitionGpuCount(p);
  return total;
}

/** nodeName names node `index` (0-based) of a partition, e.g. "gpu-a-001". */
export function nodeName(partition: Partition, index: number): string {
  const width = Math.max(3, String(partition.nodes).length);
  return `${partition.name}-${String(index + 1).padStart(width, '0')}`;
}
