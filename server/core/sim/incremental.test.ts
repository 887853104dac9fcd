// The scheduling cycle keeps its free-GPU, running-job, quota and power indexes across events
// instead of rebuilding them from every node each cycle. This pins whole schedules of random
// traces — nodes of 1, 2, 4 and 8 GPUs in several partitions and sites, quotas, begin times,
// dependencies, arrays, EASY and multifactor with and without a queue depth, a power cap, node
// failures, cancels and time-limit extensions, a serialise/restore half-way — as the engine
// produced them before it kept any index (the `__pins__` files, written once by that engine), so
// any change in which job starts when, where, or why one waits shows here. And it holds the indexes
// to the straightforward definitions they replace (placeJob, easyReservation, backfillKeepsReservation)
// on random states.
import { describe, expect, it } from 'vitest';
import { CycleState } from './cycle-state';
import { createEngine, restoreEngine, type ClusterEngine } from './engine';
import { testPartition } from './fixtures';
import { canPlace, placeJob } from './placement';
import { policyFromName } from './policy';
import { backfillKeepsReservation, easyReservation, easyShadow, ReleaseWalk } from './reservation';
import { createRng, nextInt, type RngState } from './random';
import type { AccountConfig, ClusterConfig, JobSpec, PolicyName } from './types';

/** One random scenario: the policy and what it switches on. */
interface Scenario {
  name: string;
  seed: number;
  policy: PolicyName;
  queueDepth?: number;
  powerCapW?: number;
  failures?: boolean;
  limits?: boolean;
  extras?: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: 'fifo', seed: 1, policy: 'fifo' },
  { name: 'easy', seed: 2, policy: 'easy' },
  { name: 'easy-limits', seed: 3, policy: 'easy', limits: true },
  { name: 'multifactor', seed: 4, policy: 'multifactor', limits: true },
  { name: 'multifactor-depth', seed: 5, policy: 'multifactor', queueDepth: 4, limits: true },
  { name: 'easy-power-cap', seed: 6, policy: 'easy', powerCapW: 30_000 },
  { name: 'multifactor-power-depth', seed: 7, policy: 'multifactor', powerCapW: 34_000, queueDepth: 5 },
  { name: 'easy-failures', seed: 8, policy: 'easy', failures: true },
  { name: 'multifactor-failures-cap', seed: 9, policy: 'multifactor', failures: true, powerCapW: 38_000, limits: true },
  { name: 'easy-extras', seed: 10, policy: 'easy', extras: true, queueDepth: 6 },
  { name: 'multifactor-extras', seed: 11, policy: 'multifactor', extras: true, limits: true },
];

const JOBS = 360;

/** The machine: two sites, partitions of 8-, 4-, 1- and 2-GPU nodes (site "b" may be capped). */
function cluster(s: Scenario): ClusterConfig {
  return {
    sites: [
      { id: 'a', country: 'SE', eu: true },
      { id: 'b', country: 'DE', eu: true, pueMilli: 1100, ...(s.powerCapW === undefined ? {} : { powerCapW: s.powerCapW }) },
    ],
    partitions: [
      testPartition({ name: 'big', siteId: 'b', nodes: 6, gpusPerNode: 8, maxWalltimeSeconds: 20_000 }),
      testPartition({ name: 'mid', siteId: 'b', nodes: 5, gpusPerNode: 4, maxWalltimeSeconds: 8_000 }),
      testPartition({ name: 'one', siteId: 'a', nodes: 8, gpusPerNode: 1, maxWalltimeSeconds: 20_000 }),
      testPartition({ name: 'two', siteId: 'a', nodes: 3, gpusPerNode: 2, maxWalltimeSeconds: 4_000 }),
    ],
  };
}

function accounts(s: Scenario): AccountConfig[] {
  return [
    { name: 'p0', shares: 3, ...(s.limits ? { limits: { maxGpusPerUser: 12 } } : {}) },
    { name: "p1", shares: 1, ...(s.limits ? { limits: { grpGpuMinutes: 400_000 } } : {}) },
    { name: 'p2', shares: 2 },
    { name: 'p3', shares: 1, ...(s.limits ? { limits: { maxGpusPerUser: 6, grpGpuMinutes: 200_000 } } : {}) },
  ];
}

