// Job arrays on the Slurm adapter: slurmctld and slurmdbd hold one record per started task (its own job
// id) and one for the tasks not started; the adapter makes them one status per portal job with
// summariseArray. First on slurmrestd's answers as recorded from the test cluster (fixtures/13-20),
// through api.ts, then the rules (duplicates, cancel, requeue, the name query's blind spot) on records.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SchedulerJobSpec, SchedulerJobState } from '~/server/core/scheduler/port';
import { createSlurmPort, submissionId, type CtldJob, type DbJob, type SlurmApi, type SlurmArrayRef } from './adapter';
import { createSlurmApi } from './api';
import type { SlurmClient } from './client';
import { submitBody } from './mapping';
import { ctldJobsResponseSchema, dbJobsResponseSchema, type DbJob as SlurmDbRecord } from './schemas';

const CLASSES = [{ id: 'h100', siteId: 'de-jena', gpuModel: 'H100', gpusPerNode: 4, maxWalltimeSeconds: 86_400, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500 }];

function portOn(api: SlurmApi, now: () => Date) {
  return createSlurmPort({
    api,
    partitions: { h100: 'gpu' },
    classes: CLASSES,
    submitBody: (spec, partition) => submitBody(spec, { partition, jobDir: '/tmp', launcher: 'none', now: now() }),
    pollMs: 5000,
    now,
    assumedGpuUtilPercent: 90,
    log: () => undefined,
    sleep: () => Promise.resolve(),
    cluster: 'ci',
  });
}

// ---------------------------------------------------------------------------------------------------
// Recorded answers

function fixture(name: string): { jobs?: unknown[] } {
  return JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8')) as { jobs?: unknown[] };
}

/**
 * slurmrestd answering from recorded files: GET /jobs from one, GET /slurmdb/job/{id} from the others
 * (every record of the id or its array), and the name query as slurmdbd does it: only records with an
 * eligible time (the record of an array's tasks that never ran has none).
 */
function recorded(files: { ctld: string | null; db: string[] }) {
  const ctld = files.ctld ? (ctldJobsResponseSchema.parse(fixture(files.ctld)).jobs ?? []) : [];
  const db: { record: SlurmDbRecord; eligible: boolean }[] = files.db.flatMap((file) => {
    const raw = fixture(file).jobs ?? [];
    const parsed = dbJobsResponseSchema.parse(fixture(file)).jobs ?? [];
    return parsed.map((record, i) => ({ record, eligible: Boolean((raw[i] as { time?: { eligible?: number | null } }).time?.eligible) }));
  });
  const calls: string[] = [];
  const client: Partial<SlurmClient> = {
    listJobs: () => Promise.resolve(ctld),
    dbJobs: ({ names, bySubmission }) => {
      calls.push(`dbJobs ${names.join(',')}${bySubmission ? ' bySubmission' : ''}`);
      return Promise.resolve(db.filter((r) => (r.eligible || bySubmission) && names.includes(r.record.name)).map((r) => r.record));
    },
    dbJob: (jobId) => {
      calls.push(`dbJob ${jobId}`);
      return Promise.resolve(db.map((r) => r.record).filter((r) => String(r.job_id) === jobId || String(r.array?.job_id) === jobId));
    },
    diag: () => Promise.resolve({ dbdAgentQueueSize: 0 }),
    cancelJob: (jobId) => {
      calls.push(`cancelJob ${jobId}`);
      return Promise.resolve();
    },
  };
  return { client: client as SlurmClient, calls, dbRecords: db.map((r) => r.record) };
}

function recordedPort(files: { ctld: string | null; db: string[] }, atSeconds: number) {
  const now = () => new Date(atSeconds * 1000);
  const slurm = recorded(files);
  const api = createSlurmApi({ client: slurm.client, renewToken: () => undefined, cluster: 'ci', serviceUser: 'portal', now });
  return { port: portOn(api, now), ...slurm };
}

