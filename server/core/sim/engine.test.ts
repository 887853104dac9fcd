import { describe, expect, it } from 'vitest';
import { createEngine, restoreEngine, type ClusterEngine } from './engine';
import { SimInputError } from './errors';
import { randomJobs as randomStream, testCluster, testJob, testPartition } from './fixtures';
import { policyFromName } from './policy';
import type { EngineConfig, JobSpec, PolicyName } from './types';

function engineWith(policy: PolicyName, jobs: JobSpec[], extra: Partial<EngineConfig> = {}): ClusterEngine {
  const engine = createEngine({ cluster: testCluster(), policy: policyFromName(policy), seed: 1, ...extra });
  for (const j of jobs) engine.submit(j);
  return engine;
}

function schedule(engine: ClusterEngine): Record<string, [number | null, string]> {
  const out: Record<string, [number | null, string]> = {};
  for (const j of engine.snapshot().jobs) out[j.id] = [j.startTimeSeconds, j.nodeList.join(',')];
  return out;
}

// Partition "gpu": 2 nodes × 4 GPUs unless a case says otherwise; nodes are gpu-001, gpu-002 (gpu-003).
describe('engine: FIFO and EASY on nodes (hand-computed)', () => {
  const cases: {
    name: string;
    nodes?: number;
    jobs: JobSpec[];
    fifo: Record<string, [number, string]>;
    easy: Record<string, [number, string]>;
  }[] = [
    {
      // j1 holds gpu-001 until 100. j2 needs both nodes → reservation at 100. j3 (2 GPUs, limit 30 → ends by 40 ≤ 100)
      // backfills on gpu-002 at 10 under EASY; under FIFO it waits behind j2 (starts 100, ends 150).
      name: '(a) a short job backfills',
      jobs: [
        testJob('j1'),
        testJob('j2', { gpus: 8, nodes: 2, runtimeSeconds: 50, walltimeLimitSeconds: 50 }),
        testJob('j3', { submitTimeSeconds: 10, gpus: 2, runtimeSeconds: 20, walltimeLimitSeconds: 30 }),
      ],
      fifo: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'] },
      easy: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [10, 'gpu-002'] },
    },
    {
      // j3 would fit on gpu-002 now but runs to 210 and j2 needs gpu-002 at 100 → must not start early.
      name: '(b) backfilling would delay the head job',
      jobs: [
        testJob('j1'),
        testJob('j2', { gpus: 8, nodes: 2, runtimeSeconds: 50, walltimeLimitSeconds: 50 }),
        testJob('j3', { submitTimeSeconds: 10, runtimeSeconds: 200, walltimeLimitSeconds: 200 }),
      ],
      fifo: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'] },
      easy: { j1: [0, 'gpu-001'], j2: [100, 'gpu-001,gpu-002'], j3: [150, 'gpu-001'] },
    },
    {
      // 3 nodes. j1 holds gpu-001/002 until 100; j2 needs 2 nodes → reserved at 100, when 3 nodes are free
      // (one "extra"). j3 runs long on gpu-003, the extra node → starts at 10. j4 then finds nothing free.
      // FIFO: j2 at 100 (gpu-001/002), j3 with it on gpu-003; j4 when j2 ends at 150.
      name: '(c) the extra node',
      nodes: 3,
      jobs: [
        testJob('j1', { gpus: 8, nodes: 2 }),
        testJob('j2', { gpus: 8, nodes: 2, runtimeSeconds: 50, walltimeLimitSeconds: 50 }),
        testJob('j3', { submitTimeSeconds: 10, runtimeSeconds: 500, walltimeLimitSeconds: 500 }),
        testJob('j4', { submitTimeSeconds: 10, gpus: 2, runtimeSeconds: 500, walltimeLimitSeconds: 500 }),
      ],
      fifo: { j1: [0, 'gpu-001,gpu-002'], j2: [100, 'gpu-001,gpu-002'], j3: [100, 'gpu-003'], j4: [150, 'gpu-001'] },
      easy: { j1: [0, 'gpu-001,gpu-002'], j2: [100, 'gpu-001,gpu-002'], j3: [10, 'gpu-003'], j4: [150, 'gpu-001'] },
    },
  ];
  for (const c of cases) {
    for (const policy of ['fifo', 'easy'] as const) {
      it(`${policy}: ${c.name}`, () => {
        const engine = createEngine({
          cluster: testCluster([testPartition({ nodes: c.nodes ?? 2 })]),
          policy: policyFromName(policy),
          seed: 1,
        });
        for (const j of c.jobs) engine.submit(j);
        engine.runToCompletion();
        expect(schedule(engine)).toEqual(c[policy]);
      });
    }
  }

  it('pending reasons: the blocked head waits for Resources, the rest for Priority', () => {
    const jobs = [
      testJob('j1'),
      testJob('j2', { gpus: 8, nodes: 2 }),
      testJob('j3', { submitTimeSeconds: 10, runtimeSeconds: 200, walltimeLimitSeconds: 200 }),
    ];
    const engine = engineWith('easy', jobs);
    engine.advanceTo(10);
    expect(engine.job('j1')?.state).toBe('RUNNING');
    expect(engine.job('j2')).toMatchObject({ state: 'PENDING', pendingReason: 'Resources' });
    expect(engine.job('j3')).toMatchObject({ state: 'PENDING', pendingReason: 'Priority' });
  });
});

