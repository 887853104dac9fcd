// The SchedulerPort contract: the behaviour every scheduler adapter must show, as one vitest suite.
// Adapter-neutral: it uses only the port and the harness. A simulated adapter moves its clock in
// `advanceSeconds`; a real one (Slurm) waits, and may offer `waitUntil` and a timing tolerance.
//
// The suite assumes the harness partition runs only the suite's jobs while it runs.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isFinalState, isSchedulerUnavailable, type SchedulerJobSpec, type SchedulerJobState, type SchedulerJobStatus, type SchedulerPort } from '~/server/core/scheduler/port';

/** What an adapter's test provides to run the contract suite against it. */
export interface ContractHarness {
  port: SchedulerPort;
  /** A partition with at least 2 nodes of at least 4 GPUs each. */
  partition: string;
  gpusPerNode: number;
  nodes: number;
  /** advanceSeconds lets the scheduler's clock move on by this many seconds (simulated: move the clock; real: wait). */
  advanceSeconds(simSeconds: number): Promise<void>;
  /** waitUntil lets time pass until the condition holds or maxSimSeconds have passed (default: advanceSeconds in steps). */
  waitUntil?(condition: () => Promise<boolean>, maxSimSeconds: number): Promise<void>;
  /** How far measured run times may be off, in seconds (a real scheduler starts and stops jobs with some delay); default 0. */
  toleranceSeconds?: number;
  close(): Promise<void>;
}

/** Simulated seconds: a short job, a generous walltime limit, a job that runs until it is stopped. */
// Real time on a real Slurm: long enough to measure against the tolerance, short enough for the test line.
const SHORT_RUN_SECONDS = 20;
const WALLTIME_SECONDS = 600;
const LONG_RUN_SECONDS = 3600;
const POLL_STEP_SECONDS = 10;
const MAX_WAIT_SECONDS = 900;

const LIVE_STATES: readonly SchedulerJobState[] = ['PENDING', 'RUNNING'];

/**
 * handOver submits as the portal's hand-over does: "unavailable" decides nothing (Slurm: slurmdbd's records
 * still on their way, so whether an earlier try reached it cannot be told), so it tries again a little later,
 * for at most a minute. Any other error is the answer.
 */
