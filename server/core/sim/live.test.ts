// The engine in live use: the bounded scheduling cycle (`policy.queueDepth`) — hand-computed
// schedules, priority order from the merged per-account queues, proof that a depth larger than any
// queue changes nothing — and the per-call helpers a live driver uses.
import { describe, expect, it } from 'vitest';
import { createEngine, restoreEngine, restoreEngineJson, type ClusterEngine } from './engine';
import { SimInputError } from './errors';
import { randomJobs as randomStream, testCluster, testJob, testPartition } from './fixtures';
import { mergedQueue, sortedQueue, type CyclePendingJob, type CycleQueue } from './order';
import { policyFromName } from './policy';
import { createRng, nextInt } from './random';
import type { EngineConfig, JobSpec, PolicyName } from './types';

function engineWith(policy: PolicyName, queueDepth: number | undefined, extra: Partial<EngineConfig> = {}): ClusterEngine {
  return createEngine({ cluster: testCluster(), policy: policyFromName(policy, queueDepth === undefined ? {} : { queueDepth }), seed: 1, ...extra });
}

function reasons(engine: ClusterEngine): Record<string, string> {
  const out: Record<string, string> = {};
  for (const j of engine.snapshot().jobs) out[j.id] = j.state === 'PENDING' ? `PENDING:${j.pendingReason}` : j.state;
  return out;
}

function starts(engine: ClusterEngine): Record<string, [number | null, string]> {
  const out: Record<string, [number | null, string]> = {};
  for (const j of engine.snapshot().jobs) out[j.id] = [j.startTimeSeconds, j.nodeList.join(',')];
  return out;
}

