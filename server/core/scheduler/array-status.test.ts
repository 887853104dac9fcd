import { describe, expect, it } from 'vitest';
import { summariseArray, type ArrayParts } from './array-status';
import type { SchedulerTaskStatus } from './port';

const at = (s: number) => new Date(Date.UTC(2026, 11, 4, 9, 0, s));

function task(index: number, state: SchedulerTaskStatus['state'], extra: Partial<SchedulerTaskStatus> = {}): SchedulerTaskStatus {
  const ended = state !== 'RUNNING' && state !== 'PENDING';
  return { index, schedulerJobId: `7_${index}`, state, startedAt: at(index), endedAt: ended ? at(index + 10) : null, exitCode: ended ? 0 : null, signal: null, nodeList: [`n${index % 2}`], gpuSeconds: 10 * (index + 1), energyWh: index + 1, ...extra };
}

const parts = (tasks: SchedulerTaskStatus[], extra: Partial<ArrayParts> = {}): ArrayParts => ({ portalJobId: 'p', schedulerJobId: '7', tasks, waiting: 0, neverRan: 0, pendingReason: null, energyMeasured: false, siteId: 'de-jena', ...extra });

describe('summariseArray: an array as a whole from its tasks', () => {
  it('runs while a task runs, waits while none runs and some wait (with their reason), sums GPU time and energy', () => {
    const running = summariseArray(parts([task(0, 'COMPLETED'), task(1, 'RUNNING')], { waiting: 3, pendingReason: 'JobArrayTaskLimit' }));
    expect(running).toMatchObject({ state: 'RUNNING', pendingReason: null, startedAt: at(0), endedAt: null, exitCode: null, gpuSeconds: 30, energyWh: 3, nodeList: ['n1'], tasksWaiting: 3 });
    const waiting = summariseArray(parts([], { waiting: 5, pendingReason: 'Priority' }));
    expect(waiting).toMatchObject({ state: 'PENDING', pendingReason: 'Priority', startedAt: null, gpuSeconds: 0 });
    // A task requeued while none waits: the array waits "requeued".
    expect(summariseArray(parts([task(0, 'COMPLETED'), task(1, 'PENDING', { startedAt: null })]))).toMatchObject({ state: 'PENDING', pendingReason: 'Requeued' });
  });

  it('ends COMPLETED when every task did, from the first start to the last end', () => {
    const done = summariseArray(parts([task(2, 'COMPLETED'), task(0, 'COMPLETED'), task(1, 'COMPLETED')]));
    expect(done).toMatchObject({ state: 'COMPLETED', startedAt: at(0), endedAt: at(12), exitCode: 0, signal: null, gpuSeconds: 60 });
    expect(done.tasks!.map((t) => t.index)).toEqual([0, 1, 2]);
  });

  it('ends as its first task that did not complete, with the highest exit code and its signal', () => {
    const failed = summariseArray(parts([task(0, 'COMPLETED'), task(1, 'TIMEOUT', { exitCode: 0, signal: 15 }), task(2, 'FAILED', { exitCode: 3 })]));
    expect(failed).toMatchObject({ state: 'TIMEOUT', exitCode: 3, signal: null });
    expect(summariseArray(parts([task(0, 'FAILED', { exitCode: 2 }), task(1, 'NODE_FAIL')]))).toMatchObject({ state: 'FAILED', exitCode: 2 });
  });

  it('ends CANCELLED when a task was cancelled or never ran, charged only what ran', () => {
    expect(summariseArray(parts([task(0, 'COMPLETED'), task(1, 'CANCELLED', { signal: 15 })]))).toMatchObject({ state: 'CANCELLED', gpuSeconds: 30 });
    expect(summariseArray(parts([task(0, 'COMPLETED')], { neverRan: 9 }))).toMatchObject({ state: 'CANCELLED', gpuSeconds: 10, endedAt: at(10) });
    expect(summariseArray(parts([], { neverRan: 4 }))).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0, startedAt: null, exitCode: null });
  });

  it('stays cheap for 10,000 tasks (no spread of every start into one call)', () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) => task(i, 'COMPLETED'));
    const all = summariseArray(parts(tasks));
    expect(all).toMatchObject({ state: 'COMPLETED', startedAt: at(0), endedAt: at(9_999 + 10) });
    expect(all.gpuSeconds).toBe((10 * 10_000 * 10_001) / 2);
  });
});
