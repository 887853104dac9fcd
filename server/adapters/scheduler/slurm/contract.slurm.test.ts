// The SchedulerPort contract on a real Slurm 22.05 (the test cluster of scripts/slurm-test-cluster.sh:
// partition gpu, 2 nodes × 4 GPUs, mapped to the resource class h100), in real time.
import { schedulerContract } from '../contract';
import { createSlurmScheduler } from './index';
import { catalogueClasses, sleep, testClusterSettings, waitUntil } from './testing';

schedulerContract('slurm', () => {
  const port = createSlurmScheduler(testClusterSettings(), catalogueClasses());
  return Promise.resolve({
    port,
    partition: 'h100',
    gpusPerNode: 4,
    nodes: 2,
    advanceSeconds: (seconds) => sleep(seconds * 1000),
    waitUntil: async (condition, maxSeconds) => {
      await waitUntil(condition, maxSeconds);
    },
    // Slurm counts whole seconds and starts and ends a job within a second or two of being asked.
    toleranceSeconds: 4,
    close: () => Promise.resolve(),
  });
});
