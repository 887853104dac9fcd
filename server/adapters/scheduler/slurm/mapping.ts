// Pure mapping between Slurm 22.05's REST shapes (v0.0.38 / dbv0.0.38) and the SchedulerPort: states,
// exit codes and signals, hostlists, GPU counts from GRES and TRES strings, the charge, and the submit body.
// No I/O and no clock: the caller passes "now" where a running job's usage so far is wanted.
import type { SchedulerJobSpec, SchedulerJobState, SchedulerJobStatus } from '~/server/core/scheduler/port';
import { isFinalState } from '~/server/core/scheduler/port';
import { isPosixName } from '~/server/core/scheduler/identity';
import { outputFileName } from '~/server/core/files/job-folder';
import type { SlurmSubmitBody } from './client';
import type { CtldJob, DbJob, TresEntry } from './schemas';

// ---------------------------------------------------------------------------------------------------
// States

// The base states of Slurm's job_state (slurm.h JOB_*), mapped as the issue's table says. Anything with a
// flag (COMPLETING, CONFIGURING, REQUEUED, STAGE_OUT…) is not final yet: the job still holds nodes or will
// run again, so it stays RUNNING until the flag clears.
const BASE_STATES: Record<string, SchedulerJobState> = {
  PENDING: 'PENDING',
  RUNNING: 'RUNNING',
  SUSPENDED: 'RUNNING',
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  OUT_OF_MEMORY: 'FAILED',
  TIMEOUT: 'TIMEOUT',
  DEADLINE: 'TIMEOUT',
  CANCELLED: 'CANCELLED',
  PREEMPTED: 'PREEMPTED',
  REVOKED: 'CANCELLED',
  NODE_FAIL: 'NODE_FAIL',
  BOOT_FAIL: 'NODE_FAIL',
};

/** Flags job_state_string() shows instead of the base state in v0.0.38 (a single string). */
const FLAG_STATES = new Set([
  'COMPLETING',
  'CONFIGURING',
  'REQUEUED',
  'REQUEUE_FED',
  'REQUEUE_HOLD',
  'RESIZING',
  'RESV_DEL_HOLD',
  'SIGNALING',
  'SPECIAL_EXIT',
  'STAGE_OUT',
  'STOPPED',
  'UPDATE_DB',
  'POWER_UP_NODE',
  'LAUNCH_FAILED',
  'RECONFIG_FAIL',
]);

export interface ParsedJobState {
  /** The portal state. */
  state: SchedulerJobState;
  /** Slurm's base state, e.g. RUNNING (null when Slurm sent only flags). */
  base: string | null;
  /** Flags beside the base state, e.g. COMPLETING. */
  flags: string[];
}

/**
 * jobState maps slurmctld's `job_state` ("RUNNING", "RUNNING+COMPLETING", "COMPLETING", or an array
 * ["COMPLETED","COMPLETING"] in later API versions) or slurmdbd's `state.current` to the portal state.
 * An unknown state is treated as not final (RUNNING), so nothing is settled on a state Slurm invents later.
 */
export function jobState(raw: string | readonly string[]): ParsedJobState {
  const parts = (typeof raw === 'string' ? raw.split(/[+,]/) : raw).map((s) => s.trim().toUpperCase()).filter((s) => s !== '');
  const base = parts.find((p) => p in BASE_STATES) ?? null;
  const flags = parts.filter((p) => p !== base);
  const mapped = base === null ? 'RUNNING' : BASE_STATES[base]!;
  // A final state with a flag (COMPLETED+COMPLETING) is not final yet; PENDING with a flag stays PENDING.
  const state = flags.length > 0 && isFinalState(mapped) ? 'RUNNING' : mapped;
  return { state, base, flags };
}

/** slurmStateIsKnown tells whether every part of a job_state is a state or flag this module knows. */
export function slurmStateIsKnown(raw: string | readonly string[]): boolean {
  const parts = (typeof raw === 'string' ? raw.split(/[+,]/) : raw).map((s) => s.trim().toUpperCase()).filter((s) => s !== '');
  return parts.length > 0 && parts.every((p) => p in BASE_STATES || FLAG_STATES.has(p));
}

// ---------------------------------------------------------------------------------------------------
// Exit codes and signals

/** A job's end as Slurm writes it, `${exitCode}:${signal ?? 0}`: the return code (0 when a signal ended it) and the signal. */
export interface SlurmExit {
  exitCode: number | null;
  signal: number | null;
}

const NO_EXIT: SlurmExit = { exitCode: null, signal: null };