/** sacct's charge of records: elapsed × allocated GPUs, summed. */
function sacctGpuSeconds(records: SlurmDbRecord[]): number {
  return records.reduce((sum, r) => sum + (r.time.elapsed ?? 0) * (r.tres?.allocated?.find((t) => t.type === 'gres' && t.name === 'gpu')?.count ?? 0), 0);
}

// The arrays recorded: A (0-5%2, 4 s a task; array id 10), B (0-7%2, cancelled with 2 running; 16),
// C (0-2%2, cancelled with its last task waiting; 19).
const A = '3a0c5e1f-7b2d-4c8e-9f10-2b3c4d5e6f70';
const B = '5b1d6f20-8c3e-4d9f-a021-3c4d5e6f7081';
const C = '7c2e8031-9d4f-4ea0-b132-4d5e6f708192';

describe('Slurm adapter: job arrays on recorded answers', () => {
  it('mid-run: ended tasks from slurmdbd, running ones from slurmctld, the rest waiting as its task string says', async () => {
    // slurmctld: tasks 0-1 COMPLETED, 2-3 RUNNING (started 1796416843), "4-5%2" waiting (JobArrayTaskLimit);
    // slurmdbd: 0-1 final (4 s each), the waiting record's bitmap still 0x3C (2-5) — it lags.
    const { port, calls } = recordedPort({ ctld: '13-array-jobs-list.resp.json', db: ['14-array-slurmdb-job.resp.json'] }, 1796416844);
    const [status] = await port.jobs([A]);
    expect(status).toMatchObject({ portalJobId: A, schedulerJobId: '10', state: 'RUNNING', pendingReason: null, tasksWaiting: 2, nodeList: ['n1'], startedAt: new Date(1796416839_000), endedAt: null });
    expect(status!.tasks!.map((t) => [t.index, t.schedulerJobId, t.state, t.gpuSeconds])).toEqual([
      [0, '11', 'COMPLETED', 4],
      [1, '12', 'COMPLETED', 4],
      [2, '13', 'RUNNING', 1],
      [3, '14', 'RUNNING', 1],
    ]);
    expect(status!.gpuSeconds).toBe(10);
    // An array slurmctld holds is read from slurmdbd by its id, not by name.
    expect(calls).toEqual(['dbJob 10']);
  });

  it('completed: one status, charged what sacct shows for its tasks — also once slurmctld has forgotten it', async () => {
    const db = ['16-array-slurmdb-job-completed.resp.json'];
    const { port, dbRecords } = recordedPort({ ctld: '15-array-jobs-list-completed.resp.json', db }, 1796416860);
    const [status] = await port.jobs([A]);
    expect(status).toMatchObject({ schedulerJobId: '10', state: 'COMPLETED', exitCode: 0, signal: null, tasksWaiting: 0, startedAt: new Date(1796416839_000), endedAt: new Date(1796416852_000) });
    expect(status!.tasks!.map((t) => [t.index, t.state, t.exitCode])).toEqual([0, 1, 2, 3, 4, 5].map((i) => [i, 'COMPLETED', 0]));
    // The last task to start took the array's own id (10).
    expect(status!.tasks!.find((t) => t.index === 5)!.schedulerJobId).toBe('10');
    expect(status!.gpuSeconds).toBe(sacctGpuSeconds(dbRecords));
    expect(status!.gpuSeconds).toBe(24);
    // MinJobAge later slurmctld holds nothing: the name query finds the tasks, the read by id the rest.
    const forgotten = recordedPort({ ctld: null, db }, 1796417000);
    const [again] = await forgotten.port.jobs([A]);
    expect(again).toEqual(status);
    expect(forgotten.calls).toEqual([`dbJobs ${A}`, 'dbJob 10']);
  });

  it('the last task left waiting is a record of its own (its index set, not started): it waits, it is not listed', async () => {
    const { port } = recordedPort({ ctld: '17-array-jobs-list-last-task-waiting.resp.json', db: [] }, 1796416875);
    const [b, c] = await port.jobs([B, C]);
    expect(b).toMatchObject({ schedulerJobId: '16', state: 'RUNNING', tasksWaiting: 6 });
    expect(b!.tasks!.map((t) => [t.index, t.state])).toEqual([
      [0, 'RUNNING'],
      [1, 'RUNNING'],
    ]);
    expect(c).toMatchObject({ schedulerJobId: '19', state: 'RUNNING', tasksWaiting: 1 });
    expect(c!.tasks!.map((t) => t.index)).toEqual([0, 1]);
  });

  it('cancelled with tasks waiting: CANCELLED, the tasks that ran listed (ended by SIGTERM), those that never ran not — with or without slurmctld', async () => {
    const db = ['19-array-slurmdb-job-cancelled.resp.json', '20-array-slurmdb-job-cancelled-last-task.resp.json'];
    const { port, dbRecords } = recordedPort({ ctld: '18-array-jobs-list-cancelled.resp.json', db }, 1796416885);
    const statuses = await port.jobs([B, C]);
    for (const [status, id, jobIds] of [
      [statuses[0]!, '16', ['17', '18']],
      [statuses[1]!, '19', ['20', '21']],
    ] as const) {
      expect(status).toMatchObject({ schedulerJobId: id, state: 'CANCELLED', tasksWaiting: 0, exitCode: 0, signal: 15 });
      expect(status.tasks!.map((t) => [t.index, t.schedulerJobId, t.state, t.signal])).toEqual([
        [0, jobIds[0], 'CANCELLED', 15],
        [1, jobIds[1], 'CANCELLED', 15],
      ]);
      expect(status.gpuSeconds).toBe(sacctGpuSeconds(dbRecords.filter((r) => r.array?.job_id === Number(id))));
    }
    expect(statuses.map((s) => s.gpuSeconds)).toEqual([14, 16]);
    const forgotten = recordedPort({ ctld: null, db }, 1796417000);
    expect(await forgotten.port.jobs([B, C])).toEqual(statuses);
  });
});

