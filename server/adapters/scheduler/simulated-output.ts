// The simulated cluster's job output as real files in the job's working folder, as slurmd would write
// them: `stdout.log` and `stderr.log` (an array's task `stdout-<i>.log`, `stderr-<i>.log`), and what a
// completed fine-tuning (`metrics.jsonl`, a LoRA adapter in `model/`) or training job (`checkpoint/`) leaves.
//
// Called for every open job about once a second with its latest status, and once more with the final one.
// Each call brings the files up to the time the job has run: the whole text for that time is a pure
// function of the job and its status (core/jobs/synthetic-output.ts), a later time's text extends an
// earlier one's, so a call writes only the bytes beyond what the file holds (its size, by fstat: nothing
// is read but a final line's few bytes). A second call with the same status writes nothing.
//
// The folder is hostile input (a job's user may plant a symlink in it): the folder itself is opened with
// O_NOFOLLOW | O_DIRECTORY and every file is opened through that handle (`/proc/self/fd/N/name`, Linux,
// as server/services/files/workspace.ts) with O_NOFOLLOW, so no link is followed on the way or at the end;
// a folder that is a link, or not a folder, gets nothing. Artefacts are written to a temporary name and
// renamed, so a reader never sees half a file.
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { outputFileName } from '~/server/core/files/job-folder';
import { hashToUnit, type JobKind } from '~/server/core/jobs/estimates';
import { lastLine, progressText, startLines, syntheticProgress, type Progress } from '~/server/core/jobs/synthetic-output';
import { isFinalState, type SchedulerJobState, type SchedulerJobStatus } from '~/server/core/scheduler/port';

export interface SimulatedOutputJob {
  /** The portal's job id. */
  jobId: string;
  /** The job's folder, absolute (made with its parents if missing). */
  workDir: string;
  kind: JobKind;
  image: string;
  /** GPUs per job (an array's: per task). */
  gpus: number;
  /** A job array's number of tasks, null for a plain job. */
  arrayTasks: number | null;
  /** Inputs picked from the workspace (absolute paths): the log says it reads them. */
  inputs?: string[];
}

/**
 * The timing. `startedAt` and `endedAt` are wall-clock dates the simulated cluster maps from simulated time
 * (simulated.ts `wallDateAt`: wall = anchor + simulated / speed), so a job that has run w wall seconds has
 * run w × speed simulated seconds. The log prints one progress line per simulated minute: at the default
 * SIM_SPEED of 60 that is one line per wall second, so a job open in the browser visibly grows its log at
 * every poll; at speed 1 (real time) one a minute, as a real training loop logs. A line is stamped with the
 * wall-clock time it stands for (startedAt + minute × 60 s / speed), which is how the job page shows the
 * job's start and end. Bounded: one line a minute for the first MINUTE_LINES minutes (83 simulated hours),
 * then one an hour, at most MAX_PROGRESS_LINES in all (a job of months writes about a megabyte).
 */
export const DEFAULT_SIM_SPEED = 60;
const MINUTE_LINES = 5000;
const LATER_EVERY_MINUTES = 60;
const MAX_PROGRESS_LINES = 10_000;

const FILE_MODE = 0o640;
const DIR_MODE = 0o750;
const NOFOLLOW_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO planted under a log's name fails at once (ENXIO) instead of blocking the caller.
// Not O_APPEND: the new bytes are written at the offset the call computed from, so two callers racing
// (two worker processes) write the same bytes at the same place instead of appending them twice.
const LOG_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Errors that mean "not a place we write to" (a link, not a folder or file, gone, a FIFO): nothing is written, nothing thrown. */
const NOT_OURS = new Set(['ELOOP', 'ENOTDIR', 'ENOENT', 'ENXIO', 'EISDIR', 'EMLINK']);

/** progressMinute is the simulated minute the n-th progress line (1-based) stands for. */
export function progressMinute(n: number): number {
  return n <= MINUTE_LINES ? n : MINUTE_LINES + (n - MINUTE_LINES) * LATER_EVERY_MINUTES;
}

/** progressLineCount is how many progress lines a job has printed after running simSeconds simulated seconds. */
export function progressLineCount(simSeconds: number): number {
  const minutes = Math.floor(simSeconds / 60);
  if (minutes <= MINUTE_LINES) return Math.max(0, minutes);
  return Math.min(MAX_PROGRESS_LINES, MINUTE_LINES + Math.floor((minutes - MINUTE_LINES) / LATER_EVERY_MINUTES));
}

