// Panels, scores and conflicts of interest (issue #32): reviewers score an application on its call's
// rubric (each criterion 1–5, a comment to the applicant, an internal note); a round's applications are
// ranked by their mean score with a cut line where the round's GPU-hours run out; a reviewer of the
// applicant's organisation or on its project is excluded, as is one who declared a conflict, unless an
// admin overrode it. Pure.

export interface RubricCriterion {
  id: string;
  name: string;
  nameDe: string;
}

/** The rubric of a call staff opened without one: the criteria of EuroHPC's peer review. */
export const DEFAULT_RUBRIC: readonly RubricCriterion[] = [
  { id: 'excellence', name: 'Excellence', nameDe: 'Exzellenz' },
  { id: 'feasibility', name: 'Technical feasibility', nameDe: 'Technische Machbarkeit' },
  { id: 'impact', name: 'Impact', nameDe: 'Wirkung' },
];

export const SCORE_MIN = 1;
export const SCORE_MAX = 5;
export const MAX_CRITERIA = 8;

/** rubricFromNames makes a rubric from the criteria's names (one per line), or says what is wrong with them. */
export function rubricFromNames(names: readonly string[]): { rubric: RubricCriterion[] } | { problem: { field: 'rubric'; key: 'call.rubricSize' | 'call.rubricTwice'; params: Record<string, string | number> } } {
  const kept = names.map((n) => n.trim()).filter(Boolean);
  if (kept.length < 1 || kept.length > MAX_CRITERIA) return { problem: { field: 'rubric', key: 'call.rubricSize', params: { max: MAX_CRITERIA } } };
  const rubric: RubricCriterion[] = [];
  for (const name of kept) {
    const id = name.normalize('NFKD').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || `criterion-${rubric.length + 1}`;
    if (rubric.some((c) => c.id === id)) return { problem: { field: 'rubric', key: 'call.rubricTwice', params: { criterion: name } } };
    rubric.push({ id, name, nameDe: name });
  }
  return { rubric };
}

export interface ScoreInput {
  scores: Record<string, number>;
  commentToApplicant: string;
  internalNote: string;
}

export type ScoreProblem =
  | { field: 'scores'; key: 'review.scoreMissing'; params: { criterion: string } }
  | { field: 'scores'; key: 'review.scoreRange'; params: { criterion: string; min: number; max: number } }
  | { field: 'scores'; key: 'review.scoreUnknown'; params: { criterion: string } }
  | { field: 'commentToApplicant'; key: 'review.commentMissing' };

/** checkScores says what is wrong with a review: every criterion of the rubric scored 1–5 (whole), none other, a comment to the applicant. */
export function checkScores(rubric: readonly RubricCriterion[], input: ScoreInput): ScoreProblem[] {
  const problems: ScoreProblem[] = [];
  for (const criterion of rubric) {
    const score = input.scores[criterion.id];
    if (score === undefined) problems.push({ field: 'scores', key: 'review.scoreMissing', params: { criterion: criterion.name } });
    else if (!Number.isInteger(score) || score < SCORE_MIN || score > SCORE_MAX) problems.push({ field: 'scores', key: 'review.scoreRange', params: { criterion: criterion.name, min: SCORE_MIN, max: SCORE_MAX } });
  }
  for (const id of Object.keys(input.scores)) {
    if (!rubric.some((c) => c.id === id)) problems.push({ field: 'scores', key: 'review.scoreUnknown', params: { criterion: id } });
  }
  if (!input.commentToApplicant.trim()) problems.push({ field: 'commentToApplicant', key: 'review.commentMissing' });
  return problems;
}

/** Why a reviewer may not review an application: a member of its organisation, on its project, or declared. */
export type ConflictReason = 'organisation' | 'project' | 'declared';

export interface ConflictRow {
  kind: 'declared' | 'override';
  seq: number;
}

/**
 * conflictState is whether a reviewer is excluded from an application: by an automatic conflict (a member
 * of the applicant's organisation, or on the project) or a declared one, unless the latest recorded row
 * is an admin's override. A declaration after an override excludes again.
 */
export function conflictState(automatic: 'organisation' | 'project' | null, rows: readonly ConflictRow[]): { excluded: boolean; reason: ConflictReason | null; overridden: boolean } {
  const latest = rows.reduce<ConflictRow | null>((best, r) => (!best || r.seq > best.seq ? r : best), null);
  if (latest?.kind === 'declared') return { excluded: true, reason: 'declared', overridden: false };
  const reason: ConflictReason | null = automatic ?? (rows.some((r) => r.kind === 'declared') ? 'declared' : null);
  if (latest?.kind === 'override' && reason) return { excluded: false, reason, overridden: true };
  return { excluded: reason !== null, reason, overridden: false };
}

export interface RankInput {
  id: string;
  status: 'submitted' | 'approved' | 'rejected' | 'changes_requested';
  submittedAt: Date;
  /** GPU-seconds asked for; for an approved one, what was granted. */
  gpuSeconds: number;
  /** The scored reviews' scores. */
  reviews: readonly Record<string, number>[];
}

export interface Ranked<T extends RankInput> {
  row: T;
  rank: number;
  /** The mean of every criterion of every scored review, in hundredths (3.67 → 367); null unscored. */
  scoreHundredths: number | null;
  /** GPU-seconds of this and every row ranked above it that still counts against the round (waiting or approved). */
  cumulativeGpuSeconds: number;
  /** Within the round's GPU-hours: this and every counting row above it fit. */
  aboveLine: boolean;
}

/** meanHundredths is the mean of every score given, in hundredths, or null without any. */
export function meanHundredths(reviews: readonly Record<string, number>[]): number | null {
  let total = 0;
  let n = 0;
  for (const scores of reviews) {
    for (const v of Object.values(scores)) {
      total += v;
      n += 1;
    }
  }
  return n ? Math.round((total * 100) / n) : null;
}

/**
 * rankRound sorts a round's applications by mean score (highest first; unscored last; ties by earlier
 * submission) and draws the cut line at the round's budget: going down the ranking, the applications that
 * count (waiting or approved; rejected and sent-back ones do not) are above the line while their GPU-hours
 * together fit; the first that does not fit, and every one below it, are under it.
 */
export function rankRound<T extends RankInput>(rows: readonly T[], budgetGpuSeconds: number): Ranked<T>[] {
  const scored = rows.map((row) => ({ row, score: meanHundredths(row.reviews) }));
  scored.sort((a, b) => {
    if (a.score !== b.score) return a.score === null ? 1 : b.score === null ? -1 : b.score - a.score;
    return a.row.submittedAt.getTime() - b.row.submittedAt.getTime() || a.row.id.localeCompare(b.row.id);
  });
  let cumulative = 0;
  let open = true;
  return scored.map(({ row, score }, i) => {
    const counts = row.status === 'submitted' || row.status === 'approved';
    if (counts) cumulative += row.gpuSeconds;
    if (counts && cumulative > budgetGpuSeconds) open = false;
    return { row, rank: i + 1, scoreHundredths: score, cumulativeGpuSeconds: cumulative, aboveLine: counts && open };
  });
}
