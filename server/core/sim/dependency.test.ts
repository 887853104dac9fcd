// Dependencies on the simulated cluster, as Slurm's --dependency: a job waits (Dependency) without
// blocking the queue until the jobs it names ended as asked; one that never may start waits with
// DependencyNeverSatisfied until cancelled; a restore in between changes nothing.
import { describe, expect, it } from 'vitest';
import { createEngine, restoreEngineJson, type ClusterEngine } from './engine';
import { SimInputError } from './errors';
import { testCluster, testJob } from './fixtures';
import { policyFromName } from './policy';
import type { DependencyType } from './types';

function engine(): ClusterEngine {
  return createEngine({ cluster: testCluster(), policy: policyFromName('easy'), seed: 1 });
}

const view = (e: ClusterEngine, id: string) => e.snapshot().jobs.find((j) => j.id === id)!;

describe('dependencies on the simulated cluster', () => {
  // parent runs 0–100 (exit code as given); child depends on it; other (2 GPUs) is free to start at once.
  function chain(type: DependencyType, parentExit: number) {
    const e = engine();
    e.submit(testJob('parent', { exitCode: parentExit }));
    e.submit(testJob('child', { dependency: { type, jobIds: ['parent'] }, runtimeSeconds: 20, walltimeLimitSeconds: 50 }));
    e.submit(testJob('other', { gpus: 2, runtimeSeconds: 10, walltimeLimitSeconds: 10 }));
    e.advanceTo(1);
    return e;
  }

  it('waits for the job it names, without holding back the queue, and starts when it ended as asked', () => {
    for (const [type, exit] of [['afterok', 0], ['afterany', 1], ['afternotok', 3]] as const) {
      const e = chain(type, exit);
      expect(view(e, 'child')).toMatchObject({ state: 'PENDING', pendingReason: 'Dependency' });
      expect(view(e, 'other')).toMatchObject({ state: 'RUNNING', startTimeSeconds: 0 });
      e.advanceTo(200);
      expect(view(e, 'child'), `${type} after exit ${exit}`).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 100, endTimeSeconds: 120 });
    }
  });

  it('a job that can never start waits with DependencyNeverSatisfied until cancelled, using nothing', () => {
    for (const [type, exit] of [['afterok', 1], ['afternotok', 0]] as const) {
      const e = chain(type, exit);
      e.advanceTo(500);
      expect(view(e, 'child'), `${type} after exit ${exit}`).toMatchObject({ state: 'PENDING', pendingReason: 'DependencyNeverSatisfied', startTimeSeconds: null });
      expect(e.cancel('child')).toBe(true);
      e.advanceTo(501);
      expect(view(e, 'child')).toMatchObject({ state: 'CANCELLED', startTimeSeconds: null, energyWh: null });
    }
  });

  it('a chain A → B → C runs in order; a cancelled parent never lets afterok start; a job already ended decides at submit', () => {
    const e = engine();
    e.submit(testJob('a', { runtimeSeconds: 30, walltimeLimitSeconds: 30 }));
    e.submit(testJob('b', { dependency: { type: 'afterok', jobIds: ['a'] }, runtimeSeconds: 30, walltimeLimitSeconds: 30 }));
    e.submit(testJob('c', { dependency: { type: 'afterok', jobIds: ['b', 'a'] }, runtimeSeconds: 30, walltimeLimitSeconds: 30 }));
    e.submit(testJob('d', { dependency: { type: 'afterok', jobIds: ['x-never-known'] }, runtimeSeconds: 5, walltimeLimitSeconds: 5 }));
    e.advanceTo(200);
    expect(['a', 'b', 'c'].map((id) => view(e, id).startTimeSeconds)).toEqual([0, 30, 60]);
    // A job the engine does not hold counts as ended in a way that satisfies.
    expect(view(e, 'd')).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 0 });
    // Submitted after its parent failed: it never may start, from the first cycle.
    e.submit(testJob('late-fail', { submitTimeSeconds: 200, exitCode: 2, runtimeSeconds: 5, walltimeLimitSeconds: 5 }));
    e.advanceTo(210);
    e.submit(testJob('after-fail', { submitTimeSeconds: 210, dependency: { type: 'afterok', jobIds: ['late-fail'] } }));
    e.submit(testJob('waiter', { submitTimeSeconds: 210, runtimeSeconds: 1000, walltimeLimitSeconds: 1000 }));
    e.submit(testJob('after-cancel', { submitTimeSeconds: 210, dependency: { type: 'afterok', jobIds: ['waiter'] } }));
    e.advanceTo(211);
    expect(view(e, 'after-fail').pendingReason).toBe('DependencyNeverSatisfied');
    expect(e.cancel('waiter')).toBe(true);
    e.advanceTo(212);
    expect(view(e, 'after-cancel').pendingReason).toBe('DependencyNeverSatisfied');
  });

  it('a job the engine no longer holds is decided by how it ended, when the submit says so', () => {
    const e = engine();
    e.submit(testJob('after-retired-fail', { dependency: { type: 'afterok', jobIds: ['gone'], ended: { gone: 'FAILED' } } }));
    e.submit(testJob('after-retired-ok', { dependency: { type: 'afterok', jobIds: ['gone'], ended: { gone: 'COMPLETED' } } }));
    e.advanceTo(1);
    expect(view(e, 'after-retired-fail')).toMatchObject({ state: 'PENDING', pendingReason: 'DependencyNeverSatisfied' });
    expect(view(e, 'after-retired-ok')).toMatchObject({ state: 'RUNNING' });
  });

  it('a serialise and restore while a job waits changes nothing', () => {
    const straight = chain('afterok', 0);
    const restored = restoreEngineJson(chain('afterok', 0).serializeJson());
    for (const e of [straight, restored]) e.advanceTo(200);
    expect(view(restored, 'child')).toEqual(view(straight, 'child'));
    expect(view(restored, 'child')).toMatchObject({ state: 'COMPLETED', startTimeSeconds: 100 });
  });

  it('refuses a dependency on itself, on no job, or of an unknown type', () => {
    const e = engine();
    expect(() => e.submit(testJob('self', { dependency: { type: 'afterok', jobIds: ['self'] } }))).toThrow(SimInputError);
    expect(() => e.submit(testJob('none', { dependency: { type: 'afterok', jobIds: [] } }))).toThrow(SimInputError);
    expect(() => e.submit(testJob('odd', { dependency: { type: 'after' as DependencyType, jobIds: ['x'] } }))).toThrow(SimInputError);
  });
});