/**
 * exitFromWaitStatus decodes slurmctld's `exit_code`, a POSIX wait status, as sacct shows it:
 * 768 → 3:0 (exited 3), 9 → 0:9 (killed by SIGKILL), 15 → 0:15. Null fields for no value.
 */
export function exitFromWaitStatus(status: number | null | undefined): SlurmExit {
  if (status === null || status === undefined || !Number.isInteger(status) || status < 0) return NO_EXIT;
  const signal = status & 0x7f;
  // 0x7f is a stopped process, not an ended one: the exit byte is what it will have.
  if (signal !== 0 && signal !== 0x7f) return { exitCode: 0, signal };
  return { exitCode: (status >> 8) & 0xff, signal: null };
}

type DbExitCode = DbJob['exit_code'];

/** States in which Slurm ended a running job itself (a signal to its batch step), when it ran. */
const ENDED_BY_SLURM: ReadonlySet<SchedulerJobState> = new Set(['TIMEOUT', 'CANCELLED', 'FAILED', 'NODE_FAIL', 'PREEMPTED']);

/** Reads dbv0.0.38's `{status, return_code, signal}` as it stands; SUCCESS/0 says 0 with no signal. */
function readDbExit(exit: DbExitCode): { exitCode: number; signal: number | null } | null {
  if (!exit) return null;
  const signal = exit.signal?.signal_id;
  if (exit.status === 'SIGNALED' && typeof signal === 'number' && signal > 0) return { exitCode: 0, signal };
  if (typeof exit.return_code === 'number' && exit.return_code >= 0) return { exitCode: exit.return_code, signal: null };
  return null;
}

/** The batch step's record (`.batch` in sacct), which holds the signal Slurm sent a job it ended. */
function batchStep(record: DbJob): NonNullable<DbJob['steps']>[number] | undefined {
  return record.steps?.find((s) => s.step?.name === 'batch' || s.step?.id === 'batch');
}

/**
 * exitFromDb reads a slurmdbd record's end as sacct shows it. The job's own exit_code first: a signal or
 * a non-zero return code it names is trusted, and SUCCESS/0 too except for a FAILED job (dbv0.0.38
 * reports exit 1 as SUCCESS/0; sacct shows 1:0), which is then unknown. A job Slurm ended (TIMEOUT,
 * cancelled, preempted…) is 0:0 at the job level and the signal is on its batch step (sacct:
 * `.batch CANCELLED 0:15`), so a job that ran and names no signal of its own takes the batch step's.
 */
export function exitFromDb(record: DbJob, state: SchedulerJobState, ran: boolean): SlurmExit {
  const own = readDbExit(record.exit_code);
  const job = own && !(state === 'FAILED' && own.exitCode === 0 && own.signal === null) ? own : null;
  if (job && (job.signal !== null || job.exitCode > 0)) return job;
  if (ran && ENDED_BY_SLURM.has(state)) {
    const step = readDbExit(batchStep(record)?.exit_code);
    if (step && step.signal !== null) return step;
  }
  return job ?? NO_EXIT;
}

/** How long after its end a job Slurm ended may wait for its batch step's record before it is final without it. */
export const BATCH_STEP_WAIT_SECONDS = 60;

/**
 * batchStepPending says a job Slurm ended (a time limit, a cancel) is final in slurmdbd but the signal
 * that ended it is not there yet. slurmctld records the job's end when it decides it (TIMEOUT), and the
 * batch step's end, which holds the signal, when the step has died of it: a moment later, in a record of
 * its own. A job is not final until that record is in, or until BATCH_STEP_WAIT_SECONDS after its end
 * (a node that failed may never send it; a query by submission time returns no steps at all).
 */
export function batchStepPending(record: DbJob, state: SchedulerJobState, ran: boolean, nowSeconds: number): boolean {
  if (!ran || !ENDED_BY_SLURM.has(state)) return false;
  const own = readDbExit(record.exit_code);
  if (own && (own.signal !== null || own.exitCode > 0)) return false;
  const step = batchStep(record);
  const stepEnd = step?.time?.end;
  const stepEnded = typeof stepEnd === 'number' && stepEnd > 0 && step?.state !== 'RUNNING';
  if (stepEnded) return false;
  const end = record.time.end;
  return typeof end === 'number' && end > 0 && nowSeconds - end < BATCH_STEP_WAIT_SECONDS;
}

