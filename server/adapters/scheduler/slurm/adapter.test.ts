// The Slurm adapter's own rules, on an in-memory Slurm that behaves as the real one does where it
// matters here: slurmctld forgets a job MinJobAge after it ended, slurmdbd lags behind slurmctld, an
// answer can be lost after the job was created, and a second submit of one name makes a second job.
// The same adapter runs the contract suite on a real Slurm (contract.slurm.test.ts).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SchedulerRefusedError, SchedulerUnavailableError, type SchedulerJobSpec, type SchedulerJobState } from '~/server/core/scheduler/port';
import { createSlurmPort, type CtldJob, type DbJob, type SlurmApi, type SlurmSubmitBody } from './adapter';
import { createSlurmScheduler, ensureProjectFolder, ensureServiceJobFolder, jobFolders, mayAccess, projectFolderIsRight, type SlurmSettings } from './index';
import { submitBody } from './mapping';

interface FakeJob {
  jobId: number;
  name: string;
  state: SchedulerJobState;
  gpus: number;
  nodes: string[];
  timeLimitSeconds: number;
  submittedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  exitCode: number | null;
  /** The signal in slurmctld's wait status. */
  signal: number | null;
  /** The signal slurmdbd's batch step records (a TIMEOUT's SIGTERM, where the job's own record says 0:0). */
  stepSignal: number | null;
  reason: string | null;
}

function fakeSlurm() {
  let clock = Date.UTC(2026, 11, 1, 12);
  let nextId = 1;
  const jobs: FakeJob[] = [];
  /** The records of requeued jobs' earlier attempts (slurmdbd keeps one per attempt, under one id). */
  const earlierAttempts: FakeJob[] = [];
  const calls: string[] = [];
  /** Jobs slurmctld has forgotten (MinJobAge passed). */
  const forgotten = new Set<number>();
  /** Jobs slurmdbd has not received yet (its lag). */
  const notInDb = new Set<number>();
  let agentQueue = 0;
  const submittedBodies: SlurmSubmitBody[] = [];
  let loseNextSubmitAnswer = false;
  let down = false;
  const guard = (what: string) => {
    calls.push(what);
    if (down) throw new SchedulerUnavailableError('connect ECONNREFUSED 127.0.0.1:6820');
  };
  const toCtld = (j: FakeJob): CtldJob => ({
    jobId: j.jobId,
    name: j.name,
    account: 'acct',
    partition: 'gpu',
    state: j.state,
    pendingReason: j.state === 'PENDING' ? j.reason : null,
    exitCode: j.exitCode,
    signal: j.signal,
    nodeList: j.startedAt === null ? [] : j.nodes,
    gpus: j.gpus,
    timeLimitSeconds: j.timeLimitSeconds,
    submittedAt: new Date(j.submittedAt),
    startedAt: j.startedAt === null ? null : new Date(j.startedAt),
    endedAt: j.endedAt === null ? null : new Date(j.endedAt),
  });
  const toDb = (j: FakeJob): DbJob => ({
    jobId: j.jobId,
    name: j.name,
    user: 'u',
    submittedAt: new Date(j.submittedAt),
    account: 'acct',
    partition: 'gpu',
    state: j.state,
    final: j.endedAt !== null,
    elapsedSeconds: j.startedAt === null ? 0 : Math.floor(((j.endedAt ?? clock) - j.startedAt) / 1000),
    gpus: j.startedAt === null ? 0 : j.gpus,
    startedAt: j.startedAt === null ? null : new Date(j.startedAt),
    endedAt: j.endedAt === null ? null : new Date(j.endedAt),
    exitCode: null, // dbv0.0.38 cannot tell exit 1 from 0
    signal: j.stepSignal,
    nodeList: j.startedAt === null ? [] : j.nodes,
    timeLimitSeconds: j.timeLimitSeconds,
    energyJoules: null,
  });
  const api: SlurmApi = {
    listJobs() {
      guard('listJobs');
      return Promise.resolve(jobs.filter((j) => !forgotten.has(j.jobId)).map(toCtld));
    },
    submit(body) {
      guard('submit');
      const job = body.job!;
      const perNode = Number(job.gres!.split(':').at(-1));
      const nodes = job.nodes![0]!;
      submittedBodies.push(body);
      const created: FakeJob = { jobId: nextId++, name: job.name!, state: 'PENDING', gpus: perNode * nodes, nodes: ['n1', 'n2'].slice(0, nodes), timeLimitSeconds: job.time_limit! * 60, submittedAt: clock, startedAt: null, endedAt: null, exitCode: null, signal: null, stepSignal: null, reason: 'Resources' };
      jobs.push(created);
      if (loseNextSubmitAnswer) {
        loseNextSubmitAnswer = false;
        return Promise.reject(new SchedulerUnavailableError('socket hang up'));
      }
      return Promise.resolve(created.jobId);
    },
    signal(jobId, signal) {
      guard(`signal ${jobId} ${signal}`);
      const j = jobs.find((x) => x.jobId === jobId);
      if (j && j.endedAt === null) {
        j.state = signal === 'STOP' && j.startedAt !== null ? 'COMPLETED' : 'CANCELLED';
        // A service stopped (SIGUSR1 to its wrapper) exits 0 by itself; a cancel ends the batch script by SIGTERM (recorded: exit_code 15).
        j.exitCode = 0;
        j.signal = j.stepSignal = signal === 'STOP' ? null : 15;
        j.endedAt = clock;
      }
      return Promise.resolve();
    },
    setTimeLimit(jobId, minutes) {
      guard(`setTimeLimit ${jobId} ${minutes}`);
      const j = jobs.find((x) => x.jobId === jobId);
      if (j && j.endedAt === null) j.timeLimitSeconds = minutes * 60;
      return Promise.resolve();
    },
    dbJobsByName(names, _days, query) {
      guard(query?.neverEligible ? 'dbJobsByName neverEligible' : 'dbJobsByName');
      // Earlier attempts first, as slurmdbd lists them; the adapter must not rely on the order.
      return Promise.resolve([...jobs, ...earlierAttempts].filter((j) => names.includes(j.name) && !notInDb.has(j.jobId)).map(toDb).reverse());
    },
    dbArrayJobs(arrayJobId) {
      guard(`dbArrayJobs ${arrayJobId}`);
      return Promise.resolve([]); // no arrays here: arrays.test.ts
    },
    dbJobsOfAccounts(accounts) {
      guard('dbJobsOfAccounts');
      // Every job here runs in account 'acct'.
      return Promise.resolve(accounts.includes('acct') ? [...jobs, ...earlierAttempts].filter((j) => !notInDb.has(j.jobId)).map(toDb) : []);
    },
    dbdAgentQueueSize() {
      guard('diag');
      return Promise.resolve(agentQueue);
    },
    nodes: () => Promise.resolve([]),
    partitions: () => Promise.resolve([]),
  };
  return {
    api,
    jobs,
    calls,
    forgotten,
    notInDb,
    submittedBodies,
    now: () => new Date(clock),
    advance(seconds: number) {
      clock += seconds * 1000;
    },
    start(name: string) {
      for (const j of jobs) if (j.name === name && j.state === 'PENDING') Object.assign(j, { state: 'RUNNING', startedAt: clock, reason: null });
    },
    /** A node fails under the running job (or it is preempted) and Slurm requeues it: the attempt ends, the job waits again. */
    requeue(name: string, state: SchedulerJobState) {
      for (const j of jobs) {
        if (j.name !== name || j.endedAt !== null) continue;
        earlierAttempts.push({ ...j, state, endedAt: clock, exitCode: 0 });
        Object.assign(j, { state: 'PENDING', submittedAt: clock, startedAt: null, reason: 'BeginTime' });
      }
    },
    end(name: string, state: SchedulerJobState, exitCode: number, signals: { signal?: number; stepSignal?: number } = {}) {
      for (const j of jobs) if (j.name === name && j.endedAt === null) Object.assign(j, { state, endedAt: clock, exitCode, signal: signals.signal ?? null, stepSignal: signals.stepSignal ?? signals.signal ?? null });
    },
    setAgentQueue(n: number) {
      agentQueue = n;
    },
    loseNextSubmitAnswer() {
      loseNextSubmitAnswer = true;
    },
    setDown(value: boolean) {
      down = value;
    },
  };
}