describe('engine: job end states', () => {
  it('COMPLETED, FAILED and TIMEOUT (killed at the limit), with exit code and signal as Slurm reports them', () => {
    const engine = engineWith('fifo', [
      testJob('ok', { gpus: 2 }),
      testJob('bad', { gpus: 2, exitCode: 3, runtimeSeconds: 40 }),
      testJob('slow', { runtimeSeconds: 150, walltimeLimitSeconds: 100 }),
    ]);
    engine.runToCompletion();
    expect(engine.job('ok')).toMatchObject({ state: 'COMPLETED', exitCode: 0, signal: null, endTimeSeconds: 100 });
    expect(engine.job('bad')).toMatchObject({ state: 'FAILED', exitCode: 3, signal: null, endTimeSeconds: 40 });
    // Slurm: sacct -X 0:0, its batch step CANCELLED 0:15.
    expect(engine.job('slow')).toMatchObject({ state: 'TIMEOUT', exitCode: 0, signal: 15, startTimeSeconds: 0, endTimeSeconds: 100 });
  });

  it('NODE_FAIL: running job killed, node down for the repair time, back up after', () => {
    const engine = engineWith('easy', [
      testJob('j1', { runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }),
      testJob('j2', { submitTimeSeconds: 310, gpus: 8, nodes: 2 }),
    ]);
    engine.injectNodeFailure('gpu-001', 300, 200);
    engine.advanceTo(300);
    expect(engine.job('j1')).toMatchObject({ state: 'NODE_FAIL', startTimeSeconds: 0, endTimeSeconds: 300, nodeList: ['gpu-001'], exitCode: null, signal: null });
    let nodes = engine.snapshot().nodes;
    expect(nodes[0]).toMatchObject({ id: 'gpu-001', state: 'down', repairAtSeconds: 500, powerW: 0, allocatedGpus: 0 });
    // Idle node: base 1,000 W + 4 × 100 W idle GPUs.
    expect(nodes[1]).toMatchObject({ id: 'gpu-002', state: 'idle', powerW: 1400 });
    engine.advanceTo(499);
    expect(engine.job('j2')).toMatchObject({ state: 'PENDING', pendingReason: 'Resources' });
    engine.advanceTo(500);
    nodes = engine.snapshot().nodes;
    expect(nodes.map((n) => n.state)).toEqual(['allocated', 'allocated']);
    expect(engine.job('j2')).toMatchObject({ state: 'RUNNING', startTimeSeconds: 500 });
    engine.runToCompletion();
    expect(engine.job('j2')).toMatchObject({ state: 'COMPLETED', endTimeSeconds: 600 });
    expect(engine.snapshot().nodes.map((n) => n.state)).toEqual(['idle', 'idle']);
  });

  it('NODE_FAIL of one node ends a multi-node job and frees its other nodes', () => {
    const engine = engineWith('fifo', [testJob('wide', { gpus: 8, nodes: 2, runtimeSeconds: 1000, walltimeLimitSeconds: 1000 })]);
    engine.injectNodeFailure('gpu-002', 100, 50);
    engine.advanceTo(100);
    expect(engine.job('wide')?.state).toBe('NODE_FAIL');
    expect(engine.snapshot().nodes.map((n) => n.state)).toEqual(['idle', 'down']);
  });

  it('CANCELLED: pending and running jobs; the freed nodes go to the next job at once', () => {
    const engine = engineWith('fifo', [
      testJob('j1', { gpus: 8, nodes: 2, runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }),
      testJob('j2'),
      testJob('j3'),
    ]);
    engine.advanceTo(50);
    expect(engine.cancel('j3')).toBe(true);
    expect(engine.job('j3')).toMatchObject({ state: 'CANCELLED', startTimeSeconds: null, endTimeSeconds: 50, pendingReason: null, exitCode: null, signal: null });
    engine.advanceTo(100);
    expect(engine.cancel('j1')).toBe(true);
    // Cancelled while running: Slurm ends the batch script by SIGTERM on the portal's cancel (0:15).
    expect(engine.job('j1')).toMatchObject({ state: 'CANCELLED', startTimeSeconds: 0, endTimeSeconds: 100, exitCode: 0, signal: 15 });
    engine.advanceTo(100);
    expect(engine.job('j2')).toMatchObject({ state: 'RUNNING', startTimeSeconds: 100 });
    expect(engine.cancel('j1')).toBe(false);
    expect(() => engine.cancel('nope')).toThrow(SimInputError);
    engine.runToCompletion();
    expect(engine.job('j2')).toMatchObject({ state: 'COMPLETED', endTimeSeconds: 200 });
  });

  it('a service stopped as asked exits 0 by itself (COMPLETED, no signal)', () => {
    const engine = engineWith('fifo', [testJob('svc', { runtimeSeconds: 1000, walltimeLimitSeconds: 1000 })]);
    engine.advanceTo(60);
    expect(engine.stop('svc')).toBe(true);
    expect(engine.job('svc')).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 0, endTimeSeconds: 60, exitCode: 0, signal: null });
  });

  it('extend: a session runs to its new limit, a job that ends on its own ends as planned, the queue is planned again', () => {
    // Two nodes × 4 GPUs. `sess` (a session: runs until stopped) holds gpu-001 until its limit of 100;
    // `wide` needs both nodes and is planned at 100; `short` ends on its own at 50 whatever its limit.
    const engine = engineWith('easy', [
      testJob('sess', { runtimeSeconds: 10 ** 8, walltimeLimitSeconds: 100 }),
      testJob('short', { runtimeSeconds: 50, walltimeLimitSeconds: 60 }),
      testJob('wide', { submitTimeSeconds: 1, gpus: 8, nodes: 2, runtimeSeconds: 10, walltimeLimitSeconds: 10 }),
    ]);
    engine.advanceTo(40);
    expect(engine.extend('sess', 300)).toBe(true);
    expect(engine.extend('short', 90)).toBe(true);
    expect(engine.job('sess')).toMatchObject({ state: 'RUNNING', walltimeLimitSeconds: 300 });
    engine.advanceTo(100);
    expect(engine.job('short')).toMatchObject({ state: 'COMPLETED', endTimeSeconds: 50 });
    // Past its old limit the session still runs; the wide job waits for it.
    expect(engine.job('sess')).toMatchObject({ state: 'RUNNING', endTimeSeconds: null });
    expect(engine.job('wide')).toMatchObject({ state: 'PENDING' });
    engine.runToCompletion();
    expect(engine.job('sess')).toMatchObject({ state: 'TIMEOUT', startTimeSeconds: 0, endTimeSeconds: 300 });
    expect(engine.job('wide')).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 300, endTimeSeconds: 310 });
  });

  it('extend: refuses a shorter limit, one over the partition\'s, an unknown job; false once ended; survives a restore', () => {
    const engine = engineWith('fifo', [testJob('sess', { runtimeSeconds: 10 ** 8, walltimeLimitSeconds: 100 }), testJob('queued', { gpus: 8, nodes: 2, walltimeLimitSeconds: 100 })]);
    engine.advanceTo(10);
    expect(() => engine.extend('sess', 99)).toThrow(SimInputError);
    expect(() => engine.extend('sess', 86_401)).toThrow(SimInputError);
    expect(() => engine.extend('sess', 150.5)).toThrow(SimInputError);
    expect(() => engine.extend('nope', 200)).toThrow(SimInputError);
    // A pending job's limit is raised too; it starts later when the session ends later.
    expect(engine.extend('queued', 200)).toBe(true);
    expect(engine.extend('sess', 150)).toBe(true);
    const restored = restoreEngine(engine.serialize());
    for (const e of [engine, restored]) {
      e.runToCompletion();
      expect(e.job('sess')).toMatchObject({ state: 'TIMEOUT', endTimeSeconds: 150 });
      expect(e.job('queued')).toMatchObject({ startTimeSeconds: 150, walltimeLimitSeconds: 200 });
      expect(e.extend('sess', 400)).toBe(false);
    }
  });

  it('a job that has not ended has neither exit code nor signal', () => {
    const engine = engineWith('fifo', [testJob('run', { runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }), testJob('wait', { gpus: 8, nodes: 2 })]);
    engine.advanceTo(10);
    expect(engine.job('run')).toMatchObject({ state: 'RUNNING', exitCode: null, signal: null });
    expect(engine.job('wait')).toMatchObject({ state: 'PENDING', exitCode: null, signal: null });
  });
});

