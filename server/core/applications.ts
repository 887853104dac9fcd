// Rules for applications and decisions: what a request may ask for, what a reviewer may grant. Pure.
import { daysBetween } from './working-days';

/** How a submitted request is decided: by the portal at once, by one reviewer, or by an admin (full review). */
export const REVIEW_PATHS = ['instant', 'single', 'full'] as const;
export type ReviewPath = (typeof REVIEW_PATHS)[number];

/**
 * How an access mode takes requests (issue #32): first come, first served (each decided as it comes, as
 * the AI Factories' Playground and Fast Lane), or in rounds (gathered by a call's cut-off and reviewed
 * together, as Large Scale: decisions a set number of working days after the cut-off).
 */
export const ACCESS_INTAKES = ['first_come', 'rounds'] as const;
export type AccessIntake = (typeof ACCESS_INTAKES)[number];

/** What companies run (the project and application forms ask this instead of a scientific goal). */
export const WORKLOAD_KINDS = ['training', 'fine_tuning', 'inference'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export interface AccessModeRules {
  /** Largest total request in GPU-seconds; null = any size. */
  maxGpuSeconds: number | null;
  /** Smallest total new request or renewal in GPU-seconds; null (or absent) = none. A top-up adds to an allocation of the mode and has none. */
  minGpuSeconds?: number | null;
  durationDays: number;
  /** The most storage one line may ask for, in GB; null (or absent) = any. */
  maxStorageGb?: number | null;
}

export interface RequestLine {
  resourceClassId: string;
  gpuSeconds: number;
  /**
   * Storage beside the GPU-hours, in GB (10^9 bytes), in the workspace at the class's site. Absent: the
   * mode's default for a new request or a renewal (`storageOfLine`), nothing for a top-up; in a decision,
   * what the line asked for.
   */
  storageGb?: number;
}

// ---- Storage lines (issue #27) ----

/** What an access mode grants in storage: the default of a line that names none, and the most a line may ask (null: any). */
export interface ModeStorage {
  defaultStorageGb: number;
  maxStorageGb: number | null;
}

/**
 * defaultModeStorage is the storage of a mode whose catalogue entry names none, by its review path, as the
 * built-in catalogue's modes have it. Figures after LUMI's published practice: a project directory of
 * 50 GB by default, terabytes of scratch for real work, tens of TB for the largest projects. A Playground
 * line (instant, 100 GPU-hours) holds a small data set and a fine-tuned adapter (50 GB, at most 100); a
 * Development project a few checkpoints of a 7–13B model and its data (1 TB, at most 5); a large-scale
 * project training from scratch tokenised corpora and checkpoints of a large model (20 TB, at most 200).
 */
export function defaultModeStorage(reviewPath: ReviewPath): ModeStorage {
  if (reviewPath === 'instant') return { defaultStorageGb: 50, maxStorageGb: 100 };
  if (reviewPath === 'single') return { defaultStorageGb: 1000, maxStorageGb: 5000 };
  return { defaultStorageGb: 20_000, maxStorageGb: 200_000 };
}

/**
 * storageOfLine is the storage a request's line asks for: what it says, else the mode's default for a new
 * request or a renewal; a top-up adds GPU-hours to an allocation that has its storage, so it adds none
 * unless it asks.
 */
export function storageOfLine(line: RequestLine, mode: { defaultStorageGb: number }, kind: 'new' | 'top_up' | 'renewal'): number {
  return line.storageGb ?? (kind === 'top_up' ? 0 : mode.defaultStorageGb);
}

export type ApplicationProblem =
  | { field: 'lines'; key: 'application.noLines' | 'application.duplicateClass' }
  | { field: 'lines'; key: 'application.overModeCap'; params: { requested: number; cap: number } }
  | { field: 'lines'; key: 'application.underModeMinimum'; params: { requested: number; minimum: number } }
  | { field: 'lines'; key: 'application.storageOverModeCap'; params: { requested: number; cap: number } }
  | { field: 'periodEnd'; key: 'application.endBeforeStart' }
  | { field: 'periodEnd'; key: 'application.periodTooLong'; params: { days: number; max: number } }
  | { field: 'periodStart'; key: 'application.startInPast'; params: { today: string } };

/**
 * checkApplicationRequest lists what is wrong with a request under an access mode (empty = fine). Amounts in GPU-seconds; caps reported in GPU-hours.
 * A top-up adds to its allocation's period, which is not the request's to choose: its period is not checked.
 */
export function checkApplicationRequest(input: { mode: AccessModeRules; kind?: 'new' | 'top_up' | 'renewal'; lines: RequestLine[]; periodStart: string; periodEnd: string; today: string }): ApplicationProblem[] {
  const problems: ApplicationProblem[] = [];
  const { mode, lines } = input;
  if (lines.length === 0) problems.push({ field: 'lines', key: 'application.noLines' });
  if (new Set(lines.map((l) => l.resourceClassId)).size !== lines.length) problems.push({ field: 'lines', key: 'application.duplicateClass' });
  const total = lines.reduce((s, l) => s + l.gpuSeconds, 0);
  if (mode.maxGpuSeconds !== null && total > mode.maxGpuSeconds) {
    problems.push({ field: 'lines', key: 'application.overModeCap', params: { requested: total / 3600, cap: mode.maxGpuSeconds / 3600 } });
  }
  const minimum = mode.minGpuSeconds ?? null;
  if (minimum !== null && input.kind !== 'top_up' && lines.length > 0 && total < minimum) {
    problems.push({ field: 'lines', key: 'application.underModeMinimum', params: { requested: total / 3600, minimum: minimum / 3600 } });
  }
  const storageCap = mode.maxStorageGb ?? null;
  const mostStorage = Math.max(0, ...lines.map((l) => l.storageGb ?? 0));
  if (storageCap !== null && mostStorage > storageCap) problems.push({ field: 'lines', key: 'application.storageOverModeCap', params: { requested: mostStorage, cap: storageCap } });
  if (input.kind === 'top_up') return problems;
  if (input.periodEnd <= input.periodStart) problems.push({ field: 'periodEnd', key: 'application.endBeforeStart' });
  else {
    const days = daysBetween(input.periodStart, input.periodEnd);
    if (days > mode.durationDays) problems.push({ field: 'periodEnd', key: 'application.periodTooLong', params: { days, max: mode.durationDays } });
  }
  if (input.periodStart < input.today) problems.push({ field: 'periodStart', key: 'application.startInPast', params: { today: input.today } });
  return problems;
}

export type DecisionOutcome = 'approved' | 'rejected' | 'changes_requested';

export type DecisionProblem =
  | { field: 'comment'; key: 'decision.commentRequired' }
  | { field: 'grantedLines'; key: 'decision.grantOverRequest'; params: { resourceClassId: string } }
  | { field: 'grantedLines'; key: 'decision.storageOverRequest'; params: { resourceClassId: string } }
  | { field: 'grantedLines'; key: 'decision.grantUnknownClass'; params: { resourceClassId: string } }
  | { field: 'grantedLines'; key: 'decision.grantNothing' };

/**
 * checkDecision validates a reviewer's decision: approvals grant at most what was requested per
 * resource class (GPU-hours and storage; a granted line without storage grants the storage asked) and
 * something in total; a comment is required for rejections, change requests and for approvals that
 * grant less than requested.
 */
export function checkDecision(input: { outcome: DecisionOutcome; requested: RequestLine[]; granted: RequestLine[]; comment: string }): DecisionProblem[] {
  const problems: DecisionProblem[] = [];
  const hasComment = input.comment.trim().length > 0;
  if (input.outcome !== 'approved') {
    if (!hasComment) problems.push({ field: 'comment', key: 'decision.commentRequired' });
    return problems;
  }
  const requested = new Map(input.requested.map((l) => [l.resourceClassId, l]));
  let total = 0;
  let less = false;
  for (const line of input.granted) {
    const asked = requested.get(line.resourceClassId);
    const askedStorage = asked?.storageGb ?? 0;
    if (asked === undefined) problems.push({ field: 'grantedLines', key: 'decision.grantUnknownClass', params: { resourceClassId: line.resourceClassId } });
    else if (line.gpuSeconds > asked.gpuSeconds) problems.push({ field: 'grantedLines', key: 'decision.grantOverRequest', params: { resourceClassId: line.resourceClassId } });
    else if (line.storageGb !== undefined && line.storageGb > askedStorage) problems.push({ field: 'grantedLines', key: 'decision.storageOverRequest', params: { resourceClassId: line.resourceClassId } });
    else {
      if (line.gpuSeconds < asked.gpuSeconds || (line.storageGb !== undefined && line.storageGb < askedStorage)) less = true;
      total += line.gpuSeconds;
    }
  }
  if (input.requested.some((l) => !input.granted.find((g) => g.resourceClassId === l.resourceClassId))) less = true;
  if (total <= 0 && problems.length === 0) problems.push({ field: 'grantedLines', key: 'decision.grantNothing' });
  if (less && !hasComment) problems.push({ field: 'comment', key: 'decision.commentRequired' });
  return problems;
}

// ---- Review paths ----

/** An allocation the tenant holds, with the access mode it was granted under (null: a credit line or a staff grant). */
export interface HeldAllocation {
  accessModeId: string | null;
  status: 'active' | 'expired' | 'suspended';
  periodStart: string;
  periodEnd: string;
}

/**
 * Why a request takes its path: the access mode's own path, or (instantOnceActive) an instant mode
 * asked for again while one of its allocations is still running in the period asked for.
 */
export type ReviewRoute = { path: ReviewPath; reason: 'accessMode' } | { path: 'single'; reason: 'instantOnceActive'; activeUntil: string };

/** Working days a reviewer has for a request an instant mode sent to review (the mode's own target is 0). */
export const SECOND_REQUEST_TARGET_WORKING_DAYS = 5;

/**
 * reviewRouteFor decides how a submitted request is reviewed. An instant mode (Playground) approves
 * once per tenant and period: while the tenant holds an active allocation of that mode whose period
 * overlaps the one asked for (a top-up of it always does), a second request goes to one reviewer,
 * with the reason. Other modes take their own path.
 */
export function reviewRouteFor(input: {
  mode: { id: string; reviewPath: ReviewPath };
  request: { kind: 'new' | 'top_up' | 'renewal'; periodStart: string; periodEnd: string };
  held: HeldAllocation[];
  today: string;
}): ReviewRoute {
  const { mode, request } = input;
  if (mode.reviewPath !== 'instant') return { path: mode.reviewPath, reason: 'accessMode' };
  const running = input.held
    .filter((a) => a.accessModeId === mode.id && a.status === 'active' && a.periodEnd > input.today)
    .filter((a) => request.kind === 'top_up' || (a.periodStart < request.periodEnd && request.periodStart < a.periodEnd))
    .sort((a, b) => (a.periodEnd < b.periodEnd ? 1 : -1));
  const latest = running[0];
  if (latest) return { path: 'single', reason: 'instantOnceActive', activeUntil: latest.periodEnd };
  return { path: 'instant', reason: 'accessMode' };
}

/** reviewTargetWorkingDays is how many working days a request's decision may take on its route. */
export function reviewTargetWorkingDays(route: { reason: ReviewRoute['reason'] }, modeTargetWorkingDays: number): number {
  return route.reason === 'instantOnceActive' ? Math.max(modeTargetWorkingDays, SECOND_REQUEST_TARGET_WORKING_DAYS) : modeTargetWorkingDays;
}

/** decisionRefusal names why a reviewer may not decide a request on its path (full review: admins only), or null. */
export function decisionRefusal(path: ReviewPath, reviewerIsAdmin: boolean): 'decision.fullReviewAdmin' | null {
  return path === 'full' && !reviewerIsAdmin ? 'decision.fullReviewAdmin' : null;
}

/**
 * accessModeConfigProblem says what is wrong with an access mode of the catalogue: an instant mode must have
 * caps (else anyone approves themselves any size, GPU-hours or storage); a line's default storage must fit its cap.
 */
export function accessModeConfigProblem(mode: { id: string; reviewPath: ReviewPath; maxGpuHours: number | null; minGpuHours?: number | null; intake?: AccessIntake; defaultStorageGb?: number; maxStorageGb?: number | null }): string | null {
  if (mode.reviewPath === 'instant' && mode.maxGpuHours === null) return `access mode ${mode.id} approves instantly and needs maxGpuHours`;
  if (mode.minGpuHours != null && mode.maxGpuHours !== null && mode.minGpuHours > mode.maxGpuHours) return `access mode ${mode.id}: minGpuHours ${mode.minGpuHours} is above maxGpuHours ${mode.maxGpuHours}`;
  if (mode.reviewPath === 'instant' && mode.intake === 'rounds') return `access mode ${mode.id} approves instantly and cannot take requests in rounds: use intake first_come`;
  if (mode.reviewPath === 'instant' && mode.maxStorageGb === null) return `access mode ${mode.id} approves instantly and needs maxStorageGb`;
  if (mode.defaultStorageGb !== undefined && mode.maxStorageGb != null && mode.defaultStorageGb > mode.maxStorageGb) return `access mode ${mode.id}: defaultStorageGb ${mode.defaultStorageGb} is above maxStorageGb ${mode.maxStorageGb}`;
  return null;
}

/** The limits a new allocation starts with, until staff set others: GPUs at once, walltime, queued jobs. */
export interface AllocationLimits {
  maxGpusAtOnce: number;
  maxWalltimeSeconds: number;
  maxQueuedJobs: number;
}

const DEFAULT_MAX_GPUS_AT_ONCE = 64;
const DEFAULT_MAX_WALLTIME_SECONDS = 48 * 3600;
const DEFAULT_MAX_QUEUED_JOBS = 50;

/** creditLineLimits are a new credit line's limits (any resource class): 64 GPUs at once, 48 h, 50 queued jobs. */
export function creditLineLimits(): AllocationLimits {
  return { maxGpusAtOnce: DEFAULT_MAX_GPUS_AT_ONCE, maxWalltimeSeconds: DEFAULT_MAX_WALLTIME_SECONDS, maxQueuedJobs: DEFAULT_MAX_QUEUED_JOBS };
}

/** classAllocationLimits are a new allocation's limits on one resource class: at most 64 GPUs at once (fewer if the partition has fewer), its walltime limit, 50 queued jobs. */
export function classAllocationLimits(resourceClass: { gpus: number; nodes: number; maxWalltimeSeconds: number }): AllocationLimits {
  return {
    maxGpusAtOnce: Math.min(DEFAULT_MAX_GPUS_AT_ONCE, resourceClass.gpus * resourceClass.nodes),
    maxWalltimeSeconds: resourceClass.maxWalltimeSeconds,
    maxQueuedJobs: DEFAULT_MAX_QUEUED_JOBS,
  };
}