// Partition "gpu": 2 nodes × 4 GPUs. j1 holds gpu-001 until 100; at 10 arrive j2 (both nodes, the
// head: reserved at 100), j3 (4 GPUs until 210: would delay j2) and j4 (2 GPUs, limit 30: backfills).
describe('queue depth: a cycle reads only the first jobs of each partition (hand-computed, EASY)', () => {
  const jobs = (): JobSpec[] => [
    testJob('j1'),
    testJob('j2', { submitTimeSeconds: 10, gpus: 8, nodes: 2, runtimeSeconds: 50, walltimeLimitSeconds: 50 }),
    testJob('j3', { submitTimeSeconds: 10, runtimeSeconds: 200, walltimeLimitSeconds: 200 }),
    testJob('j4', { submitTimeSeconds: 10, gpus: 2, runtimeSeconds: 20, walltimeLimitSeconds: 30 }),
  ];
  const cases: { depth: number | undefined; at10: Record<string, string>; schedule: Record<string, [number, string]> }[] = [
    {
      // The whole queue: j4 backfills at 10.
      depth: undefined,
      at10: { j1: 'RUNNING', j2: 'PENDING:Resources', j3: 'PENDING:Priority', j4: 'RUNNING' },
      schedule: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'], j4: [10, 'gpu-002'] },
    },
    {
      // Three pending jobs, depth 3: the same as the whole queue.
      depth: 3,
      at10: { j1: 'RUNNING', j2: 'PENDING:Resources', j3: 'PENDING:Priority', j4: 'RUNNING' },
      schedule: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'], j4: [10, 'gpu-002'] },
    },
    {
      // j4 is never read at 10 (keeps None) so it cannot backfill; at 150 it starts beside j3.
      depth: 2,
      at10: { j1: 'RUNNING', j2: 'PENDING:Resources', j3: 'PENDING:Priority', j4: 'PENDING:None' },
      schedule: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'], j4: [150, 'gpu-002'] },
    },
    {
      // Depth 1: at 150 the cycle starts j3, reads no further, and runs again at once: j4 starts at 150 too.
      depth: 1,
      at10: { j1: 'RUNNING', j2: 'PENDING:Resources', j3: 'PENDING:None', j4: 'PENDING:None' },
      schedule: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'], j4: [150, 'gpu-002'] },
    },
  ];
  for (const c of cases) {
    it(`depth ${c.depth ?? 'unset'}`, () => {
      const engine = engineWith('easy', c.depth);
      for (const j of jobs()) engine.submit(j);
      engine.advanceTo(10);
      expect(reasons(engine)).toEqual(c.at10);
      engine.runToCompletion();
      expect(starts(engine)).toEqual(c.schedule);
    });
  }

  it('counts per partition: a long queue in a full partition does not hide an idle one', () => {
    const engine = createEngine({
      cluster: testCluster([testPartition({ name: 'a' }), testPartition({ name: 'b', nodes: 1 })]),
      policy: policyFromName('fifo', { queueDepth: 1 }),
      seed: 1,
    });
    engine.submit(testJob('full', { partition: 'a', gpus: 8, nodes: 2 }));
    for (let i = 1; i <= 5; i++) engine.submit(testJob(`a${i}`, { partition: 'a' }));
    engine.submit(testJob('b1', { partition: 'b' }));
    engine.advanceTo(0);
    // The cycle at 0 starts "full", cuts a's queue there and reruns: a1 is read (Resources), a2–a5 never are.
    expect(reasons(engine)).toEqual({
      full: 'RUNNING',
      a1: 'PENDING:Resources',
      a2: 'PENDING:None',
      a3: 'PENDING:None',
      a4: 'PENDING:None',
      a5: 'PENDING:None',
      b1: 'RUNNING',
    });
  });

  it('jobs beyond the depth keep their last reason and priority', () => {
    const engine = engineWith('multifactor', 2, { cluster: testCluster([testPartition({ nodes: 1 })]) });
    engine.submit(testJob('run', { runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }));
    engine.submit(testJob('p1', { submitTimeSeconds: 5 }));
    engine.submit(testJob('p2', { submitTimeSeconds: 5 }));
    engine.advanceTo(5);
    // proj-a has all the usage and all the shares: fair share 2^−1, priority floor(10000 × 0.5 + ~0) = 5000.
    expect(engine.job('p1')).toMatchObject({ pendingReason: 'Resources', priority: 5000 });
    expect(engine.job('p2')).toMatchObject({ pendingReason: 'Priority', priority: 5000 });
    // An account with no usage (fair share 2^0) goes first; proj-a now has half the shares: 2^−2 → 2500.
    // The depth of 2 ends at p1: p2 is not read, so it keeps its reason and priority from 5 s.
    engine.submit(testJob('l1', { submitTimeSeconds: 20, account: 'light' }));
    engine.advanceTo(20);
    expect(engine.job('l1')).toMatchObject({ pendingReason: 'Resources', priority: 10000 });
    expect(engine.job('p1')).toMatchObject({ pendingReason: 'Priority', priority: 2500 });
    expect(engine.job('p2')).toMatchObject({ pendingReason: 'Priority', priority: 5000 });
  });

  it('rejects a depth that is not a whole number ≥ 1', () => {
    for (const queueDepth of [0, 1.5, -3]) {
      expect(() => engineWith('fifo', queueDepth)).toThrow(SimInputError);
    }
  });
});

describe('queue depth: priority order in a live cluster', () => {
  // One 4-GPU node. "heavy" runs a long job, then queues six; "light" queues two later. With depth 1
  // the cycle still starts light's jobs first (fair share), as the unbounded cycle does, although
  // they are the last in arrival order: the per-account queues are merged by priority.
  function drive(queueDepth: number | undefined): ClusterEngine {
    const engine = engineWith('multifactor', queueDepth, { cluster: testCluster([testPartition({ nodes: 1 })]) });
    const live = (t: number, job: JobSpec): void => {
      engine.advanceTo(t);
      engine.submit({ ...job, submitTimeSeconds: t });
      engine.advanceTo(t);
    };
    live(0, testJob('hog', { account: 'heavy', runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }));
    for (let i = 1; i <= 6; i++) live(10 + i, testJob(`h${i}`, { account: 'heavy' }));
    live(20, testJob('l1', { account: 'light' }));
    live(21, testJob('l2', { account: 'light' }));
    engine.advanceTo(999);
    return engine;
  }

  it('starts jobs in priority order with a depth of 1', () => {
    const bounded = drive(1);
    // Before the hog ends only the head is read: light's first job, not heavy's oldest. h1 still shows
    // the reason it got while it was the head; h2 and l2 were never read.
    expect(reasons(bounded)).toMatchObject({ l1: 'PENDING:Resources', h1: 'PENDING:Resources', h2: 'PENDING:None', l2: 'PENDING:None' });
    bounded.runToCompletion();
    const order = bounded
      .snapshot()
      .jobs.filter((j) => j.id !== 'hog')
      .sort((a, b) => a.startTimeSeconds! - b.startTimeSeconds!)
      .map((j) => `${j.id}@${j.startTimeSeconds}`);
    expect(order).toEqual(['l1@1000', 'l2@1100', 'h1@1200', 'h2@1300', 'h3@1400', 'h4@1500', 'h5@1600', 'h6@1700']);
    const unbounded = drive(undefined);
    unbounded.runToCompletion();
    expect(starts(bounded)).toEqual(starts(unbounded));
  });
});

