/** Small clusters and job builders shared by the simulator's tests. */
import type { ClusterConfig, JobSpec, Partition } from './types';

/** testPartition builds a partition with test defaults (4 GPUs/node, 100 W idle, 700 W max, 1,000 W base). */
export function testPartition(overrides: Partial<Partition> = {}): Partition {
  return {
    name: 'gpu',
    siteId: 'se-1',
    nodes: 2,
    gpusPerNode: 4,
    gpuModel: 'H100',
    cpusPerNode: 64,
    memoryGbPerNode: 512,
    gpuIdlePowerW: 100,
    gpuMaxPowerW: 700,
    nodeBasePowerW: 1000,
    maxWalltimeSeconds: 86400,
    ...overrides,
  };
}

/** testCluster builds a one-site cluster from the given partitions (default: one 2 × 4-GPU partition). */
export function testCluster(partitions: Partition[] = [testPartition()]): ClusterConfig {
  return { sites: [{ id: 'se-1', country: 'SE', eu: true }], partitions };
}

/** testJob builds a job with test defaults (1 node, 4 GPUs, 100 s, exit 0). */
export function testJob(id: string, overrides: Partial<JobSpec> = {}): JobSpec {
  return {
    id,
    submitTimeSeconds: 0,
    user: 'alice',
    account: 'proj-a',
    partition: 'gpu',
    gpus: 4,
    nodes: 1,
    walltimeLimitSeconds: 100,
    runtimeSeconds: 100,
    gpuUtilPercent: 50,
    exitCode: 0,
    ...overrides,
  };
}

/** swfLine formats one SWF record from its first nine fields (the rest −1). */
export function swfLine(fields: readonly number[]): string {
  const all = [...fields];
  while (all.length < 18) all.push(-1);
  return all.join(' ');
}
