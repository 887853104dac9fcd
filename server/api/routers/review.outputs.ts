// What the review procedures answer (issue #32): an application's panel, a round's ranking, a bulk decision's results.
import { z } from 'zod';
import { isoDateOut, rubricCriterionOut } from '~/server/api/outputs';

const reviewStatusOut = z.enum(['assigned', 'scored', 'declined']);
const conflictReasonOut = z.enum(['organisation', 'project', 'declared']);

export const panelOut = z.object({
  applicationId: z.string(),
  status: z.enum(['draft', 'submitted', 'changes_requested', 'approved', 'rejected']),
  rubric: z.array(rubricCriterionOut),
  reviews: z.array(
    z.object({
      id: z.string(),
      reviewerUserId: z.string(),
      reviewerName: z.string(),
      status: reviewStatusOut,
      scores: z.record(z.string(), z.number().int()).nullable(),
      commentToApplicant: z.string(),
      internalNote: z.string(),
      declineReason: z.string().nullable(),
      assignedAt: isoDateOut,
      scoredAt: isoDateOut.nullable(),
    }),
  ),
  /** The viewer's own assignment, if any (the same row as in `reviews`). */
  mine: z.object({ id: z.string(), status: reviewStatusOut, scores: z.record(z.string(), z.number().int()).nullable(), commentToApplicant: z.string(), internalNote: z.string() }).nullable(),
  /** Every member of staff: assigned or not, and excluded by a conflict of interest or not (and why). */
  staff: z.array(z.object({ userId: z.string(), name: z.string(), roles: z.array(z.string()), assigned: z.boolean(), excluded: z.boolean(), conflict: conflictReasonOut.nullable(), overridden: z.boolean() })),
  conflictLog: z.array(z.object({ reviewerUserId: z.string(), reviewerName: z.string(), kind: z.enum(['declared', 'override']), reason: z.string(), at: isoDateOut, byName: z.string() })),
});

export const rankingOut = z.object({
  round: z.object({ id: z.string(), cutoffAt: isoDateOut, status: z.enum(['open', 'closed']), callId: z.string(), callTitle: z.string(), gpuSecondsPerRound: z.number().int(), rubric: z.array(rubricCriterionOut), accessModeId: z.string() }),
  panel: z.array(z.object({ reviewerUserId: z.string(), name: z.string() })),
  rows: z.array(
    z.object({
      rank: z.number().int(),
      aboveLine: z.boolean(),
      cumulativeGpuSeconds: z.number().int(),
      gpuSeconds: z.number().int(),
      requestedGpuSeconds: z.number().int(),
      status: z.enum(['submitted', 'approved', 'rejected', 'changes_requested']),
      /** The viewer has a conflict of interest with it: it keeps its place, and shows nothing else. */
      excluded: z.boolean(),
      applicationId: z.string().nullable(),
      projectTitle: z.string().nullable(),
      orgName: z.string().nullable(),
      /** Mean score in hundredths (367 = 3.67); null unscored or withheld. */
      scoreHundredths: z.number().int().nullable(),
      scoredReviews: z.number().int().nullable(),
      assignedReviews: z.number().int().nullable(),
    }),
  ),
});

export const bulkResultOut = z.array(
  z.object({
    applicationId: z.string(),
    status: z.enum(['approved', 'rejected', 'changes_requested']).nullable(),
    /** Why this one was not decided, in the caller's language; null when it was. */
    error: z.string().nullable(),
  }),
);

export const staffMemberOut = z.object({ userId: z.string(), name: z.string(), email: z.string(), roles: z.array(z.string()) });