const randomJobs = (seed: number, count: number, partitions: string[]) => randomStream(seed, count, partitions, { maxGapSeconds: 60, accounts: 4, failures: false });

const richConfig = (policy: PolicyName, queueDepth?: number): EngineConfig => ({
  cluster: testCluster([testPartition({ name: 'a', nodes: 3 }), testPartition({ name: 'b', nodes: 2 })]),
  policy: policyFromName(policy, { usageHalfLifeSeconds: 1800, maxAgeSeconds: 3600, ...(queueDepth === undefined ? {} : { queueDepth }) }),
  accounts: [{ name: 'acct0', shares: 2, limits: { maxGpusPerUser: 6 } }, { name: 'acct1' }, { name: 'acct2', limits: { grpGpuMinutes: 2000 } }],
  nodeFailures: { mtbfSeconds: 4000, repairSeconds: 300 },
  seed: 5,
});

/** The state without its config (which differs only by the depth). */
function stateOf(engine: ClusterEngine): string {
  return JSON.stringify({ ...engine.serialize(), config: null });
}

describe('queue depth: a depth larger than any queue changes nothing', () => {
  for (const policy of ['fifo', 'easy', 'multifactor'] as const) {
    it(`${policy}: same state as the whole-queue cycle, step by step and at the end`, () => {
      const jobs = randomJobs(17, 300, ['a', 'b']);
      const whole = createEngine(richConfig(policy));
      const bounded = createEngine(richConfig(policy, 10_000));
      for (const j of jobs) {
        whole.submit(j);
        bounded.submit(j);
      }
      for (let t = 0; t <= 12_000; t += 613) {
        whole.advanceTo(t);
        bounded.advanceTo(t);
        expect(stateOf(bounded)).toBe(stateOf(whole));
      }
      whole.runToCompletion();
      bounded.runToCompletion();
      expect(stateOf(bounded)).toBe(stateOf(whole));
    });
  }

  it('serialise / restore with a depth equals an uninterrupted run', () => {
    const jobs = randomJobs(23, 200, ['a', 'b']);
    const drive = (pauses: boolean): ClusterEngine => {
      let engine = createEngine(richConfig('multifactor', 3));
      for (const j of jobs) engine.submit(j);
      for (let t = 0; t <= 8000; t += 777) {
        engine.advanceTo(t);
        if (pauses) engine = restoreEngine(JSON.parse(JSON.stringify(engine.serialize())) as ReturnType<ClusterEngine['serialize']>);
      }
      engine.runToCompletion();
      return engine;
    };
    expect(JSON.stringify(drive(true).serialize())).toBe(JSON.stringify(drive(false).serialize()));
  });
});