describe('engine: limits', () => {
  it('quota and partition limits keep jobs pending with Slurm reasons without blocking others', () => {
    const engine = createEngine({
      cluster: testCluster([testPartition({ nodes: 3 })]),
      policy: policyFromName('fifo'),
      seed: 1,
      accounts: [
        { name: 'proj-a', limits: { maxGpusPerUser: 4 } },
        { name: 'proj-b', limits: { grpGpuMinutes: 10 } },
      ],
    });
    engine.submit(testJob('a1'));
    engine.submit(testJob('a2')); // alice already runs 4 GPUs in proj-a
    engine.submit(testJob('b1', { user: 'bob', account: 'proj-b', walltimeLimitSeconds: 200 })); // 4 × 200 s = 800 > 600 GPU-s
    engine.submit(testJob('long', { user: 'dave', account: 'proj-c', walltimeLimitSeconds: 90000 })); // > 86,400 s
    engine.submit(testJob('a3', { user: 'carol' })); // another user of proj-a
    engine.advanceTo(0);
    expect(engine.job('a1')?.state).toBe('RUNNING');
    expect(engine.job('a2')?.pendingReason).toBe('QOSMaxGRESPerUser');
    expect(engine.job('b1')?.pendingReason).toBe('AssocGrpGRESMinutes');
    expect(engine.job('long')?.pendingReason).toBe('PartitionTimeLimit');
    expect(engine.job('a3')).toMatchObject({ state: 'RUNNING', startTimeSeconds: 0 });
    engine.runToCompletion();
    expect(engine.job('a2')).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 100 });
    expect(engine.job('b1')?.state).toBe('PENDING');
  });
});