/**
 * preferCtldExit joins slurmctld's wait status (known while it holds the job, exact) with slurmdbd's
 * reading: slurmctld's exit code wins (dbv0.0.38 cannot tell exit 1 from 0); a signal it does not name
 * may come from slurmdbd's batch step (a TIMEOUT job's record says 0:0, its batch step 0:15).
 */
export function preferCtldExit(ctld: SlurmExit | null | undefined, db: SlurmExit): SlurmExit {
  if (!ctld || ctld.exitCode === null) return db;
  if (ctld.signal !== null || ctld.exitCode !== 0) return ctld;
  return { exitCode: 0, signal: db.signal };
}

// ---------------------------------------------------------------------------------------------------
// Hostlists, GRES and TRES

/** Splits on commas that are not inside [] or (). */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of s) {
    if (ch === '[' || ch === '(') depth++;
    if (ch === ']' || ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out.map((p) => p.trim()).filter((p) => p !== '');
}

function expandRange(spec: string): string[] {
  const out: string[] = [];
  for (const item of spec.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(item.trim());
    if (!m) throw new Error(`bad hostlist range: ${spec}`);
    const [, from, to] = m;
    const start = Number(from);
    const end = to === undefined ? start : Number(to);
    // Zero padding follows the first number ("01-03" → 01, 02, 03).
    const width = from!.length;
    for (let i = start; i <= end; i++) out.push(String(i).padStart(width, '0'));
  }
  return out;
}

function expandHost(host: string): string[] {
  const open = host.indexOf('[');
  if (open < 0) return [host];
  const close = host.indexOf(']', open);
  if (close < 0) throw new Error(`bad hostlist: ${host}`);
  const prefix = host.slice(0, open);
  const rest = expandHost(host.slice(close + 1));
  return expandRange(host.slice(open + 1, close)).flatMap((n) => rest.map((r) => `${prefix}${n}${r}`));
}

/**
 * expandHostlist expands a Slurm hostlist: "n[1-2],gpu[01-03,7]" → n1 n2 gpu01 gpu02 gpu03 gpu7.
 * Empty, "(null)" and "None assigned" (a pending job in slurmdbd) give [].
 */
export function expandHostlist(list: string | null | undefined): string[] {
  if (!list) return [];
  const trimmed = list.trim();
  if (trimmed === '' || trimmed === '(null)' || /^none/i.test(trimmed)) return [];
  return splitTopLevel(trimmed).flatMap(expandHost);
}

/**
 * gpusFromGres counts the GPUs in a GRES string: "gpu:4", "gres:gpu:2", "gpu:4(IDX:0-3)", "gpu:a100:2",
 * "gpu:a100:2(S:0-1),gpu:v100:1" (3); a bare "gpu" is one. "N/A", "" and other GRES give 0.
 */
export function gpusFromGres(gres: string | null | undefined): number {
  if (!gres) return 0;
  let total = 0;
  for (const item of splitTopLevel(gres)) {
    const parts = item.replace(/\(.*\)$/, '').replace(/^gres[:/]/, '').split(':');
    if (parts[0] !== 'gpu') continue;
    const last = parts.length > 1 ? parts[parts.length - 1]! : '';
    total += /^\d+$/.test(last) ? Number(last) : 1;
  }
  return total;
}

/**
 * gpusFromTres reads the GPU count from a TRES string ("cpu=2,mem=1G,node=1,billing=2,gres/gpu=2" → 2).
 * Typed entries (gres/gpu:a100=2) are counted only when the untyped total is missing.
 */
export function gpusFromTres(tres: string | null | undefined): number {
  if (!tres) return 0;
  let untyped: number | null = null;
  let typed = 0;
  for (const item of tres.split(',')) {
    const [key, value] = item.split('=');
    const count = Number(value);
    if (!Number.isFinite(count)) continue;
    if (key === 'gres/gpu') untyped = count;
    else if (key?.startsWith('gres/gpu:')) typed += count;
  }
  return untyped ?? typed;
}

/** gpusFromTresList reads the GPU count from slurmdbd's TRES list ({type:'gres', name:'gpu', count}). */
export function gpusFromTresList(list: readonly TresEntry[] | null | undefined): number {
  if (!list) return 0;
  const tres = list
    .filter((t) => t.type === 'gres' && typeof t.count === 'number')
    .map((t) => `gres/${t.name ?? ''}=${t.count}`)
    .join(',');
  return gpusFromTres(tres);
}

// ---------------------------------------------------------------------------------------------------
// Times and the charge

// Slurm's NO_VAL / INFINITE for 32-bit fields: "no limit".
const NO_LIMIT_MINUTES = 0xfffffffe;

/** timeLimitSeconds turns a time limit in minutes into seconds; unset or INFINITE is null. */
export function timeLimitSeconds(minutes: number | null | undefined): number | null {
  if (minutes === null || minutes === undefined || minutes <= 0 || minutes >= NO_LIMIT_MINUTES) return null;
  return minutes * 60;
}

/**
 * chargedGpuSeconds = GPUs × min(elapsed, time limit): Slurm ends a job a little after its limit (a
 * 1-minute job hit TIMEOUT at 67 s), and the portal charges no more than the walltime it granted.
 */
export function chargedGpuSeconds(gpus: number, elapsedSeconds: number, limitSeconds: number | null): number {
  const elapsed = Math.max(0, elapsedSeconds);
  return gpus * (limitSeconds === null ? elapsed : Math.min(elapsed, limitSeconds));
}

function epoch(seconds: number | null | undefined): Date | null {
  return typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000) : null;
}

