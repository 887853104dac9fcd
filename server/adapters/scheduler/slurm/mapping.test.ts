import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SchedulerJobSpec, SchedulerJobState } from '~/server/core/scheduler/port';
import {
  arrayBitmapIndexes,
  arrayTaskCount,
  chargedGpuSeconds,
  BATCH_STEP_WAIT_SECONDS,
  batchStepPending,
  exitFromDb,
  exitFromWaitStatus,
  expandHostlist,
  gpusFromGres,
  gpusFromTres,
  gpusFromTresList,
  jobScript,
  jobState,
  measuredEnergyJoules,
  preferCtldExit,
  shellQuote,
  slurmBegin,
  slurmOutputPath,
  slurmStateIsKnown,
  statusFromCtld,
  statusFromDb,
  submitBody,
  timeLimitSeconds,
  workDirProblem,
} from './mapping';
import { ctldJobsResponseSchema, dbJobsResponseSchema, type CtldJob, type DbJob } from './schemas';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8'));
}
function ctldJobs(name: string): CtldJob[] {
  return ctldJobsResponseSchema.parse(fixture(name)).jobs ?? [];
}
function dbJobs(name: string): DbJob[] {
  return dbJobsResponseSchema.parse(fixture(name)).jobs ?? [];
}
const running = ctldJobs('03-job-get.resp.json')[0]!;
const cancelled = ctldJobs('07-job-get-after-delete.resp.json')[0]!;
const dbCancelled = dbJobs('11-slurmdb-job.resp.json')[0]!;
const dbList = dbJobs('12-slurmdb-jobs.resp.json');

describe('jobState: the table of the issue', () => {
  const rows: [string | string[], SchedulerJobState][] = [
    ['PENDING', 'PENDING'],
    ['RUNNING', 'RUNNING'],
    ['CONFIGURING', 'RUNNING'],
    ['SUSPENDED', 'RUNNING'],
    ['COMPLETING', 'RUNNING'],
    ['RUNNING+COMPLETING', 'RUNNING'],
    ['COMPLETED+COMPLETING', 'RUNNING'],
    [['COMPLETED', 'COMPLETING'], 'RUNNING'],
    [['PENDING', 'REQUEUED'], 'PENDING'],
    ['COMPLETED', 'COMPLETED'],
    [['COMPLETED'], 'COMPLETED'],
    ['FAILED', 'FAILED'],
    ['OUT_OF_MEMORY', 'FAILED'],
    ['TIMEOUT', 'TIMEOUT'],
    ['DEADLINE', 'TIMEOUT'],
    ['CANCELLED', 'CANCELLED'],
    ['PREEMPTED', 'PREEMPTED'],
    ['REVOKED', 'CANCELLED'],
    ['NODE_FAIL', 'NODE_FAIL'],
    ['BOOT_FAIL', 'NODE_FAIL'],
    ['cancelled', 'CANCELLED'],
    ['SOMETHING_NEW', 'RUNNING'],
  ];
  it.each(rows)('%j → %s', (raw, state) => {
    expect(jobState(raw).state).toBe(state);
  });
  it('keeps the base state and flags apart', () => {
    expect(jobState('RUNNING+COMPLETING')).toEqual({ state: 'RUNNING', base: 'RUNNING', flags: ['COMPLETING'] });
    expect(jobState('COMPLETING')).toEqual({ state: 'RUNNING', base: null, flags: ['COMPLETING'] });
  });
  it('tells states it does not know', () => {
    expect(slurmStateIsKnown('RUNNING+COMPLETING')).toBe(true);
    expect(slurmStateIsKnown('SOMETHING_NEW')).toBe(false);
    expect(slurmStateIsKnown('')).toBe(false);
  });
});