function adapterOn(slurm: ReturnType<typeof fakeSlurm>, sleep: (ms: number) => Promise<void> = () => Promise.resolve()) {
  return createSlurmPort({
    api: slurm.api,
    partitions: { h100: 'gpu' },
    classes: [{ id: 'h100', siteId: 'de-jena', gpuModel: 'H100', gpusPerNode: 4, maxWalltimeSeconds: 86_400, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500 }],
    submitBody: (spec, partition) => submitBody(spec, { partition, jobDir: '/tmp', launcher: 'none', now: new Date() }),
    pollMs: 5000,
    now: slurm.now,
    assumedGpuUtilPercent: 90,
    log: () => undefined,
    sleep,
    cluster: 'ci',
  });
}

const JOB = '0f9e6a52-3c2b-4d1e-9a7b-5c6d7e8f9a0b';
/** A job submitted straight to Slurm (sbatch), not through the adapter. */
const rawBody = (name: string, gpus: number) => submitBody(spec(1, { portalJobId: name, gpus }), { partition: 'gpu', jobDir: '/tmp', launcher: 'none', now: new Date() });
function spec(attempt: number, overrides: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return { portalJobId: JOB, attempt, name: 'train', partition: 'h100', gpus: 4, nodes: 1, walltimeSeconds: 600, account: 'acct', user: 'u', image: 'img', command: 'sleep 60', env: {}, ...overrides };
}

