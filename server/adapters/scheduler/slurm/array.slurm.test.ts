// Job arrays on a real Slurm (the test cluster: 2 nodes × 4 GPUs, MaxArraySize=100000), through the
// adapter: a 20-task array with %4 never runs more than 4 tasks at once, every task writes its own output
// file, and the array's charge is sacct's over its 20 tasks to the GPU-second; an array cancelled with
// tasks waiting ends CANCELLED listing only the tasks that ran. Both also as read from slurmdbd alone
// (slurmctld's job list answered empty, as once it has forgotten them after MinJobAge).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SchedulerJobSpec, SchedulerJobStatus } from '~/server/core/scheduler/port';
import { isFinalState } from '~/server/core/scheduler/port';
import { createSlurmScheduler } from './index';
import { slurmOutputPath } from './mapping';
import { catalogueClasses, sacct, sleep, testClusterSettings, waitUntil } from './testing';

const settings = testClusterSettings();
const port = createSlurmScheduler(settings, catalogueClasses());

/** The adapter with slurmctld's job list answered empty: everything comes from slurmdbd. */
const forgetful = createSlurmScheduler(settings, catalogueClasses(), {
  fetch: (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname === '/slurm/v0.0.38/jobs') return Promise.resolve(new Response(JSON.stringify({ errors: [], jobs: [] }), { status: 200, headers: { 'content-type': 'application/json' } }));
    return fetch(input, init);
  },
});

function spec(array: string, command: string, over: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return { portalJobId: randomUUID(), attempt: 1, name: 'array', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 300, account: 'contract-account', user: 'portal', image: 'none', command, env: {}, array: { text: array }, ...over };
}

/** The array's tasks slurmctld runs now (squeue -r: one line per task). */
function runningTasks(name: string): number {
  return execFileSync('squeue', ['-h', '-r', '-n', name, '-t', 'RUNNING', '-o', '%i'], { encoding: 'utf8', env: process.env }).split('\n').filter((l) => l.trim() !== '').length;
}

async function statusOf(id: string, adapter = port): Promise<SchedulerJobStatus> {
  const [status] = await adapter.jobs([id]);
  expect(status, `Slurm knows job ${id}`).toBeDefined();
  return status!;
}

async function settled(id: string, maxSeconds: number, adapter = port): Promise<SchedulerJobStatus> {
  let last: SchedulerJobStatus | undefined;
  const done = await waitUntil(async () => {
    [last] = await adapter.jobs([id]);
    return last !== undefined && isFinalState(last.state);
  }, maxSeconds);
  expect(done, `array ${id} ended within ${maxSeconds} s (it is ${last?.state}, ${last?.tasksWaiting} waiting)`).toBe(true);
  return last!;
}

/**
 * The array's final status from slurmdbd alone. A job slurmctld held unstarted reaches slurmdbd only a
 * few seconds after it was submitted or cancelled (after /diag already showed nothing queued): wait for it.
 */
const fromDbAlone = (id: string) => settled(id, 15, forgetful);

