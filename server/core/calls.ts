// Calls and rounds (issue #32): an access mode that takes requests in rounds (Large Scale) gathers them by
// a call's cut-offs. An application submitted up to and at a round's cut-off joins that round; one second
// later it joins the next. A round closes at its cut-off, and its applications are reviewed together; the
// decision is due a set number of working days after the cut-off. Pure rules; the tables are in db/schema.ts.

/** The most cut-offs one call may list (two a month for a year). */
export const MAX_CUTOFFS = 24;

export interface RoundLike {
  id: string;
  cutoffAt: Date;
  status: 'open' | 'closed';
}

/**
 * roundFor is the round an application submitted at `submittedAt` joins: the open round with the earliest
 * cut-off at or after it; null when every cut-off has passed (the call takes no more).
 */
export function roundFor<R extends RoundLike>(rounds: readonly R[], submittedAt: Date): R | null {
  let best: R | null = null;
  for (const round of rounds) {
    if (round.status !== 'open' || round.cutoffAt.getTime() < submittedAt.getTime()) continue;
    if (!best || round.cutoffAt.getTime() < best.cutoffAt.getTime()) best = round;
  }
  return best;
}

/** roundsToClose are the open rounds whose cut-off has passed at `now`, earliest first. */
export function roundsToClose<R extends RoundLike>(rounds: readonly R[], now: Date): R[] {
  return rounds.filter((r) => r.status === 'open' && r.cutoffAt.getTime() < now.getTime()).sort((a, b) => a.cutoffAt.getTime() - b.cutoffAt.getTime());
}

export interface CallInput {
  accessModeId: string;
  title: string;
  description: string;
  /** GPU-hours the centre gives out in each round (the ranking's cut line). */
  gpuHoursPerRound: number;
  /** The rounds' cut-offs, as instants. */
  cutoffs: Date[];
  /** The criteria its reviewers score, by name; absent or empty: the default rubric (server/core/reviews.ts). */
  rubric?: string[];
}

export type CallProblem =
  | { field: 'accessModeId'; key: 'call.modeNotRounds'; params: { mode: string } }
  | { field: 'title'; key: 'call.titleMissing' }
  | { field: 'gpuHoursPerRound'; key: 'call.budgetNotPositive' }
  | { field: 'cutoffs'; key: 'call.noCutoffs' }
  | { field: 'cutoffs'; key: 'call.tooManyCutoffs'; params: { max: number } }
  | { field: 'cutoffs'; key: 'call.cutoffPast'; params: { cutoff: string } }
  | { field: 'cutoffs'; key: 'call.cutoffTwice'; params: { cutoff: string } };

/**
 * checkCall says what is wrong with a call staff are about to open: its mode must take requests in rounds,
 * it needs a title, a positive budget per round, and 1 to 24 distinct cut-offs after `now`.
 */
export function checkCall(input: CallInput, mode: { id: string; intake: 'first_come' | 'rounds' }, now: Date): CallProblem[] {
  const problems: CallProblem[] = [];
  if (mode.intake !== 'rounds') problems.push({ field: 'accessModeId', key: 'call.modeNotRounds', params: { mode: mode.id } });
  if (!input.title.trim()) problems.push({ field: 'title', key: 'call.titleMissing' });
  if (!(Number.isInteger(input.gpuHoursPerRound) && input.gpuHoursPerRound > 0)) problems.push({ field: 'gpuHoursPerRound', key: 'call.budgetNotPositive' });
  if (input.cutoffs.length === 0) problems.push({ field: 'cutoffs', key: 'call.noCutoffs' });
  if (input.cutoffs.length > MAX_CUTOFFS) problems.push({ field: 'cutoffs', key: 'call.tooManyCutoffs', params: { max: MAX_CUTOFFS } });
  const seen = new Set<number>();
  for (const cutoff of input.cutoffs) {
    if (cutoff.getTime() <= now.getTime()) {
      problems.push({ field: 'cutoffs', key: 'call.cutoffPast', params: { cutoff: cutoff.toISOString() } });
      break;
    }
    if (seen.has(cutoff.getTime())) {
      problems.push({ field: 'cutoffs', key: 'call.cutoffTwice', params: { cutoff: cutoff.toISOString() } });
      break;
    }
    seen.add(cutoff.getTime());
  }
  return problems;
}