describe('exit codes and signals', () => {
  it.each([
    [0, 0, null],
    [256, 1, null],
    [3 << 8, 3, null],
    [255 << 8, 255, null],
    [9, 0, 9],
    [15, 0, 15],
    [15 | 0x80, 0, 15],
    [null, null, null],
    [-1, null, null],
  ])('wait status %j → %j:%j', (status, exitCode, signal) => {
    expect(exitFromWaitStatus(status)).toEqual({ exitCode, signal });
  });

  // The four cases measured on the Slurm 22.05 test cluster, on the recorded dbv0.0.38 record of a job that
  // ran (11-slurmdb-job: CANCELLED, its batch step CANCELLED SIGNALED 15) with the fields each case changes.
  const record = (state: string, exit: DbJob['exit_code'], step: DbJob['exit_code']): DbJob => ({
    ...dbCancelled,
    state: { current: state, reason: 'None' },
    exit_code: exit,
    steps: dbCancelled.steps!.map((s) => ({ ...s, exit_code: step })),
  });
  const success = { status: 'SUCCESS', return_code: 0 };
  const signaled = (id: number, name: string) => ({ status: 'SIGNALED', return_code: null, signal: { signal_id: id, name } });

  it('the recorded batch step is read with its signal (sacct: .batch CANCELLED 0:15)', () => {
    expect(dbCancelled.steps![0]!.exit_code).toEqual(signaled(15, 'Terminated'));
    expect(statusFromDb(dbCancelled, { nowSeconds: 0 })).toMatchObject({ state: 'CANCELLED', exitCode: 0, signal: 15 });
  });

  it('TIMEOUT: sacct -X 0:0, .batch CANCELLED 0:15 → 0 and signal 15', () => {
    const timeout = record('TIMEOUT', success, signaled(15, 'Terminated'));
    expect(statusFromDb(timeout, { nowSeconds: 0 })).toMatchObject({ state: 'TIMEOUT', exitCode: 0, signal: 15 });
    // slurmctld's wait status, when it names no signal, keeps the batch step's.
    expect(statusFromDb(timeout, { nowSeconds: 0, ctldExit: exitFromWaitStatus(0) })).toMatchObject({ exitCode: 0, signal: 15 });
  });

  it('CANCELLED while running: sacct -X 0:0, .batch 0:15 after plain scancel, 0:9 after SIGKILL', () => {
    expect(statusFromDb(record('CANCELLED', success, signaled(15, 'Terminated')), { nowSeconds: 0 })).toMatchObject({ exitCode: 0, signal: 15 });
    expect(statusFromDb(record('CANCELLED', success, signaled(9, 'Killed')), { nowSeconds: 0 })).toMatchObject({ exitCode: 0, signal: 9 });
    // slurmctld (recorded after DELETE /job: exit_code 15) says the same.
    expect(statusFromCtld(cancelled, 0)).toMatchObject({ state: 'CANCELLED', exitCode: 0, signal: 15 });
  });

  it('`kill -9 $$`: FAILED 0:9 (dbv0.0.38: SIGNALED 9 Killed) → 0 and signal 9', () => {
    const killed = record('FAILED', signaled(9, 'Killed'), signaled(9, 'Killed'));
    expect(statusFromDb(killed, { nowSeconds: 0 })).toMatchObject({ state: 'FAILED', exitCode: 0, signal: 9 });
    expect(statusFromCtld({ ...cancelled, job_state: 'FAILED', exit_code: 9 }, 0)).toMatchObject({ state: 'FAILED', exitCode: 0, signal: 9 });
  });

  it('`exit 3`: FAILED 3:0 → 3 and no signal; slurmdbd\'s SUCCESS/0 for a FAILED job is not trusted, slurmctld\'s wait status is', () => {
    const failed = record('FAILED', success, { status: 'FAILED', return_code: 3 });
    expect(statusFromCtld({ ...cancelled, job_state: 'FAILED', exit_code: 3 << 8 }, 0)).toMatchObject({ state: 'FAILED', exitCode: 3, signal: null });
    expect(statusFromDb(failed, { nowSeconds: 0, ctldExit: exitFromWaitStatus(3 << 8) })).toMatchObject({ state: 'FAILED', exitCode: 3, signal: null });
    expect(statusFromDb(failed, { nowSeconds: 0 })).toMatchObject({ exitCode: null, signal: null });
    expect(statusFromDb(record('FAILED', { status: 'FAILED', return_code: 3 }, null), { nowSeconds: 0 })).toMatchObject({ exitCode: 3, signal: null });
  });

  it('a job Slurm ended waits for its batch step\'s end (the signal), at most BATCH_STEP_WAIT_SECONDS after its end', () => {
    const end = dbCancelled.time.end!;
    const running = (r: DbJob): DbJob => ({ ...r, steps: r.steps!.map((s) => ({ ...s, state: 'RUNNING', time: { ...s.time, end: 0 }, exit_code: success })) });
    const timeout = record('TIMEOUT', success, signaled(15, 'Terminated'));
    // slurmctld records the time limit at once; the batch step's end comes when the step has died of it.
    expect(batchStepPending(running(timeout), 'TIMEOUT', true, end + 1)).toBe(true);
    expect(batchStepPending({ ...timeout, steps: [] }, 'TIMEOUT', true, end + 1)).toBe(true);
    expect(batchStepPending(running(dbCancelled), 'CANCELLED', true, end + BATCH_STEP_WAIT_SECONDS - 1)).toBe(true);
    // Its step recorded, or long enough after the end (a node that failed never sends it): final.
    expect(batchStepPending(timeout, 'TIMEOUT', true, end + 1)).toBe(false);
    expect(batchStepPending(running(timeout), 'TIMEOUT', true, end + BATCH_STEP_WAIT_SECONDS)).toBe(false);
    // Nothing to wait for: a job that ended by itself, one that never ran, one whose own record names its end.
    expect(batchStepPending(running(record('COMPLETED', success, success)), 'COMPLETED', true, end + 1)).toBe(false);
    expect(batchStepPending(running(dbCancelled), 'CANCELLED', false, end + 1)).toBe(false);
    expect(batchStepPending(running(record('FAILED', { status: 'FAILED', return_code: 3 }, success)), 'FAILED', true, end + 1)).toBe(false);
  });

  it('slurmdbd alone: SUCCESS/0 is 0:0 for a COMPLETED job; nothing for a job that never ran', () => {
    expect(exitFromDb(record('COMPLETED', success, success), 'COMPLETED', true)).toEqual({ exitCode: 0, signal: null });
    expect(exitFromDb(record('CANCELLED', success, signaled(15, 'Terminated')), 'CANCELLED', false)).toEqual({ exitCode: 0, signal: null });
    expect(exitFromDb({ ...dbCancelled, exit_code: null, steps: [] }, 'FAILED', true)).toEqual({ exitCode: null, signal: null });
  });

  it('slurmctld\'s exit code wins; a signal only slurmdbd\'s batch step names is kept', () => {
    expect(preferCtldExit({ exitCode: 1, signal: null }, { exitCode: null, signal: null })).toEqual({ exitCode: 1, signal: null });
    expect(preferCtldExit({ exitCode: 0, signal: 9 }, { exitCode: 0, signal: 15 })).toEqual({ exitCode: 0, signal: 9 });
    expect(preferCtldExit({ exitCode: 0, signal: null }, { exitCode: 0, signal: 15 })).toEqual({ exitCode: 0, signal: 15 });
    expect(preferCtldExit(null, { exitCode: 3, signal: null })).toEqual({ exitCode: 3, signal: null });
  });
});

