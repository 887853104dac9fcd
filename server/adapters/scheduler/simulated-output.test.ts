import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SchedulerJobStatus, SchedulerTaskStatus } from '~/server/core/scheduler/port';
import { baseModelOf, progressLineCount, progressMinute, writeSimulatedOutput, type SimulatedOutputJob } from './simulated-output';

const JOB_ID = '00000000-0000-4000-8000-0000000000a1';
const STARTED = new Date('2026-03-02T10:00:00.000Z');
/** The wall-clock time `seconds` after the start (at the default speed 60, one simulated minute a second). */
const at = (seconds: number) => new Date(STARTED.getTime() + seconds * 1000);

let root: string;
let workDir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sim-output-'));
  workDir = path.join(root, 'jobs', JOB_ID);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function job(over: Partial<SimulatedOutputJob> = {}): SimulatedOutputJob {
  return { jobId: JOB_ID, workDir, kind: 'training', image: 'nvcr.io/nvidia/pytorch:24.05-py3', gpus: 4, arrayTasks: null, ...over };
}

function status(over: Partial<SchedulerJobStatus> = {}): SchedulerJobStatus {
  return {
    portalJobId: JOB_ID,
    schedulerJobId: 'sim-7',
    state: 'RUNNING',
    pendingReason: null,
    startedAt: STARTED,
    endedAt: null,
    exitCode: null,
    signal: null,
    nodeList: ['gpu-a-001', 'gpu-a-002'],
    gpuSeconds: 0,
    energyWh: 0,
    energyMeasured: false,
    siteId: 'site-a',
    ...over,
  };
}

function ended(state: SchedulerJobStatus['state'], seconds: number, exitCode: number | null, signal: number | null): SchedulerJobStatus {
  return status({ state, endedAt: at(seconds), exitCode, signal });
}

const read = (name: string) => readFile(path.join(workDir, name), 'utf8');
const lines = async (name: string) => (await read(name)).split('\n').slice(0, -1);