/** A job of random shape on a random partition; with `extras` some have begin times, dependencies or are arrays. */
function randomJob(rng: RngState, s: Scenario, i: number, t: number): JobSpec {
  const c = cluster(s);
  const p = c.partitions[nextInt(rng, 0, c.partitions.length - 1)]!;
  const nodes = nextInt(rng, 0, 3) === 0 ? nextInt(rng, 1, Math.min(4, p.nodes)) : 1;
  const perNode = nextInt(rng, 1, p.gpusPerNode);
  // One job in twenty asks for more than its partition allows (PartitionTimeLimit).
  const longest = nextInt(rng, 0, 19) === 0 ? p.maxWalltimeSeconds * 2 : p.maxWalltimeSeconds;
  const limit = nextInt(rng, 1, 4) === 1 ? nextInt(rng, 60, 600) : nextInt(rng, 300, longest);
  const runtime = nextInt(rng, 0, 9) === 0 ? limit + nextInt(rng, 1, 500) : nextInt(rng, 30, limit);
  const job: JobSpec = {
    id: `j${i}`,
    submitTimeSeconds: t,
    user: `u${nextInt(rng, 0, 5)}`,
    account: `p${nextInt(rng, 0, 3)}`,
    partition: p.name,
    gpus: nodes * perNode,
    nodes,
    walltimeLimitSeconds: limit,
    runtimeSeconds: runtime,
    gpuUtilPercent: nextInt(rng, 0, 100),
    exitCode: nextInt(rng, 0, 7) === 0 ? 1 : 0,
  };
  if (!s.extras) return job;
  const pick = nextInt(rng, 0, 11);
  if (pick === 0) job.beginTimeSeconds = t + nextInt(rng, 1, 3_000);
  if (pick === 1 && i > 0) job.dependency = { type: (['afterok', 'afterany', 'afternotok'] as const)[nextInt(rng, 0, 2)]!, jobIds: [`j${nextInt(rng, Math.max(0, i - 10), i - 1)}`] };
  if (pick === 2) job.array = { text: `0-${nextInt(rng, 1, 9)}%${nextInt(rng, 1, 3)}` };
  return job;
}

/** Why each pending job waits at the clock, as one line. */
function reasons(engine: ClusterEngine): string {
  const waiting = engine.snapshot().jobs.filter((j) => j.state === 'PENDING');
  return `@${engine.nowSeconds} ${waiting.map((j) => `${j.id}:${j.pendingReason}:${j.priority ?? '-'}`).join(' ')}`;
}

/** The schedule as text: one line per job (and array task) as it ended, sorted by id. */
function schedule(engine: ClusterEngine): string {
  return engine
    .snapshot()
    .jobs.map((j) =>
      [j.id, j.state, j.pendingReason ?? '-', j.priority ?? '-', j.startTimeSeconds ?? '-', j.endTimeSeconds ?? '-', j.nodeList.join('+') || '-', j.energyWh ?? '-', j.heldByPowerCap ? 'cap' : '-'].join(' '),
    )
    .sort()
    .join('\n');
}

/**
 * run replays a scenario: jobs arrive in bursts (so queues build up), the engine is advanced event by
 * event (the pending reasons noted every 15 jobs); with `extras` some jobs are cancelled or get a longer limit on the way, and the engine is
 * serialised and restored half-way.
 */
function run(s: Scenario): string {
  const seen: string[] = [];
  const rng = createRng(s.seed);
  let engine = createEngine({
    cluster: cluster(s),
    policy: policyFromName(s.policy, s.queueDepth === undefined ? {} : { queueDepth: s.queueDepth }),
    accounts: accounts(s),
    nodeFailures: s.failures ? { mtbfSeconds: 60_000, repairSeconds: 1_800 } : null,
    seed: s.seed,
  });
  let t = 0;
  for (let i = 0; i < JOBS; i++) {
    t += nextInt(rng, 0, 5) === 0 ? nextInt(rng, 200, 900) : nextInt(rng, 0, 40);
    engine.advanceTo(t);
    engine.submit(randomJob(rng, s, i, t));
    if (s.extras && i > 5 && nextInt(rng, 0, 14) === 0) {
      const target = `j${nextInt(rng, i - 5, i - 1)}`;
      const view = engine.job(target);
      if (view && (view.state === 'PENDING' || view.state === 'RUNNING')) {
        const longest = cluster(s).partitions.find((p) => p.name === view.partition)!.maxWalltimeSeconds;
        if (nextInt(rng, 0, 1) === 0 || view.array || view.walltimeLimitSeconds + 600 > longest) engine.cancel(target);
        else engine.extend(target, view.walltimeLimitSeconds + 600);
      }
    }
    if (i % 15 === 0) seen.push(reasons(engine));
    if (i === JOBS / 2) engine = restoreEngine(engine.serialize());
    if (s.failures && i % 40 === 0) engine.injectNodeFailure(`big-00${1 + (i % 6)}`, t + 1, 900);
  }
  engine.runToCompletion(t + 400_000);
  return `${seen.join('\n')}\n${schedule(engine)}`;
}