/** One run that writes files: the plain job, or one started task of an array. */
interface Run {
  /** The array task's index, undefined for a plain job. */
  task: number | undefined;
  /** What its figures are seeded by: the job id, a task's `<job id>_<index>` (Slurm's name for it). */
  seedId: string;
  schedulerJobId: string;
  state: SchedulerJobState;
  startedAt: Date;
  endedAt: Date | null;
  exitCode: number | null;
  signal: number | null;
  nodeList: string[];
}

function runsOf(job: SimulatedOutputJob, status: SchedulerJobStatus): Run[] {
  if (job.arrayTasks !== null) {
    return (status.tasks ?? []).flatMap((t) =>
      t.startedAt === null || t.state === 'PENDING'
        ? []
        : [{ task: t.index, seedId: `${job.jobId}_${t.index}`, schedulerJobId: t.schedulerJobId, state: t.state, startedAt: t.startedAt, endedAt: t.endedAt, exitCode: t.exitCode, signal: t.signal, nodeList: t.nodeList }],
    );
  }
  if (status.startedAt === null || status.state === 'PENDING') return [];
  return [{ task: undefined, seedId: job.jobId, schedulerJobId: status.schedulerJobId, state: status.state, startedAt: status.startedAt, endedAt: status.endedAt, exitCode: status.exitCode, signal: status.signal, nodeList: status.nodeList }];
}

/**
 * writeSimulatedOutput brings a simulated job's files up to date with its status at `now` (see the top of
 * this file). `speed`: the simulated cluster's SIM_SPEED. A job that has not started writes nothing (no
 * folder is made); a workDir that is a link or not a folder gets nothing. Throws on other filesystem
 * errors (no permission, disk full): the caller logs them.
 */
export async function writeSimulatedOutput(job: SimulatedOutputJob, status: SchedulerJobStatus, now: Date, options: { speed?: number } = {}): Promise<void> {
  const runs = runsOf(job, status);
  if (runs.length === 0) return;
  const speed = options.speed ?? DEFAULT_SIM_SPEED;
  if (!(Number.isFinite(speed) && speed > 0)) throw new Error(`writeSimulatedOutput: speed must be positive (got ${speed})`);
  if (!path.isAbsolute(job.workDir)) throw new Error(`writeSimulatedOutput: workDir must be absolute (got ${JSON.stringify(job.workDir)})`);
  // Made only when nothing is at its name: a link or a file there is left for the open below to refuse.
  if (!(await exists(job.workDir))) {
    try {
      await mkdir(job.workDir, { recursive: true, mode: DIR_MODE });
    } catch (error) {
      if (!NOT_OURS.has(codeOf(error) ?? '') && codeOf(error) !== 'EEXIST') throw error;
    }
  }
  const folder = await openFolder(job.workDir);
  if (!folder) return;
  try {
    for (const run of runs) {
      // An array's ended tasks come back with every call of the array (a thousand tasks: two thousand
      // files a second): brought to their end once, then not opened again by this process.
      const doneKey = run.task === undefined ? null : `${job.workDir}\0${run.task}\0${run.startedAt.getTime()}`;
      if (doneKey !== null && finishedTasks.has(doneKey)) continue;
      await writeRun(folder, job, run, now, speed);
      if (doneKey !== null && isFinalState(run.state)) remember(finishedTasks, doneKey, true);
    }
  } finally {
    await folder.close();
  }
}