// ---------------------------------------------------------------------------------------------------
// The rules, on records

const T0 = Date.UTC(2026, 11, 1, 12);
const NAME = '0f9e6a52-3c2b-4d1e-9a7b-5c6d7e8f9a0b';

function ctldRecord(jobId: number, array: SlurmArrayRef, state: SchedulerJobState, times: { start?: number; end?: number } = {}, over: Partial<CtldJob> = {}): CtldJob {
  const started = times.start !== undefined;
  return {
    jobId,
    name: NAME,
    account: 'acct',
    partition: 'gpu',
    state,
    pendingReason: state === 'PENDING' ? 'JobArrayTaskLimit' : null,
    exitCode: times.end !== undefined && started ? 0 : null,
    signal: null,
    nodeList: started ? ['n1'] : [],
    gpus: 1,
    timeLimitSeconds: 300,
    submittedAt: new Date(T0),
    startedAt: started ? new Date(T0 + times.start! * 1000) : null,
    endedAt: times.end !== undefined ? new Date(T0 + times.end * 1000) : null,
    array,
    ...over,
  };
}

function dbRecord(jobId: number, array: SlurmArrayRef, state: SchedulerJobState, times: { start?: number; end?: number; submitted?: number } = {}, over: Partial<DbJob> = {}): DbJob {
  const started = times.start !== undefined;
  return {
    jobId,
    name: NAME,
    user: 'u',
    submittedAt: new Date(T0 + (times.submitted ?? 0) * 1000),
    account: 'acct',
    partition: 'gpu',
    state,
    final: times.end !== undefined,
    elapsedSeconds: started && times.end !== undefined ? times.end - times.start! : 0,
    gpus: started ? 1 : 0,
    startedAt: started ? new Date(T0 + times.start! * 1000) : null,
    endedAt: times.end !== undefined ? new Date(T0 + times.end * 1000) : null,
    exitCode: null,
    signal: null,
    nodeList: started ? ['n1'] : [],
    timeLimitSeconds: 300,
    energyJoules: null,
    array,
    ...over,
  };
}

