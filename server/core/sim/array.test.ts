// Job arrays on the simulated cluster, as Slurm's --array: one submit, tasks `${id}_${index}` that run
// as jobs of their own in index order, at most the throttle at once (the others wait with
// JobArrayTaskLimit), made jobs lazily (a 10,000-task array is one record at submit), cancelled as a
// whole, held as a whole by begin time and dependency, and unchanged by a restore half-way.
import { describe, expect, it } from 'vitest';
import { summariseArray } from '../scheduler/array-status';
import type { SchedulerTaskStatus } from '../scheduler/port';
import { ARRAY_WINDOW, arrayEndState } from './array';
import { createEngine, restoreEngineJson, type ClusterEngine, type JobView } from './engine';
import { jobEnergyWh } from './energy';
import { SimInputError } from './errors';
import { testCluster, testJob, testPartition } from './fixtures';
import { policyFromName } from './policy';
import type { JobState, PolicyName } from './types';

function engine(policy: PolicyName = 'easy', options: { queueDepth?: number; nodes?: number; gpusPerNode?: number } = {}): ClusterEngine {
  const partition = testPartition({ nodes: options.nodes ?? 2, gpusPerNode: options.gpusPerNode ?? 4 });
  return createEngine({
    cluster: testCluster([partition]),
    policy: policyFromName(policy, options.queueDepth === undefined ? {} : { queueDepth: options.queueDepth }),
    seed: 7,
  });
}

const job = (e: ClusterEngine, id: string): JobView => {
  const view = e.job(id);
  if (!view) throw new Error(`no job ${id}`);
  return view;
};

/** The tasks of the snapshot, by id. */
function tasks(e: ClusterEngine, arrayId: string): JobView[] {
  return e.snapshot().jobs.filter((j) => j.arrayTask?.arrayId === arrayId);
}

/** Runs the engine second by second up to `until`, recording the most tasks of the array running at once. */
function mostRunning(e: ClusterEngine, arrayId: string, until: number): number {
  let most = 0;
  for (let t = e.nowSeconds; t <= until; t++) {
    e.advanceTo(t);
    most = Math.max(most, job(e, arrayId).array!.tasks.filter((v) => v.state === 'RUNNING').length);
  }
  return most;
}

