// Job arrays on the simulated adapter (beyond the contract): one status per array built by
// summariseArray from the engine's tasks, a finished array retired as one row with its tasks and read
// back alike (also by another process), cancel, restart half-way, a dependency on a retired array, and
// a 10,000-task array that costs one small op and a bounded engine.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { simClusterOps, simClusterSnapshots, simFinishedJobs } from '~/db/schema';
import { isFinalState, type SchedulerJobSpec, type SchedulerJobStatus } from '~/server/core/scheduler/port';
import { ARRAY_WINDOW } from '~/server/core/sim/array';
import { jobEnergyWh } from '~/server/core/sim/energy';
import { testCluster, testPartition } from '~/server/core/sim/fixtures';
import type { EngineState } from '~/server/core/sim';
import { dbTargets, openTestDb } from '~/server/testing/harness';
import { createSimulatedScheduler, type SimulatedScheduler, type SimulatedSchedulerOptions } from './simulated';

const START_MS = Date.parse('2026-12-01T08:00:00Z');
const SPEED = 60;

function job(portalJobId: string, options: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return {
    portalJobId,
    name: portalJobId,
    partition: 'gpu',
    gpus: 1,
    nodes: 1,
    walltimeSeconds: 3600,
    account: 'project-a',
    user: 'alice',
    image: 'pytorch:24.10',
    command: 'python train.py',
    env: {},
    simulation: { runtimeSeconds: 600, gpuUtilPercent: 80, exitCode: 0 },
    ...options,
  };
}

/** A wall clock moved by simulated seconds. */
function manualClock() {
  let simSeconds = 0;
  return {
    now: () => new Date(START_MS + Math.ceil((simSeconds * 1000) / SPEED)),
    advance(seconds: number) {
      simSeconds += seconds;
    },
  };
}