describe('mergedQueue', () => {
  const policy = policyFromName('multifactor', { maxAgeSeconds: 100 });
  const factors = new Map([
    ['x', 0.2],
    ['y', 0.5],
    ['z', 0.5],
  ]);
  const priorityOf = (job: CyclePendingJob): number => Math.floor(policy.ageWeight * Math.min(1000 - job.submitTimeSeconds, 100) / 100 + policy.fairShareWeight * factors.get(job.account)!);

  function randomPending(seed: number): CyclePendingJob[] {
    const rng = createRng(seed);
    let t = 0;
    return Array.from({ length: 120 }, (_, seq) => {
      t += nextInt(rng, 0, 20);
      return { id: `p${seq}`, seq, submitTimeSeconds: t, partition: nextInt(rng, 0, 2), user: 'u', account: 'xyz'[nextInt(rng, 0, 2)]!, gpus: 1, nodes: 1, walltimeLimitSeconds: 60 };
    });
  }

  function queuesOf(pending: CyclePendingJob[]): CycleQueue[] {
    const queues = new Map<string, CycleQueue & { jobs: CyclePendingJob[] }>();
    for (const job of pending) {
      const key = `${job.partition}/${job.account}`;
      if (!queues.has(key)) queues.set(key, { partition: job.partition, account: job.account, jobs: [] });
      queues.get(key)!.jobs.push(job);
    }
    return [...queues.values()];
  }

  for (const seed of [1, 2, 3]) {
    for (const depth of [1, 7, 1000]) {
      it(`seed ${seed}, depth ${depth}: the merge equals the sorted queue cut per partition`, () => {
        const pending = randomPending(seed);
        const cutSorted = new Set<number>();
        const cutMerged = new Set<number>();
        const sorted = sortedQueue(pending, priorityOf, { ...policy, queueDepth: depth }, cutSorted);
        const merged = [...mergedQueue(queuesOf(pending), priorityOf, policy, depth, cutMerged)];
        expect(merged.map((q) => [q.job.id, q.priority])).toEqual(sorted.map((q) => [q.job.id, q.priority]));
        expect(cutMerged).toEqual(cutSorted);
        expect(merged.length).toBe(depth === 1000 ? 120 : 3 * depth);
        expect(cutMerged.size).toBe(depth === 1000 ? 0 : 3);
      });
    }
  }

  it('reads each queue only as far as it yields', () => {
    let read = 0;
    const counted = (jobs: CyclePendingJob[]): Iterable<CyclePendingJob> => ({
      *[Symbol.iterator]() {
        for (const j of jobs) {
          read++;
          yield j;
        }
      },
    });
    const pending = randomPending(4).filter((j) => j.partition === 0);
    const queues = queuesOf(pending).map((q) => ({ ...q, jobs: counted(q.jobs as CyclePendingJob[]) }));
    expect([...mergedQueue(queues, priorityOf, policy, 5, new Set())]).toHaveLength(5);
    // Five yielded, plus at most one head read ahead per queue.
    expect(read).toBeLessThanOrEqual(5 + queues.length);
  });
});

describe('live helpers', () => {
  it('endedJobs lists ended jobs until pruned; clusterView is the snapshot without jobs and accounts', () => {
    const engine = engineWith('easy', undefined);
    engine.submit(testJob('short', { gpus: 2, runtimeSeconds: 50 }));
    engine.submit(testJob('long', { gpus: 2, runtimeSeconds: 500, walltimeLimitSeconds: 500 }));
    engine.submit(testJob('queued', { gpus: 8, nodes: 2 }));
    engine.advanceTo(60);
    expect(engine.endedJobs().map((j) => [j.id, j.state, j.endTimeSeconds, j.seq])).toEqual([['short', 'COMPLETED', 50, 0]]);
    engine.cancel('queued');
    expect(engine.endedJobs().map((j) => j.id)).toEqual(['short', 'queued']);
    expect(engine.pruneFinished(engine.nowSeconds + 1)).toBe(2);
    expect(engine.endedJobs()).toEqual([]);
    const { jobs, accounts, ...cluster } = engine.snapshot();
    expect(jobs.map((j) => j.id)).toEqual(['long']);
    expect(accounts).toHaveLength(1);
    expect(engine.clusterView()).toEqual(cluster);
    expect(cluster).toMatchObject({ pendingJobs: 0, runningJobs: 1 });
  });

  it('serializeJson is serialize as text, and restoreEngineJson continues like restoreEngine', () => {
    const engine = createEngine(richConfig('multifactor', 3));
    for (const j of randomJobs(31, 60, ['a', 'b'])) engine.submit(j);
    engine.advanceTo(900);
    const text = engine.serializeJson();
    expect(text).toBe(JSON.stringify(engine.serialize()));
    const fromText = restoreEngineJson(text);
    const fromState = restoreEngine(JSON.parse(text) as ReturnType<ClusterEngine['serialize']>);
    fromText.runToCompletion();
    fromState.runToCompletion();
    expect(fromText.serializeJson()).toBe(fromState.serializeJson());
  });

  it('validate throws what submit would, and changes nothing', () => {
    const engine = engineWith('fifo', undefined);
    expect(() => engine.validate(testJob('x', { partition: 'cpu' }))).toThrow(/unknown partition/);
    engine.validate(testJob('x'));
    expect(engine.job('x')).toBeUndefined();
    engine.submit(testJob('x'));
    expect(() => engine.validate(testJob('x'))).toThrow(/duplicate/);
  });
});