describe('hostlists, GRES and TRES', () => {
  it.each([
    ['n1', ['n1']],
    ['n[1-2]', ['n1', 'n2']],
    ['n[1-2],gpu[01-03,7]', ['n1', 'n2', 'gpu01', 'gpu02', 'gpu03', 'gpu7']],
    ['a,b[08-10]', ['a', 'b08', 'b09', 'b10']],
    ['rack[1-2]-n[1-2]', ['rack1-n1', 'rack1-n2', 'rack2-n1', 'rack2-n2']],
    ['', []],
    ['None assigned', []],
    ['(null)', []],
  ])('%j', (list, hosts) => {
    expect(expandHostlist(list)).toEqual(hosts);
  });
  it('refuses a broken hostlist', () => {
    expect(() => expandHostlist('n[1-')).toThrow(/hostlist/);
    expect(() => expandHostlist('n[a-b]')).toThrow(/hostlist/);
  });

  it.each([
    ['gpu:4', 4],
    ['gres:gpu:2', 2],
    ['gres/gpu:2', 2],
    ['gpu:4(IDX:0-3)', 4],
    ['gpu:2(IDX:0,2)', 2],
    ['gpu:a100:2', 2],
    ['gpu:a100:2(S:0-1),gpu:v100:1', 3],
    ['gpu', 1],
    ['gpu:8(S:0),shard:16', 8],
    ['N/A', 0],
    ['', 0],
    [null, 0],
  ])('GRES %j → %d GPUs', (gres, gpus) => {
    expect(gpusFromGres(gres)).toBe(gpus);
  });

  it.each([
    ['cpu=2,mem=1G,node=1,billing=2,gres/gpu=2', 2],
    ['cpu=8,node=2,gres/gpu=8,gres/gpu:a100=8', 8],
    ['cpu=8,gres/gpu:a100=2,gres/gpu:v100=1', 3],
    ['cpu=1,mem=256M,node=1,billing=1', 0],
    ['', 0],
  ])('TRES %j → %d GPUs', (tres, gpus) => {
    expect(gpusFromTres(tres)).toBe(gpus);
  });

  it('TRES lists from slurmdbd', () => {
    expect(gpusFromTresList(dbCancelled.tres?.allocated)).toBe(2);
    expect(gpusFromTresList([])).toBe(0);
    expect(gpusFromTresList(null)).toBe(0);
  });
});

describe('the charge', () => {
  it('is GPUs × elapsed, capped at the time limit (a 1-minute job ended TIMEOUT at 67 s)', () => {
    expect(chargedGpuSeconds(4, 67, 60)).toBe(240);
    expect(chargedGpuSeconds(4, 30, 60)).toBe(120);
    expect(chargedGpuSeconds(2, 30, null)).toBe(60);
    expect(chargedGpuSeconds(2, -5, 60)).toBe(0);
  });
  it('time limits are minutes; unset and INFINITE are none', () => {
    expect(timeLimitSeconds(5)).toBe(300);
    expect(timeLimitSeconds(null)).toBeNull();
    expect(timeLimitSeconds(0)).toBeNull();
    expect(timeLimitSeconds(0xffffffff)).toBeNull();
    expect(timeLimitSeconds(0xfffffffe)).toBeNull();
  });
});

