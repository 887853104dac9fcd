// The general engine (nodes of 1 GPU, each job on `size` nodes) and the fast flat replay must
// produce the same schedule under FIFO and EASY when no job outlives its estimate.
import { describe, expect, it } from 'vitest';
import { createEngine } from './engine';
import { testCluster, testJob, testPartition } from './fixtures';
import { policyFromName } from './policy';
import { createRng, nextInt } from './random';
import { replayTrace, type ReplayPolicy } from './replay';
import { traceFromJobs, type ReplayJob } from './trace';

function randomTrace(seed: number, count: number, machine: number): ReplayJob[] {
  const rng = createRng(seed);
  let t = 0;
  return Array.from({ length: count }, () => {
    t += nextInt(rng, 0, 3) === 0 ? 0 : nextInt(rng, 1, 60);
    const runtime = nextInt(rng, 1, 300);
    return {
      submitSeconds: t,
      runtimeSeconds: runtime,
      estimateSeconds: runtime + nextInt(rng, 0, 1) * nextInt(rng, 0, 600),
      processors: nextInt(rng, 0, 4) === 0 ? nextInt(rng, machine / 2, machine) : nextInt(rng, 1, 4),
    };
  });
}

describe('general engine and flat replay agree', () => {
  for (const policy of ['fifo', 'easy'] as ReplayPolicy[]) {
    for (const seed of [1, 2, 3, 4, 5]) {
      it(`${policy}, random trace ${seed}`, () => {
        const machine = 16;
        const jobs = randomTrace(seed, 200, machine);
        const replayed = Array.from(replayTrace(traceFromJobs(jobs, machine), policy));
        const engine = createEngine({
          cluster: testCluster([testPartition({ nodes: machine, gpusPerNode: 1, maxWalltimeSeconds: 100000 })]),
          policy: policyFromName(policy),
          seed: 1,
        });
        jobs.forEach((j, i) =>
          engine.submit(
            testJob(`j${i}`, {
              submitTimeSeconds: j.submitSeconds,
              gpus: j.processors,
              nodes: j.processors,
              runtimeSeconds: j.runtimeSeconds,
              walltimeLimitSeconds: j.estimateSeconds,
            }),
          ),
        );
        engine.runToCompletion();
        const general = jobs.map((_, i) => engine.job(`j${i}`)!.startTimeSeconds);
        expect(general).toEqual(replayed);
      });
    }
  }
});

describe('the random traces exercise backfilling', () => {
  it('EASY starts some jobs earlier than FIFO', () => {
    const jobs = randomTrace(1, 200, 16);
    const trace = traceFromJobs(jobs, 16);
    const fifo = replayTrace(trace, 'fifo');
    const easy = replayTrace(trace, 'easy');
    expect(easy.filter((s, i) => s < fifo[i]!).length).toBeGreaterThan(10);
  });
});