describe('Slurm adapter: hand-over', () => {
  it('submits a first attempt at once, without asking Slurm whether it has the job', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    expect(await port.submit(spec(1))).toEqual({ schedulerJobId: '1' });
    expect(slurm.calls).toEqual(['submit']);
  });

  it('a lost answer, retried, finds the job slurmctld has and makes no second one', async () => {
    const slurm = fakeSlurm();
    slurm.loseNextSubmitAnswer();
    await expect(adapterOn(slurm).submit(spec(1))).rejects.toThrow(SchedulerUnavailableError);
    // The retry comes from another process (or after a restart): nothing remembered.
    slurm.advance(60);
    expect(await adapterOn(slurm).submit(spec(2))).toEqual({ schedulerJobId: '1' });
    expect(slurm.jobs).toHaveLength(1);
  });

  it('…and also after slurmctld has forgotten it (MinJobAge), from slurmdbd', async () => {
    const slurm = fakeSlurm();
    slurm.loseNextSubmitAnswer();
    await expect(adapterOn(slurm).submit(spec(1))).rejects.toThrow(SchedulerUnavailableError);
    slurm.start(JOB);
    slurm.advance(60);
    slurm.end(JOB, 'COMPLETED', 0);
    slurm.advance(301);
    slurm.forgotten.add(1);
    expect(await adapterOn(slurm).submit(spec(2))).toEqual({ schedulerJobId: '1' });
    expect(slurm.jobs).toHaveLength(1);
  });

  it('does not resubmit while a record may still be on its way to slurmdbd: the job waits', async () => {
    const slurm = fakeSlurm();
    slurm.loseNextSubmitAnswer();
    await expect(adapterOn(slurm).submit(spec(1))).rejects.toThrow(SchedulerUnavailableError);
    slurm.forgotten.add(1);
    slurm.notInDb.add(1);
    slurm.setAgentQueue(3);
    await expect(adapterOn(slurm).submit(spec(2))).rejects.toThrow(/on their way to slurmdbd/);
    expect(slurm.jobs).toHaveLength(1);
  });

  it('resubmits when both slurmctld and slurmdbd answered that they have nothing and nothing is queued', async () => {
    const slurm = fakeSlurm();
    expect(await adapterOn(slurm).submit(spec(3))).toEqual({ schedulerJobId: '1' });
    // Nothing by name: asked once more for records without an eligible time (a job held until cancelled).
    expect(slurm.calls).toEqual(['listJobs', 'dbJobsByName', 'dbJobsByName neverEligible', 'diag', 'submit']);
  });

  it('a lookup that fails leaves the job waiting (no submit)', async () => {
    const slurm = fakeSlurm();
    slurm.setDown(true);
    await expect(adapterOn(slurm).submit(spec(2))).rejects.toThrow(SchedulerUnavailableError);
    slurm.setDown(false);
    expect(slurm.jobs).toHaveLength(0);
  });

  it('two Slurm jobs of one name: keeps the lowest id and cancels the other', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await slurm.api.submit(rawBody(JOB, 4));
    await slurm.api.submit(rawBody(JOB, 4));
    const [status] = await port.jobs([JOB]);
    expect(status!.schedulerJobId).toBe('1');
    expect(slurm.jobs.map((j) => j.state)).toEqual(['PENDING', 'CANCELLED']);
  });

  it('refuses a resource class without a partition for good', async () => {
    const slurm = fakeSlurm();
    await expect(adapterOn(slurm).submit(spec(1, { partition: 'b200' }))).rejects.toThrow(SchedulerRefusedError);
  });
});

describe('Slurm adapter: usage read back', () => {
  it('lists the final jobs of the accounts asked, every attempt counted, in the portal’s class and the cluster’s name', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1, { portalJobId: 'from-a-shell' }));
    await port.submit(spec(1, { portalJobId: 'still-running' }));
    slurm.start('from-a-shell');
    slurm.start('still-running');
    slurm.advance(5);
    slurm.requeue('from-a-shell', 'NODE_FAIL');
    slurm.start('from-a-shell');
    slurm.advance(20);
    slurm.end('from-a-shell', 'COMPLETED', 0);
    expect(await port.outsideJobs(['other'], slurm.now())).toEqual([]);
    const jobs = await port.outsideJobs(['acct'], new Date(slurm.now().getTime() - 3 * 86_400_000));
    expect(jobs).toEqual([
      { cluster: 'ci', schedulerJobId: '1', name: 'from-a-shell', account: 'acct', partition: 'h100', resourceClassId: 'h100', user: 'u', state: 'COMPLETED', startedAt: expect.any(Date) as Date, endedAt: slurm.now(), gpuSeconds: 4 * 5 + 4 * 20 },
    ]);
  });
});