describe('writeSimulatedOutput: the logs', () => {
  it('grows by appending: each call adds the new lines, the earlier text stays a prefix, the file is never rewritten', async () => {
    let before = '';
    let ino: number | null = null;
    for (const seconds of [0, 5, 6, 30, 31, 120]) {
      await writeSimulatedOutput(job(), status(), at(seconds));
      const text = await read('stdout.log');
      expect(text.startsWith(before)).toBe(true);
      expect(text.length).toBeGreaterThanOrEqual(before.length);
      const st = await stat(path.join(workDir, 'stdout.log'));
      ino ??= st.ino;
      expect(st.ino).toBe(ino);
      // Two lines at the start, then one per simulated minute (one per wall second at speed 60).
      expect(text.split('\n').slice(0, -1)).toHaveLength(2 + seconds);
      before = text;
    }
    const all = await lines('stdout.log');
    expect(all[0]).toBe('2026-03-02T10:00:00.000Z [portal] pulling nvcr.io/nvidia/pytorch:24.05-py3');
    expect(all[1]).toBe('2026-03-02T10:00:00.000Z [portal] running on gpu-a-001, gpu-a-002 with 4 GPU(s)');
    expect(all[2]).toMatch(/^2026-03-02T10:00:01\.000Z \[train\] step 100 {2}loss \d\.\d{3} {2}lr \d\.\d\de-\d {2}throughput \d+ tokens\/s$/);
    expect(all.at(-1)).toMatch(/^2026-03-02T10:02:00\.000Z \[train\] step 12000 /);
  });

  it('writes the same text however the calls are split (deterministic by job id)', async () => {
    await writeSimulatedOutput(job(), status(), at(40));
    const once = await read('stdout.log');
    await rm(workDir, { recursive: true });
    for (const seconds of [3, 17, 40]) await writeSimulatedOutput(job(), status(), at(seconds));
    expect(await read('stdout.log')).toBe(once);
  });

  it('is idempotent: the same status twice writes nothing new', async () => {
    await writeSimulatedOutput(job(), status(), at(30));
    const first = { out: await read('stdout.log'), err: await read('stderr.log'), mtime: (await stat(path.join(workDir, 'stdout.log'))).mtimeMs };
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writeSimulatedOutput(job(), status(), at(30));
    expect(await read('stdout.log')).toBe(first.out);
    expect(await read('stderr.log')).toBe(first.err);
    expect((await stat(path.join(workDir, 'stdout.log'))).mtimeMs).toBe(first.mtime);
  });

  it('a pending job writes nothing and makes no folder', async () => {
    await writeSimulatedOutput(job(), status({ state: 'PENDING', startedAt: null, pendingReason: 'Priority' }), at(30));
    await writeSimulatedOutput(job(), status({ state: 'CANCELLED', startedAt: null, endedAt: at(5) }), at(30));
    expect(existsSync(workDir)).toBe(false);
    // Nor does it throw on a folder it could never use.
    await expect(writeSimulatedOutput(job({ workDir: 'relative/path' }), status({ state: 'PENDING', startedAt: null }), at(30))).resolves.toBeUndefined();
  });

  it('makes the folder (mode 0750) and the logs (0640) when the job starts', async () => {
    await writeSimulatedOutput(job(), status(), at(1));
    expect((await stat(workDir)).mode & 0o777).toBe(0o750 & ~process.umask());
    expect((await stat(path.join(workDir, 'stdout.log'))).mode & 0o777).toBe(0o640 & ~process.umask());
  });

  it('counts time at the simulated speed given', async () => {
    await writeSimulatedOutput(job(), status(), at(150), { speed: 1 });
    // 150 wall seconds at speed 1: two simulated minutes, the second stamped 2 wall minutes in.
    const all = await lines('stdout.log');
    expect(all).toHaveLength(4);
    expect(all[3]).toMatch(/^2026-03-02T10:02:00\.000Z \[train\] step 200 /);
  });

  it.each([
    ['COMPLETED', 0, null, '[portal] finished: exit code 0, Slurm 0:0', null],
    ['FAILED', 3, null, '[portal] the program failed: exit code 3, Slurm 3:0', /^(torch\.OutOfMemoryError|FileNotFoundError): /],
    ['FAILED', 0, 9, '[portal] the program failed: signal 9 (SIGKILL), Slurm 0:9', /oom_kill event in StepId=sim-7\.batch/],
    ['TIMEOUT', 0, 15, '[portal] walltime reached, the job was stopped (TIMEOUT): signal 15 (SIGTERM), Slurm 0:15', /^slurmstepd: error: \*\*\* JOB sim-7 ON gpu-a-001 CANCELLED AT 2026-03-02T10:00:45 DUE TO TIME LIMIT \*\*\*$/],
    ['NODE_FAIL', null, null, '[portal] a node failed, the job was stopped (NODE_FAIL)', /DUE TO NODE FAILURE/],
    ['CANCELLED', 0, 15, '[portal] cancelled: signal 15 (SIGTERM), Slurm 0:15', /CANCELLED AT 2026-03-02T10:00:45 \*\*\*$/],
  ] as const)('a %s job (%j:%j) ends its log with how it ended, once; stderr says why', async (state, exitCode, signal, last, reason) => {
    await writeSimulatedOutput(job(), status(), at(30));
    const running = await read('stdout.log');
    const runningErr = await read('stderr.log');
    await writeSimulatedOutput(job(), ended(state, 45, exitCode, signal), at(47));
    const out = await lines('stdout.log');
    expect((await read('stdout.log')).startsWith(running)).toBe(true);
    // The progress up to the end (45 simulated minutes), then the last line stamped with the end.
    expect(out).toHaveLength(2 + 45 + 1);
    expect(out.at(-1)).toBe(`2026-03-02T10:00:45.000Z ${last}`);
    const err = await read('stderr.log');
    expect(err.startsWith(runningErr)).toBe(true);
    if (reason) expect(err.split('\n').slice(0, -1).at(-1)).toMatch(reason);
    else expect(err).toBe(runningErr);
    // The final status again (the reconciler's last call repeated) changes nothing.
    const final = { out: await read('stdout.log'), err };
    await writeSimulatedOutput(job(), ended(state, 45, exitCode, signal), at(60));
    expect(await read('stdout.log')).toBe(final.out);
    expect(await read('stderr.log')).toBe(final.err);
  });

  it('a file that ran ahead of the end (the caller clock later than the scheduler) keeps its lines and gets the ending once', async () => {
    await writeSimulatedOutput(job(), status(), at(50));
    await writeSimulatedOutput(job(), ended('COMPLETED', 45, 0, null), at(51));
    await writeSimulatedOutput(job(), ended('COMPLETED', 45, 0, null), at(52));
    const out = await lines('stdout.log');
    expect(out).toHaveLength(2 + 50 + 1);
    expect(out.filter((l) => l.includes('[portal] finished'))).toHaveLength(1);
    expect(out.at(-1)).toBe('2026-03-02T10:00:45.000Z [portal] finished: exit code 0, Slurm 0:0');
  });

  it('a log deleted while the job runs is written again whole; one cut short is finished', async () => {
    await writeSimulatedOutput(job(), status(), at(20));
    const whole = await read('stdout.log');
    await rm(path.join(workDir, 'stdout.log'));
    await writeSimulatedOutput(job(), status(), at(20));
    expect(await read('stdout.log')).toBe(whole);
    await truncate(path.join(workDir, 'stdout.log'), whole.length - 17);
    await writeSimulatedOutput(job(), status(), at(20));
    expect(await read('stdout.log')).toBe(whole);
  });

  it('stderr starts with a few library warnings, none naming the host', async () => {
    await writeSimulatedOutput(job(), status(), at(1));
    const err = await read('stderr.log');
    expect(err).toContain('NCCL WARN');
    expect(err).toContain('UserWarning');
    expect(err).not.toContain(os.hostname());
    expect(err).not.toContain(os.homedir());
    expect(err).not.toContain(root);
    await writeSimulatedOutput(job({ kind: 'inference', workDir: path.join(root, 'serve') }), status(), at(3));
    const serve = await readFile(path.join(root, 'serve', 'stdout.log'), 'utf8');
    expect(serve).toMatch(/\[serve\] t\+3 min {2}requests\/s \d+ {2}p95 latency \d+ ms\n$/);
    expect(await readFile(path.join(root, 'serve', 'stderr.log'), 'utf8')).toMatch(/^WARNING 03-02 10:00:00 /);
  });
});