describe('engine: multifactor fair share', () => {
  const oneNode = testCluster([testPartition({ nodes: 1 })]);
  const jobs = [
    testJob('h0', { account: 'heavy', runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }),
    testJob('h1', { account: 'heavy', submitTimeSeconds: 400 }),
    testJob('l1', { account: 'light', submitTimeSeconds: 500 }),
  ];
  const run = (policy: PolicyName, untilSeconds?: number): ClusterEngine => {
    const engine = createEngine({
      cluster: oneNode,
      policy: policyFromName(policy, { usageHalfLifeSeconds: 3600 }),
      seed: 1,
      accounts: [{ name: 'heavy' }, { name: 'light' }],
    });
    for (const j of jobs) engine.submit(j);
    if (untilSeconds === undefined) engine.runToCompletion();
    else engine.advanceTo(untilSeconds);
    return engine;
  };

  it('the account with heavy decayed usage goes after the light one', () => {
    const at1000 = run('multifactor', 1000);
    // At 1000 all usage is heavy's: factor 2^(−1 / 0.5) = 0.25 → 10,000 × 0.25 + 1,000 × 600 / 604,800 → 2,500.
    expect(at1000.job('h1')).toMatchObject({ state: 'PENDING', priority: 2500 });
    // Light has no usage: factor 1 → 10,000 + 1,000 × 500 / 604,800 → 10,000.
    expect(at1000.job('l1')).toMatchObject({ state: 'RUNNING', priority: 10000 });
    const accounts = at1000.snapshot().accounts;
    expect(accounts.map((a) => [a.name, a.fairShareFactor])).toEqual([
      ['heavy', 0.25],
      ['light', 1],
    ]);
    const mf = run('multifactor');
    expect(mf.job('l1')?.startTimeSeconds).toBe(1000);
    expect(mf.job('h1')?.startTimeSeconds).toBe(1100);
    const fifo = run('easy');
    expect(fifo.job('h1')?.startTimeSeconds).toBe(1000);
    expect(fifo.job('l1')?.startTimeSeconds).toBe(1100);
  });

  it('usage decays with the configured half-life', () => {
    const H = 3600;
    const engine = createEngine({ cluster: oneNode, policy: policyFromName('multifactor', { usageHalfLifeSeconds: H }), seed: 1 });
    engine.submit(testJob('j', { runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }));
    engine.advanceTo(1000);
    const atEnd = engine.snapshot().accounts[0]!;
    // 4 GPUs for 1,000 s: 4 × H / ln 2 × (1 − 2^(−1000/H)) ≈ 3,598.9 GPU-s (raw 4,000).
    expect(atEnd.decayedUsageGpuSeconds).toBeCloseTo(((4 * H) / Math.LN2) * (1 - Math.pow(2, -1000 / H)), 6);
    expect(atEnd.usedGpuSeconds).toBe(4000);
    engine.advanceTo(1000 + H);
    expect(engine.snapshot().accounts[0]!.decayedUsageGpuSeconds).toBeCloseTo(atEnd.decayedUsageGpuSeconds / 2, 6);
    engine.advanceTo(1000 + 2 * H);
    expect(engine.snapshot().accounts[0]!.decayedUsageGpuSeconds).toBeCloseTo(atEnd.decayedUsageGpuSeconds / 4, 6);
  });
});