async function writeRun(folder: Folder, job: SimulatedOutputJob, run: Run, now: Date, speed: number): Promise<void> {
  const final = isFinalState(run.state);
  const endMs = final ? (run.endedAt ?? now).getTime() : now.getTime();
  const simSeconds = Math.max(0, ((endMs - run.startedAt.getTime()) * speed) / 1000);
  const progressInput = { jobId: run.seedId, kind: job.kind, gpus: job.gpus };
  const stamp = (ms: number) => `${new Date(ms).toISOString()} `;
  const startMs = run.startedAt.getTime();

  const head = [...(run.task === undefined ? [] : [`[portal] array task ${run.task} of ${job.arrayTasks ?? '?'}`]), ...startLines({ image: job.image, nodeList: run.nodeList, gpus: job.gpus }), ...(job.inputs ?? []).map((p) => `[portal] reading input ${p}`)].map((l) => `${stamp(startMs)}${l}\n`);
  const stdout: Sequence = {
    key: `${startMs}`,
    total: head.length + MAX_PROGRESS_LINES,
    count: head.length + progressLineCount(simSeconds),
    lineAt: (j) => {
      if (j < head.length) return head[j]!;
      const minute = progressMinute(j - head.length + 1);
      return `${stamp(startMs + Math.round((minute * 60_000) / speed))}${progressText(syntheticProgress(progressInput, minute))}\n`;
    },
  };
  const last = final ? lastLine(run.state, run.exitCode, run.signal) : null;
  await bringUpToDate(folder, outputFileName('stdout', run.task), stdout, final ? (last === null ? '' : `${stamp(endMs)}${last}\n`) : null);

  const warnings = startWarnings(job, run).map((l) => `${l}\n`);
  const stderr: Sequence = { key: `${startMs}`, total: warnings.length, count: warnings.length, lineAt: (j) => warnings[j]! };
  await bringUpToDate(folder, outputFileName('stderr', run.task), stderr, final ? endReason(job, run, endMs).map((l) => `${l}\n`).join('') : null);

  if (run.state === 'COMPLETED') await writeArtefacts(folder, job, run, simSeconds);
}

// ---- the logs, appended ----

/** A log's text as lines: `count` of them now, `total` the most it ever has; line j (with its newline) by `lineAt`. */
interface Sequence {
  /** Changes when the lines do (the start time stamps them): a cached position is for one key. */
  key: string;
  total: number;
  count: number;
  lineAt: (j: number) => string;
}

/**
 * Where the last call left each log: how many lines of its sequence and how many bytes the file then held.
 * Without it every call would format every line again to find where the file ends (5,000 lines a job a
 * second); with it a call formats only the new ones. Checked against the file's size, so a stale or
 * foreign entry only costs the walk from the start. Bounded; a log's entry goes when its job ends.
 */
const positions = new Map<string, { key: string; lines: number; bytes: number }>();
/** The array tasks whose files were brought to their end in this process. */
const finishedTasks = new Map<string, true>();
/** The most entries each of these keeps (the oldest goes first): a few hundred kilobytes. */
const MAX_REMEMBERED = 10_000;

/**
 * bringUpToDate makes a log hold its sequence's first `count` lines and, once the run has ended (`ending` not null), `ending`:
 * it writes only what the file does not hold yet, at its end. A file that already holds more lines than
 * `count` (its job ran on a moment after the caller's clock, a speed change) keeps them; the ending
 * follows them, once (the file's last bytes are compared with it).
 */
