// What-if planning on hand-computed machines: one site, 4-GPU nodes, 100 W per busy GPU and nothing idle.
import { describe, expect, it } from 'vitest';
import { createEngine, policyFromName, type Partition } from '../sim';
import { applyChanges, changeProblems, neverRuns, takesShare, type WhatIfJob, type WhatIfMachine } from './machine';
import { nearestRank, WhatIfReplay } from './replay';

const part = (over: Partial<Partition> = {}): Partition => ({
  name: 'gpu',
  siteId: 'here',
  nodes: 1,
  gpusPerNode: 4,
  gpuModel: 'G',
  cpusPerNode: 32,
  memoryGbPerNode: 512,
  gpuIdlePowerW: 0,
  gpuMaxPowerW: 100,
  nodeBasePowerW: 0,
  maxWalltimeSeconds: 86_400,
  ...over,
});

const machine = (over: Partial<WhatIfMachine> = {}): WhatIfMachine => ({
  sites: [{ id: 'here', country: 'DE', eu: true, pueMilli: 1500, gridGco2PerKwh: 400, heatReusePermille: 500, powerCapW: null }],
  partitions: [part()],
  peakTflops: { gpu: 1000 },
  policy: 'easy',
  ...over,
});

const job = (id: string, over: Partial<WhatIfJob> = {}): WhatIfJob => ({
  id,
  submitSeconds: 0,
  beginSeconds: null,
  partition: 'gpu',
  gpus: 4,
  nodes: 1,
  walltimeSeconds: 100,
  runtimeSeconds: 100,
  gpuUtilPercent: 100,
  account: 'p',
  user: 'u',
  centsPerGpuHour: 360,
  ...over,
});

const PERIOD = { fromSeconds: 0, toSeconds: 200 };