describe('statusFromCtld', () => {
  it('a running job (recorded): started, not ended (end_time is a forecast), usage so far', () => {
    const status = statusFromCtld(running, 1796030809 + 100);
    expect(status).toEqual({
      portalJobId: 'portal-run-42',
      schedulerJobId: '3',
      state: 'RUNNING',
      pendingReason: null,
      startedAt: new Date(1796030809 * 1000),
      endedAt: null,
      exitCode: null,
      signal: null,
      nodeList: ['n1'],
      gpuSeconds: 200,
      account: 'portal',
      partition: 'debug',
      gpus: 2,
      elapsedSeconds: 100,
      timeLimitSeconds: 300,
      energyJoules: null,
    });
    // Past the limit the usage so far stops growing.
    expect(statusFromCtld(running, 1796030809 + 1000).gpuSeconds).toBe(600);
  });

  it('a job cancelled while running (recorded): ended by SIGTERM, Slurm 0:15', () => {
    expect(statusFromCtld(cancelled, 1796040000)).toMatchObject({
      state: 'CANCELLED',
      startedAt: new Date(1796030809 * 1000),
      endedAt: new Date(1796030810 * 1000),
      exitCode: 0,
      signal: 15,
      gpuSeconds: 2,
      elapsedSeconds: 1,
    });
  });

  it('a pending job: its reason, no start (start_time is a forecast), nothing used', () => {
    const pending: CtldJob = { ...running, job_state: 'PENDING', state_reason: 'AssocGrpGRESMinutes', nodes: '', tres_alloc_str: '', start_time: 1796031000 };
    expect(statusFromCtld(pending, 1796030900)).toMatchObject({ state: 'PENDING', pendingReason: 'AssocGrpGRESMinutes', startedAt: null, endedAt: null, gpuSeconds: 0, nodeList: [] });
    expect(statusFromCtld({ ...pending, state_reason: 'None' }, 0).pendingReason).toBeNull();
  });

  it('cancelled while pending: start = end, no nodes → never started, 0 GPU-s', () => {
    const job: CtldJob = { ...running, job_state: 'CANCELLED', nodes: '', tres_alloc_str: '', start_time: 1796030900, end_time: 1796030900, exit_code: 0 };
    expect(statusFromCtld(job, 1796031000)).toMatchObject({ state: 'CANCELLED', startedAt: null, endedAt: new Date(1796030900 * 1000), exitCode: null, signal: null, gpuSeconds: 0 });
  });

  it('exit 1 of a failed job, and a 2-node job over all its nodes', () => {
    const job: CtldJob = { ...running, job_state: 'FAILED', exit_code: 256, nodes: 'n[1-2]', node_count: 2, tres_alloc_str: 'cpu=2,node=2,gres/gpu=8', end_time: 1796030869 };
    expect(statusFromCtld(job, 0)).toMatchObject({ state: 'FAILED', exitCode: 1, signal: null, nodeList: ['n1', 'n2'], gpus: 8, gpuSeconds: 8 * 60 });
  });

  it('GPUs from per-node GRES × nodes when the TRES string has none', () => {
    const job: CtldJob = { ...running, tres_alloc_str: 'cpu=2,node=2', tres_per_node: 'gres:gpu:4', node_count: 2, nodes: 'n[1-2]' };
    expect(statusFromCtld(job, 1796030819).gpus).toBe(8);
  });
});