async function bringUpToDate(folder: Folder, name: string, sequence: Sequence, ending: string | null): Promise<void> {
  const file = await folder.openFile(name, LOG_FLAGS);
  if (!file) return;
  const cacheKey = `${folder.dir}\0${name}`;
  try {
    const st = await file.stat();
    if (!st.isFile()) return;
    const size = st.size;
    const endBytes = Buffer.from(ending ?? '');
    if (endBytes.length > 0 && size >= endBytes.length) {
      const tail = Buffer.alloc(endBytes.length);
      await file.read(tail, 0, tail.length, size - tail.length);
      if (tail.equals(endBytes)) return;
    }
    // How many whole lines of the sequence the file holds.
    const cached = positions.get(cacheKey);
    let lines = 0;
    let bytes = 0;
    if (cached && cached.key === sequence.key && cached.bytes <= size) ({ lines, bytes } = cached);
    let partial: Buffer | null = null;
    while (lines < sequence.total) {
      const line = Buffer.from(sequence.lineAt(lines));
      if (bytes + line.length > size) {
        // A line cut short (a write interrupted): finish it.
        if (bytes < size) partial = line.subarray(size - bytes);
        break;
      }
      bytes += line.length;
      lines++;
    }
    const parts: Buffer[] = [];
    if (partial) {
      parts.push(partial);
      lines++;
      bytes = size + partial.length;
    }
    for (; lines < sequence.count; lines++) {
      const line = Buffer.from(sequence.lineAt(lines));
      parts.push(line);
      bytes += line.length;
    }
    parts.push(endBytes);
    const out = Buffer.concat(parts);
    let written = 0;
    while (written < out.length) written += (await file.write(out, written, out.length - written, size + written)).bytesWritten;
    if (ending !== null) positions.delete(cacheKey);
    else remember(positions, cacheKey, { key: sequence.key, lines, bytes: Math.max(bytes, size) });
  } finally {
    await file.close();
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_REMEMBERED) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

// ---- stderr: what libraries warn about as the job starts, and why it ended ----

function startWarnings(job: SimulatedOutputJob, run: Run): string[] {
  const node = run.nodeList[0] ?? 'node-0';
  const pid = 2000 + Math.floor(hashToUnit(`${run.seedId}:pid`) * 60_000);
  const lines: string[] = [];
  if (job.kind === 'inference') {
    const at = run.startedAt.toISOString();
    const vllm = `${at.slice(5, 7)}-${at.slice(8, 10)} ${at.slice(11, 19)}`;
    lines.push(
      `WARNING ${vllm} [arg_utils.py:1230] The model has a long context length (131072). This may cause OOM during the initial memory profiling phase, or result in low performance due to small KV cache size. Consider setting --max-model-len to a smaller value.`,
      `WARNING ${vllm} [config.py:1256] Possibly too large swap space. 4.00 GiB out of the 31.26 GiB total CPU memory is allocated for the swap space.`,
    );
    return lines;
  }
  if (job.gpus > 1) {
    lines.push(
      'WARNING:torch.distributed.run:',
      '*****************************************',
      'Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ',
      '*****************************************',
      `${node}:${pid}:${pid} [0] NCCL WARN NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.`,
    );
  }
  if (job.kind === 'fine_tuning') {
    lines.push(
      'Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.',
      '`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.',
      '/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.',
      '  warnings.warn(',
    );
  } else {
    lines.push(
      '/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()',
      '  return self.fget.__get__(instance, owner)()',
    );
    if (job.gpus > 1) lines.push(`[rank0]:[W reducer.cpp:1389] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration, which can adversely affect performance. If your model indeed never has any unused parameters in the forward pass, consider turning this flag off. (function operator())`);
  }
  return lines;
}

/** Slurm's time in its messages: local ISO without the zone (here UTC). */
function slurmTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

function endReason(job: SimulatedOutputJob, run: Run, endMs: number): string[] {
  const cancelled = (why: string) => [`slurmstepd: error: *** JOB ${run.schedulerJobId} ON ${run.nodeList[0] ?? 'node-0'} CANCELLED AT ${slurmTime(endMs)}${why} ***`];
  switch (run.state) {
    case 'TIMEOUT':
      return cancelled(' DUE TO TIME LIMIT');
    case 'NODE_FAIL':
      return cancelled(' DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS');
    case 'PREEMPTED':
      return cancelled(' DUE TO PREEMPTION');
    case 'CANCELLED':
      return cancelled('');
    case 'FAILED':
      if (run.signal === 9) return [`slurmstepd: error: Detected 1 oom_kill event in StepId=${run.schedulerJobId}.batch. Some of the step tasks have been OOM Killed.`];
      return traceback(job, run);
    default:
      return [];
  }
}

function traceback(job: SimulatedOutputJob, run: Run): string[] {
  if (job.kind === 'inference') {
    return [
      'Traceback (most recent call last):',
      '  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/openai/api_server.py", line 585, in run_server',
      '    async with build_async_engine_client(args) as engine_client:',
      'ValueError: The model\'s max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (42304). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.',
    ];
  }
  const script = job.kind === 'batch' ? 'run.py' : 'train.py';
  const frames = ['Traceback (most recent call last):', `  File "/workspace/${script}", line 212, in <module>`, '    main()', `  File "/workspace/${script}", line 188, in main`];
  if (hashToUnit(`${run.seedId}:failure`) < 0.5) {
    return [
      ...frames,
      '    loss.backward()',
      '  File "/usr/local/lib/python3.10/dist-packages/torch/_tensor.py", line 521, in backward',
      '    torch.autograd.backward(',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.22 GiB is free. Including non-PyTorch memory, this process has 77.87 GiB memory in use. Of the allocated memory 74.31 GiB is allocated by PyTorch, and 2.05 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.',
    ];
  }
  return [
    ...frames,
    '    dataset = load_dataset("json", data_files=args.data)',
    '  File "/usr/local/lib/python3.10/dist-packages/datasets/load.py", line 2129, in load_dataset',
    '    builder_instance = load_dataset_builder(',
    "FileNotFoundError: Unable to find 'data/train.jsonl'",
  ];
}

// ---- what a completed job leaves: metrics, a LoRA adapter, a checkpoint ----

const LORA_RANK = 8;
const LORA_ALPHA = 16;
const LORA_TARGETS = ['q_proj', 'v_proj'] as const;
const LORA_LAYERS = 2;
/** A small stand-in for a model's hidden size: 2 layers × 2 modules × (A in F32 + B in F16) = 192 KiB. */
const HIDDEN = 1024;

async function writeArtefacts(folder: Folder, job: SimulatedOutputJob, run: Run, simSeconds: number): Promise<void> {
  // An array's tasks each leave their own (`model-3/`), as a sweep writes one output folder per task.
  const suffix = run.task === undefined ? '' : `-${run.task}`;
  if (job.kind === 'fine_tuning') {
    const progressInput = { jobId: run.seedId, kind: job.kind, gpus: job.gpus };
    await writeOnce(folder, `metrics${suffix}.jsonl`, () => {
      const rows: string[] = [];
      for (let n = 1; n <= progressLineCount(simSeconds); n++) {
        const p: Progress = syntheticProgress(progressInput, progressMinute(n));
        if (p.kind !== 'serve') rows.push(`${JSON.stringify({ step: p.step, loss: p.loss, learning_rate: Number(p.learningRate.toPrecision(6)), tokens_per_second: p.tokensPerSecond })}\n`);
      }
      return Buffer.from(rows.join(''));
    });
    await inSubfolder(folder, `model${suffix}`, async (model) => {
      await writeOnce(model, 'adapter_config.json', () => Buffer.from(`${JSON.stringify(adapterConfig(job.image), null, 2)}\n`));
      await writeOnce(model, 'adapter_model.safetensors', () => safetensors(loraTensors(run.seedId), { format: 'pt' }));
    });
  } else if (job.kind === 'training') {
    await inSubfolder(folder, `checkpoint${suffix}`, (checkpoint) => writeOnce(checkpoint, 'model.safetensors', () => safetensors(checkpointTensors(run.seedId), { format: 'pt' })));
  }
}

/** The model a fine-tuning image stands for, as a Hugging Face name: the image's path without registry and tag (`nvcr.io/nvidia/pytorch:24.05-py3` → `nvidia/pytorch`). */
export function baseModelOf(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const parts = withoutDigest.split('/');
  const first = parts[0] ?? '';
  if (parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost')) parts.shift();
  const last = parts.pop() ?? '';
  parts.push(last.split(':')[0] ?? last);
  return parts.join('/');
}

/** adapter_config.json as PEFT's `save_pretrained` writes it for a LoRA adapter. */
function adapterConfig(image: string): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: baseModelOf(image),
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: LORA_ALPHA,
    lora_dropout: 0.05,
    megatron_config: null,
    megatron_core: 'megatron.core',
    modules_to_save: null,
    peft_type: 'LORA',
    r: LORA_RANK,
    rank_pattern: {},
    revision: null,
    target_modules: [...LORA_TARGETS],
    task_type: 'CAUSAL_LM',
    use_dora: false,
    use_rslora: false,
  };
}

