// Replays the real KTH SP2 trace when /work/shared/traces is present (read-only; never copied into the project).
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createEngine } from './engine';
import { testCluster, testPartition, traceJob } from './fixtures';
import { policyFromName } from './policy';
import { replayMetrics } from './metrics';
import { replayTrace } from './replay';
import { parseSwf } from './swf';

const KTH = ['/work/shared/traces/KTH-SP2-1996-2.1-cln.swf.gz', '../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz'].find((p) =>
  existsSync(p),
);

describe.skipIf(!KTH)('KTH SP2 trace (skipped when /work/shared/traces is absent)', () => {
  it('parses 27,992 jobs and replays deterministically with EASY ahead of FIFO', () => {
    const { trace, dropped } = parseSwf(gunzipSync(readFileSync(KTH!)).toString('utf8'));
    expect(trace.jobCount).toBe(27992);
    expect(dropped).toBe(0);
    expect(trace.machineSize).toBe(100);
    const easy = replayMetrics(trace, replayTrace(trace, 'easy'));
    const fifo = replayMetrics(trace, replayTrace(trace, 'fifo'));
    expect(replayMetrics(trace, replayTrace(trace, 'easy'))).toEqual(easy);
    expect(easy.avgWaitSeconds).toBeLessThan(fifo.avgWaitSeconds);
    expect(easy.utilization).toBeGreaterThan(0.5);
    expect(easy.utilization).toBeLessThan(1);
  });

  it('the general engine reproduces the replay schedule on the first 3,000 jobs', () => {
    const { trace } = parseSwf(gunzipSync(readFileSync(KTH!)).toString('utf8'));
    const n = 3000;
    for (const policy of ['fifo', 'easy'] as const) {
      const replayed = Array.from(replayTrace({ ...trace, jobCount: n }, policy));
      const engine = createEngine({
        cluster: testCluster([testPartition({ nodes: trace.machineSize, gpusPerNode: 1, maxWalltimeSeconds: 1e9 })]),
        policy: policyFromName(policy),
        seed: 1,
      });
      for (let i = 0; i < n; i++) engine.submit(traceJob(trace, i));
      engine.runToCompletion();
      expect(replayed.map((_, i) => engine.job(`j${i}`)!.startTimeSeconds)).toEqual(replayed);
    }
  });
});