describe('statusFromDb', () => {
  it('the recorded cancelled job: sacct elapsed × GPUs; 0:0 with its batch step\'s SIGTERM; slurmctld\'s wins', () => {
    expect(statusFromDb(dbCancelled, { nowSeconds: 1796040000 })).toEqual({
      portalJobId: 'portal-run-42',
      schedulerJobId: '3',
      state: 'CANCELLED',
      pendingReason: null,
      startedAt: new Date(1796030809 * 1000),
      endedAt: new Date(1796030810 * 1000),
      exitCode: 0,
      signal: 15,
      nodeList: ['n1'],
      gpuSeconds: 2,
      account: 'portal',
      partition: 'debug',
      gpus: 2,
      elapsedSeconds: 1,
      timeLimitSeconds: 300,
      energyJoules: null,
    });
    expect(statusFromDb(dbCancelled, { nowSeconds: 0, ctldExit: exitFromWaitStatus(9) })).toMatchObject({ exitCode: 0, signal: 9 });
  });

  it('the recorded list: a completed job exits 0; a job that never got nodes never started', () => {
    const [completed, , , failed] = dbList.map((r) => statusFromDb(r, { nowSeconds: 1796040000 }));
    expect(completed).toMatchObject({ portalJobId: 'wrap', state: 'COMPLETED', exitCode: 0, gpuSeconds: 4, elapsedSeconds: 2 });
    expect(failed).toMatchObject({ portalJobId: 'allocation', state: 'FAILED', startedAt: null, endedAt: new Date(1796030811 * 1000), gpuSeconds: 0, nodeList: [], exitCode: null, signal: null });
  });

  it('PREEMPTED is its own final state, charged what it ran, ended by the batch step\'s signal', () => {
    // The recorded record as slurmdbd keeps a job whose nodes another job took (PreemptMode=CANCEL: SIGTERM, then the kill).
    const preempted: DbJob = { ...dbCancelled, state: { current: 'PREEMPTED', reason: 'None' } };
    expect(statusFromDb(preempted, { nowSeconds: 1796040000 })).toMatchObject({ state: 'PREEMPTED', startedAt: new Date(1796030809 * 1000), endedAt: new Date(1796030810 * 1000), gpuSeconds: 2, elapsedSeconds: 1, exitCode: 0, signal: 15 });
    expect(statusFromCtld({ ...cancelled, job_state: 'PREEMPTED' }, 0)).toMatchObject({ state: 'PREEMPTED', gpuSeconds: 2, exitCode: 0, signal: 15 });
    // Still releasing its nodes: not final yet.
    expect(jobState('PREEMPTED+COMPLETING').state).toBe('RUNNING');
  });

  it('TIMEOUT is charged GPUs × the limit, not the overrun', () => {
    const record: DbJob = { ...dbCancelled, state: { current: 'TIMEOUT', reason: 'None' }, time: { ...dbCancelled.time, elapsed: 67, end: dbCancelled.time.start! + 67, limit: 1 } };
    expect(statusFromDb(record, { nowSeconds: 0 })).toMatchObject({ state: 'TIMEOUT', elapsedSeconds: 67, gpuSeconds: 120 });
  });

  it('a running record: not ended, usage so far at least now - start', () => {
    const record: DbJob = { ...dbCancelled, state: { current: 'RUNNING', reason: 'None' }, time: { ...dbCancelled.time, elapsed: 0, end: 0 } };
    expect(statusFromDb(record, { nowSeconds: dbCancelled.time.start! + 30 })).toMatchObject({ state: 'RUNNING', endedAt: null, elapsedSeconds: 30, gpuSeconds: 60, exitCode: null });
  });

  it('energy in joules only when measured above 0', () => {
    expect(measuredEnergyJoules(dbCancelled)).toBeNull();
    const withSteps: DbJob = {
      ...dbCancelled,
      steps: [
        { step: { id: 'batch' }, tres: { consumed: { total: [{ type: 'energy', name: null, count: 5000 }] } } },
        { step: { id: 'extern' }, tres: { consumed: { total: [{ type: 'energy', name: null, count: 7200 }] } } },
      ],
    };
    expect(measuredEnergyJoules(withSteps)).toBe(7200);
    expect(statusFromDb(withSteps, { nowSeconds: 0 }).energyJoules).toBe(7200);
    const jobLevel: DbJob = { ...dbCancelled, tres: { allocated: [{ type: 'energy', name: null, count: 9000 }, { type: 'gres', name: 'gpu', count: 2 }] } };
    expect(measuredEnergyJoules(jobLevel)).toBe(9000);
  });
});