describe('engine: energy and power', () => {
  it('a known job to the watt-hour, and node power while it runs', () => {
    const engine = createEngine({
      cluster: testCluster([testPartition({ nodes: 1, gpusPerNode: 8 })]),
      policy: policyFromName('fifo'),
      seed: 1,
    });
    engine.submit(testJob('e', { gpus: 4, gpuUtilPercent: 80, runtimeSeconds: 7200, walltimeLimitSeconds: 7200 }));
    engine.advanceTo(3600);
    // Node: 1,000 W base + 4 GPUs × (100 + 600 × 0.8 = 580 W) + 4 idle × 100 W = 3,720 W.
    expect(engine.snapshot().totalPowerW).toBe(3720);
    // Half-way: 2,820 W × 1 h.
    expect(engine.job('e')?.energyWh).toBe(2820);
    engine.runToCompletion();
    // 4 × 580 W + 1,000 W × 4/8 = 2,820 W for 2 h = 5,640 Wh.
    expect(engine.job('e')?.energyWh).toBe(5640);
    expect(engine.snapshot().totalPowerW).toBe(1800);
  });
});

describe('engine: input checks', () => {
  it('rejects impossible jobs and going back in time', () => {
    const engine = engineWith('fifo', []);
    expect(() => engine.submit(testJob('x', { gpus: 3, nodes: 2 }))).toThrow(/multiple of nodes/);
    expect(() => engine.submit(testJob('x', { gpus: 10, nodes: 2 }))).toThrow(/GPUs per node/);
    expect(() => engine.submit(testJob('x', { partition: 'cpu' }))).toThrow(/unknown partition/);
    engine.submit(testJob('x'));
    expect(() => engine.submit(testJob('x'))).toThrow(/duplicate/);
    engine.advanceTo(10);
    expect(() => engine.advanceTo(5)).toThrow(SimInputError);
    expect(() => engine.submit(testJob('late', { submitTimeSeconds: 5 }))).toThrow(/submit time/);
    expect(() => engine.injectNodeFailure('gpu-009', 20, 10)).toThrow(/unknown node/);
  });
});

