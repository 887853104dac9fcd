// Calls and their rounds (issue #32): admins open a call of an access mode that takes requests in rounds;
// staff list them with each round's applications. Rules in server/core/calls.ts, the work in
// server/services/ledger/calls.ts.
import { z } from 'zod';
import { catalogueIdField, gpuHoursField, textField } from '~/server/api/fields';
import { router, staffProcedure } from '~/server/api/trpc';
import { MAX_CUTOFFS } from '~/server/core/calls';
import { MAX_CRITERIA } from '~/server/core/reviews';
import { listCalls, openCall } from '~/server/services/ledger/calls';
import { callOut, openedCallOut } from './call.outputs';

export const openCallInput = z.object({
  accessModeId: catalogueIdField,
  title: textField(1, 200),
  description: textField(0, 5000, { multiline: true }).default(''),
  gpuHoursPerRound: gpuHoursField,
  /** The rounds' cut-offs, as instants with their offset (2027-01-15T17:00:00+01:00). */
  cutoffs: z.array(z.iso.datetime({ offset: true, message: 'call.cutoffFormat' })).min(1).max(MAX_CUTOFFS),
  /** The criteria reviewers score 1–5, by name; absent or empty: excellence, technical feasibility, impact. */
  rubric: z.array(textField(1, 120)).max(MAX_CRITERIA, 'call.rubricSize').optional(),
});

export const callRouter = router({
  list: staffProcedure()
    .output(z.array(callOut))
    .query(({ ctx }) => listCalls(ctx.db)),

  open: staffProcedure('admin')
    .input(openCallInput)
    .output(openedCallOut)
    .mutation(({ ctx, input }) => openCall(ctx.db, ctx.actor, { ...input, cutoffs: input.cutoffs.map((c) => new Date(c)) }, ctx.now())),
});