describe('job arrays: the task strings Slurm writes', () => {
  // As recorded from slurmctld (array_task_string), squeue (brackets) and slurmdbd (array.task).
  it.each([
    ['4-19%4', 16, true],
    ['[4-19%4]', 16, true],
    ['2-7%2', 6, true],
    ['8-998:2%2', 496, true],
    ['1,3,5-11:2', 6, true],
    ['7', 1, true],
    // libslurm cut it at 64 characters (SLURM_BITSTR_LEN): the indexes shown, not complete.
    ['1,3,6,10,15,21,28,36,45,55,66,78,91,105,120,136,153,171,190,...%1', 19, false],
    // …also inside a number, which is then not counted.
    ['0-3,10,20,30,40,50,60,70,80,90,100,110,120,130,140,150,16...%2', 19, false],
    // What slurmctld leaves on the record once tasks were cancelled by range: names none.
    ['', 0, false],
  ] as const)('%j → %d tasks (complete: %s)', (text, count, complete) => {
    expect(arrayTaskCount(text)).toMatchObject({ count, complete });
    // Complete: the indexes themselves too, so a task counted started is not counted waiting as well.
    expect(arrayTaskCount(text).indexes?.length).toBe(complete ? count : undefined);
  });

  it('lists the indexes of a complete task string', () => {
    expect(arrayTaskCount('1,3,5-11:2%2').indexes).toEqual([1, 3, 5, 7, 9, 11]);
    expect(arrayTaskCount('[4-7]').indexes).toEqual([4, 5, 6, 7]);
  });

  it('slurmdbd\'s bitmap: "0x3FC" → 2…9; "0xF" → 0…3; anything else none', () => {
    expect(arrayBitmapIndexes('0x3FC')).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(arrayBitmapIndexes('0xF')).toEqual([0, 1, 2, 3]);
    expect(arrayBitmapIndexes('0x3C')).toEqual([2, 3, 4, 5]);
    // 0-998:2 less 0 and 2, as recorded while tasks 4 and 6 were starting.
    const sparse = arrayBitmapIndexes(`0x${'5'.repeat(249)}0`);
    expect(sparse.slice(0, 3)).toEqual([4, 6, 8]);
    expect(sparse.at(-1)).toBe(998);
    expect(sparse).toHaveLength(498);
    expect(arrayBitmapIndexes(null)).toEqual([]);
    expect(arrayBitmapIndexes('2-7')).toEqual([]);
  });
});

