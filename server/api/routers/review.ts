// Panels, scores and conflicts of interest (issue #32): admins assign reviewers to an application or a
// round's panel and override conflicts; reviewers score on the call's rubric, decline, or declare a
// conflict; staff read a round's ranking and decide from it in bulk. The work is in
// server/services/ledger/reviews.ts and bulk-decisions.ts, the rules in server/core/reviews.ts.
import { z } from 'zod';
import { budgetSync, router, staffProcedure } from '~/server/api/trpc';
import { commentField, reasonField, textField, uuidField } from '~/server/api/fields';
import { SCORE_MAX, SCORE_MIN } from '~/server/core/reviews';
import { translate } from '~/server/i18n';
import { decideInBulk } from '~/server/services/ledger/bulk-decisions';
import { assignReviewer, assignRoundPanel, declareConflict, declineReview, overrideConflict, reviewsOf, roundRanking, staffMembers, submitReview } from '~/server/services/ledger/reviews';
import { bulkResultOut, panelOut, rankingOut, staffMemberOut } from './review.outputs';

const applicationInput = z.object({ applicationId: uuidField });

export const reviewRouter = router({
  /** An application's panel: rubric, reviews with their notes, the viewer's own, staff and their conflicts. */
  ofApplication: staffProcedure()
    .input(applicationInput)
    .output(panelOut)
    .query(({ ctx, input }) => reviewsOf(ctx.db, ctx.actor, input.applicationId)),

  staff: staffProcedure()
    .output(z.array(staffMemberOut))
    .query(({ ctx }) => staffMembers(ctx.db)),

  assign: staffProcedure('admin')
    .input(z.object({ applicationId: uuidField, reviewerUserId: uuidField }))
    .output(z.object({ assigned: z.boolean() }))
    .mutation(({ ctx, input }) => assignReviewer(ctx.db, ctx.actor, input, ctx.now())),

  assignPanel: staffProcedure('admin')
    .input(z.object({ roundId: uuidField, reviewerUserId: uuidField }))
    .output(z.object({ assigned: z.number().int(), skippedForConflict: z.number().int() }))
    .mutation(({ ctx, input }) => assignRoundPanel(ctx.db, ctx.actor, input, ctx.now())),

  submit: staffProcedure()
    .input(
      z.object({
        applicationId: uuidField,
        /** Each rubric criterion's score, a whole number 1–5 (the call's rubric decides which criteria). */
        scores: z.record(z.string().min(1).max(64), z.number().int().min(SCORE_MIN).max(SCORE_MAX)).refine((s) => Object.keys(s).length <= 8, { message: 'review.scoreUnknown' }),
        commentToApplicant: textField(1, 5000, { multiline: true }),
        internalNote: commentField.default(''),
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => submitReview(ctx.db, ctx.actor, input.applicationId, input, ctx.now())),

  decline: staffProcedure()
    .input(z.object({ applicationId: uuidField, reason: reasonField }))
    .output(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => declineReview(ctx.db, ctx.actor, input.applicationId, input.reason, ctx.now())),

  declareConflict: staffProcedure()
    .input(z.object({ applicationId: uuidField, reason: reasonField }))
    .output(z.object({ declared: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await declareConflict(ctx.db, ctx.actor, input.applicationId, input.reason, ctx.now());
      return { declared: true as const };
    }),

  overrideConflict: staffProcedure('admin')
    .input(z.object({ applicationId: uuidField, reviewerUserId: uuidField, reason: reasonField }))
    .output(z.object({ overridden: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await overrideConflict(ctx.db, ctx.actor, input, ctx.now());
      return { overridden: true as const };
    }),

  ranking: staffProcedure()
    .input(z.object({ roundId: uuidField }))
    .output(rankingOut)
    .query(({ ctx, input }) => roundRanking(ctx.db, ctx.actor, input.roundId)),

  decideBulk: staffProcedure()
    .input(
      z.object({
        roundId: uuidField,
        applicationIds: z.array(uuidField).min(1, 'ranking.noneSelected').max(200),
        outcome: z.enum(['approved', 'rejected', 'changes_requested']),
        comment: commentField.default(''),
      }),
    )
    .output(bulkResultOut)
    .mutation(async ({ ctx, input }) => {
      const results = await decideInBulk(ctx.db, ctx.actor, input, ctx.now(), budgetSync(ctx));
      return results.map((r) => ({ applicationId: r.applicationId, status: r.status, error: r.error ? translate(ctx.locale, r.error.key, r.error.params) : null }));
    }),
});