async function handOver(port: SchedulerPort, spec: SchedulerJobSpec): ReturnType<SchedulerPort['submit']> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      return await port.submit(spec);
    } catch (error) {
      if (!isSchedulerUnavailable(error) || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/** schedulerContract registers the SchedulerPort contract tests for one adapter; `setup` runs once before them. */
export function schedulerContract(name: string, setup: () => Promise<ContractHarness>): void {
  describe(`SchedulerPort contract: ${name}`, () => {
    let h: ContractHarness;
    let submitted: string[] = [];

    beforeAll(async () => {
      h = await setup();
      expect(h.nodes, 'the harness partition needs at least 2 nodes').toBeGreaterThanOrEqual(2);
      expect(h.gpusPerNode, 'the harness partition needs at least 4 GPUs per node').toBeGreaterThanOrEqual(4);
    });
    afterAll(async () => h?.close());

    // Whatever a test leaves behind is cancelled, so the next one finds the partition empty.
    afterEach(async () => {
      const ids = submitted;
      submitted = [];
      if (!h || ids.length === 0) return;
      const live = (await h.port.jobs(ids)).filter((s) => !isFinalState(s.state));
      for (const s of live) await h.port.cancel(s.portalJobId);
      if (live.length > 0) await waitFor(live.map((s) => s.portalJobId), (all) => all.every((s) => isFinalState(s.state)));
    });

    function spec(options: { gpus?: number; nodes?: number; runtimeSeconds?: number; walltimeSeconds?: number; exitCode?: number; array?: string } = {}): SchedulerJobSpec {
      const portalJobId = `contract-${randomUUID()}`;
      submitted.push(portalJobId);
      const runtimeSeconds = options.runtimeSeconds ?? SHORT_RUN_SECONDS;
      const exitCode = options.exitCode ?? 0;
      return {
        portalJobId,
        name: 'contract',
        partition: h.partition,
        gpus: options.gpus ?? h.gpusPerNode,
        nodes: options.nodes ?? 1,
        walltimeSeconds: options.walltimeSeconds ?? WALLTIME_SECONDS,
        account: 'contract-account',
        user: 'contract-user',
        image: 'docker.io/library/busybox:1.36',
        command: `sleep ${runtimeSeconds}; exit ${exitCode}`,
        env: {},
        simulation: { runtimeSeconds, gpuUtilPercent: 80, exitCode },
        ...(options.array ? { array: { text: options.array } } : {}),
      };
    }

    async function statusOf(portalJobId: string): Promise<SchedulerJobStatus> {
      const [status] = await h.port.jobs([portalJobId]);
      expect(status, `job ${portalJobId} is known`).toBeDefined();
      return status!;
    }

    /** Lets time pass until the jobs' statuses satisfy the predicate; returns them (in the order of ids). */
    async function waitFor(ids: string[], predicate: (all: SchedulerJobStatus[]) => boolean, maxSeconds = MAX_WAIT_SECONDS): Promise<SchedulerJobStatus[]> {
      const read = async () => {
        const all = await h.port.jobs(ids);
        return ids.map((id) => all.find((s) => s.portalJobId === id)).filter((s): s is SchedulerJobStatus => s !== undefined);
      };
      const holds = async () => {
        const all = await read();
        return all.length === ids.length && predicate(all);
      };
      if (h.waitUntil) {
        await h.waitUntil(holds, maxSeconds);
      } else {
        for (let waited = 0; waited < maxSeconds && !(await holds()); waited += POLL_STEP_SECONDS) await h.advanceSeconds(POLL_STEP_SECONDS);
      }
      const all = await read();
      expect(all).toHaveLength(ids.length);
      expect(predicate(all), `jobs reached the expected states: ${all.map((s) => `${s.portalJobId}=${s.state}`).join(', ')}`).toBe(true);
      return all;
    }

    async function waitFinal(id: string): Promise<SchedulerJobStatus> {
      const [status] = await waitFor([id], ([s]) => !!s && isFinalState(s.state));
      return status!;
    }

    async function waitRunning(id: string): Promise<SchedulerJobStatus> {
      const [status] = await waitFor([id], ([s]) => s?.state === 'RUNNING');
      return status!;
    }

    function expectGpuSeconds(actual: number, gpus: number, seconds: number): void {
      const tolerance = h.toleranceSeconds ?? 0;
      if (tolerance === 0) expect(actual).toBe(gpus * seconds);
      else expect(Math.abs(actual - gpus * seconds)).toBeLessThanOrEqual(gpus * tolerance);
    }

    /** A job that takes every GPU of the partition. */
    function blockerSpec(runtimeSeconds: number): SchedulerJobSpec {
      return spec({ gpus: h.nodes * h.gpusPerNode, nodes: h.nodes, runtimeSeconds, walltimeSeconds: Math.max(WALLTIME_SECONDS, 2 * runtimeSeconds) });
    }

    async function queueSize(): Promise<number> {
      const d = await h.port.describeCluster();
      return d.pendingJobs + d.runningJobs;
    }

    it('submit returns a scheduler id and the job is PENDING or RUNNING', async () => {
      const s = spec();
      const { schedulerJobId } = await handOver(h.port, s);
      expect(typeof schedulerJobId).toBe('string');
      expect(schedulerJobId.length).toBeGreaterThan(0);
      const status = await statusOf(s.portalJobId);
      expect(status.portalJobId).toBe(s.portalJobId);
      expect(status.schedulerJobId).toBe(schedulerJobId);
      expect(LIVE_STATES).toContain(status.state);
      expect(status.endedAt).toBeNull();
      expect(status.gpuSeconds).toBeGreaterThanOrEqual(0);
    });

    it('a retried submit with the same portal id returns the same scheduler id and creates no second job', async () => {
      const s = spec({ runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds: 2 * LONG_RUN_SECONDS });
      const first = await handOver(h.port, s);
      const before = await queueSize();
      const again = await handOver(h.port, { ...s });
      expect(again.schedulerJobId).toBe(first.schedulerJobId);
      expect(await queueSize()).toBe(before);
      expect(await h.port.jobs([s.portalJobId])).toHaveLength(1);
    });

    it('a short job reaches COMPLETED with gpuSeconds = gpus × runtime, start and end, exit code 0 and energy', async () => {
      const s = spec({ gpus: h.gpusPerNode, runtimeSeconds: SHORT_RUN_SECONDS });
      await handOver(h.port, s);
      const done = await waitFinal(s.portalJobId);
      expect(done.state).toBe('COMPLETED');
      expect(done.exitCode).toBe(0);
      expect(done.signal).toBeNull();
      expectGpuSeconds(done.gpuSeconds, s.gpus, SHORT_RUN_SECONDS);
      expect(done.startedAt).toBeInstanceOf(Date);
      expect(done.endedAt).toBeInstanceOf(Date);
      expect(done.endedAt!.getTime()).toBeGreaterThanOrEqual(done.startedAt!.getTime());
      expect(done.energyWh).toBeGreaterThan(0);
      expect(done.pendingReason).toBeNull();
      expect(done.nodeList).toHaveLength(1);
      // Cancelling a finished job changes nothing.
      await h.port.cancel(s.portalJobId);
      expect(await statusOf(s.portalJobId)).toEqual(done);
    });

    it('a job that exits with code 1 ends FAILED (here on two nodes)', async () => {
      const s = spec({ gpus: 2 * h.gpusPerNode, nodes: 2, runtimeSeconds: 30, exitCode: 1 });
      await handOver(h.port, s);
      const done = await waitFinal(s.portalJobId);
      expect(done.state).toBe('FAILED');
      expect(done.exitCode).toBe(1);
      expect(done.signal).toBeNull();
      expectGpuSeconds(done.gpuSeconds, s.gpus, 30);
      expect(new Set(done.nodeList).size).toBe(2);
    });

    it('a job running past its walltime ends TIMEOUT with gpuSeconds = gpus × walltime, ended by SIGTERM (Slurm 0:15)', async () => {
      const walltimeSeconds = 60;
      const s = spec({ gpus: h.gpusPerNode, runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds });
      await handOver(h.port, s);
      const done = await waitFinal(s.portalJobId);
      expect(done.state).toBe('TIMEOUT');
      expectGpuSeconds(done.gpuSeconds, s.gpus, walltimeSeconds);
      expect(done.endedAt).toBeInstanceOf(Date);
      expect({ exitCode: done.exitCode, signal: done.signal }).toEqual({ exitCode: 0, signal: 15 });
    });

    it('cancelling a pending job ends it CANCELLED with 0 GPU-seconds', async () => {
      const blocker = blockerSpec(LONG_RUN_SECONDS);
      await handOver(h.port, blocker);
      await waitRunning(blocker.portalJobId);
      const waiter = spec({ gpus: h.gpusPerNode });
      await handOver(h.port, waiter);
      expect((await statusOf(waiter.portalJobId)).state).toBe('PENDING');
      await h.port.cancel(waiter.portalJobId);
      const done = await waitFinal(waiter.portalJobId);
      expect(done.state).toBe('CANCELLED');
      expect(done.gpuSeconds).toBe(0);
      expect(done.startedAt).toBeNull();
      expect(done.pendingReason).toBeNull();
      expect({ exitCode: done.exitCode, signal: done.signal }).toEqual({ exitCode: null, signal: null });
    });

    it('cancelling a running job ends it CANCELLED with the usage so far, ended by a signal (Slurm 0:15)', async () => {
      const runSeconds = 30;
      const s = spec({ gpus: h.gpusPerNode, runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds: 2 * LONG_RUN_SECONDS });
      await handOver(h.port, s);
      await waitRunning(s.portalJobId);
      await h.advanceSeconds(runSeconds);
      await h.port.cancel(s.portalJobId);
      const done = await waitFinal(s.portalJobId);
      expect(done.state).toBe('CANCELLED');
      expectGpuSeconds(done.gpuSeconds, s.gpus, runSeconds);
      expect(done.gpuSeconds).toBeGreaterThan(0);
      expect(done.gpuSeconds).toBeLessThan(s.gpus * LONG_RUN_SECONDS);
      expect(done.startedAt).toBeInstanceOf(Date);
      expect(done.endedAt).toBeInstanceOf(Date);
      expect({ exitCode: done.exitCode, signal: done.signal }).toEqual({ exitCode: 0, signal: 15 });
    });

    it('stopping a running service ends it COMPLETED with the usage so far', async () => {
      const runSeconds = 30;
      const s = spec({ gpus: h.gpusPerNode, runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds: 2 * LONG_RUN_SECONDS });
      await handOver(h.port, s);
      await waitRunning(s.portalJobId);
      await h.advanceSeconds(runSeconds);
      await h.port.cancel(s.portalJobId, { stop: true });
      const done = await waitFinal(s.portalJobId);
      expect(done.state).toBe('COMPLETED');
      expect(done.exitCode).toBe(0);
      expect(done.signal).toBeNull();
      expectGpuSeconds(done.gpuSeconds, s.gpus, runSeconds);
      expect(done.gpuSeconds).toBeLessThan(s.gpus * LONG_RUN_SECONDS);
    });

    it('stopping a pending job cancels it', async () => {
      const blocker = blockerSpec(LONG_RUN_SECONDS);
      await handOver(h.port, blocker);
      await waitRunning(blocker.portalJobId);
      const waiter = spec({ gpus: h.gpusPerNode });
      await handOver(h.port, waiter);
      await h.port.cancel(waiter.portalJobId, { stop: true });
      const done = await waitFinal(waiter.portalJobId);
      expect(done.state).toBe('CANCELLED');
      expect(done.gpuSeconds).toBe(0);
    });

    it('cancelling an unknown job does not throw', async () => {
      await expect(h.port.cancel(`contract-unknown-${randomUUID()}`)).resolves.toBeUndefined();
    });

    it('jobs() leaves unknown ids out', async () => {
      const s = spec();
      await handOver(h.port, s);
      const unknown = `contract-unknown-${randomUUID()}`;
      expect(await h.port.jobs([unknown])).toEqual([]);
      expect(await h.port.jobs([])).toEqual([]);
      const both = await h.port.jobs([unknown, s.portalJobId]);
      expect(both.map((x) => x.portalJobId)).toEqual([s.portalJobId]);
    });

    it('a job needing more GPUs than are free waits PENDING with a reason and starts once the blocker ends', async () => {
      const blocker = blockerSpec(SHORT_RUN_SECONDS);
      await handOver(h.port, blocker);
      await waitRunning(blocker.portalJobId);
      const waiter = spec({ gpus: h.gpusPerNode, runtimeSeconds: SHORT_RUN_SECONDS });
      await handOver(h.port, waiter);
      const waiting = await statusOf(waiter.portalJobId);
      expect(waiting.state).toBe('PENDING');
      expect(waiting.pendingReason).toEqual(expect.any(String));
      expect(waiting.pendingReason!.length).toBeGreaterThan(0);
      expect(waiting.startedAt).toBeNull();
      expect(waiting.gpuSeconds).toBe(0);

      const [blockerDone, started] = await waitFor([blocker.portalJobId, waiter.portalJobId], ([b, w]) => !!b && !!w && isFinalState(b.state) && w.state !== 'PENDING');
      expect(blockerDone!.state).toBe('COMPLETED');
      expect(started!.startedAt!.getTime()).toBeGreaterThanOrEqual(blockerDone!.endedAt!.getTime());
      expect(started!.pendingReason).toBeNull();
      const done = await waitFinal(waiter.portalJobId);
      expect(done.state).toBe('COMPLETED');
    });

    it('a job array "0-5%2" runs its tasks at most two at once, in index order, and completes as one job with their summed usage', async () => {
      const s = spec({ gpus: 1, runtimeSeconds: SHORT_RUN_SECONDS, array: '0-5%2' });
      const { schedulerJobId } = await handOver(h.port, s);
      // Every poll sees at most the throttle of tasks running.
      let mostRunning = 0;
      const [done] = await waitFor([s.portalJobId], ([status]) => {
        mostRunning = Math.max(mostRunning, status?.tasks?.filter((t) => t.state === 'RUNNING').length ?? 0);
        return !!status && isFinalState(status.state);
      });
      expect(mostRunning).toBeGreaterThan(0);
      expect(mostRunning).toBeLessThanOrEqual(2);
      expect(done!).toMatchObject({ schedulerJobId, state: 'COMPLETED', exitCode: 0, pendingReason: null, tasksWaiting: 0 });
      const tasks = done!.tasks ?? [];
      expect(tasks.map((t) => [t.index, t.state])).toEqual([0, 1, 2, 3, 4, 5].map((i) => [i, 'COMPLETED']));
      for (const t of tasks) {
        expectGpuSeconds(t.gpuSeconds, 1, SHORT_RUN_SECONDS);
        expect(t.startedAt).toBeInstanceOf(Date);
        expect(t.endedAt).toBeInstanceOf(Date);
      }
      // Started in index order (a real scheduler may start two in the same instant, within the tolerance).
      for (let i = 1; i < tasks.length; i++) expect(tasks[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(tasks[i - 1]!.startedAt!.getTime() - (h.toleranceSeconds ?? 0) * 1000);
      expect(done!.gpuSeconds).toBe(tasks.reduce((sum, t) => sum + t.gpuSeconds, 0));
      expect(done!.energyWh).toBeCloseTo(tasks.reduce((sum, t) => sum + t.energyWh, 0), 6);
      expect(done!.startedAt!.getTime()).toBe(Math.min(...tasks.map((t) => t.startedAt!.getTime())));
      expect(done!.endedAt!.getTime()).toBe(Math.max(...tasks.map((t) => t.endedAt!.getTime())));
    });

    it('cancelling a job array with waiting tasks ends it CANCELLED; the tasks that never started are not listed', async () => {
      // Throttled to one task: task 0 runs, the other five wait for it.
      const s = spec({ gpus: 1, runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds: 2 * LONG_RUN_SECONDS, array: '0-5%1' });
      await handOver(h.port, s);
      const running = await waitRunning(s.portalJobId);
      expect(running.tasks?.map((t) => [t.index, t.state])).toEqual([[0, 'RUNNING']]);
      expect(running.tasksWaiting).toBe(5);
      await h.port.cancel(s.portalJobId);
      const done = await waitFinal(s.portalJobId);
      expect(done).toMatchObject({ state: 'CANCELLED', pendingReason: null, tasksWaiting: 0 });
      expect(done.tasks?.map((t) => [t.index, t.state])).toEqual([[0, 'CANCELLED']]);
      expect(done.gpuSeconds).toBe(done.tasks![0]!.gpuSeconds);
      expect(done.gpuSeconds).toBeLessThan(LONG_RUN_SECONDS);

      // Cancelled before any task started: nothing listed, nothing used.
      const blocker = blockerSpec(LONG_RUN_SECONDS);
      await handOver(h.port, blocker);
      await waitRunning(blocker.portalJobId);
      const waiting = spec({ gpus: 1, array: '0-3%2' });
      await handOver(h.port, waiting);
      const queued = await statusOf(waiting.portalJobId);
      expect(queued).toMatchObject({ state: 'PENDING', tasks: [], tasksWaiting: 4, startedAt: null, gpuSeconds: 0 });
      expect(queued.pendingReason).toEqual(expect.any(String));
      await h.port.cancel(waiting.portalJobId);
      const never = await waitFinal(waiting.portalJobId);
      expect(never).toMatchObject({ state: 'CANCELLED', tasks: [], tasksWaiting: 0, startedAt: null, gpuSeconds: 0, exitCode: null });
    });

    it('describeCluster counts every GPU and shows the running jobs’ allocations', async () => {
      const idle = await h.port.describeCluster();
      expect(idle.at).toBeInstanceOf(Date);
      for (const p of idle.partitions) {
        const nodes = idle.nodes.filter((n) => n.partition === p.name);
        expect(nodes).toHaveLength(p.nodes);
        expect(nodes.reduce((sum, n) => sum + n.gpus, 0)).toBe(p.nodes * p.gpusPerNode);
      }
      expect(idle.nodes.reduce((sum, n) => sum + n.gpus, 0)).toBe(idle.partitions.reduce((sum, p) => sum + p.nodes * p.gpusPerNode, 0));
      const mine = idle.partitions.find((p) => p.name === h.partition);
      expect(mine).toMatchObject({ nodes: h.nodes, gpusPerNode: h.gpusPerNode });
      expect(idle.nodes.filter((n) => n.partition === h.partition).every((n) => n.allocatedGpus === 0)).toBe(true);

      // Half a node, and half of each of two nodes: both fit together also on a partition of just two nodes.
      const half = Math.max(1, Math.floor(h.gpusPerNode / 2));
      const one = spec({ gpus: half, nodes: 1, runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds: 2 * LONG_RUN_SECONDS });
      const two = spec({ gpus: 2 * half, nodes: 2, runtimeSeconds: LONG_RUN_SECONDS, walltimeSeconds: 2 * LONG_RUN_SECONDS });
      await handOver(h.port, one);
      await handOver(h.port, two);
      const running = await waitFor([one.portalJobId, two.portalJobId], (all) => all.every((s) => s.state === 'RUNNING'));
      const busy = await h.port.describeCluster();
      const partitionNodes = busy.nodes.filter((n) => n.partition === h.partition);
      expect(partitionNodes.reduce((sum, n) => sum + n.allocatedGpus, 0)).toBe(one.gpus + two.gpus);
      expect(busy.runningJobs).toBeGreaterThanOrEqual(2);
      for (const n of partitionNodes) {
        expect(n.allocatedGpus).toBeGreaterThanOrEqual(0);
        expect(n.allocatedGpus).toBeLessThanOrEqual(n.gpus);
        if (n.state !== 'down') expect(n.state).toBe(n.allocatedGpus > 0 ? 'allocated' : 'idle');
      }
      for (const job of running) {
        for (const nodeName of job.nodeList) {
          expect(partitionNodes.find((n) => n.name === nodeName)?.state).toBe('allocated');
        }
      }
      expect(busy.powerW).toBeGreaterThanOrEqual(0);
    });
  });
}
