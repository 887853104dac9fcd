/** Small clusters and job builders shared by the simulator's tests. */
import { createRng, nextInt } from './random';
import type { ReplayTrace } from './trace';
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

/** traceJob turns job i of a replay trace into a job on one-GPU nodes (GPUs = nodes = its size; limit = its estimate). */
export function traceJob(trace: ReplayTrace, i: number, id = `j${i}`): JobSpec {
  return testJob(id, {
    submitTimeSeconds: trace.submitSeconds[i]!,
    gpus: trace.processors[i]!,
    nodes: trace.processors[i]!,
    runtimeSeconds: trace.runtimeSeconds[i]!,
    walltimeLimitSeconds: trace.estimateSeconds[i]!,
  });
}

/** swfLine formats one SWF record from its first nine fields (the rest −1). */
export function swfLine(fields: readonly number[]): string {
  const all = [...fields];
  while (all.length < 18) all.push(-1);
  return all.join(' ');
}

/** How randomJobs draws: the longest gap between arrivals, how many accounts, and whether one job in ten fails. */
export interface RandomJobsShape {
  maxGapSeconds: number;
  accounts: number;
  failures: boolean;
}

/** randomJobs draws a reproducible stream of jobs over the given partitions from a seed. */
export function randomJobs(seed: number, count: number, partitions: string[], shape: RandomJobsShape): JobSpec[] {
  const rng = createRng(seed);
  let t = 0;
  return Array.from({ length: count }, (_, i) => {
    t += nextInt(rng, 0, shape.maxGapSeconds);
    const nodes = nextInt(rng, 1, 2);
    const limit = nextInt(rng, 60, 1200);
    return testJob(`r${i}`, {
      submitTimeSeconds: t,
      user: `u${nextInt(rng, 0, 3)}`,
      account: `acct${nextInt(rng, 0, shape.accounts - 1)}`,
      partition: partitions[nextInt(rng, 0, partitions.length - 1)]!,
      nodes,
      gpus: nodes * nextInt(rng, 1, 4),
      walltimeLimitSeconds: limit,
      runtimeSeconds: nextInt(rng, 1, limit + 200),
      gpuUtilPercent: nextInt(rng, 0, 100),
      exitCode: shape.failures && nextInt(rng, 0, 9) === 0 ? 1 : 0,
    });
  });
}