// ---------------------------------------------------------------------------------------------------
// Status

/**
 * A job's status as Slurm reports it, in the port's terms, without siteId and energy in Wh (the adapter
 * adds them), plus what the adapter needs to settle and model energy.
 */
export interface SlurmJobStatus extends Omit<SchedulerJobStatus, 'siteId' | 'energyWh' | 'energyMeasured'> {
  account: string | null;
  /** Slurm's partition name. */
  partition: string | null;
  gpus: number;
  /** Run time so far (final once the state is final), not capped. */
  elapsedSeconds: number;
  timeLimitSeconds: number | null;
  /** Measured energy in joules, only when Slurm measured some (> 0); else null (model it). */
  energyJoules: number | null;
}

function pendingReason(state: SchedulerJobState, reason: string | null | undefined): string | null {
  if (state !== 'PENDING' || !reason || reason === 'None') return null;
  return reason;
}

interface StatusParts {
  name: string;
  jobId: number;
  state: SchedulerJobState;
  /** Whether the job got nodes and started (a pending or cancelled-while-pending job did not). */
  ran: boolean;
  reason: string | null | undefined;
  start: number | null;
  end: number | null;
  exit: SlurmExit;
  nodeList: string[];
  gpus: number;
  elapsedSeconds: number;
  limit: number | null;
  account: string | null | undefined;
  partition: string | null | undefined;
  energyJoules: number | null;
}

// One rule for both sources: no start, exit code, usage or energy for a job that never ran; an end only
// once final (a running job's end is a forecast).
function buildStatus(p: StatusParts): SlurmJobStatus {
  const final = isFinalState(p.state);
  return {
    portalJobId: p.name,
    schedulerJobId: String(p.jobId),
    state: p.state,
    pendingReason: pendingReason(p.state, p.reason),
    startedAt: p.ran ? epoch(p.start) : null,
    endedAt: final ? epoch(p.end) : null,
    exitCode: final && p.ran ? p.exit.exitCode : null,
    signal: final && p.ran ? p.exit.signal : null,
    nodeList: p.nodeList,
    gpuSeconds: p.ran ? chargedGpuSeconds(p.gpus, p.elapsedSeconds, p.limit) : 0,
    account: p.account ?? null,
    partition: p.partition ?? null,
    gpus: p.gpus,
    elapsedSeconds: p.elapsedSeconds,
    timeLimitSeconds: p.limit,
    energyJoules: p.ran ? p.energyJoules : null,
  };
}

/**
 * statusFromCtld maps a slurmctld job. `nowSeconds` gives a running job's elapsed time so far (its
 * end_time is a forecast, so endedAt stays null until the state is final). A job cancelled while pending
 * (start = end, no nodes) never started: startedAt null, 0 GPU-seconds, no exit code.
 */
export function statusFromCtld(job: CtldJob, nowSeconds: number): SlurmJobStatus {
  const { state } = jobState(job.job_state);
  const final = isFinalState(state);
  const nodeList = state === 'PENDING' ? [] : expandHostlist(job.nodes);
  const ran = state !== 'PENDING' && nodeList.length > 0 && typeof job.start_time === 'number' && job.start_time > 0;
  const start = ran ? job.start_time! : null;
  const end = final ? (job.end_time ?? null) : null;
  const elapsedSeconds = start === null ? 0 : Math.max(0, (end ?? nowSeconds) - start);
  // tres_alloc_str counts all nodes; without AccountingStorageTRES=gres/gpu it lacks GPUs, then
  // per-node GRES × nodes.
  const gpus = gpusFromTres(job.tres_alloc_str) || gpusFromGres(job.tres_per_node) * Math.max(1, job.node_count ?? nodeList.length);
  return buildStatus({
    name: job.name,
    jobId: job.job_id,
    state,
    ran,
    reason: job.state_reason,
    start,
    end,
    exit: exitFromWaitStatus(job.exit_code),
    nodeList,
    gpus,
    elapsedSeconds,
    limit: timeLimitSeconds(job.time_limit),
    account: job.account,
    partition: job.partition,
    energyJoules: null,
  });
}