const task = (arrayId: number, index: number): SlurmArrayRef => ({ jobId: arrayId, taskId: index });

/** A Slurm holding the given records: slurmctld's list, slurmdbd by name (eligible ones) and by array id. */
function stubSlurm(init: { ctld?: CtldJob[]; db?: DbJob[]; notEligible?: number[] } = {}) {
  let clock = T0 + 60_000;
  const state = { ctld: init.ctld ?? [], db: init.db ?? [], notEligible: new Set(init.notEligible ?? []) };
  const calls: string[] = [];
  const api: SlurmApi = {
    listJobs: () => Promise.resolve(state.ctld),
    submit: () => {
      calls.push('submit');
      return Promise.resolve(999);
    },
    signal: (jobId, signal) => {
      calls.push(`signal ${jobId} ${signal}`);
      return Promise.resolve();
    },
    setTimeLimit: (jobId, minutes) => {
      calls.push(`setTimeLimit ${jobId} ${minutes}`);
      return Promise.resolve();
    },
    dbJobsByName: (names, _days, query) => {
      calls.push(query?.neverEligible ? 'dbJobsByName neverEligible' : 'dbJobsByName');
      return Promise.resolve(state.db.filter((r) => names.includes(r.name) && (query?.neverEligible || !state.notEligible.has(r.jobId))));
    },
    dbArrayJobs: (arrayJobId) => {
      calls.push(`dbArrayJobs ${arrayJobId}`);
      return Promise.resolve(state.db.filter((r) => submissionId(r) === arrayJobId));
    },
    dbJobsOfAccounts: (accounts) => Promise.resolve(state.db.filter((r) => accounts.includes(r.account) && !state.notEligible.has(r.jobId))),
    dbdAgentQueueSize: () => Promise.resolve(0),
    nodes: () => Promise.resolve([]),
    partitions: () => Promise.resolve([]),
  };
  return {
    api,
    state,
    calls,
    now: () => new Date(clock),
    advance(seconds: number) {
      clock += seconds * 1000;
    },
  };
}

function spec(overrides: Partial<SchedulerJobSpec> = {}): SchedulerJobSpec {
  return { portalJobId: NAME, attempt: 1, name: 'sweep', partition: 'h100', gpus: 1, nodes: 1, walltimeSeconds: 300, account: 'acct', user: 'u', image: 'img', command: 'run $SLURM_ARRAY_TASK_ID', env: {}, array: { text: '0-9%2' }, ...overrides };
}