describe('writeSimulatedOutput: arrays', () => {
  function task(index: number, over: Partial<SchedulerTaskStatus> = {}): SchedulerTaskStatus {
    return { index, schedulerJobId: `sim-7_${index}`, state: 'RUNNING', startedAt: STARTED, endedAt: null, exitCode: null, signal: null, nodeList: [`gpu-a-00${index}`], gpuSeconds: 0, energyWh: 0, ...over };
  }

  it('each started task writes its own pair of files; waiting tasks and the array as a whole none', async () => {
    const tasks = [task(0), task(1, { state: 'COMPLETED', startedAt: at(2), endedAt: at(12), exitCode: 0 })];
    await writeSimulatedOutput(job({ arrayTasks: 3 }), status({ tasks, tasksWaiting: 1 }), at(20));
    expect((await readdir(workDir)).sort()).toEqual(['checkpoint-1', 'stderr-0.log', 'stderr-1.log', 'stdout-0.log', 'stdout-1.log']);
    const zero = await lines('stdout-0.log');
    const one = await lines('stdout-1.log');
    expect(zero[0]).toBe('2026-03-02T10:00:00.000Z [portal] array task 0 of 3');
    expect(zero).toHaveLength(3 + 20);
    expect(one[0]).toBe('2026-03-02T10:00:02.000Z [portal] array task 1 of 3');
    expect(one).toHaveLength(3 + 10 + 1);
    expect(one.at(-1)).toBe('2026-03-02T10:00:12.000Z [portal] finished: exit code 0, Slurm 0:0');
    // Each task has its own figures (seeded by `<job id>_<index>`).
    expect(zero[3]!.slice(25)).not.toBe(one[3]!.slice(25));

    // The next call: the running task grows, the ended one stays as it is.
    const endedText = await read('stdout-1.log');
    await writeSimulatedOutput(job({ arrayTasks: 3 }), status({ tasks, tasksWaiting: 1 }), at(25));
    expect(await lines('stdout-0.log')).toHaveLength(3 + 25);
    expect(await read('stdout-1.log')).toBe(endedText);
  });

  it('an array with no task started yet writes nothing', async () => {
    await writeSimulatedOutput(job({ arrayTasks: 3 }), status({ state: 'PENDING', startedAt: null, tasks: [], tasksWaiting: 3 }), at(20));
    expect(existsSync(workDir)).toBe(false);
  });
});

/** Reads a safetensors file back: the header, and checks its tensors' data cover the data exactly, in order, without gaps. */
function parseSafetensors(bytes: Buffer): { header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>; metadata: unknown } {
  const length = Number(bytes.readBigUInt64LE(0));
  expect(length % 8).toBe(0);
  const { __metadata__: metadata, ...header } = JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const dataLength = bytes.length - 8 - length;
  const spans = Object.values(header)
    .map((t) => t.data_offsets)
    .sort((a, b) => a[0] - b[0]);
  let next = 0;
  for (const [begin, end] of spans) {
    expect(begin).toBe(next);
    next = end;
  }
  expect(next).toBe(dataLength);
  for (const t of Object.values(header)) {
    const size = t.dtype === 'F32' ? 4 : t.dtype === 'F16' ? 2 : Number.NaN;
    expect(size).not.toBeNaN();
    expect(t.data_offsets[1] - t.data_offsets[0]).toBe(t.shape.reduce((a, b) => a * b, 1) * size);
  }
  return { header, metadata };
}