describe.each(dbTargets())('job arrays on the simulated scheduler on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  // 2 nodes × 4 GPUs (100 W idle, 700 W max, 1,000 W node base).
  function scheduler(clusterId: string, now: () => Date, extra: Partial<SimulatedSchedulerOptions> = {}): SimulatedScheduler {
    return createSimulatedScheduler({ db: handle.db, cluster: testCluster([testPartition()]), speed: SPEED, now, clusterId, ...extra });
  }

  it('reports one status from its tasks, retires as one row with them, and reads the same from another process', async () => {
    const clock = manualClock();
    const port = scheduler('array-report', clock.now);
    expect(await port.submit(job('arr', { array: { text: '0-5%2' } }))).toEqual({ schedulerJobId: 'sim-1' });
    clock.advance(60);
    const [running] = await port.jobs(['arr']);
    expect(running).toMatchObject({ schedulerJobId: 'sim-1', state: 'RUNNING', pendingReason: null, gpuSeconds: 2 * 60, tasksWaiting: 4, siteId: 'se-1', endedAt: null });
    expect(running!.startedAt).toEqual(new Date(START_MS));
    expect(running!.tasks!.map((t) => [t.index, t.schedulerJobId, t.state, t.gpuSeconds])).toEqual([
      [0, 'sim-1_0', 'RUNNING', 60],
      [1, 'sim-1_1', 'RUNNING', 60],
    ]);
    // Retried, the submit returns the array's id and adds nothing.
    expect(await port.submit(job('arr', { array: { text: '0-5%2' } }))).toEqual({ schedulerJobId: 'sim-1' });
    expect(await port.describeCluster()).toMatchObject({ pendingJobs: 4, runningJobs: 2 });

    clock.advance(1800);
    const [done] = await port.jobs(['arr']);
    // Each task: 1 GPU at 80 % (100 + 600 × 0.8 = 580 W) + a quarter of the node's 1,000 W for 600 s.
    const taskWh = jobEnergyWh({ model: testPartition(), gpus: 1, gpuUtilPercent: 80, runSeconds: 600 });
    expect(done).toMatchObject({ state: 'COMPLETED', exitCode: 0, signal: null, gpuSeconds: 6 * 600, energyWh: 6 * taskWh, tasksWaiting: 0, pendingReason: null });
    expect(done!.endedAt).toEqual(new Date(START_MS + (1800 * 1000) / SPEED));
    expect(done!.tasks!.map((t) => [t.index, t.state, t.startedAt!.getTime() - START_MS])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [i, 'COMPLETED', (Math.floor(i / 2) * 600 * 1000) / SPEED]),
    );
    // Retired as one row, the tasks' dates stored as text and read back as dates.
    const [row] = await handle.db.select().from(simFinishedJobs).where(eq(simFinishedJobs.portalJobId, 'arr'));
    expect(row).toMatchObject({ clusterId: 'array-report' });
    expect((row!.status as { tasks: { startedAt: unknown }[] }).tasks[0]!.startedAt).toBe(new Date(START_MS).toISOString());
    expect(await scheduler('array-report', clock.now).jobs(['arr'])).toEqual([done]);
    expect(await port.submit(job('arr', { array: { text: '0-5%2' } }))).toEqual({ schedulerJobId: 'sim-1' });
    expect(await port.describeCluster()).toMatchObject({ pendingJobs: 0, runningJobs: 0 });
  });

  it('cancel of the array ends its running tasks with their usage so far; the waiting ones never ran and are not listed', async () => {
    const clock = manualClock();
    const port = scheduler('array-cancel', clock.now);
    await port.submit(job('cancel-arr', { array: { text: '0-9%2' }, simulation: { runtimeSeconds: 5000, gpuUtilPercent: 80, exitCode: 0 } }));
    clock.advance(60);
    await port.cancel('cancel-arr');
    const [done] = await port.jobs(['cancel-arr']);
    expect(done).toMatchObject({ state: 'CANCELLED', gpuSeconds: 2 * 60, tasksWaiting: 0, exitCode: 0, signal: 15 });
    expect(done!.tasks!.map((t) => [t.index, t.state, t.gpuSeconds])).toEqual([
      [0, 'CANCELLED', 60],
      [1, 'CANCELLED', 60],
    ]);
    expect(await port.describeCluster()).toMatchObject({ pendingJobs: 0, runningJobs: 0 });
    // A second cancel changes nothing (and logs nothing).
    await port.cancel('cancel-arr');
    expect(await port.jobs(['cancel-arr'])).toEqual([done]);
  });

  it('continues an array after a restart from a snapshot taken half-way exactly as an uninterrupted run; a job after it waits for all its tasks', async () => {
    async function scenario(clusterId: string, restartAt: number | null): Promise<SchedulerJobStatus[]> {
      const clock = manualClock();
      let port = scheduler(clusterId, clock.now, { checkpointEveryOps: 1 });
      await port.submit(job(`${clusterId}-arr`, { gpus: 2, array: { text: '1-13:2,20-24%3' }, simulation: { runtimeSeconds: 700, gpuUtilPercent: 60, exitCode: 0 } }));
      await port.submit(job(`${clusterId}-other`, { gpus: 4, simulation: { runtimeSeconds: 1500, gpuUtilPercent: 90, exitCode: 0 } }));
      await port.submit(job(`${clusterId}-after`, { dependency: { type: 'afterok', portalJobIds: [`${clusterId}-arr`] } }));
      const ids = ['arr', 'other', 'after'].map((n) => `${clusterId}-${n}`);
      for (let step = 1; step <= 50; step++) {
        clock.advance(300);
        await port.advance();
        await port.checkpoint();
        if (step === restartAt) port = scheduler(clusterId, clock.now); // a new process: rebuilt from the snapshot and the ops after it
        if ((await port.jobs(ids)).every((s) => isFinalState(s.state))) break;
      }
      return (await port.jobs(ids)).map((s) => ({ ...s, portalJobId: s.portalJobId.replace(`${clusterId}-`, '') }));
    }
    const straight = await scenario('array-straight', null);
    const restarted = await scenario('array-restarted', 4);
    expect(restarted).toEqual(straight);
    const [arr, , after] = straight;
    expect(arr).toMatchObject({ state: 'COMPLETED', gpuSeconds: 12 * 2 * 700 });
    expect(arr!.tasks!.map((t) => t.index)).toEqual([1, 3, 5, 7, 9, 11, 13, 20, 21, 22, 23, 24]);
    expect(after!.state).toBe('COMPLETED');
    expect(after!.startedAt!.getTime()).toBe(arr!.endedAt!.getTime());
  });

  it('a dependency on an array that ended and left the engine is decided by how the array ended', async () => {
    const clock = manualClock();
    const port = scheduler('array-dep', clock.now);
    await port.submit(job('dep-failing', { array: { text: '0-1' }, simulation: { runtimeSeconds: 60, gpuUtilPercent: 50, exitCode: 2 } }));
    clock.advance(120);
    await port.advance(); // ended and retired
    expect((await port.jobs(['dep-failing']))[0]).toMatchObject({ state: 'FAILED', exitCode: 2 });
    await port.submit(job('dep-after', { dependency: { type: 'afterok', portalJobIds: ['dep-failing'] } }));
    expect((await port.jobs(['dep-after']))[0]).toMatchObject({ state: 'PENDING', pendingReason: 'DependencyNeverSatisfied' });
  });

  it('a 10,000-task array is one small op, and the engine holds only a window of its waiting tasks', async () => {
    const clock = manualClock();
    const port = scheduler('array-big', clock.now, { checkpointEveryOps: 1 });
    await port.submit(job('big', { array: { text: '0-9999%64' }, simulation: { runtimeSeconds: 60, gpuUtilPercent: 50, exitCode: 0 } }));
    const [op] = await handle.db.select().from(simClusterOps).where(eq(simClusterOps.clusterId, 'array-big'));
    expect(JSON.stringify(op!.payload).length).toBeLessThan(1000);
    clock.advance(30);
    const [status] = await port.jobs(['big']);
    // 8 GPUs: 8 tasks run, the rest wait for Resources (the throttle, 64, is not what holds them).
    expect(status).toMatchObject({ state: 'RUNNING', tasksWaiting: 9_992, gpuSeconds: 8 * 30 });
    expect(status!.tasks).toHaveLength(8);
    expect(await port.describeCluster()).toMatchObject({ pendingJobs: 9_992, runningJobs: 8 });
    expect(await port.checkpoint()).toEqual({ seq: 1 });
    const [snapshot] = await handle.db
      .select()
      .from(simClusterSnapshots)
      .where(and(eq(simClusterSnapshots.clusterId, 'array-big'), eq(simClusterSnapshots.seq, 1)));
    expect((snapshot!.state as EngineState).jobs.length).toBeLessThanOrEqual(1 + 8 + ARRAY_WINDOW);
    await port.cancel('big');
    expect((await port.jobs(['big']))[0]).toMatchObject({ state: 'CANCELLED', tasksWaiting: 0, gpuSeconds: 8 * 30 });
  });
});