describe('submitBody', () => {
  const spec: SchedulerJobSpec = {
    portalJobId: 'job-7f3a',
    name: 'train',
    partition: 'h100',
    gpus: 8,
    nodes: 2,
    walltimeSeconds: 3601,
    account: 'contract-account',
    user: 'alice',
    image: 'nvcr.io/nvidia/pytorch:24.01-py3',
    command: "python train.py --name 'it''s'",
    env: { WANDB_MODE: 'offline' },
  };

  it('builds the v0.0.38 body the issue asks for', () => {
    expect(submitBody(spec, { partition: 'gpu', jobDir: '/srv/jobs/', launcher: 'none', now: new Date() })).toEqual({
      script: "#!/bin/bash\npython train.py --name 'it''s'\n",
      job: {
        name: 'job-7f3a',
        account: 'contract-account',
        partition: 'gpu',
        time_limit: 61,
        nodes: [2, 2],
        tasks: 2,
        tasks_per_node: 1,
        gres: 'gpu:4',
        no_requeue: true,
        environment: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', WANDB_MODE: 'offline', SLURM_UMASK: '0027' },
        current_working_directory: '/srv/jobs',
        standard_output: '/srv/jobs/job-7f3a-%j.out',
        comment: 'portal:job-7f3a',
      },
    });
  });

  it("runs a job as its person in its project's folder (SLURM_SUBMIT_AS=person), its files for the project only", () => {
    const opts = { partition: 'gpu', jobDir: '/srv/jobs/', launcher: 'none' as const, now: new Date(), perProject: true };
    const body = submitBody({ ...spec, user: 'alice', group: 'p0123456789abcdef', env: { SLURM_UMASK: '0000' } }, opts);
    expect(body.job).toMatchObject({
      current_working_directory: '/srv/jobs/p0123456789abcdef',
      standard_output: '/srv/jobs/p0123456789abcdef/job-7f3a-%j.out',
      environment: { SLURM_UMASK: '0027' },
    });
    expect(slurmOutputPath('/srv/jobs', 'job-7f3a', '42', 'p0123456789abcdef')).toBe('/srv/jobs/p0123456789abcdef/job-7f3a-42.out');
    expect(() => submitBody({ ...spec, group: undefined }, opts)).toThrow(/project group/);
    expect(() => submitBody({ ...spec, group: '../etc' }, opts)).toThrow(/not a group name/);
  });

  it("asks for the class's QoS, GPU type (typed GRES), constraint and reservation where the catalogue names them", () => {
    const opts = { partition: 'gpu', jobDir: '/j', launcher: 'none' as const, now: new Date() };
    const job = submitBody(spec, { ...opts, classOptions: { qos: 'high', gpuType: 'h100', constraint: 'nvlink&ib', reservation: 'maint-2' } }).job;
    expect(job).toMatchObject({ gres: 'gpu:h100:4', qos: 'high', constraints: 'nvlink&ib', reservation: 'maint-2' });
    const plain = submitBody(spec, opts).job;
    expect(plain).toMatchObject({ gres: 'gpu:4' });
    for (const key of ['qos', 'constraints', 'reservation']) expect(plain).not.toHaveProperty(key);
  });

  it('lets Slurm requeue the job only where the site allows it (SLURM_REQUEUE=on)', () => {
    const opts = { partition: 'gpu', jobDir: '/j', launcher: 'none' as const, now: new Date() };
    expect(submitBody(spec, opts).job).toMatchObject({ no_requeue: true });
    expect(submitBody(spec, { ...opts, requeue: false }).job).toMatchObject({ no_requeue: true });
    // `requeue: false` is never sent: slurmrestd 22.05 ignores it.
    expect(submitBody(spec, { ...opts, requeue: true }).job).not.toHaveProperty('no_requeue');
    expect(submitBody(spec, { ...opts, requeue: true }).job).not.toHaveProperty('requeue');
  });

  it('an array: Slurm\'s --array text, and each task writes its own file (%A_%a), also in the project\'s folder', () => {
    const opts = { partition: 'gpu', jobDir: '/srv/jobs', launcher: 'none' as const, now: new Date() };
    const job = submitBody({ ...spec, array: { text: '0-19%4' } }, opts).job;
    expect(job).toMatchObject({ array: '0-19%4', standard_output: '/srv/jobs/job-7f3a-%A_%a.out' });
    expect(submitBody(spec, opts).job).not.toHaveProperty('array');
    expect(submitBody({ ...spec, array: { text: '1,3,5-11:2' } }, opts).job).toMatchObject({ array: '1,3,5-11:2' });
    expect(() => submitBody({ ...spec, array: { text: '0-3; rm -rf /' } }, opts)).toThrow(/not an array text/);
    expect(slurmOutputPath('/srv/jobs', 'job-7f3a', '42', null, 7)).toBe('/srv/jobs/job-7f3a-42_7.out');
    expect(slurmOutputPath('/srv/jobs', 'job-7f3a', '42', 'p0123456789abcdef', '%a')).toBe('/srv/jobs/p0123456789abcdef/job-7f3a-42_%a.out');
  });

  it("a job with its working folder (workDir) runs there and writes stdout.log and stderr.log there, appended (a requeued job keeps its earlier attempt's output)", () => {
    const workDir = '/scratch/portal/p0123456789abcdef/jobs/job-7f3a';
    const plain = submitBody(spec, { partition: 'gpu', jobDir: '/srv/jobs/', launcher: 'none', now: new Date() });
    const body = submitBody({ ...spec, workDir }, { partition: 'gpu', jobDir: '/srv/jobs/', launcher: 'none', now: new Date() });
    expect(body).toEqual({
      ...plain,
      job: {
        ...plain.job,
        current_working_directory: workDir,
        standard_output: `${workDir}/stdout.log`,
        standard_error: `${workDir}/stderr.log`,
        open_mode: 'append',
      },
    });
    // As its person too: the folder is the spec's, not SLURM_JOB_DIR/<group>.
    const person = submitBody({ ...spec, group: 'p0123456789abcdef', workDir }, { partition: 'gpu', jobDir: '/srv/jobs', launcher: 'none', now: new Date(), perProject: true });
    expect(person.job).toMatchObject({ current_working_directory: workDir, standard_output: `${workDir}/stdout.log`, standard_error: `${workDir}/stderr.log` });
    // An array's tasks each write their own pair (Slurm's %a: stdout-0.log, stdout-1.log …).
    expect(submitBody({ ...spec, workDir, array: { text: '0-1' } }, { partition: 'gpu', jobDir: '/srv/jobs', launcher: 'none', now: new Date() }).job).toMatchObject({
      array: '0-1',
      current_working_directory: workDir,
      standard_output: `${workDir}/stdout-%a.log`,
      standard_error: `${workDir}/stderr-%a.log`,
      open_mode: 'append',
    });
    // Without one, nothing changes: Slurm's own stderr (into stdout) and open mode.
    expect(plain.job).not.toHaveProperty('standard_error');
    expect(plain.job).not.toHaveProperty('open_mode');
  });

  it('refuses a working folder that is not absolute and normalised, or holds control characters or Slurm file name patterns', () => {
    const opts = { partition: 'gpu', jobDir: '/srv/jobs', launcher: 'none' as const, now: new Date() };
    const bad: [string, RegExp][] = [
      ['', /must be absolute/],
      ['scratch/p01/jobs/j', /must be absolute/],
      ['./jobs/j', /must be absolute/],
      ['/', /not normalised/],
      ['/scratch/p01/jobs/j/', /not normalised/],
      ['/scratch//p01/jobs/j', /not normalised/],
      ['/scratch/./p01/jobs/j', /not normalised/],
      ['/scratch/p01/jobs/../../etc', /not normalised/],
      ['/scratch/p01/jobs/..', /not normalised/],
      ['/scratch/p01/jobs/j\n#SBATCH --uid=0', /control character/],
      ['/scratch/p01/jobs/j\r', /control character/],
      ['/scratch/p01\t/jobs/j', /control character/],
      ['/scratch/p01\u0000/jobs/j', /control character/],
      ['/scratch/p01\u007f/jobs/j', /control character/],
      ['/scratch/p01\u0085/jobs/j', /control character/],
      ['/scratch/100%/jobs/j', /Slurm's file name patterns/],
      ['/scratch/%u/jobs/j', /Slurm's file name patterns/],
      ['/scratch/p01\\/jobs/j', /Slurm's file name patterns/],
    ];
    for (const [workDir, why] of bad) {
      expect(() => submitBody({ ...spec, workDir }, opts), JSON.stringify(workDir)).toThrow(why);
      expect(workDirProblem(workDir), JSON.stringify(workDir)).not.toBeNull();
    }
    for (const workDir of ['/scratch/p0123456789abcdef/jobs/0f9e6a52-3c2b-4d1e-9a7b-5c6d7e8f9a0b', '/a', '/srv/site root/p01/jobs/j.1_x-y', '/srv/Ä/jobs/j']) {
      expect(workDirProblem(workDir), workDir).toBeNull();
      expect(submitBody({ ...spec, workDir }, opts).job?.current_working_directory).toBe(workDir);
    }
  });

  it('leaves gres out for a job without GPUs, lets the spec set PATH, and names output files safely', () => {
    const body = submitBody({ ...spec, portalJobId: 'a b/c', gpus: 0, nodes: 1, env: { PATH: '/opt/bin' } }, { partition: 'cpu', jobDir: '/j', launcher: 'none', now: new Date() });
    expect(body.job).not.toHaveProperty('gres');
    expect(body.job?.environment).toEqual({ PATH: '/opt/bin', SLURM_UMASK: '0027' });
    expect(body.job?.standard_output).toBe('/j/a_b_c-%j.out');
  });

  it('maps begin to begin_time as seconds from the hand-over ("now+N", rounded up: never earlier); a begin passed or absent sends none', () => {
    const now = new Date('2026-12-02T02:00:00Z');
    const opts = { partition: 'gpu', jobDir: '/j', launcher: 'none' as const, now };
    // slurmrestd 22.05 refuses epoch seconds ("Unable to parse time") and reads a clock time in slurmctld's zone.
    expect(submitBody({ ...spec, begin: new Date('2026-12-02T02:02:00Z') }, opts).job?.begin_time).toBe('now+120');
    expect(submitBody({ ...spec, begin: new Date('2026-12-02T02:00:00.250Z') }, opts).job?.begin_time).toBe('now+1');
    expect(submitBody({ ...spec, begin: now }, opts).job).not.toHaveProperty('begin_time');
    expect(submitBody({ ...spec, begin: new Date('2026-12-02T01:00:00Z') }, opts).job).not.toHaveProperty('begin_time');
    expect(submitBody(spec, opts).job).not.toHaveProperty('begin_time');
    expect(slurmBegin(new Date('2026-12-03T02:00:00Z'), now)).toBe('now+86400');
  });

  it('launchers: apptainer and pyxis run the command in the image, one task per node', () => {
    expect(jobScript(spec, 'apptainer')).toBe(
      `#!/bin/bash\nexec srun apptainer exec --nv 'docker://nvcr.io/nvidia/pytorch:24.01-py3' /bin/bash -c ${shellQuote(spec.command)}\n`,
    );
    expect(jobScript({ ...spec, image: '/images/pt.sif' }, 'apptainer')).toContain(`apptainer exec --nv '/images/pt.sif'`);
    expect(jobScript(spec, 'pyxis')).toBe(`#!/bin/bash\nexec srun --container-image='nvcr.io/nvidia/pytorch:24.01-py3' /bin/bash -c ${shellQuote(spec.command)}\n`);
    expect(() => jobScript({ ...spec, image: 'x; rm -rf /' }, 'pyxis')).toThrow(/image/);
  });

  it('shellQuote makes one bash word of anything', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('refuses what Slurm would misread', () => {
    const opts = { partition: 'gpu', jobDir: '/j', launcher: 'none' as const, now: new Date() };
    expect(() => submitBody({ ...spec, gpus: 3 }, opts)).toThrow(/split evenly/);
    expect(() => submitBody({ ...spec, nodes: 0 }, opts)).toThrow(/node count/);
    expect(() => submitBody({ ...spec, walltimeSeconds: 0 }, opts)).toThrow(/walltime/);
    expect(() => submitBody({ ...spec, portalJobId: 'a,b' }, opts)).toThrow(/','/);
    expect(() => submitBody({ ...spec, env: { 'BAD-NAME': 'x' } }, opts)).toThrow(/environment/);
    expect(() => submitBody(spec, { ...opts, jobDir: 'relative' })).toThrow(/absolute/);
    expect(() => submitBody({ ...spec, command: ' ' }, opts)).toThrow(/command/);
  });
});