type Dtype = 'F32' | 'F16';
interface Tensor {
  name: string;
  dtype: Dtype;
  shape: number[];
  /** Values drawn uniformly from ±scale. */
  scale: number;
}

function loraTensors(seedId: string): (Tensor & { seed: string })[] {
  const tensors: (Tensor & { seed: string })[] = [];
  for (let layer = 0; layer < LORA_LAYERS; layer++) {
    for (const module of LORA_TARGETS) {
      const prefix = `base_model.model.model.layers.${layer}.self_attn.${module}`;
      tensors.push({ name: `${prefix}.lora_A.weight`, dtype: 'F32', shape: [LORA_RANK, HIDDEN], scale: 1 / Math.sqrt(HIDDEN), seed: seedId });
      tensors.push({ name: `${prefix}.lora_B.weight`, dtype: 'F16', shape: [HIDDEN, LORA_RANK], scale: 0.01, seed: seedId });
    }
  }
  return tensors;
}

function checkpointTensors(seedId: string): (Tensor & { seed: string })[] {
  return [
    { name: 'model.embed_tokens.weight', dtype: 'F16', shape: [256, 64], scale: 0.02, seed: seedId },
    { name: 'model.layers.0.mlp.up_proj.weight', dtype: 'F16', shape: [128, 64], scale: 0.02, seed: seedId },
    { name: 'model.norm.weight', dtype: 'F32', shape: [64], scale: 1, seed: seedId },
  ];
}