describe('job arrays on a real Slurm', () => {
  it('20 tasks, at most 4 at once: all COMPLETED, each with its own output file, charged sacct’s elapsed × GPUs of the 20 exactly', async () => {
    const s = spec('0-19%4', 'echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"; sleep 4');
    const { schedulerJobId: arrayId } = await port.submit(s);
    // A hand-over retried from elsewhere (nothing remembered) finds the array: one submission, not two.
    const retry = createSlurmScheduler(settings, catalogueClasses());
    expect(await retry.submit({ ...s, attempt: 2 })).toEqual({ schedulerJobId: arrayId });

    let most = 0;
    let mostListed = 0;
    const deadline = Date.now() + 120_000;
    let status = await statusOf(s.portalJobId);
    while (!isFinalState(status.state) && Date.now() < deadline) {
      most = Math.max(most, runningTasks(s.portalJobId));
      mostListed = Math.max(mostListed, (status.tasks ?? []).filter((t) => t.state === 'RUNNING').length);
      expect((status.tasks?.length ?? 0) + (status.tasksWaiting ?? 0)).toBeLessThanOrEqual(20);
      await sleep(400);
      status = await statusOf(s.portalJobId);
    }
    expect(most, 'tasks squeue showed running at once').toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThanOrEqual(2);
    expect(mostListed).toBeLessThanOrEqual(4);

    expect(status).toMatchObject({ schedulerJobId: arrayId, state: 'COMPLETED', exitCode: 0, tasksWaiting: 0 });
    expect(status.tasks!.map((t) => [t.index, t.state])).toEqual(Array.from({ length: 20 }, (_, i) => [i, 'COMPLETED']));
    const rows = sacct(s.portalJobId);
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.state === 'COMPLETED' && r.gpus === 1 && r.elapsedSeconds > 0)).toBe(true);
    expect(status.gpuSeconds).toBe(rows.reduce((sum, r) => sum + r.elapsedSeconds * r.gpus, 0));
    // Each task is charged its own record (its own job id).
    expect(status.tasks!.map((t) => [t.schedulerJobId, t.gpuSeconds]).sort()).toEqual(rows.map((r) => [String(r.jobId), r.elapsedSeconds * r.gpus]).sort());

    for (let i = 0; i < 20; i++) {
      const file = slurmOutputPath(settings.jobDir, s.portalJobId, arrayId, null, i);
      expect(existsSync(file), file).toBe(true);
      expect(readFileSync(file, 'utf8')).toContain(`task ${i} of ${arrayId}`);
    }

    // From slurmdbd alone the same status; read back as usage, one record per task under its own id.
    expect(await fromDbAlone(s.portalJobId)).toEqual(status);
    const usage = (await port.outsideJobs(['contract-account'], new Date(Date.now() - 3_600_000))).filter((j) => j.name === s.portalJobId);
    expect(usage.map((j) => j.schedulerJobId).sort()).toEqual(rows.map((r) => String(r.jobId)).sort());
    expect(usage.reduce((sum, j) => sum + j.gpuSeconds, 0)).toBe(status.gpuSeconds);
  });

  it('cancelled with tasks waiting: CANCELLED, only the tasks that ran listed; an array cancelled before any task ran: nothing listed, nothing used', async () => {
    const s = spec('0-9%2', 'sleep 120');
    const { schedulerJobId: arrayId } = await port.submit(s);
    const running = await waitUntil(async () => {
      const status = await statusOf(s.portalJobId);
      return status.state === 'RUNNING' && status.tasks?.filter((t) => t.state === 'RUNNING').length === 2 && status.tasksWaiting === 8;
    }, 60);
    expect(running, 'two tasks run, eight wait').toBe(true);
    await sleep(3000);
    await port.cancel(s.portalJobId);
    const status = await settled(s.portalJobId, 60);
    expect(status).toMatchObject({ schedulerJobId: arrayId, state: 'CANCELLED', tasksWaiting: 0, signal: 15 });
    expect(status.tasks!.map((t) => [t.index, t.state, t.signal])).toEqual([
      [0, 'CANCELLED', 15],
      [1, 'CANCELLED', 15],
    ]);
    const rows = sacct(s.portalJobId);
    const ran = rows.filter((r) => String(r.jobId) !== arrayId);
    expect(ran.map((r) => r.state)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(status.gpuSeconds).toBeGreaterThan(0);
    expect(status.gpuSeconds).toBe(rows.reduce((sum, r) => sum + r.elapsedSeconds * r.gpus, 0));
    // slurmdbd keeps the tasks that never ran as one CANCELLED record under the array's id, nothing used;
    // `sacct --name` (and the name query) show it only when slurmdbd gave it an eligible time, which it
    // often has not; `sacct -j <array id>` (and the read by id) always. Its bitmap may still name the tasks
    // that started ("[0-9%2]").
    expect(rows.filter((r) => String(r.jobId) === arrayId).every((r) => r.elapsedSeconds === 0 && r.gpus === 0)).toBe(true);
    const byId = execFileSync('sacct', ['-n', '-P', '-X', '-j', arrayId, '-o', 'JobID,State,ElapsedRaw'], { encoding: 'utf8', env: process.env });
    expect(byId).toMatch(new RegExp(`^${arrayId}_\\[[0-9,:%-]+\\]\\|CANCELLED by \\d+\\|0$`, 'm'));
    expect(await fromDbAlone(s.portalJobId)).toEqual(status);

    // Held by its begin time, no task ever starts: cancelled, it is final with nothing listed or used.
    const held = spec('0-3', 'sleep 1', { begin: new Date(Date.now() + 600_000) });
    const { schedulerJobId: heldId } = await port.submit(held);
    expect(await waitUntil(async () => (await statusOf(held.portalJobId)).pendingReason === 'BeginTime', 15), 'waits for its begin').toBe(true);
    expect(await statusOf(held.portalJobId)).toMatchObject({ state: 'PENDING', tasksWaiting: 4, tasks: [] });
    await port.cancel(held.portalJobId);
    const cancelled = await settled(held.portalJobId, 30);
    expect(cancelled).toMatchObject({ schedulerJobId: heldId, state: 'CANCELLED', tasks: [], tasksWaiting: 0, gpuSeconds: 0, startedAt: null });
    expect(await fromDbAlone(held.portalJobId)).toMatchObject({ state: 'CANCELLED', tasks: [], tasksWaiting: 0, gpuSeconds: 0 });
  });
});