describe('what-if replay', () => {
  it('measures a queue of two whole-node jobs on one node, and the same with a node more', () => {
    const jobs = [job('a'), job('b')];
    const now = new WhatIfReplay(machine(), jobs, PERIOD).outcome();
    // b waits for a: waits 0 and 100; both run inside [0, 200): 800 GPU-s of 4 GPUs × 200 s.
    expect(now).toMatchObject({ jobs: 2, jobsRun: 2, gpus: 4, utilisationBp: 10_000, waitP50Seconds: 0, waitP90Seconds: 100, waitMeanSeconds: 50, jobsDelayedByPowerCap: 0 });
    // Bounded slowdown: a 1, b (100 + 100) / 100 = 2 → mean 1.5.
    expect(now.boundedSlowdownMilli).toBe(1500);
    // 400 W IT for 200 s = 22.2 Wh; facility 600 W → 33.3 Wh; heat half of it; 400 g/kWh.
    expect(now).toMatchObject({ itEnergyWh: 22, facilityEnergyWh: 33, heatReusedWh: 17, co2eGrams: 13 });
    // 800 GPU-s at €3.60 per GPU-hour = 80 cents.
    expect(now.revenueCents).toBe(80);
    expect(now.sites[0]).toMatchObject({ peakFacilityPowerW: 600, powerCapW: null });

    const proposal = applyChanges(machine(), jobs, [{ kind: 'nodes', classId: 'gpu', delta: 1 }]);
    const more = new WhatIfReplay(proposal.machine, proposal.jobs, PERIOD).outcome();
    // Both start at once and end at 100: half the GPUs busy half the period… of twice the GPUs.
    expect(more).toMatchObject({ gpus: 8, utilisationBp: 5_000, waitP90Seconds: 0, waitMeanSeconds: 0, boundedSlowdownMilli: 1000, revenueCents: 80 });
    // 800 W for 100 s, then idle (0 W): the same energy, a higher peak.
    expect(more).toMatchObject({ itEnergyWh: 22, facilityEnergyWh: 33 });
    expect(more.sites[0]!.peakFacilityPowerW).toBe(1200);
  });

  it('counts a job the cap holds back, and its wait', () => {
    // Two 2-GPU jobs, 200 W each; a 300 W facility cap at PUE 1 lets one run at a time though the GPUs would fit both.
    const m = machine({ sites: [{ id: 'here', country: 'DE', eu: true, pueMilli: 1000, gridGco2PerKwh: 0, heatReusePermille: 0, powerCapW: 300 }] });
    const jobs = [job('a', { gpus: 2 }), job('b', { gpus: 2 })];
    const capped = new WhatIfReplay(m, jobs, PERIOD).outcome();
    expect(capped).toMatchObject({ jobsRun: 2, jobsDelayedByPowerCap: 1, waitP90Seconds: 100 });
    expect(capped.sites[0]).toMatchObject({ peakFacilityPowerW: 200, powerCapW: 300 });
    expect(Math.max(...capped.sites[0]!.hourlyPeakW)).toBeLessThanOrEqual(300);
    const lifted = applyChanges(m, jobs, [{ kind: 'powerCap', siteId: 'here', capKw: null }]);
    expect(new WhatIfReplay(lifted.machine, lifted.jobs, PERIOD).outcome()).toMatchObject({ jobsDelayedByPowerCap: 0, waitP90Seconds: 0 });
  });

  it('counts revenue and utilisation only inside the period, and follows a job that waits past it', () => {
    const jobs = [job('a'), job('b', { submitSeconds: 150 })];
    const out = new WhatIfReplay(machine(), jobs, { fromSeconds: 0, toSeconds: 180 }).outcome();
    // a: 0–100 inside; b: 150–250, 30 s inside. 4 × 130 GPU-s of 4 × 180.
    expect(out.utilisationBp).toBe(Math.round((4 * 130 * 10_000) / (4 * 180)));
    expect(out.revenueCents).toBe(Math.round((4 * 100 * 360) / 3600) + Math.round((4 * 30 * 360) / 3600));
    expect(out.jobsRun).toBe(2);
  });

  it('waits from the begin, not the submission, for a job asked to start later', () => {
    const out = new WhatIfReplay(machine(), [job('a', { beginSeconds: 50 })], PERIOD).outcome();
    expect(out.waitMeanSeconds).toBe(0);
    expect(out.utilisationBp).toBe(Math.round((4 * 100 * 10_000) / (4 * 200)));
  });

  it('leaves out and counts the jobs a machine can never run', () => {
    const m = machine({ sites: [{ id: 'here', country: 'DE', eu: true, pueMilli: 1000, gridGco2PerKwh: 0, heatReusePermille: 0, powerCapW: 300 }] });
    expect(neverRuns(m, job('big'))).toBe('power');
    expect(neverRuns(m, job('wide', { gpus: 8, nodes: 2 }))).toBe('nodes');
    expect(neverRuns(m, job('long', { walltimeSeconds: 90_000 }))).toBe('walltime');
    expect(neverRuns(m, job('lost', { partition: 'nope' }))).toBe('partition');
    const out = new WhatIfReplay(m, [job('big'), job('ok', { gpus: 1 })], PERIOD).outcome();
    expect(out).toMatchObject({ jobs: 2, jobsRun: 1, jobsNeverRun: { power: 1, nodes: 0, walltime: 0, partition: 0 } });
  });

  it('draws the power the engine itself reports, at every event (peak, hourly peaks, energy)', () => {
    // Two partitions at one capped site; jobs of mixed sizes and utilisations arriving over a day.
    const m = machine({
      sites: [{ id: 'here', country: 'DE', eu: true, pueMilli: 1250, gridGco2PerKwh: 0, heatReusePermille: 0, powerCapW: 3_000 }],
      partitions: [part({ nodes: 3, gpuIdlePowerW: 50, gpuMaxPowerW: 400, nodeBasePowerW: 300 }), part({ name: 'other', nodes: 2, gpusPerNode: 2, gpuIdlePowerW: 30, gpuMaxPowerW: 300, nodeBasePowerW: 100 })],
      peakTflops: { gpu: 1000, other: 500 },
    });
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const jobs = Array.from({ length: 60 }, (_, i) => {
      const other = random() < 0.3;
      const gpus = other ? 1 + Math.floor(random() * 2) : [1, 2, 4, 8][Math.floor(random() * 4)]!;
      const runtime = 600 + Math.floor(random() * 7200);
      return job(`j${i}`, { partition: other ? 'other' : 'gpu', gpus, nodes: gpus > 4 ? 2 : 1, submitSeconds: Math.floor(random() * 86_400), runtimeSeconds: runtime, walltimeSeconds: runtime + 600, gpuUtilPercent: 40 + Math.floor(random() * 61) });
    });
    const period = { fromSeconds: 0, toSeconds: 2 * 86_400 };
    const out = new WhatIfReplay(m, jobs, period).outcome();
    expect(out.jobsDelayedByPowerCap).toBeGreaterThan(0);
    // The large jobs cannot run under the cap even alone: left out (in the engine they would wait for ever and block the queue).
    const runnable = jobs.filter((j) => neverRuns(m, j) === null);
    expect(out.jobsNeverRun.power).toBe(jobs.length - runnable.length);
    expect(out.jobsNeverRun.power).toBeGreaterThan(0);
    // The engine's own view, event by event.
    const engine = createEngine({ cluster: { sites: [{ id: 'here', country: 'DE', eu: true, pueMilli: 1250, powerCapW: 3_000 }], partitions: m.partitions }, policy: policyFromName('easy'), seed: 1, startTimeSeconds: 0, nodeFailures: null });
    for (const j of runnable) engine.submit({ id: j.id, submitTimeSeconds: j.submitSeconds, user: j.user, account: j.account, partition: j.partition, gpus: j.gpus, nodes: j.nodes, walltimeLimitSeconds: j.walltimeSeconds, runtimeSeconds: j.runtimeSeconds, gpuUtilPercent: j.gpuUtilPercent, exitCode: 0 });
    let last = 0;
    let facilityW = engine.sitePower()[0]!.facilityPowerW;
    let peak = 0;
    const hourly = new Array<number>(48).fill(0);
    let facilityWs = 0;
    for (let next = engine.nextEventSeconds(); next !== null && last < period.toSeconds; next = engine.nextEventSeconds()) {
      const until = Math.min(next, period.toSeconds);
      if (until > last) {
        facilityWs += facilityW * (until - last);
        peak = Math.max(peak, facilityW);
        for (let h = Math.floor(last / 3600); h <= Math.floor((until - 1) / 3600); h++) hourly[h] = Math.max(hourly[h]!, facilityW);
      }
      last = until;
      engine.advanceTo(next);
      facilityW = engine.sitePower()[0]!.facilityPowerW;
    }
    if (last < period.toSeconds) {
      facilityWs += facilityW * (period.toSeconds - last);
      for (let h = Math.floor(last / 3600); h < 48; h++) hourly[h] = Math.max(hourly[h]!, facilityW);
    }
    expect(out.sites[0]!.peakFacilityPowerW).toBe(peak);
    expect(peak).toBeLessThanOrEqual(3_000);
    expect(out.sites[0]!.hourlyPeakW).toEqual(hourly);
    // Energy: the engine rounds each instant's facility draw to whole W, the sweep rounds once.
    expect(Math.abs(out.facilityEnergyWh - facilityWs / 3600)).toBeLessThan(2);
  });

  it('reports progress until it is done', () => {
    const replay = new WhatIfReplay(machine(), [job('a'), job('b'), job('c', { submitSeconds: 150 })], PERIOD);
    const seen: number[] = [];
    while (!replay.step(1)) seen.push(replay.progress);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((p, i) => p >= 0 && p < 1 && (i === 0 || p >= seen[i - 1]!))).toBe(true);
    expect(replay.progress).toBe(1);
  });
});