describe('Slurm adapter: following jobs', () => {
  it('reports a job final only from slurmdbd’s final record, GPU time capped at the time limit', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1, { walltimeSeconds: 60 }));
    slurm.start(JOB);
    slurm.advance(67); // Slurm ends a 1-minute job at 67 s
    slurm.end(JOB, 'TIMEOUT', 128 + 15);
    slurm.notInDb.add(1); // slurmdbd lags
    slurm.advance(6);
    const [waiting] = await port.jobs([JOB]);
    expect(waiting!.state).toBe('RUNNING');
    slurm.notInDb.delete(1);
    slurm.advance(6);
    const [done] = await port.jobs([JOB]);
    expect(done).toMatchObject({ state: 'TIMEOUT', schedulerJobId: '1', gpuSeconds: 4 * 60, energyMeasured: false, siteId: 'de-jena' });
    expect(done!.energyWh).toBeGreaterThan(0);
  });

  it('follows a requeued job to its last attempt and charges every attempt, as Slurm counts its usage', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.start(JOB);
    slurm.advance(9);
    // A node fails 9 s in: slurmdbd closes that attempt (NODE_FAIL); slurmctld holds the job again.
    slurm.requeue(JOB, 'NODE_FAIL');
    slurm.advance(6);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime', gpuSeconds: 0 });
    slurm.advance(120);
    slurm.start(JOB);
    const startedAgain = slurm.now();
    slurm.advance(240);
    slurm.end(JOB, 'COMPLETED', 0);
    slurm.advance(6);
    const [done] = await port.jobs([JOB]);
    // Not the first record (NODE_FAIL, 36 GPU-s) but the last attempt's end, and both attempts' usage.
    expect(done).toMatchObject({ state: 'COMPLETED', schedulerJobId: '1', startedAt: startedAgain, gpuSeconds: 4 * 9 + 4 * 240 });
    expect(done!.earlierAttempts).toEqual([{ state: 'NODE_FAIL', startedAt: new Date(Date.UTC(2026, 11, 1, 12)), endedAt: new Date(Date.UTC(2026, 11, 1, 12, 0, 9)), gpuSeconds: 4 * 9 }]);
    expect(slurm.calls.filter((c) => c.startsWith('signal'))).toEqual([]); // one job id twice is no duplicate
    // Asked again (the final record is cached): the same answer.
    expect((await port.jobs([JOB]))[0]).toEqual(done);
  });

  // A job cancelled while running: a plain cancel ends its batch script by SIGTERM (recorded: exit_code 15).
  it.each([
    ['exits 1', 'FAILED', 1, null],
    ['is cancelled while running', 'CANCELLED', 0, 15],
  ] as const)('takes exit code and signal from slurmctld when a job %s, and remembers them once slurmctld forgot it', async (_how, state, exitCode, signal) => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.start(JOB);
    slurm.advance(30);
    if (state === 'FAILED') slurm.end(JOB, 'FAILED', 1);
    else await port.cancel(JOB);
    slurm.advance(6);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state, exitCode, signal, gpuSeconds: 120 });
    slurm.forgotten.add(1);
    slurm.advance(301);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state, exitCode, signal, gpuSeconds: 120 });
  });

  // slurmctld's wait status says 0; the signal is on slurmdbd's batch step. PREEMPTED is final and charged what it ran.
  it.each([
    ['TIMEOUT', 60],
    ['PREEMPTED', 30],
  ] as const)('%s after %d s: 0 and signal 15 from the batch step, charged what it ran', async (state, seconds) => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.start(JOB);
    slurm.advance(seconds);
    slurm.end(JOB, state, 0, { stepSignal: 15 });
    slurm.advance(6);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state, gpuSeconds: 4 * seconds, exitCode: 0, signal: 15 });
  });

  it('sends a dependency as Slurm ids; a parent not at Slurm yet makes the hand-over wait', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1, { portalJobId: 'parent-a' }));
    await port.submit(spec(1, { portalJobId: 'parent-b' }));
    await port.submit(spec(1, { dependency: { type: 'afterok', portalJobIds: ['parent-a', 'parent-b'] } }));
    expect(slurm.submittedBodies.at(-1)!.job).toMatchObject({ name: JOB, dependency: 'afterok:1:2' });
    await expect(port.submit(spec(1, { portalJobId: 'child-2', dependency: { type: 'afterany', portalJobIds: ['never-submitted'] } }))).rejects.toThrow(/not at Slurm yet/);
    expect(slurm.submittedBodies).toHaveLength(3);
  });

  it('a job cancelled before it was ever eligible (slurmdbd never hears of it) ends from slurmctld’s word, once nothing is on its way', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.notInDb.add(1);
    await port.cancel(JOB);
    slurm.setAgentQueue(1);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state: 'PENDING', pendingReason: 'Accounting' });
    slurm.setAgentQueue(0);
    slurm.advance(6);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state: 'CANCELLED', startedAt: null, gpuSeconds: 0, energyWh: 0, nodeList: [], schedulerJobId: '1' });
  });

  it('a job cancelled while pending has no start, no nodes and 0 GPU-seconds', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    await port.cancel(JOB);
    expect(slurm.calls.at(-1)).toBe('signal 1 KILL');
    slurm.advance(6);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state: 'CANCELLED', startedAt: null, gpuSeconds: 0, nodeList: [], pendingReason: null });
  });

  it('stopping a running service sends its stop signal (it ends COMPLETED); a plain cancel sends KILL', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.start(JOB);
    await port.cancel(JOB, { stop: true });
    expect(slurm.calls.at(-1)).toBe('signal 1 STOP');
  });

  it('extends a running job\'s time limit in whole minutes (rounded up), once; an ended job answers false', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.start(JOB);
    expect(await port.extendTimeLimit!(JOB, 2 * 3600 + 30)).toBe(true);
    expect(slurm.calls.at(-1)).toBe('setTimeLimit 1 121');
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state: 'RUNNING' });
    // Asked again (a retry): the limit holds already, nothing is sent.
    const before = slurm.calls.filter((c) => c.startsWith('setTimeLimit')).length;
    expect(await port.extendTimeLimit!(JOB, 2 * 3600)).toBe(true);
    expect(slurm.calls.filter((c) => c.startsWith('setTimeLimit')).length).toBe(before);
    await port.cancel(JOB);
    slurm.advance(6);
    expect(await port.extendTimeLimit!(JOB, 3 * 3600)).toBe(false);
    expect(slurm.calls.filter((c) => c.startsWith('setTimeLimit')).length).toBe(before);
  });

  it('leaves an unknown id out only with proof, and throws while records may be on their way', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    expect(await port.jobs(['7b1c9d3e-0000-4000-8000-000000000000'])).toEqual([]);
    slurm.setAgentQueue(2);
    slurm.advance(6);
    await expect(port.jobs(['7b1c9d3e-0000-4000-8000-000000000000'])).rejects.toThrow(SchedulerUnavailableError);
  });

  it('waits a moment for records on their way to slurmdbd before it cannot tell', async () => {
    const slurm = fakeSlurm();
    let slept = 0;
    // The queue drains after the second wait (a record written just before, sent within a second).
    const port = adapterOn(slurm, (ms) => {
      slept += ms;
      if (slept >= 500) slurm.setAgentQueue(0);
      return Promise.resolve();
    });
    slurm.setAgentQueue(1);
    expect(await port.jobs(['7b1c9d3e-0000-4000-8000-000000000000'])).toEqual([]);
    expect(slept).toBe(500);
    expect(slurm.calls.filter((c) => c === 'diag')).toHaveLength(3);
  });

  it('while slurmdbd is away, live jobs are followed and an ended one waits for its record', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    const other = '5d2e8f1a-0000-4000-8000-000000000001';
    await port.submit(spec(1));
    await port.submit(spec(1, { portalJobId: other }));
    slurm.start(JOB);
    slurm.start(other);
    slurm.advance(30);
    slurm.end(JOB, 'COMPLETED', 0);
    const dbJobsByName = slurm.api.dbJobsByName.bind(slurm.api);
    slurm.api.dbJobsByName = () => Promise.reject(new SchedulerUnavailableError('slurmdbd: Unable to connect to database (7000)'));
    slurm.advance(6);
    const statuses = await port.jobs([JOB, other]);
    expect(statuses.map((s) => [s.portalJobId, s.state])).toEqual([
      [JOB, 'RUNNING'],
      [other, 'RUNNING'],
    ]);
    slurm.api.dbJobsByName = dbJobsByName;
    slurm.advance(61);
    expect((await port.jobs([JOB]))[0]).toMatchObject({ state: 'COMPLETED', gpuSeconds: 120 });
  });

  it('asks slurmctld once per poll for every read', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    slurm.calls.length = 0;
    await Promise.all([port.jobs([JOB]), port.jobs([JOB]), port.budgetHolds()]);
    slurm.advance(1);
    await port.jobs([JOB]);
    expect(slurm.calls).toEqual(['listJobs']);
  });

  it('an unreachable Slurm is not asked again until the back-off has passed (1, 2, 4 … 60 s)', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    slurm.setDown(true);
    await expect(port.jobs([JOB])).rejects.toThrow(/ECONNREFUSED/);
    slurm.calls.length = 0;
    await expect(port.jobs([JOB])).rejects.toThrow(/next try in 1 s/);
    expect(slurm.calls).toEqual([]);
    slurm.advance(1);
    await expect(port.jobs([JOB])).rejects.toThrow(/ECONNREFUSED/);
    await expect(port.submit(spec(1))).rejects.toThrow(/next try in 2 s/);
    for (let i = 0; i < 10; i++) {
      slurm.advance(61);
      await expect(port.jobs([JOB])).rejects.toThrow(/ECONNREFUSED/);
    }
    await expect(port.jobs([JOB])).rejects.toThrow(/next try in 60 s/);
    slurm.setDown(false);
    slurm.advance(60);
    expect(await port.jobs([JOB])).toEqual([]);
  });

  it('syncs budgets one at a time, skips classes without a partition, and a failed sync does not stop submissions', async () => {
    const slurm = fakeSlurm();
    let running = 0;
    let overlapped = false;
    const seen: string[] = [];
    slurm.api.syncBudgets = async (rows) => {
      running++;
      overlapped ||= running > 1;
      seen.push(...rows.map((r) => `${r.account}/${r.partition}`));
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (rows[0]?.account === 'fails') throw new SchedulerUnavailableError('postAssociations: slurmrestd 400: -1 Unspecified error', { transient: true });
      return rows.map((r) => ({ ...r, usedGpuMinutes: null }));
    };
    const port = adapterOn(slurm);
    const [a, b, failed] = await Promise.allSettled([
      port.syncBudgets([{ account: 'p1', partition: 'h100', gpuMinutes: 60 }, { account: 'p1', partition: 'b200', gpuMinutes: 60 }]),
      port.syncBudgets([{ account: 'p2', partition: 'h100', gpuMinutes: 30 }]),
      port.syncBudgets([{ account: 'fails', partition: 'h100', gpuMinutes: 1 }]),
    ]);
    expect(overlapped).toBe(false);
    expect(seen).toEqual(['p1/gpu', 'p2/gpu', 'fails/gpu']);
    expect(a).toMatchObject({ status: 'fulfilled', value: [{ account: 'p1', partition: 'h100', gpuMinutes: 60 }, { account: 'p1', partition: 'b200', gpuMinutes: null, notEnforced: true }] });
    expect(b.status).toBe('fulfilled');
    expect(failed.status).toBe('rejected');
    // Slurm answered (with a passing failure): no back-off, the next submit goes out at once.
    expect(await port.submit(spec(1))).toEqual({ schedulerJobId: '1' });
  });

  it('lists the jobs Slurm holds on a budget limit, telling the portal’s from the others', async () => {
    const slurm = fakeSlurm();
    const port = adapterOn(slurm);
    await port.submit(spec(1));
    await slurm.api.submit(rawBody('around-the-portal', 2));
    for (const j of slurm.jobs) j.reason = 'AssocGrpGRESMinutes';
    slurm.advance(6);
    const holds = await port.budgetHolds();
    expect(holds.map((h) => [h.portalJobId, h.partition, h.gpus, h.reason])).toEqual([
      [JOB, 'h100', 4, 'AssocGrpGRESMinutes'],
      [null, 'h100', 2, 'AssocGrpGRESMinutes'],
    ]);
  });
});

