import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { dayField, orgKindField, resourceClassIdField } from '~/server/api/fields';
import { centreCsvOut, centreDashboardOut, centreDecisionTimesOut, centrePartitionOut, centreStorageOut } from './centre.outputs';
import { decisionTimes } from '~/server/services/ledger/applications';
import { centreStorage } from '~/server/services/usage/storage';
import { centreModelCalls } from '~/server/services/usage/model-calls';
import { centreModelCallsOut } from './report.outputs';
import { router, staffProcedure, todayOf } from '~/server/api/trpc';
import { rangeProblem } from '~/server/core/usage/percentiles';
import { AppError } from '~/server/errors';
import { isMessageKey, translate, type Locale } from '~/server/i18n';
import { CENTRE_CSV_TABLES, centreDashboard, centreDashboardCsv, centrePartitions, rangeMessageKey } from '~/server/services/usage/centre';

const centreFields = {
  from: dayField,
  to: dayField,
  partition: resourceClassIdField.optional(),
  tenantKind: orgKindField.optional(),
};

/** The range must run forwards and span at most two years; the refusal names the `to` field. */
function checkRange(value: { from: string; to: string }, ctx: z.RefinementCtx) {
  const problem = rangeProblem(value.from, value.to);
  if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: rangeMessageKey(problem.problem) });
}

export const centreInput = z.object(centreFields).superRefine(checkRange);
export const centreCsvInput = z.object({ ...centreFields, table: z.enum(CENTRE_CSV_TABLES).default('partitions') }).superRefine(checkRange);

export const centreRouter = router({
  dashboard: staffProcedure()
    .input(centreInput)
    .output(centreDashboardOut)
    .query(({ ctx, input }) => centreDashboard(ctx.db, input, ctx.locale)),

  /** Storage per tenant (held now, granted, TB-months in the range) and the centre's totals (issue #27). */
  storage: staffProcedure()
    .input(centreInput)
    .output(centreStorageOut)
    .query(({ ctx, input }) => centreStorage(ctx.db, input, todayOf(ctx), { tenantKind: input.tenantKind })),

  /** Model calls through the gateway per tenant and model in the range (issue #29): tokens, charges, energy, CO2e. */
  modelCalls: staffProcedure()
    .input(centreInput)
    .output(centreModelCallsOut)
    .query(({ ctx, input }) => centreModelCalls(ctx.db, input)),

  /** Decision times against the access modes' targets (issue #32): decided in the range, waiting now. */
  decisionTimes: staffProcedure()
    .input(centreInput)
    .output(centreDecisionTimesOut)
    .query(({ ctx, input }) => decisionTimes(ctx.db, input, ctx.now())),

  partitions: staffProcedure()
    .output(z.array(centrePartitionOut))
    .query(({ ctx }) => centrePartitions(ctx.db, ctx.locale)),

  /** The dashboard as CSV text, with its download name (served by app/api/centre/csv). */
  csv: staffProcedure()
    .input(centreCsvInput)
    .output(centreCsvOut)
    .query(({ ctx, input }) => centreDashboardCsv(ctx.db, input, input.table)),
});

export interface CentreRefusal {
  status: 400 | 401 | 403 | 404;
  message: string;
  fieldErrors: Record<string, string>;
}

const STATUS: Partial<Record<TRPCError['code'], CentreRefusal['status']>> = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 };

/**
 * centreRefusal turns an error of a centre procedure called in-process (page, CSV route) into a
 * status and a message in the caller's language, with the message per field; undefined for errors
 * that are not the caller's (those stay 500s).
 */
export function centreRefusal(error: unknown, locale: Locale): CentreRefusal | undefined {
  if (!(error instanceof TRPCError)) return undefined;
  const status = STATUS[error.code];
  if (!status) return undefined;
  const cause = error.cause;
  const fieldErrors: Record<string, string> = {};
  if (cause instanceof AppError) {
    const message = translate(locale, cause.key, cause.params);
    if (cause.field) fieldErrors[cause.field] = message;
    return { status, message, fieldErrors };
  }
  if (cause instanceof z.ZodError) {
    for (const issue of cause.issues) {
      const field = issue.path.map(String).join('.') || '_';
      fieldErrors[field] ??= isMessageKey(issue.message)
        ? translate(locale, issue.message)
        : issue.code === 'invalid_value'
          ? translate(locale, 'validation.oneOf', { values: issue.values.map(String).join(', ') })
          : issue.code === 'invalid_type' && issue.input === undefined
            ? translate(locale, 'validation.required')
            : translate(locale, 'validation.invalid');
    }
    const message = Object.entries(fieldErrors)
      .map(([field, text]) => (field === '_' ? text : `${field}: ${text}`))
      .join(' ');
    return { status, message, fieldErrors };
  }
  return { status, message: error.message, fieldErrors };
}