describe('Slurm adapter: job arrays', () => {
  it('submits the array text and an output file per task', async () => {
    const bodies: unknown[] = [];
    const slurm = stubSlurm();
    slurm.api.submit = (body) => {
      bodies.push(body.job);
      return Promise.resolve(42);
    };
    expect(await portOn(slurm.api, slurm.now).submit(spec())).toEqual({ schedulerJobId: '42' });
    expect(bodies).toEqual([expect.objectContaining({ name: NAME, array: '0-9%2', standard_output: `/tmp/${NAME}-%A_%a.out` })]);
  });

  it('a retried hand-over finds the array (any of its records) and submits nothing', async () => {
    const slurm = stubSlurm({ ctld: [ctldRecord(8, task(7, 0), 'RUNNING', { start: 0 }), ctldRecord(7, { jobId: 7, taskId: null, pending: { count: 9, complete: true } }, 'PENDING')] });
    expect(await portOn(slurm.api, slurm.now).submit(spec({ attempt: 2 }))).toEqual({ schedulerJobId: '7' });
    expect(slurm.calls.filter((c) => c === 'submit' || c.startsWith('signal'))).toEqual([]);
  });

  it('two arrays of one name are a duplicate: the lower array id stays, the other is cancelled as a whole', async () => {
    const slurm = stubSlurm({
      ctld: [
        ctldRecord(8, task(7, 0), 'RUNNING', { start: 0 }),
        ctldRecord(7, { jobId: 7, taskId: null, pending: { count: 9, complete: true } }, 'PENDING'),
        ctldRecord(12, task(11, 0), 'RUNNING', { start: 0 }),
        ctldRecord(11, { jobId: 11, taskId: null, pending: { count: 9, complete: true } }, 'PENDING'),
      ],
    });
    const [status] = await portOn(slurm.api, slurm.now).jobs([NAME]);
    expect(status).toMatchObject({ schedulerJobId: '7', state: 'RUNNING', tasksWaiting: 9 });
    expect(slurm.calls.filter((c) => c.startsWith('signal'))).toEqual(['signal 11 KILL']);
  });

  it('cancel (and a stop: arrays are no services) is one KILL of the array id, which ends every task', async () => {
    const slurm = stubSlurm({ ctld: [ctldRecord(8, task(7, 0), 'RUNNING', { start: 0 }), ctldRecord(9, task(7, 1), 'RUNNING', { start: 0 }), ctldRecord(7, { jobId: 7, taskId: null, pending: { count: 8, complete: true } }, 'PENDING')] });
    const port = portOn(slurm.api, slurm.now);
    await port.cancel(NAME);
    await port.cancel(NAME, { stop: true });
    expect(slurm.calls.filter((c) => c.startsWith('signal'))).toEqual(['signal 7 KILL', 'signal 7 KILL']);
  });

  it('tasks that completed and a rest cancelled before it ran: CANCELLED, also when only the read by id finds that rest', async () => {
    const done = [dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), dbRecord(9, task(7, 1), 'COMPLETED', { start: 0, end: 40 })];
    const rest = dbRecord(7, { jobId: 7, taskId: null, indexes: [2, 3, 4, 5, 6, 7, 8, 9] }, 'CANCELLED', { end: 45 });
    // slurmctld has forgotten all of it; slurmdbd's name query misses the rest (no eligible time).
    const slurm = stubSlurm({ db: [...done, rest], notEligible: [7] });
    const [status] = await portOn(slurm.api, slurm.now).jobs([NAME]);
    expect(status).toMatchObject({ schedulerJobId: '7', state: 'CANCELLED', tasksWaiting: 0, gpuSeconds: 70 });
    expect(status!.tasks!.map((t) => t.index)).toEqual([0, 1]);
    expect(slurm.calls).toEqual(['dbJobsByName', 'dbArrayJobs 7']);
  });

  it('an array cancelled before any task ran, once slurmctld has forgotten it: found among the records without an eligible time, read by id', async () => {
    const slurm = stubSlurm({ db: [dbRecord(7, { jobId: 7, taskId: null, indexes: [0, 1, 2, 3] }, 'CANCELLED', { end: 45 })], notEligible: [7] });
    const [status] = await portOn(slurm.api, slurm.now).jobs([NAME]);
    expect(status).toMatchObject({ schedulerJobId: '7', state: 'CANCELLED', tasks: [], tasksWaiting: 0, gpuSeconds: 0, startedAt: null });
    expect(slurm.calls).toEqual(['dbJobsByName', 'dbJobsByName neverEligible', 'dbArrayJobs 7']);
  });

  it('while the rest is cancelled in slurmctld but slurmdbd has no final record of it yet, the array is not settled', async () => {
    const slurm = stubSlurm({
      ctld: [ctldRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), ctldRecord(7, { jobId: 7, taskId: null, pending: { count: 8, complete: true } }, 'CANCELLED', { end: 31 })],
      db: [dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), dbRecord(7, { jobId: 7, taskId: null, indexes: [1, 2, 3, 4, 5, 6, 7, 8] }, 'PENDING')],
    });
    // slurmctld's records are still on their way to slurmdbd: wait.
    slurm.api.dbdAgentQueueSize = () => Promise.resolve(1);
    const [waiting] = await portOn(slurm.api, slurm.now).jobs([NAME]);
    expect(waiting).toMatchObject({ state: 'PENDING', pendingReason: 'Accounting', tasksWaiting: 8 });
    // Once nothing is on its way, slurmctld's word ends them: never ran.
    slurm.api.dbdAgentQueueSize = () => Promise.resolve(0);
    const [ended] = await portOn(slurm.api, slurm.now).jobs([NAME]);
    expect(ended).toMatchObject({ state: 'CANCELLED', tasksWaiting: 0, gpuSeconds: 30 });
  });

  it('a task ended in slurmctld whose record is not final yet: listed as slurmctld ended it; the array is not settled until the record is', async () => {
    const slurm = stubSlurm({
      ctld: [ctldRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), ctldRecord(7, task(7, 1), 'COMPLETED', { start: 0, end: 41 })],
      db: [dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), dbRecord(7, task(7, 1), 'RUNNING', { start: 0 })],
    });
    const port = portOn(slurm.api, slurm.now);
    const [ending] = await port.jobs([NAME]);
    expect(ending).toMatchObject({ state: 'RUNNING', endedAt: null, exitCode: null, gpuSeconds: 71 });
    expect(ending!.tasks!.map((t) => [t.index, t.state, t.gpuSeconds])).toEqual([
      [0, 'COMPLETED', 30],
      [1, 'COMPLETED', 41],
    ]);
    // slurmdbd's record says 40 s (sacct's, the charge): final now.
    slurm.state.db = [dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), dbRecord(7, task(7, 1), 'COMPLETED', { start: 0, end: 40 })];
    slurm.advance(6);
    expect((await port.jobs([NAME]))[0]).toMatchObject({ state: 'COMPLETED', exitCode: 0, gpuSeconds: 70 });
  });

  it('waiting tasks from slurmdbd’s bitmap, less those started since, when slurmctld cut its task string short', async () => {
    const slurm = stubSlurm({
      ctld: [ctldRecord(8, task(7, 0), 'RUNNING', { start: 0 }), ctldRecord(9, task(7, 3), 'RUNNING', { start: 0 }), ctldRecord(7, { jobId: 7, taskId: null, pending: { count: 19, complete: false } }, 'PENDING')],
      // As last sent, before tasks 0 and 3 started: 0, 3, 6 … 87 (30 tasks).
      db: [dbRecord(7, { jobId: 7, taskId: null, indexes: Array.from({ length: 30 }, (_, i) => i * 3) }, 'PENDING')],
    });
    const [status] = await portOn(slurm.api, slurm.now).jobs([NAME]);
    expect(status).toMatchObject({ state: 'RUNNING', tasksWaiting: 28 });
  });

  it('a requeued task: its attempts folded, charged each, listed while it waits again', async () => {
    const rest: SlurmArrayRef = { jobId: 7, taskId: null, pending: { count: 1, complete: true } };
    const slurm = stubSlurm({
      ctld: [ctldRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 50 }), ctldRecord(9, task(7, 1), 'PENDING', {}, { pendingReason: 'BeginTime' }), ctldRecord(7, rest, 'PENDING')],
      db: [
        dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 50 }),
        // Task 1 ran 20 s until its node failed; Slurm requeued it under the same id and index.
        dbRecord(9, task(7, 1), 'NODE_FAIL', { start: 0, end: 20 }),
        dbRecord(9, task(7, 1), 'PENDING', { submitted: 21 }),
      ],
    });
    const port = portOn(slurm.api, slurm.now);
    const [waiting] = await port.jobs([NAME]);
    expect(waiting).toMatchObject({ state: 'PENDING', tasksWaiting: 1, pendingReason: 'JobArrayTaskLimit' });
    expect(waiting!.tasks!.map((t) => [t.index, t.state])).toEqual([
      [0, 'COMPLETED'],
      [1, 'PENDING'],
    ]);
    // Task 1 runs again (40 s) and task 2 (the rest) runs 10 s: both end.
    slurm.state.ctld = [ctldRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 50 }), ctldRecord(9, task(7, 1), 'COMPLETED', { start: 30, end: 70 }), ctldRecord(7, task(7, 2), 'COMPLETED', { start: 60, end: 70 })];
    slurm.state.db = [
      dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 50 }),
      dbRecord(9, task(7, 1), 'NODE_FAIL', { start: 0, end: 20 }),
      dbRecord(9, task(7, 1), 'COMPLETED', { start: 30, end: 70, submitted: 21 }),
      dbRecord(7, task(7, 2), 'COMPLETED', { start: 60, end: 70 }),
    ];
    slurm.advance(60);
    const [done] = await port.jobs([NAME]);
    expect(done).toMatchObject({ state: 'COMPLETED', tasksWaiting: 0, gpuSeconds: 50 + 20 + 40 + 10 });
    expect(done!.tasks!.map((t) => [t.index, t.schedulerJobId, t.gpuSeconds])).toEqual([
      [0, '8', 50],
      [1, '9', 60],
      [2, '7', 10],
    ]);
  });

  it('reads a live array from slurmdbd once per poll, and an ended one never again', async () => {
    const slurm = stubSlurm({
      ctld: [ctldRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), ctldRecord(7, task(7, 1), 'RUNNING', { start: 30 })],
      db: [dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), dbRecord(7, task(7, 1), 'RUNNING', { start: 30 })],
    });
    const port = portOn(slurm.api, slurm.now);
    await port.jobs([NAME]);
    await port.jobs([NAME]);
    expect(slurm.calls).toEqual(['dbArrayJobs 7']);
    slurm.state.ctld = [ctldRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), ctldRecord(7, task(7, 1), 'COMPLETED', { start: 30, end: 50 })];
    slurm.state.db = [dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 }), dbRecord(7, task(7, 1), 'COMPLETED', { start: 30, end: 50 })];
    slurm.advance(6);
    expect((await port.jobs([NAME]))[0]).toMatchObject({ state: 'COMPLETED', gpuSeconds: 50 });
    slurm.advance(6);
    slurm.state.ctld = [];
    expect((await port.jobs([NAME]))[0]).toMatchObject({ state: 'COMPLETED', gpuSeconds: 50 });
    expect(slurm.calls).toEqual(['dbArrayJobs 7', 'dbArrayJobs 7']);
  });

  it('an array from a shell: each task read back on its own (keyed by its own job id), and a budget hold on its waiting tasks', async () => {
    const shell = (r: DbJob): DbJob => ({ ...r, name: 'sweep-from-a-shell' });
    const slurm = stubSlurm({
      ctld: [ctldRecord(7, { jobId: 7, taskId: null, pending: { count: 5, complete: true } }, 'PENDING', {}, { name: 'sweep-from-a-shell', pendingReason: 'AssocGrpGRESMinutes' })],
      db: [shell(dbRecord(8, task(7, 0), 'COMPLETED', { start: 0, end: 30 })), shell(dbRecord(9, task(7, 1), 'FAILED', { start: 0, end: 12 }))],
    });
    const port = portOn(slurm.api, slurm.now);
    const outside = await port.outsideJobs(['acct'], new Date(T0 - 86_400_000));
    expect(outside.map((j) => [j.schedulerJobId, j.name, j.state, j.gpuSeconds])).toEqual([
      ['8', 'sweep-from-a-shell', 'COMPLETED', 30],
      ['9', 'sweep-from-a-shell', 'FAILED', 12],
    ]);
    expect(await port.budgetHolds()).toMatchObject([{ schedulerJobId: '7', portalJobId: null, reason: 'AssocGrpGRESMinutes', gpus: 1 }]);
  });
});