function energyCount(list: readonly TresEntry[] | null | undefined): number {
  const count = list?.find((t) => t.type === 'energy')?.count;
  return typeof count === 'number' && count > 0 ? count : 0;
}

/**
 * measuredEnergyJoules reads a record's energy: the job's own TRES if it has a value, else the largest
 * step's (steps of one job measure the same nodes at the same time, so summing them would count twice).
 * Null when nothing above 0 was measured (fake GPUs and clusters without an energy plugin report 0/null).
 */
export function measuredEnergyJoules(record: DbJob): number | null {
  const job = energyCount(record.tres?.allocated);
  if (job > 0) return job;
  let best = 0;
  for (const step of record.steps ?? []) {
    const consumed = energyCount(step.tres?.consumed?.total);
    const stat = step.statistics?.energy?.consumed;
    best = Math.max(best, consumed, typeof stat === 'number' ? stat : 0);
  }
  return best > 0 ? best : null;
}

/**
 * statusFromDb maps a slurmdbd record: its elapsed, GPUs, start and end are what sacct shows, so the
 * charge settled from it equals sacct's. The exit comes from slurmctld when known (`ctldExit`, its
 * decoded wait status), since dbv0.0.38 reports exit 1 as SUCCESS/0 (`preferCtldExit`).
 */
export function statusFromDb(record: DbJob, options: { nowSeconds: number; ctldExit?: SlurmExit | null }): SlurmJobStatus {
  const { state } = jobState(record.state.current);
  const final = isFinalState(state);
  const nodeList = state === 'PENDING' ? [] : expandHostlist(record.nodes);
  const { time } = record;
  const ran = state !== 'PENDING' && nodeList.length > 0 && typeof time.start === 'number' && time.start > 0;
  // A final record's elapsed is sacct's; a running one's may lag behind, so it is at least now - start.
  const recorded = typeof time.elapsed === 'number' ? Math.max(0, time.elapsed) : null;
  const start = ran ? time.start! : 0;
  const elapsedSeconds = !ran ? 0 : final ? (recorded ?? Math.max(0, (time.end ?? start) - start)) : Math.max(recorded ?? 0, options.nowSeconds - start);
  const gpus = gpusFromTresList(record.tres?.allocated) || gpusFromTresList(record.tres?.requested);
  return buildStatus({
    name: record.name,
    jobId: record.job_id,
    state,
    ran,
    reason: record.state.reason,
    start: ran ? start : null,
    end: time.end ?? null,
    exit: preferCtldExit(options.ctldExit, exitFromDb(record, state, ran)),
    nodeList,
    gpus,
    elapsedSeconds,
    limit: timeLimitSeconds(time.limit),
    account: record.account,
    partition: record.partition,
    energyJoules: measuredEnergyJoules(record),
  });
}

// ---------------------------------------------------------------------------------------------------
// Job arrays

/** How many task indexes a task string names; `complete` false when Slurm cut it short or named none. */
export interface ArrayTaskCount {
  count: number;
  complete: boolean;
  /** The indexes themselves, when the text is complete (an array has at most MAX_ARRAY_TASKS). */
  indexes?: number[];
}

const ARRAY_PART = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/;

/**
 * arrayTaskCount counts the indexes of slurmctld's `array_task_string` on the record of an array's tasks
 * not started: "4-19%4" (16), "[4-19%4]" as squeue shows it, "8-998:2%2" (496). libslurm cuts the text
 * at 64 characters ("1,3,6,10,…,190,...%1", unless slurmrestd runs with SLURM_BITSTR_LEN=0): then the
 * indexes shown are counted, a number the cut may have split is not, and `complete` is false. "" (what is
 * left after Slurm cancelled tasks by range) names none: 0, not complete.
 */