describe('proposed changes', () => {
  it('moves an even share of a class to a new class, at the new GPU speed, only where it fits', () => {
    const m = machine({ partitions: [part(), part({ name: 'fast', nodes: 1, gpusPerNode: 8 })], peakTflops: { gpu: 1000, fast: 2000 } });
    const jobs = [job('a'), job('b'), job('c', { gpus: 8, nodes: 2 }), job('d')];
    const { machine: next, jobs: moved } = applyChanges(m, jobs, [{ kind: 'newClass', id: 'new', siteId: 'here', templateClassId: 'fast', nodes: 1, gpusPerNode: 4, fromClassId: 'gpu', sharePercent: 50 }]);
    expect(next.partitions.map((p) => `${p.name}:${p.nodes}×${p.gpusPerNode}`)).toEqual(['gpu:1×4', 'fast:1×8', 'new:1×4']);
    // Half of them: the 2nd and 4th (k = 1, 3); each runs twice as fast on the template's GPUs.
    expect(moved.map((j) => j.partition)).toEqual(['gpu', 'new', 'gpu', 'new']);
    expect(moved[1]).toMatchObject({ runtimeSeconds: 50, walltimeSeconds: 50, nodes: 1 });
    // The original is untouched.
    expect(jobs[1]!.partition).toBe('gpu');
    expect([0, 1, 2, 3].map((k) => takesShare(k, 25))).toEqual([false, false, false, true]);
    expect([0, 1, 2, 3].map((k) => takesShare(k, 100))).toEqual([true, true, true, true]);
  });

  it('changes sites and the policy', () => {
    const { machine: next } = applyChanges(machine(), [], [
      { kind: 'powerCap', siteId: 'here', capKw: 2.5 },
      { kind: 'pue', siteId: 'here', pueMilli: 1100 },
      { kind: 'grid', siteId: 'here', gco2PerKwh: 50 },
      { kind: 'policy', policy: 'fifo' },
    ]);
    expect(next.sites[0]).toMatchObject({ powerCapW: 2500, pueMilli: 1100, gridGco2PerKwh: 50 });
    expect(next.policy).toBe('fifo');
    expect(machine().sites[0]!.powerCapW).toBeNull();
  });

  it('names the field of what cannot apply', () => {
    expect(changeProblems(machine(), [{ kind: 'nodes', classId: 'gpu', delta: -1 }])).toEqual([{ field: 'changes.0.delta', key: 'whatIf.problem.tooFewNodes', params: { nodes: 1, most: 0 } }]);
    expect(changeProblems(machine(), [{ kind: 'nodes', classId: 'x', delta: 1 }])[0]!.field).toBe('changes.0.classId');
    expect(changeProblems(machine(), [{ kind: 'policy', policy: 'fifo' }, { kind: 'pue', siteId: 'there', pueMilli: 1200 }])[0]!.field).toBe('changes.1.siteId');
    expect(changeProblems(machine(), [{ kind: 'newClass', id: 'gpu', siteId: 'here', templateClassId: 'gpu', nodes: 1, gpusPerNode: 4, fromClassId: 'gpu', sharePercent: 10 }])[0]!.field).toBe('changes.0.id');
    expect(changeProblems(machine(), [{ kind: 'nodes', classId: 'gpu', delta: 3 }])).toEqual([]);
  });
});

describe('nearestRank', () => {
  it('is the value at rank ceil(p × n)', () => {
    expect(nearestRank([], 50)).toBe(0);
    expect(nearestRank([1, 2, 3, 4], 50)).toBe(2);
    expect(nearestRank([1, 2, 3, 4], 90)).toBe(4);
    expect(nearestRank([5], 90)).toBe(5);
  });
});