// ---- index.ts: the job's working folder (spec.workDir), made by the portal before the hand-over ----

describe('Slurm scheduler: the job folder, before the hand-over', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portal-slurm-folders-'));
  afterAll(() => {
    spawnSync('chattr', ['-R', '-i', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'a-token');
  const GROUP = 'p0123456789abcdef';
  const WORKDIR = `/scratch/portal/${GROUP}/jobs/${JOB}`;

  /** The scheduler on a slurmrestd that takes every submit (job 7), with the folder makers recorded. */
  function schedulerFor(submitAs: SlurmSettings['submitAs'], refuse?: SchedulerRefusedError) {
    const posted: { user: string | null; job: Record<string, unknown> }[] = [];
    const folders: string[][] = [];
    const settings: SlurmSettings = { restUrl: 'http://slurm.test:6820', user: 'portal', tokenFile, tokenLifespanSeconds: 1800, cluster: 'ci', partitions: { h100: 'gpu' }, jobDir: '/srv/jobs', launcher: 'none', pollSeconds: 5, requeue: false, submitAs, accountLimits: 'off' };
    const classes = [{ id: 'h100', siteId: 'de-jena', gpuModel: 'H100', gpusPerNode: 4, maxWalltimeSeconds: 86_400, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500 }];
    const port = createSlurmScheduler(settings, classes, {
      fetch: async (input, init) => {
        const request = input instanceof Request ? input : new Request(String(input), init);
        posted.push({ user: request.headers.get('X-SLURM-USER-NAME'), job: ((await request.json()) as { job: Record<string, unknown> }).job });
        return new Response(JSON.stringify({ errors: [], job_id: 7 }), { status: 200, headers: { 'content-type': 'application/json' } });
      },
      ensureProjectFolder: (folder, group) => {
        folders.push(['project', folder, group]);
        return refuse ? Promise.reject(refuse) : Promise.resolve();
      },
      ensureServiceJobFolder: (workDir, user) => {
        folders.push(['service', workDir, user]);
        return refuse ? Promise.reject(refuse) : Promise.resolve();
      },
    });
    return { port, posted, folders };
  }
  const job = (overrides: Partial<SchedulerJobSpec> = {}) => spec(1, { user: 'anna.muller', group: GROUP, ...overrides });

  it("as its person: the workspace, its jobs folder and the job's folder are the project group's, top down, before the job goes; the job runs and writes there", async () => {
    const { port, posted, folders } = schedulerFor('person');
    expect(await port.submit(job({ workDir: WORKDIR }))).toEqual({ schedulerJobId: '7' });
    expect(folders).toEqual([
      ['project', `/scratch/portal/${GROUP}`, GROUP],
      ['project', `/scratch/portal/${GROUP}/jobs`, GROUP],
      ['project', WORKDIR, GROUP],
    ]);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ user: 'anna.muller', job: { current_working_directory: WORKDIR, standard_output: `${WORKDIR}/stdout.log`, standard_error: `${WORKDIR}/stderr.log`, open_mode: 'append' } });
  });

  it("without a working folder, as before: the project's folder in SLURM_JOB_DIR as its person, nothing as the service user", async () => {
    const person = schedulerFor('person');
    await person.port.submit(job());
    expect(person.folders).toEqual([['project', `/srv/jobs/${GROUP}`, GROUP]]);
    expect(person.posted[0]!.job).toMatchObject({ current_working_directory: `/srv/jobs/${GROUP}`, standard_output: `/srv/jobs/${GROUP}/${JOB}-%j.out` });
    const service = schedulerFor('service');
    await service.port.submit(job());
    expect(service.folders).toEqual([]);
    expect(service.posted[0]).toMatchObject({ user: 'portal', job: { current_working_directory: '/srv/jobs' } });
  });

  it("as the service user: the job's folder is made the service user's, nothing is given to the project's group", async () => {
    const { port, posted, folders } = schedulerFor('service');
    await port.submit(job({ workDir: WORKDIR, array: { text: '0-1' } }));
    expect(folders).toEqual([['service', WORKDIR, 'portal']]);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ user: 'portal', job: { array: '0-1', current_working_directory: WORKDIR, standard_output: `${WORKDIR}/stdout-%a.log`, standard_error: `${WORKDIR}/stderr-%a.log` } });
  });

  it('a folder the portal cannot fix refuses the job, and nothing goes to Slurm', async () => {
    const refusal = new SchedulerRefusedError('the project folder … give it to group …', 'other');
    for (const submitAs of ['person', 'service'] as const) {
      const { port, posted } = schedulerFor(submitAs, refusal);
      await expect(port.submit(job({ workDir: WORKDIR }))).rejects.toBe(refusal);
      expect(posted).toEqual([]);
    }
  });

  it("a working folder that is not <workspace named after the group>/jobs/<job id> is refused before any folder is touched (the workspace is given to the group)", async () => {
    for (const workDir of [`/scratch/portal/${GROUP}/jobs/other-job`, `/scratch/portal/${GROUP}/${JOB}`, `/scratch/portal/pffffffffffffffff/jobs/${JOB}`, `/jobs/${JOB}`, `/scratch/portal/${GROUP}/jobs/../jobs/${JOB}`]) {
      for (const submitAs of ['person', 'service'] as const) {
        const { port, posted, folders } = schedulerFor(submitAs);
        await expect(port.submit(job({ workDir })), `${submitAs} ${workDir}`).rejects.toThrow(/working folder/);
        expect(folders).toEqual([]);
        expect(posted).toEqual([]);
      }
    }
    expect(jobFolders(`/s/${GROUP}/jobs/${JOB}`, JOB, GROUP)).toEqual([`/s/${GROUP}`, `/s/${GROUP}/jobs`, `/s/${GROUP}/jobs/${JOB}`]);
    expect(jobFolders(`/s/w/jobs/${JOB}`, JOB)).toEqual(['/s/w', '/s/w/jobs', `/s/w/jobs/${JOB}`]);
  });

  it('who may enter or write a folder, as the kernel decides it (owner, else group, else others); a project folder is its group\'s with setgid and group rwx', () => {
    const anna = { uid: 1001, gids: [100, 2001] };
    expect(mayAccess({ uid: 0, gid: 0, mode: 0o40755 }, anna, 0o1)).toBe(true);
    expect(mayAccess({ uid: 0, gid: 0, mode: 0o40755 }, anna, 0o3)).toBe(false);
    expect(mayAccess({ uid: 0, gid: 0, mode: 0o40750 }, anna, 0o1)).toBe(false);
    expect(mayAccess({ uid: 0, gid: 2001, mode: 0o42770 }, anna, 0o3)).toBe(true);
    // The owner's bits decide for the owner, even where others' would allow.
    expect(mayAccess({ uid: 1001, gid: 0, mode: 0o40077 }, anna, 0o1)).toBe(false);
    expect(mayAccess({ uid: 1001, gid: 0, mode: 0o40700 }, anna, 0o3)).toBe(true);
    expect(mayAccess({ uid: 5, gid: 5, mode: 0o40000 }, { uid: 0, gids: [0] }, 0o3)).toBe(true);
    expect(projectFolderIsRight({ uid: 0, gid: 2001, mode: 0o42770 }, 2001)).toBe(true);
    expect(projectFolderIsRight({ uid: 0, gid: 2001, mode: 0o42775 }, 2001)).toBe(true);
    expect(projectFolderIsRight({ uid: 0, gid: 2001, mode: 0o40770 }, 2001)).toBe(false);
    expect(projectFolderIsRight({ uid: 0, gid: 2001, mode: 0o42750 }, 2001)).toBe(false);
    expect(projectFolderIsRight({ uid: 0, gid: 0, mode: 0o42770 }, 2001)).toBe(false);
  });

  // On the file system, as the portal on the cluster runs: as root (the test cluster, CI). `users` and
  // `nobody`/`nogroup` stand in for a project's group and the service user.
  const root = process.getuid?.() === 0;
  const gidOf = (group: string) => Number(execFileSync('getent', ['group', group], { encoding: 'utf8' }).split(':')[2]);
  const modeOf = (path: string) => (statSync(path).mode & 0o7777).toString(8);
  /** Makes a folder one root cannot change either (chattr +i), as one the portal's user may not change. */
  const pin = (path: string) => expect(spawnSync('chattr', ['+i', path]).status, `chattr +i ${path}`).toBe(0);
  /** Whether this machine lets root pin a folder (ext4 and CAP_LINUX_IMMUTABLE; not in every container). */
  const canPin = root && (() => {
    const probe = mkdtempSync(join(dir, 'probe-'));
    const pinned = spawnSync('chattr', ['+i', probe]).status === 0;
    spawnSync('chattr', ['-i', probe]);
    return pinned;
  })();

  it.runIf(root)('as root, the folders the portal made (root:root 0755) become the project group\'s, 2770; a missing one is made; a right one is left as it is', async () => {
    const workspace = join(dir, 'person', 'users');
    const workDir = join(workspace, 'jobs', JOB);
    mkdirSync(workDir, { recursive: true, mode: 0o755 });
    const [ws, jobs, own] = jobFolders(workDir, JOB, 'users');
    for (const folder of [ws, jobs, own]) await ensureProjectFolder(folder, 'users');
    for (const folder of [ws, jobs, own]) {
      expect(statSync(folder).gid, folder).toBe(gidOf('users'));
      expect(modeOf(folder), folder).toBe('2770');
      expect(statSync(folder).uid, folder).toBe(0);
    }
    const missing = join(jobs, 'another-job');
    await ensureProjectFolder(missing, 'users');
    expect([statSync(missing).gid, modeOf(missing)]).toEqual([gidOf('users'), '2770']);
    // Wider, where a centre's provisioning made it so, is right too.
    chmodSync(missing, 0o2775);
    await ensureProjectFolder(missing, 'users');
    expect(modeOf(missing)).toBe('2775');
  });

  it.runIf(root)('refuses, with what to do, a file in a folder\'s place and a group the host does not know', async () => {
    const folder = join(dir, 'refused', 'users');
    mkdirSync(folder, { recursive: true, mode: 0o755 });
    const file = join(dir, 'refused', 'a-file');
    writeFileSync(file, '');
    await expect(ensureProjectFolder(file, 'users')).rejects.toThrow(/is not a folder: make it a folder owned by group users, mode 2770/);
    await expect(ensureProjectFolder(folder, 'no-such-group-here')).rejects.toThrow(/the portal's host must know group no-such-group-here/);
  });

  it.runIf(canPin)('refuses, with what to do, a folder the portal cannot give to the group', async () => {
    const folder = join(dir, 'pinned', 'users');
    mkdirSync(folder, { recursive: true, mode: 0o755 });
    pin(folder);
    const refused = await ensureProjectFolder(folder, 'users').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SchedulerRefusedError);
    expect((refused as Error).message).toMatch(new RegExp(`the project's folder ${folder} has group id 0, mode 0755, and the portal cannot change it \\(.*\\): give it to group users, mode 2770`));
  });

  it.runIf(root)("as the service user: the job's folder becomes its own; a workspace it cannot pass gets its group's x, one it can pass is left alone", async () => {
    const workspace = join(dir, 'service', 'p0123456789abcdef');
    const workDir = join(workspace, 'jobs', JOB);
    mkdirSync(join(workspace, 'jobs'), { recursive: true, mode: 0o755 });
    chmodSync(workspace, 0o700);
    await ensureServiceJobFolder(workDir, 'nobody');
    const nobody = { uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })), gids: [gidOf('nogroup')] };
    expect([statSync(workDir).uid, statSync(workDir).gid]).toEqual([nobody.uid, nobody.gids[0]]);
    expect(mayAccess(statSync(workDir), nobody, 0o3)).toBe(true);
    expect([statSync(workspace).uid, statSync(workspace).gid, modeOf(workspace)]).toEqual([0, nobody.gids[0], '710']);
    expect([statSync(join(workspace, 'jobs')).gid, modeOf(join(workspace, 'jobs'))]).toEqual([0, '755']);
    // Run again (a retried hand-over): nothing left to change.
    await ensureServiceJobFolder(workDir, 'nobody');
    expect(modeOf(workspace)).toBe('710');
    // A user the portal's host does not know: refused with what to do.
    await expect(ensureServiceJobFolder(join(workspace, 'jobs', 'x'), 'no-such-user-here')).rejects.toThrow(/the service user no-such-user-here is not known on the portal's host/);
  });

  it.runIf(canPin)("as the service user: a job's folder the portal cannot give to it is refused, with what to do", async () => {
    const other = join(dir, 'service-pinned', 'p0123456789abcdef', 'jobs', JOB);
    mkdirSync(other, { recursive: true, mode: 0o755 });
    chownSync(other, 0, 0);
    pin(other);
    await expect(ensureServiceJobFolder(other, 'nobody')).rejects.toThrow(/nobody cannot write the job's folder .* and the portal cannot give it to it \(.*\): run the portal as nobody or as root/);
  });
});
