import { z } from 'zod';
import { usageReportOut } from '~/server/api/outputs';
import { modelCallReportOut, reportCsvOut, reportJobOut, spendingOverviewOut, storageReportOut } from './report.outputs';
import { router, tenantProcedure, todayOf } from '~/server/api/trpc';
import { isPeriodProblem, resolvePeriod, type PeriodInput } from '~/server/core/usage/periods';
import { AppError } from '~/server/errors';
import { GROUP_BY, reportJobs, usageCsv, usageReport } from '~/server/services/usage/reports';
import { spendingOverview } from '~/server/services/billing/spending-limits';
import { storageCsv, tenantStorageReport } from '~/server/services/usage/storage';
import { modelCallCsv, tenantModelCallReport } from '~/server/services/usage/model-calls';

/** The period of a report: a month, a quarter, or a range of days. */
export const periodField = z.union([
  z.object({ month: z.string().max(7) }),
  z.object({ quarter: z.string().max(7) }),
  z.object({ from: z.string().max(10), to: z.string().max(10) }),
]);

/** periodOf resolves a period or refuses it on the right field. */
export function periodOf(input: PeriodInput) {
  const period = resolvePeriod(input);
  if (isPeriodProblem(period)) throw new AppError('BAD_REQUEST', period.key, period.params, `period.${period.field}`);
  return period;
}

export const reportRouter = router({
  usage: tenantProcedure('member')
    .input(z.object({ period: periodField, groupBy: z.enum(GROUP_BY).default('project') }))
    .output(usageReportOut)
    .query(({ ctx, input }) => usageReport(ctx.db, ctx.tenant, { ...periodOf(input.period), groupBy: input.groupBy }, ctx.locale)),

  csv: tenantProcedure('member')
    .input(z.object({ period: periodField }))
    .output(reportCsvOut)
    .query(async ({ ctx, input }) => {
      const period = periodOf(input.period);
      return { ...period, csv: await usageCsv(ctx.db, ctx.tenant, period) };
    }),

  /** Storage in the period (issue #27): TB-months per project and site, per site as the invoice bills it, and (companies) their price. */
  storage: tenantProcedure('member')
    .input(z.object({ period: periodField }))
    .output(storageReportOut)
    .query(({ ctx, input }) => tenantStorageReport(ctx.db, ctx.tenant, periodOf(input.period), todayOf(ctx), ctx.locale)),

  /** Model calls through the gateway in the period (issue #29): per project and model, tokens, charges, energy, CO2e. */
  modelCalls: tenantProcedure('member')
    .input(z.object({ period: periodField }))
    .output(modelCallReportOut)
    .query(({ ctx, input }) => tenantModelCallReport(ctx.db, ctx.tenant, periodOf(input.period))),

  /** The model-call report as CSV text (served by app/api/reports/model-calls.csv; columns in docs/CSV.md). */
  modelCallsCsv: tenantProcedure('member')
    .input(z.object({ period: periodField }))
    .output(reportCsvOut)
    .query(async ({ ctx, input }) => {
      const period = periodOf(input.period);
      return { ...period, csv: modelCallCsv(await tenantModelCallReport(ctx.db, ctx.tenant, period)) };
    }),

  /** The storage report as CSV text (served by app/api/reports/storage.csv; columns in docs/CSV.md). */
  storageCsv: tenantProcedure('member')
    .input(z.object({ period: periodField }))
    .output(reportCsvOut)
    .query(async ({ ctx, input }) => {
      const period = periodOf(input.period);
      return { ...period, csv: storageCsv(await tenantStorageReport(ctx.db, ctx.tenant, period, todayOf(ctx), ctx.locale)) };
    }),

  jobs: tenantProcedure('member')
    .input(z.object({ period: periodField, limit: z.number().int().min(1).max(1000).default(200) }))
    .output(z.array(reportJobOut))
    .query(({ ctx, input }) => reportJobs(ctx.db, ctx.tenant, { ...periodOf(input.period), limit: input.limit })),

  /** This month's spend against the company's cap and each project's and person's budget (members see their own limit only). */
  spending: tenantProcedure('member').output(spendingOverviewOut).query(({ ctx }) => spendingOverview(ctx.db, ctx.tenant, todayOf(ctx))),
});