describe('writeSimulatedOutput: what a completed job leaves', () => {
  const fineTuning = () => job({ kind: 'fine_tuning', image: 'ghcr.io/acme/llama-3-8b-sft:2026.03' });

  it('a completed fine-tuning job writes metrics.jsonl and a LoRA adapter (a valid safetensors file)', async () => {
    await writeSimulatedOutput(fineTuning(), status(), at(30));
    expect(existsSync(path.join(workDir, 'model'))).toBe(false);
    await writeSimulatedOutput(fineTuning(), ended('COMPLETED', 90, 0, null), at(91));

    const metrics = (await lines('metrics.jsonl')).map((l) => JSON.parse(l) as { step: number; loss: number; learning_rate: number; tokens_per_second: number });
    expect(metrics).toHaveLength(90);
    for (const m of metrics) expect(Object.keys(m).sort()).toEqual(['learning_rate', 'loss', 'step', 'tokens_per_second']);
    expect(metrics[0]!.step).toBe(100);
    expect(metrics.at(-1)!.loss).toBeLessThan(metrics[0]!.loss);
    // The same figures as the log's progress lines.
    expect((await lines('stdout.log'))[2]).toContain(`loss ${metrics[0]!.loss.toFixed(3)}`);

    const config = JSON.parse(await read('model/adapter_config.json')) as Record<string, unknown>;
    expect(config).toMatchObject({ peft_type: 'LORA', r: 8, lora_alpha: 16, target_modules: ['q_proj', 'v_proj'], base_model_name_or_path: 'acme/llama-3-8b-sft', task_type: 'CAUSAL_LM' });

    const bytes = await readFile(path.join(workDir, 'model', 'adapter_model.safetensors'));
    expect(bytes.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(bytes.length).toBeLessThanOrEqual(512 * 1024);
    const { header, metadata } = parseSafetensors(bytes);
    expect(metadata).toEqual({ format: 'pt' });
    expect(header['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toMatchObject({ dtype: 'F32', shape: [8, 1024] });
    expect(header['base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight']).toMatchObject({ dtype: 'F16', shape: [1024, 8] });
    // No temporary file left behind.
    expect((await readdir(workDir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect((await readdir(path.join(workDir, 'model'))).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
  });

  it('writes the artefacts once: what is there is left alone', async () => {
    await mkdir(path.join(workDir, 'model'), { recursive: true });
    await writeFile(path.join(workDir, 'model', 'adapter_config.json'), '{}');
    await writeSimulatedOutput(fineTuning(), ended('COMPLETED', 10, 0, null), at(11));
    expect(await read('model/adapter_config.json')).toBe('{}');
    const adapter = await readFile(path.join(workDir, 'model', 'adapter_model.safetensors'));
    const mtime = (await stat(path.join(workDir, 'model', 'adapter_model.safetensors'))).mtimeMs;
    await writeSimulatedOutput(fineTuning(), ended('COMPLETED', 10, 0, null), at(12));
    expect(await readFile(path.join(workDir, 'model', 'adapter_model.safetensors'))).toEqual(adapter);
    expect((await stat(path.join(workDir, 'model', 'adapter_model.safetensors'))).mtimeMs).toBe(mtime);
  });

  it('the adapter is the same for the same job, wherever it is written (deterministic bytes)', async () => {
    await writeSimulatedOutput(fineTuning(), ended('COMPLETED', 10, 0, null), at(11));
    const other = path.join(root, 'again');
    await writeSimulatedOutput({ ...fineTuning(), workDir: other }, ended('COMPLETED', 10, 0, null), at(11));
    expect(await readFile(path.join(other, 'model', 'adapter_model.safetensors'))).toEqual(await readFile(path.join(workDir, 'model', 'adapter_model.safetensors')));
    expect(await readFile(path.join(other, 'metrics.jsonl'))).toEqual(await readFile(path.join(workDir, 'metrics.jsonl')));
  });

  it('a completed training job writes a small checkpoint; a failed fine-tuning nothing', async () => {
    await writeSimulatedOutput(job(), ended('COMPLETED', 10, 0, null), at(11));
    const checkpoint = await readFile(path.join(workDir, 'checkpoint', 'model.safetensors'));
    expect(checkpoint.length).toBeLessThan(128 * 1024);
    expect(Object.keys(parseSafetensors(checkpoint).header)).toContain('model.embed_tokens.weight');

    const other = path.join(root, 'failed');
    await writeSimulatedOutput(job({ kind: 'fine_tuning', workDir: other }), ended('FAILED', 10, 1, null), at(11));
    expect((await readdir(other)).sort()).toEqual(['stderr.log', 'stdout.log']);
  });

  it.each([
    ['nvcr.io/nvidia/pytorch:24.05-py3', 'nvidia/pytorch'],
    ['localhost:5000/team/model:1', 'team/model'],
    ['acme/llama@sha256:abc', 'acme/llama'],
    ['python:3.12', 'python'],
  ])('names the base model of %s %s', (image, model) => {
    expect(baseModelOf(image)).toBe(model);
  });
});

describe('writeSimulatedOutput: links and other things planted in the folder', () => {
  it('a symlink planted as stdout.log is not followed: the file outside is unchanged', async () => {
    await mkdir(workDir, { recursive: true });
    const outside = path.join(root, 'outside.txt');
    await writeFile(outside, 'keep me\n');
    await symlink(outside, path.join(workDir, 'stdout.log'));
    await writeSimulatedOutput(job(), status(), at(30));
    await writeSimulatedOutput(job(), ended('COMPLETED', 40, 0, null), at(41));
    expect(await readFile(outside, 'utf8')).toBe('keep me\n');
    expect((await lstat(path.join(workDir, 'stdout.log'))).isSymbolicLink()).toBe(true);
    // The other files are written as usual.
    expect(await read('stderr.log')).toContain('UserWarning');
  });

  it('a symlink planted as a dangling stderr.log is not followed (nothing made at its target)', async () => {
    await mkdir(workDir, { recursive: true });
    const target = path.join(root, 'made-by-link.txt');
    await symlink(target, path.join(workDir, 'stderr.log'));
    await writeSimulatedOutput(job(), status(), at(5));
    expect(existsSync(target)).toBe(false);
  });

  it('a symlink planted as model/ or metrics.jsonl is not written through', async () => {
    await mkdir(workDir, { recursive: true });
    const outsideDir = path.join(root, 'outside-dir');
    await mkdir(outsideDir);
    await symlink(outsideDir, path.join(workDir, 'model'));
    const outside = path.join(root, 'outside.jsonl');
    await writeFile(outside, 'keep\n');
    await symlink(outside, path.join(workDir, 'metrics.jsonl'));
    await writeSimulatedOutput(job({ kind: 'fine_tuning' }), ended('COMPLETED', 10, 0, null), at(11));
    expect(await readdir(outsideDir)).toEqual([]);
    expect(await readFile(outside, 'utf8')).toBe('keep\n');
  });

  it('a FIFO planted as stdout.log does not block the call', async () => {
    await mkdir(workDir, { recursive: true });
    execFileSync('mkfifo', [path.join(workDir, 'stdout.log')]);
    await writeSimulatedOutput(job(), status(), at(5));
    expect(await read('stderr.log')).toContain('UserWarning');
  });

  it('a workDir that is a symlink (to a folder) gets nothing', async () => {
    const real = path.join(root, 'real');
    await mkdir(real);
    await mkdir(path.dirname(workDir), { recursive: true });
    await symlink(real, workDir);
    await writeSimulatedOutput(job(), status(), at(30));
    await writeSimulatedOutput(job({ kind: 'fine_tuning' }), ended('COMPLETED', 40, 0, null), at(41));
    expect(await readdir(real)).toEqual([]);
  });

  it('a workDir that is a dangling symlink or a file gets nothing, and the call does not throw', async () => {
    await mkdir(path.dirname(workDir), { recursive: true });
    const target = path.join(root, 'nowhere');
    await symlink(target, workDir);
    await expect(writeSimulatedOutput(job(), status(), at(30))).resolves.toBeUndefined();
    expect(existsSync(target)).toBe(false);
    await rm(workDir);
    await writeFile(workDir, 'a file');
    await expect(writeSimulatedOutput(job(), status(), at(30))).resolves.toBeUndefined();
    expect(await readFile(workDir, 'utf8')).toBe('a file');
  });
});

describe('the log stays bounded', () => {
  it.each([
    [0, 0],
    [59, 0],
    [60, 1],
    [5000 * 60, 5000],
    [5059 * 60, 5000],
    [5060 * 60, 5001],
    [1e12, 10_000],
  ])('after %d simulated seconds, %d progress lines', (seconds, count) => {
    expect(progressLineCount(seconds)).toBe(count);
  });

  it('one line a minute, then one an hour; the count and the minutes agree', () => {
    expect([1, 5000, 5001, 5002].map(progressMinute)).toEqual([1, 5000, 5060, 5120]);
    for (const n of [1, 4999, 5000, 5001, 7000, 10_000]) expect(progressLineCount(progressMinute(n) * 60)).toBe(n);
  });
});