const DTYPE_BYTES: Record<Dtype, number> = { F32: 4, F16: 2 };

/**
 * safetensors lays tensors out as the format says: an 8-byte little-endian header length, the header
 * (JSON: each tensor's dtype, shape and [begin, end) in the data; `__metadata__` strings), padded with
 * spaces to 8 bytes, then the data, each tensor's bytes in the header's order, leaving no gap.
 */
function safetensors(tensors: readonly (Tensor & { seed: string })[], metadata: Record<string, string>): Buffer {
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header: Record<string, unknown> = { __metadata__: metadata };
  const data: Buffer[] = [];
  let offset = 0;
  for (const t of sorted) {
    const bytes = tensorBytes(t, `${t.seed}:${t.name}`);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    data.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const headerBytes = Buffer.from(json);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(headerBytes.length));
  return Buffer.concat([length, headerBytes, ...data]);
}

function tensorBytes(t: Tensor, seed: string): Buffer {
  const count = t.shape.reduce((a, b) => a * b, 1);
  const out = Buffer.alloc(count * DTYPE_BYTES[t.dtype]);
  const next = mulberry32(Math.floor(hashToUnit(seed) * 0xffffffff));
  for (let i = 0; i < count; i++) {
    // A norm's weights sit around 1, everything else around 0.
    const value = (t.name.endsWith('norm.weight') ? 1 : 0) + (next() * 2 - 1) * t.scale;
    if (t.dtype === 'F32') out.writeFloatLE(value, i * 4);
    else out.writeUInt16LE(toHalf(value), i * 2);
  }
  return out;
}

/** A small deterministic generator of numbers in [0, 1) (mulberry32). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** toHalf is an IEEE 754 half's bits for a float (truncated; too small: zero, too large: the largest half). */
function toHalf(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0) return sign;
  if (exponent >= 31) return sign | 0x7bff;
  return sign | (exponent << 10) | ((bits >>> 13) & 0x3ff);
}

// ---- the folder, opened without following links ----

interface Folder {
  dir: string;
  /** A name in the folder, reached through its open handle. */
  at: (name: string) => string;
  /** Opens a file in the folder without following a link; null when it is not a place to write (a link, a FIFO). */
  openFile: (name: string, flags: number) => Promise<FileHandle | null>;
  close: () => Promise<void>;
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

async function exists(name: string): Promise<boolean> {
  try {
    await lstat(name);
    return true;
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** openFolder opens a folder that is one (not a link to one); null when it is not. */
async function openFolder(dir: string): Promise<Folder | null> {
  let handle: FileHandle;
  try {
    handle = await open(dir, NOFOLLOW_DIR);
  } catch (error) {
    if (NOT_OURS.has(codeOf(error) ?? '')) return null;
    throw error;
  }
  // On Linux every name is resolved through the open folder, so a link swapped in for the folder after
  // this open is not followed either; elsewhere (a developer's Mac) by its path.
  const at = process.platform === 'linux' ? (name: string) => `/proc/self/fd/${handle.fd}/${name}` : (name: string) => path.join(dir, name);
  return {
    dir,
    at,
    openFile: async (name, flags) => {
      try {
        return await open(at(name), flags, FILE_MODE);
      } catch (error) {
        if (NOT_OURS.has(codeOf(error) ?? '')) return null;
        throw error;
      }
    },
    close: () => handle.close(),
  };
}

/** inSubfolder makes a folder in `folder` (0o750) and runs `body` in it; nothing when the name is a link or a file. */
async function inSubfolder(folder: Folder, name: string, body: (sub: Folder) => Promise<void>): Promise<void> {
  try {
    await mkdir(folder.at(name), { mode: DIR_MODE });
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
  }
  const sub = await openFolder(folder.at(name));
  if (!sub) return;
  try {
    await body(sub);
  } finally {
    await sub.close();
  }
}

/** writeOnce writes a file whole, under a temporary name renamed into place, unless something is at its name already. */
async function writeOnce(folder: Folder, name: string, content: () => Buffer): Promise<void> {
  if (await exists(folder.at(name))) return;
  const temporary = `.${name}.${randomUUID()}.tmp`;
  const file = await folder.openFile(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW);
  if (!file) return;
  try {
    try {
      await file.writeFile(content());
    } finally {
      await file.close();
    }
    await rename(folder.at(temporary), folder.at(name));
  } catch (error) {
    await unlink(folder.at(temporary)).catch(() => undefined);
    throw error;
  }
}