export function arrayTaskCount(text: string | null | undefined): ArrayTaskCount {
  let body = (text ?? '').replace(/\s+/g, '').replace(/^\[/, '').replace(/\]$/, '');
  body = body.replace(/%\d*$/, '');
  const cut = body.indexOf('...');
  const truncated = cut >= 0;
  if (truncated) {
    // Slurm overwrote the end with dots: the part just before them may be a number cut in two.
    const before = body.slice(0, cut);
    body = before.endsWith(',') ? before.slice(0, -1) : before.slice(0, Math.max(0, before.lastIndexOf(',')));
  }
  let count = 0;
  let valid = body !== '';
  const indexes: number[] = [];
  for (const part of body === '' ? [] : body.split(',')) {
    const m = ARRAY_PART.exec(part);
    if (!m) {
      valid = false;
      continue;
    }
    const start = Number(m[1]);
    const end = m[2] === undefined ? start : Number(m[2]);
    const step = m[3] === undefined ? 1 : Math.max(1, Number(m[3]));
    if (end >= start) count += Math.floor((end - start) / step) + 1;
    if (end >= start && count <= 100_000) for (let i = start; i <= end; i += step) indexes.push(i);
  }
  const complete = valid && !truncated;
  return complete && indexes.length === count ? { count, complete, indexes } : { count, complete };
}

/**
 * arrayBitmapIndexes reads slurmdbd's `array.task` of the record of an array's tasks not started: a hex
 * bitmap of their indexes ("0x3FC" → 2…9), never cut short. Anything else gives [].
 */