// ---- determinism and persistence ----------------------------------------------

const randomJobs = (seed: number, count: number, partitions: string[]) => randomStream(seed, count, partitions, { maxGapSeconds: 120, accounts: 3, failures: true });

const richConfig = (seed: number): EngineConfig => ({
  cluster: testCluster([testPartition({ name: 'a', nodes: 3 }), testPartition({ name: 'b', nodes: 2, gpusPerNode: 4 })]),
  policy: policyFromName('multifactor', { usageHalfLifeSeconds: 1800, maxAgeSeconds: 3600 }),
  accounts: [{ name: 'acct0', shares: 2, limits: { maxGpusPerUser: 6 } }, { name: 'acct1' }, { name: 'acct2', limits: { grpGpuMinutes: 2000 } }],
  nodeFailures: { mtbfSeconds: 4000, repairSeconds: 300 },
  seed,
});

describe('engine: determinism', () => {
  const runWith = (seed: number): string => {
    const engine = createEngine(richConfig(seed));
    for (const j of randomJobs(99, 80, ['a', 'b'])) engine.submit(j);
    engine.runToCompletion();
    return JSON.stringify(engine.serialize());
  };

  it('same seed ⇒ identical output', () => {
    expect(runWith(7)).toBe(runWith(7));
  });

  it('different seeds with an MTBF ⇒ failures (and so results) may differ', () => {
    const base = runWith(7);
    const others = [8, 9, 10, 11].map(runWith);
    expect(others.some((o) => o !== base)).toBe(true);
    expect(base).toContain('NODE_FAIL');
  });
});

describe('engine: serialise / restore', () => {
  it('restore + advance equals an uninterrupted run', () => {
    const jobs = randomJobs(5, 80, ['a', 'b']);
    const drive = (pauses: boolean): ClusterEngine => {
      let engine = createEngine(richConfig(3));
      for (const j of jobs) engine.submit(j);
      engine.injectNodeFailure('b-001', 700, 250);
      const roundTrip = (): void => {
        if (pauses) engine = restoreEngine(JSON.parse(JSON.stringify(engine.serialize())) as ReturnType<ClusterEngine['serialize']>);
      };
      engine.advanceTo(1234);
      roundTrip();
      const victim = engine.snapshot().jobs.find((j) => j.state === 'RUNNING' || j.state === 'PENDING');
      if (victim) engine.cancel(victim.id);
      roundTrip();
      engine.advanceTo(2500);
      roundTrip();
      engine.runToCompletion();
      return engine;
    };
    const straight = drive(false);
    const resumed = drive(true);
    expect(resumed.snapshot()).toEqual(straight.snapshot());
    expect(JSON.stringify(resumed.serialize())).toBe(JSON.stringify(straight.serialize()));
    const states = new Set(straight.snapshot().jobs.map((j) => j.state));
    expect(states.has('COMPLETED')).toBe(true);
    expect(states.has('CANCELLED')).toBe(true);
  });

  it('splitting advanceTo into many small steps changes nothing', () => {
    const jobs = randomJobs(11, 50, ['a', 'b']);
    const a = createEngine(richConfig(4));
    const b = createEngine(richConfig(4));
    for (const j of jobs) {
      a.submit(j);
      b.submit(j);
    }
    for (let t = 0; t <= 6000; t += 37) b.advanceTo(t);
    b.advanceTo(6000);
    a.advanceTo(6000);
    expect(JSON.stringify(b.serialize())).toBe(JSON.stringify(a.serialize()));
  });

  it('state is plain JSON and pruning finished jobs keeps it small', () => {
    const engine = engineWith('easy', [testJob('j1'), testJob('j2', { submitTimeSeconds: 500 })]);
    engine.advanceTo(300);
    const state = engine.serialize();
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(engine.pruneFinished(300)).toBe(1);
    expect(engine.snapshot().jobs).toEqual([]);
    engine.runToCompletion();
    expect(engine.job('j2')?.state).toBe('COMPLETED');
  });
});