describe('job arrays on the simulated cluster', () => {
  it('"0-5%2": tasks run in index order, at most two at once, the others wait with JobArrayTaskLimit; each is charged like a job', () => {
    const e = engine();
    e.submit(testJob('arr', { gpus: 1, runtimeSeconds: 100, walltimeLimitSeconds: 200, array: { text: '0-5%2' } }));
    e.advanceTo(1);
    const running = job(e, 'arr');
    expect(running).toMatchObject({ state: 'RUNNING', startTimeSeconds: 0, endTimeSeconds: null, seq: 0 });
    expect(running.array).toMatchObject({ text: '0-5%2', count: 6, throttle: 2, waiting: 4, neverRan: 0, waitingReason: 'JobArrayTaskLimit' });
    expect(running.array!.tasks.map((t) => [t.id, t.state])).toEqual([
      ['arr_0', 'RUNNING'],
      ['arr_1', 'RUNNING'],
    ]);
    // The waiting tasks made jobs wait for the throttle, though GPUs are free.
    expect(tasks(e, 'arr').filter((t) => t.state === 'PENDING').map((t) => t.pendingReason)).toEqual(['JobArrayTaskLimit', 'JobArrayTaskLimit']);
    expect(e.clusterView()).toMatchObject({ pendingJobs: 4, runningJobs: 2 });

    expect(mostRunning(e, 'arr', 400)).toBe(2);
    const done = job(e, 'arr');
    expect(done).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 0, endTimeSeconds: 300, exitCode: 0, signal: null, pendingReason: null });
    expect(done.array).toMatchObject({ waiting: 0, neverRan: 0, waitingReason: null });
    expect(done.array!.tasks.map((t) => [t.arrayTask!.index, t.state, t.startTimeSeconds, t.endTimeSeconds])).toEqual([
      [0, 'COMPLETED', 0, 100],
      [1, 'COMPLETED', 0, 100],
      [2, 'COMPLETED', 100, 200],
      [3, 'COMPLETED', 100, 200],
      [4, 'COMPLETED', 200, 300],
      [5, 'COMPLETED', 200, 300],
    ]);
    // Each task: 1 GPU × 100 s, its energy as a job's; the array's the sum.
    const taskWh = jobEnergyWh({ model: testPartition(), gpus: 1, gpuUtilPercent: 50, runSeconds: 100 });
    expect(done.array!.tasks.map((t) => t.energyWh)).toEqual(Array(6).fill(taskWh));
    expect(done.energyWh).toBe(6 * taskWh);
    expect(e.snapshot().accounts.find((a) => a.name === 'proj-a')!.usedGpuSeconds).toBe(6 * 100);
    expect(e.endedJobs().map((j) => j.id)).toEqual(['arr']);
  });

  it('walks lists and stepped ranges ("1,3,5-11:2") and starts an unthrottled array as far as GPUs go, beyond its window of task jobs', () => {
    const stepped = engine();
    stepped.submit(testJob('s', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, array: { text: '1,3,5-11:2' } }));
    stepped.runToCompletion();
    expect(job(stepped, 's').array!.tasks.map((t) => t.id)).toEqual(['s_1', 's_3', 's_5', 's_7', 's_9', 's_11']);
    expect(job(stepped, 's').array!.tasks.every((t) => t.startTimeSeconds === 0)).toBe(true);

    // 40 one-GPU tasks on 64 GPUs: all start at 0, though only a window of tasks is a job at a time.
    const wide = engine('easy', { nodes: 8, gpusPerNode: 8, queueDepth: 100 });
    wide.submit(testJob('w', { gpus: 1, runtimeSeconds: 50, walltimeLimitSeconds: 50, array: { text: '0-39' } }));
    wide.advanceTo(0);
    expect(job(wide, 'w').array!.tasks.filter((t) => t.state === 'RUNNING')).toHaveLength(40);
    // 70 on 64: 64 start at 0 in index order, the rest wait for Resources and start at 50.
    const full = engine('easy', { nodes: 8, gpusPerNode: 8 });
    full.submit(testJob('f', { gpus: 1, runtimeSeconds: 50, walltimeLimitSeconds: 50, array: { text: '0-69' } }));
    full.advanceTo(0);
    expect(job(full, 'f')).toMatchObject({ state: 'RUNNING', pendingReason: null, array: { waiting: 6, waitingReason: 'Resources' } });
    expect(job(full, 'f').array!.tasks.map((t) => t.arrayTask!.index)).toEqual([...Array(64).keys()]);
    full.runToCompletion();
    expect(job(full, 'f').array!.tasks.slice(64).map((t) => t.startTimeSeconds)).toEqual(Array(6).fill(50));
  });

  it('keeps its place in the queue: a job submitted later does not pass the tasks not yet made jobs (FIFO, also with a queue depth)', () => {
    for (const queueDepth of [undefined, 1]) {
      const e = engine('fifo', { nodes: 1, queueDepth });
      e.submit(testJob('arr', { runtimeSeconds: 10, walltimeLimitSeconds: 10, array: { text: '0-39' } }));
      e.submit(testJob('later', { submitTimeSeconds: 5, runtimeSeconds: 10, walltimeLimitSeconds: 10 }));
      e.runToCompletion();
      expect(job(e, 'arr').array!.tasks.map((t) => t.startTimeSeconds), `depth ${queueDepth}`).toEqual([...Array(40).keys()].map((i) => i * 10));
      expect(job(e, 'later').startTimeSeconds, `depth ${queueDepth}`).toBe(400);
    }
  });

  it('ends as its tasks say (the rule of summariseArray): a failed task fails the array, the highest exit code is the array’s', () => {
    const e = engine();
    e.submit(testJob('ok', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, array: { text: '0-2' } }));
    e.submit(testJob('bad', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, exitCode: 3, array: { text: '0-1' } }));
    e.submit(testJob('slow', { gpus: 1, runtimeSeconds: 50, walltimeLimitSeconds: 20, array: { text: '4' } }));
    e.runToCompletion();
    expect(job(e, 'ok')).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
    expect(job(e, 'bad')).toMatchObject({ state: 'FAILED', exitCode: 3, signal: null });
    expect(job(e, 'slow')).toMatchObject({ state: 'TIMEOUT', exitCode: 0, signal: 15 });

    // arrayEndState and summariseArray agree on every mix of task ends (with tasks that never ran).
    const ends: JobState[] = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL'];
    for (const a of ends)
      for (const b of ends)
        for (const neverRan of [0, 1]) {
          const statuses = [a, b].map((state, index): SchedulerTaskStatus => ({ index, schedulerJobId: `x_${index}`, state, startedAt: new Date(0), endedAt: new Date(1000), exitCode: 0, signal: null, nodeList: [], gpuSeconds: 1, energyWh: 0 }));
          const summary = summariseArray({ portalJobId: 'x', schedulerJobId: 'x', tasks: statuses, waiting: 0, neverRan, pendingReason: null, energyMeasured: false, siteId: null });
          expect(arrayEndState([a, b], neverRan), `${a},${b},${neverRan}`).toBe(summary.state);
        }
  });

  it('cancel of the array cancels its running tasks (charged so far) and its waiting ones, which never ran and are not listed', () => {
    const e = engine();
    e.submit(testJob('arr', { gpus: 1, runtimeSeconds: 100, walltimeLimitSeconds: 200, array: { text: '0-9%2' } }));
    e.advanceTo(50);
    expect(e.cancel('arr')).toBe(true);
    e.advanceTo(60);
    const done = job(e, 'arr');
    expect(done).toMatchObject({ state: 'CANCELLED', endTimeSeconds: 50, exitCode: 0, signal: 15, array: { waiting: 0, neverRan: 8, waitingReason: null } });
    expect(done.array!.tasks.map((t) => [t.id, t.state, t.endTimeSeconds])).toEqual([
      ['arr_0', 'CANCELLED', 50],
      ['arr_1', 'CANCELLED', 50],
    ]);
    expect(tasks(e, 'arr').map((t) => t.id)).toEqual(['arr_0', 'arr_1']);
    expect(e.snapshot().accounts.find((a) => a.name === 'proj-a')!.usedGpuSeconds).toBe(2 * 50);
    expect(e.clusterView()).toMatchObject({ pendingJobs: 0, runningJobs: 0 });
    expect(e.cancel('arr')).toBe(false);
    expect(e.pruneFinished(e.nowSeconds + 1)).toBe(3);
    expect(e.job('arr')).toBeUndefined();
    expect(e.serialize().jobs).toEqual([]);
  });

  it('cancel before the array arrived, stop of a running array, and cancel of one waiting task', () => {
    const e = engine();
    e.submit(testJob('future', { submitTimeSeconds: 100, array: { text: '0-3' } }));
    expect(e.cancel('future')).toBe(true);
    e.advanceTo(200);
    expect(job(e, 'future')).toMatchObject({ state: 'CANCELLED', startTimeSeconds: null, energyWh: null, array: { tasks: [], neverRan: 4 } });

    // Stopped with every task running: they end as they would on their own, the array COMPLETED.
    const stop = engine();
    stop.submit(testJob('svc', { gpus: 2, runtimeSeconds: 1000, walltimeLimitSeconds: 1000, array: { text: '0-1' } }));
    stop.advanceTo(30);
    expect(stop.stop('svc')).toBe(true);
    expect(job(stop, 'svc')).toMatchObject({ state: 'COMPLETED', exitCode: 0, signal: null, endTimeSeconds: 30 });

    // One waiting task cancelled on its own: it never ran; the array goes on and ends CANCELLED (as Slurm's).
    const one = engine();
    one.submit(testJob('arr', { runtimeSeconds: 10, walltimeLimitSeconds: 10, array: { text: '0-4' } }));
    one.advanceTo(1);
    expect(one.cancel('arr_2')).toBe(true);
    one.runToCompletion();
    expect(job(one, 'arr')).toMatchObject({ state: 'CANCELLED', array: { neverRan: 1 } });
    expect(job(one, 'arr').array!.tasks.map((t) => [t.id, t.startTimeSeconds])).toEqual([
      ['arr_0', 0],
      ['arr_1', 0],
      ['arr_3', 10],
      ['arr_4', 10],
    ]);
  });

  it('begin time and dependency hold the array as a whole; a job may depend on the array', () => {
    const e = engine();
    e.submit(testJob('parent', { runtimeSeconds: 100, walltimeLimitSeconds: 100 }));
    e.submit(testJob('arr', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, dependency: { type: 'afterok', jobIds: ['parent'] }, array: { text: '0-5%3' } }));
    e.submit(testJob('late', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, beginTimeSeconds: 40, array: { text: '0-1' } }));
    e.submit(testJob('after', { gpus: 1, runtimeSeconds: 5, walltimeLimitSeconds: 5, dependency: { type: 'afterok', jobIds: ['arr'] } }));
    e.advanceTo(1);
    expect(job(e, 'arr')).toMatchObject({ state: 'PENDING', pendingReason: 'Dependency', array: { waiting: 6 } });
    expect(tasks(e, 'arr').every((t) => t.pendingReason === 'Dependency')).toBe(true);
    expect(job(e, 'late')).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime' });
    expect(job(e, 'after').pendingReason).toBe('Dependency');
    e.runToCompletion();
    expect(job(e, 'late').array!.tasks.map((t) => t.startTimeSeconds)).toEqual([40, 40]);
    expect(job(e, 'arr').array!.tasks.map((t) => t.startTimeSeconds)).toEqual([100, 100, 100, 110, 110, 110]);
    expect(job(e, 'after')).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 120 });

    // A failed task: the array FAILED, so afterok never may start.
    const f = engine();
    f.submit(testJob('arr', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, exitCode: 1, array: { text: '0-1' } }));
    f.submit(testJob('after', { gpus: 1, dependency: { type: 'afterok', jobIds: ['arr'] } }));
    f.advanceTo(20);
    expect(job(f, 'after').pendingReason).toBe('DependencyNeverSatisfied');
  });

  it('a serialise and restore half-way changes nothing, at any split', () => {
    const build = () => {
      const e = engine('multifactor', { queueDepth: 5 });
      e.submit(testJob('a', { gpus: 1, runtimeSeconds: 37, walltimeLimitSeconds: 40, array: { text: '0-49%3' } }));
      e.submit(testJob('b', { gpus: 2, runtimeSeconds: 55, walltimeLimitSeconds: 60, account: 'proj-b', submitTimeSeconds: 20, array: { text: '3-40:3' } }));
      e.submit(testJob('c', { gpus: 4, runtimeSeconds: 70, walltimeLimitSeconds: 80, submitTimeSeconds: 30 }));
      return e;
    };
    const straight = build();
    straight.runToCompletion();
    const final = ['a', 'b', 'c'].map((id) => job(straight, id));
    expect(final.map((j) => j.state)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    for (const split of [0, 25, 61, 200, 333]) {
      const first = build();
      first.advanceTo(split);
      const restored = restoreEngineJson(first.serializeJson());
      expect(restored.serialize()).toEqual(first.serialize());
      restored.runToCompletion();
      expect(['a', 'b', 'c'].map((id) => job(restored, id)), `split at ${split}`).toEqual(final);
    }
  });

  it('a 10,000-task array is one record at submit and keeps only a small window of waiting tasks as jobs', () => {
    const e = engine();
    e.submit(testJob('big', { gpus: 1, runtimeSeconds: 10, walltimeLimitSeconds: 10, array: { text: '0-9999%64' } }));
    expect(e.serialize().jobs).toHaveLength(1);
    expect(e.clusterView().pendingJobs).toBe(0); // not arrived yet
    e.advanceTo(0);
    // 8 GPUs: 8 tasks run, a window waits as jobs, the rest only as a count.
    const held = e.serialize().jobs.length;
    expect(held).toBeLessThanOrEqual(1 + 8 + ARRAY_WINDOW);
    expect(job(e, 'big')).toMatchObject({ state: 'RUNNING', array: { count: 10_000, waiting: 9_992, waitingReason: 'Resources' } });
    expect(e.clusterView()).toMatchObject({ pendingJobs: 9_992, runningJobs: 8 });
    e.advanceTo(500);
    expect(e.serialize().jobs.filter((j) => j.arrayTask && j.state === 'PENDING').length).toBeLessThanOrEqual(ARRAY_WINDOW);
    expect(job(e, 'big').array!.tasks).toHaveLength(8 * 51);
  });

  it('refuses an array text parseArray refuses, and a job id that is a held array’s task', () => {
    const e = engine();
    for (const text of ['', 'x', '5-1', '0-10000', '1-3%0', '1,1']) expect(() => e.submit(testJob(`bad-${text}`, { array: { text } })), text).toThrow(SimInputError);
    e.submit(testJob('arr', { array: { text: '0-3' } }));
    expect(() => e.submit(testJob('arr_7'))).toThrow(SimInputError);
    expect(() => e.validate(testJob('arr-ok'))).not.toThrow();
  });
});