describe('the incremental cycle keeps every schedule of the engine that rebuilt its input each cycle', () => {
  for (const s of SCENARIOS) {
    it(`${s.name} (seed ${s.seed})`, async () => {
      await expect(run(s)).toMatchFileSnapshot(`./__pins__/incremental-${s.name}.txt`);
    });
  }
});

/** A partition of random size with random running jobs and down nodes, as a cycle state, with its free GPUs as an array and its node list. */
function randomState(rng: RngState): { state: CycleState; size: number; nodes: number; free: number[]; all: number[] } {
  const size = [1, 2, 4, 8][nextInt(rng, 0, 3)]!;
  const nodes = nextInt(rng, 1, 40);
  const state = new CycleState([testPartition({ nodes, gpusPerNode: size })], new Array<number>(nodes).fill(0), [0], 1);
  for (let i = 0; i < nodes; i++) {
    if (nextInt(rng, 0, 9) === 0) {
      state.nodeDown(i, nextInt(rng, 100, 900));
      continue;
    }
    for (let k = 0, left = size; k < 3 && left > 0; k++) {
      const gpus = nextInt(rng, 0, left);
      left -= gpus;
      if (gpus > 0) state.start({ id: `n${i}-${k}`, partition: 0, user: 'u', account: 'a', gpus, nodeIndices: [i], walltimeLimitSeconds: nextInt(rng, 1, 1000), startTimeSeconds: nextInt(rng, 0, 100) });
    }
  }
  return { state, size, nodes, free: Array.from({ length: nodes }, (_, i) => state.free.free(i)), all: Array.from({ length: nodes }, (_, i) => i) };
}

describe('the indexes agree with the straightforward definitions (random states)', () => {
  it('FreeGpus.place and fitting are placeJob and canPlace', () => {
    const rng = createRng(99);
    for (let round = 0; round < 300; round++) {
      const { state, size, nodes, free, all } = randomState(rng);
      for (let q = 0; q < 10; q++) {
        const perNode = nextInt(rng, 1, size);
        const count = nextInt(rng, 1, Math.min(nodes, 6));
        expect(state.free.place(0, count, perNode)).toEqual(placeJob(free, all, count, perNode));
        expect(state.free.fitting(0, perNode) >= count).toBe(canPlace(free, all, count, perNode));
      }
    }
  });

  it('ReleaseWalk and ShadowReservation give easyReservation and backfillKeepsReservation', () => {
    const rng = createRng(7);
    for (let round = 0; round < 300; round++) {
      const { state, size, nodes, free, all } = randomState(rng);
      const head = { partition: 0, nodeCount: nextInt(rng, 1, Math.min(nodes, 4)), gpusPerNode: nextInt(rng, 1, size) };
      const now = nextInt(rng, 50, 400);
      const releases = [
        ...state.runningIn(0).map((r) => ({ atSeconds: r.endSeconds, nodeIndices: r.nodeIndices, gpusPerNode: r.gpusPerNode, repair: false })),
        ...state.repairsIn(0).map((r) => ({ atSeconds: r.atSeconds, nodeIndices: [r.node], gpusPerNode: size, repair: true })),
      ];
      const shape = { partitionNodes: all, nodeCount: head.nodeCount, gpusPerNode: head.gpusPerNode };
      const expected = easyReservation(free, shape, releases, now);
      const got = easyShadow(new ReleaseWalk(state.free, head, state.runningIn(0), state.repairsIn(0), size), now);
      expect(got?.shadowSeconds ?? null).toBe(expected?.shadowSeconds ?? null);
      if (!got || !expected) continue;
      // Backfills on nodes free now, one after another as a cycle makes them.
      let reference = { shadowSeconds: expected.shadowSeconds, freeAtShadow: expected.freeAtShadow };
      for (let b = 0; b < 6; b++) {
        const perNode = nextInt(rng, 1, size);
        const placement = state.free.place(0, 1, perNode);
        if (!placement) break;
        const end = now + nextInt(rng, 1, 1000);
        const after = backfillKeepsReservation(reference, shape, { nodeIndices: placement, gpusPerNode: perNode, estimatedEndSeconds: end });
        expect(got.keeps(placement, perNode, end)).toBe(after !== null);
        if (!after) continue;
        got.commit(placement, perNode, end);
        state.start({ id: `b${round}-${b}`, partition: 0, user: 'u', account: 'a', gpus: perNode, nodeIndices: placement, walltimeLimitSeconds: end - now, startTimeSeconds: now });
        reference = { shadowSeconds: reference.shadowSeconds, freeAtShadow: after };
      }
    }
  });
});