export function arrayBitmapIndexes(hex: string | null | undefined): number[] {
  const m = /^0x([0-9a-f]+)$/i.exec((hex ?? '').trim());
  if (!m) return [];
  const digits = m[1]!;
  const out: number[] = [];
  for (let k = 0; k < digits.length; k++) {
    const value = parseInt(digits[digits.length - 1 - k]!, 16);
    for (let bit = 0; bit < 4; bit++) if (value & (1 << bit)) out.push(k * 4 + bit);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Submit body

/**
 * How the job's command is started:
 * - none: the batch script runs the command itself on the first node (CI, bare-metal software);
 * - apptainer: `srun apptainer exec --nv docker://<image> /bin/bash -c <command>`, once per node;
 * - pyxis: `srun --container-image=<image> /bin/bash -c <command>` (NVIDIA pyxis/enroot), once per node.
 * The container launchers start one task per node (tasks = nodes, tasks_per_node = 1).
 */
export type SlurmLauncher = 'none' | 'apptainer' | 'pyxis';

export const SLURM_LAUNCHERS: readonly SlurmLauncher[] = ['none', 'apptainer', 'pyxis'];

/** The PATH every job gets unless the spec sets its own (slurmrestd requires a non-empty environment). */
export const DEFAULT_JOB_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** shellQuote quotes a string for bash as one word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

// Images are passed on a command line (quoted all the same): a reference, URI or path, never shell syntax.
const IMAGE_RE = /^[A-Za-z0-9/][A-Za-z0-9._\-/:@#+]*$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ARRAY_TEXT_RE = /^\d+(-\d+(:\d+)?)?(,\d+(-\d+(:\d+)?)?)*(%\d+)?$/;

function apptainerImage(image: string): string {
  // A URI (docker://, oras://, library://) or a .sif path is used as it is; a bare reference is Docker's.
  return /^[a-z]+:\/\//.test(image) || image.startsWith('/') ? image : `docker://${image}`;
}

/** jobScript writes the batch script for a launcher. */
export function jobScript(spec: Pick<SchedulerJobSpec, 'command' | 'image' | 'session'>, launcher: SlurmLauncher): string {
  // A session's launcher is the batch script's own process (exec), so Slurm's signals reach it directly.
  if (spec.session) return `#!/bin/bash\nexec ${spec.command}\n`;
  if (spec.command.trim() === '') throw new Error('submitBody: the command is empty');
  if (launcher === 'none') return `#!/bin/bash\n${spec.command}\n`;
  if (!IMAGE_RE.test(spec.image)) {
    throw new Error(`submitBody: not an image reference: ${JSON.stringify(spec.image)}`);
  }
  const command = shellQuote(spec.command);
  if (launcher === 'apptainer') return `#!/bin/bash\nexec srun apptainer exec --nv ${shellQuote(apptainerImage(spec.image))} /bin/bash -c ${command}\n`;
  return `#!/bin/bash\nexec srun --container-image=${shellQuote(spec.image)} /bin/bash -c ${command}\n`;
}

/**
 * slurmOutputPath is where Slurm writes a portal job's output (standard_output of submitBody, %j expanded);
 * `group`: in its project's folder. An array's tasks each write their own file, `<id>-<array id>_<index>.out`
 * (%A_%a): `arrayTask` names the task, or '%a' for the pattern of them all.
 */
export function slurmOutputPath(jobDir: string, portalJobId: string, schedulerJobId: string, group?: string | null, arrayTask?: number | '%a'): string {
  const task = arrayTask === undefined ? '' : `_${arrayTask}`;
  return `${jobFolder(jobDir, group)}/${fileSafe(portalJobId)}-${schedulerJobId}${task}.out`;
}

/** jobFolder is where a job runs: SLURM_JOB_DIR, or with `group` the project's folder in it (SLURM_SUBMIT_AS=person). */
export function jobFolder(jobDir: string, group?: string | null): string {
  const dir = jobDir.replace(/\/+$/, '') || '';
  if (!group) return dir || '/';
  if (!isPosixName(group)) throw new Error(`jobFolder: not a group name: ${JSON.stringify(group)}`);
  return `${dir}/${group}`;
}

/**
 * workDirProblem says what is wrong with a job's working folder (`spec.workDir`) for Slurm, or null: it must
 * be absolute and normalised (no empty, `.` or `..` segment, no trailing `/`), without control characters
 * (a newline would split the path) and without `%` or `\`, which Slurm reads in an output path as a file
 * name pattern (`%j`) or as "no patterns" — the job would write elsewhere than the portal reads.
 */
export function workDirProblem(workDir: string): string | null {
  if (!workDir.startsWith('/')) return 'must be absolute';
  // C0 and C1 control characters and DEL: a newline or an escape in a path reaches slurmd and the logs.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(workDir)) return 'holds a control character';
  if (/[%\\]/.test(workDir)) return "holds '%' or '\\' (Slurm's file name patterns)";
  if (workDir.slice(1).split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return 'is not normalised';
  return null;
}

/** A file name made from the portal job id (it names the job's output file). */
function fileSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}

export interface SubmitBodyOptions {
  /** Slurm's partition for the spec's resource class. */
  partition: string;
  /** Where the job runs and writes its output (SLURM_JOB_DIR) unless its spec names its own `workDir`; must exist on the nodes. */
  jobDir: string;
  launcher: SlurmLauncher;
  /** The time of the hand-over: a begin time goes to Slurm relative to it. */
  now: Date;
  /** Whether Slurm may requeue the job (SLURM_REQUEUE); default false. */
  requeue?: boolean;
  /** The job runs in its project's folder (jobDir/<spec.group>) as its person (SLURM_SUBMIT_AS=person). */
  perProject?: boolean;
  /** The class's QoS, GPU type, constraint and reservation (the catalogue's `slurm`). */
  classOptions?: { qos?: string; gpuType?: string; constraint?: string; reservation?: string };
}

/** Files a job makes are its person's and its project group's only (0640, folders 0750): nothing for others. */
export const JOB_UMASK = '0027';

/**
 * slurmBegin is Slurm's --begin for a job that may not start before `begin`, as slurmrestd 22.05 takes
 * it: epoch seconds are refused ("Unable to parse time") and a wall-clock time is read in slurmctld's own
 * time zone, so it goes as seconds from now ("now+N"), rounded up so the job never starts early;
 * undefined when the time has passed (the job may start at once).
 */
export function slurmBegin(begin: Date | undefined, now: Date): string | undefined {
  if (!begin) return undefined;
  const seconds = Math.ceil((begin.getTime() - now.getTime()) / 1000);
  return seconds > 0 ? `now+${seconds}` : undefined;
}

/**
 * The output of a job with its own working folder: `stdout.log` and `stderr.log` there (core/files/job-folder.ts;
 * an array's task `stdout-<index>.log`, Slurm's %a), appended to: Slurm's default (JobFileAppend=0) truncates
 * them when a requeued job starts again, which loses the earlier attempt's output (seen on the test cluster). The
 * folder is the job's own, so a first attempt finds no file to append to.
 */
function workDirOutput(workDir: string, array: boolean): Pick<NonNullable<SlurmSubmitBody['job']>, 'standard_output' | 'standard_error' | 'open_mode'> {
  const task = array ? '%a' : undefined;
  return { standard_output: `${workDir}/${outputFileName('stdout', task)}`, standard_error: `${workDir}/${outputFileName('stderr', task)}`, open_mode: 'append' };
}

/**
 * submitBody builds the v0.0.38 submit body. Every field is there for a reason found on a real Slurm:
 * nodes [n, n] + tasks n + tasks_per_node 1 (without them 2 nodes silently ran on one), gres per node,
 * no requeue unless the site allows it (see below), a non-empty environment (else error 2127),
 * name = the portal job id (retries look it up by name), comment `portal:<id>` for operators. A spec with
 * its `workDir` runs there and writes `stdout.log` / `stderr.log` there (appended, see workDirOutput);
 * without one, it runs in the job dir (or its project's folder) and writes `<id>-<slurm id>.out`.
 */
export function submitBody(spec: SchedulerJobSpec, options: SubmitBodyOptions): SlurmSubmitBody {
  const { nodes, gpus } = spec;
  if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`submitBody: bad node count ${nodes}`);
  if (!Number.isInteger(gpus) || gpus < 0 || gpus % nodes !== 0) throw new Error(`submitBody: ${gpus} GPUs do not split evenly over ${nodes} nodes`);
  if (!(spec.walltimeSeconds > 0)) throw new Error(`submitBody: bad walltime ${spec.walltimeSeconds}`);
  if (spec.portalJobId === '' || spec.portalJobId.includes(',')) throw new Error(`submitBody: the portal job id must be non-empty and without ',' (it is looked up by name)`);
  if (!options.jobDir.startsWith('/')) throw new Error(`submitBody: the job directory must be absolute: ${options.jobDir}`);
  for (const name of Object.keys(spec.env)) {
    if (!ENV_NAME_RE.test(name)) throw new Error(`submitBody: not an environment variable name: ${JSON.stringify(name)}`);
  }
  if (options.perProject && !spec.group) throw new Error('submitBody: a job that runs in its project folder needs the project group');
  // core/jobs/array.ts parseArray's canonical text: ranges, steps, a throttle; nothing else reaches Slurm.
  if (spec.array && !ARRAY_TEXT_RE.test(spec.array.text)) throw new Error(`submitBody: not an array text: ${JSON.stringify(spec.array.text)}`);
  const workDirError = spec.workDir === undefined ? null : workDirProblem(spec.workDir);
  if (workDirError) throw new Error(`submitBody: the job's working folder ${workDirError}: ${JSON.stringify(spec.workDir)}`);
  const dir = spec.workDir ?? jobFolder(options.jobDir, options.perProject ? spec.group : undefined);
  const perNode = gpus / nodes;
  const begin = slurmBegin(spec.begin, options.now);
  const cls = options.classOptions ?? {};
  return {
    script: jobScript(spec, options.launcher),
    job: {
      name: spec.portalJobId,
      account: spec.account,
      partition: options.partition,
      time_limit: Math.ceil(spec.walltimeSeconds / 60),
      // The OpenAPI document of v0.0.38 types begin_time as a number; slurmrestd 22.05 parses a string.
      ...(begin ? { begin_time: begin as unknown as number } : {}),
      nodes: [nodes, nodes],
      tasks: nodes,
      tasks_per_node: 1,
      ...(perNode > 0 ? { gres: cls.gpuType ? `gpu:${cls.gpuType}:${perNode}` : `gpu:${perNode}` } : {}),
      ...(cls.qos ? { qos: cls.qos } : {}),
      ...(cls.constraint ? { constraints: cls.constraint } : {}),
      ...(cls.reservation ? { reservation: cls.reservation } : {}),
      // slurmrestd 22.05 ignores `requeue: false` (Requeue=1 either way, on submit and on update) and does
      // not read #SBATCH lines; its parser takes `no_requeue` as sbatch's --no-requeue (Requeue=0).
      ...(options.requeue ? {} : ({ no_requeue: true } as object)),
      // slurmstepd takes the job's umask from SLURM_UMASK (sbatch sends the shell's), also for the output file it opens.
      environment: { PATH: DEFAULT_JOB_PATH, ...spec.env, SLURM_UMASK: JOB_UMASK },
      current_working_directory: dir,
      // An array (sbatch's --array): each task runs the script with SLURM_ARRAY_TASK_ID set by Slurm and
      // writes its own file (%A the array's id, %a the task's index); %j would be each task's own job id.
      ...(spec.array ? { array: spec.array.text } : {}),
      ...(spec.workDir ? workDirOutput(spec.workDir, spec.array !== undefined) : { standard_output: `${dir}/${fileSafe(spec.portalJobId)}-${spec.array ? '%A_%a' : '%j'}.out` }),
      comment: `portal:${spec.portalJobId}`,
    },
  };
}
