// Rules for applications and decisions: what a request may ask for, what a reviewer may grant. Pure.
import { daysBetween } from './working-days';

export interface AccessModeRules {
  /** Largest total request in GPU-seconds; null = any size. */
  maxGpuSeconds: number | null;
  durationDays: number;
}

export interface RequestLine {
  resourceClassId: string;
  gpuSeconds: number;
}

export type ApplicationProblem =
  | { field: 'lines'; key: 'application.noLines' | 'application.duplicateClass' }
  | { field: 'lines'; key: 'application.overModeCap'; params: { requested: number; cap: number } }
  | { field: 'periodEnd'; key: 'application.endBeforeStart' }
  | { field: 'periodEnd'; key: 'application.periodTooLong'; params: { days: number; max: number } }
  | { field: 'periodStart'; key: 'application.startInPast'; params: { today: string } };

/** checkApplicationRequest lists what is wrong with a request under an access mode (empty = fine). Amounts in GPU-seconds; caps reported in GPU-hours. */
export function checkApplicationRequest(input: { mode: AccessModeRules; lines: RequestLine[]; periodStart: string; periodEnd: string; today: string }): ApplicationProblem[] {
  const problems: ApplicationProblem[] = [];
  const { mode, lines } = input;
  if (lines.length === 0) problems.push({ field: 'lines', key: 'application.noLines' });
  if (new Set(lines.map((l) => l.resourceClassId)).size !== lines.length) problems.push({ field: 'lines', key: 'application.duplicateClass' });
  const total = lines.reduce((s, l) => s + l.gpuSeconds, 0);
  if (mode.maxGpuSeconds !== null && total > mode.maxGpuSeconds) {
    problems.push({ field: 'lines', key: 'application.overModeCap', params: { requested: total / 3600, cap: mode.maxGpuSeconds / 3600 } });
  }
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
  | { field: 'grantedLines'; key: 'decision.grantUnknownClass'; params: { resourceClassId: string } }
  | { field: 'grantedLines'; key: 'decision.grantNothing' };

/**
 * checkDecision validates a reviewer's decision: approvals grant at most what was requested per
 * resource class and something in total; a comment is required for rejections, change requests and
 * for approvals that grant less than requested.
 */
export function checkDecision(input: { outcome: DecisionOutcome; requested: RequestLine[]; granted: RequestLine[]; comment: string }): DecisionProblem[] {
  const problems: DecisionProblem[] = [];
  const hasComment = input.comment.trim().length > 0;
  if (input.outcome !== 'approved') {
    if (!hasComment) problems.push({ field: 'comment', key: 'decision.commentRequired' });
    return problems;
  }
  const requested = new Map(input.requested.map((l) => [l.resourceClassId, l.gpuSeconds]));
  let total = 0;
  let less = false;
  for (const line of input.granted) {
    const asked = requested.get(line.resourceClassId);
    if (asked === undefined) problems.push({ field: 'grantedLines', key: 'decision.grantUnknownClass', params: { resourceClassId: line.resourceClassId } });
    else if (line.gpuSeconds > asked) problems.push({ field: 'grantedLines', key: 'decision.grantOverRequest', params: { resourceClassId: line.resourceClassId } });
    else {
      if (line.gpuSeconds < asked) less = true;
      total += line.gpuSeconds;
    }
  }
  if (input.requested.some((l) => !input.granted.find((g) => g.resourceClassId === l.resourceClassId))) less = true;
  if (total <= 0 && problems.length === 0) problems.push({ field: 'grantedLines', key: 'decision.grantNothing' });
  if (less && !hasComment) problems.push({ field: 'comment', key: 'decision.commentRequired' });
  return problems;
}
