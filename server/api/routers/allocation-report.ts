// End-of-allocation reports (issue #32): the PI files what an allocation produced; staff see the reports
// filed and those missing. The work is in server/services/ledger/reports.ts, the rules in server/core/reports.ts.
import { z } from 'zod';
import { router, staffProcedure, tenantProcedure, todayOf } from '~/server/api/trpc';
import { textField, uuidField } from '~/server/api/fields';
import { isoDateOut } from '~/server/api/outputs';
import { MAX_DATASETS, MAX_PUBLICATIONS, REPORT_SUMMARY_MAX, REPORT_SUMMARY_MIN } from '~/server/core/reports';
import { fileReport, filedReports, missingReports } from '~/server/services/ledger/reports';

// Each entry is checked by the service (a DOI, or a DOI or https address) and refused on its field with the entry named.
const entry = z.string().trim().min(1).max(500);

export const allocationReportRouter = router({
  /** Files (or files again) an approved request's report: a summary, publications by DOI, data sets by DOI or https address. */
  file: tenantProcedure('member')
    .meta({ openapi: { method: 'POST', path: '/applications/{applicationId}/report', tags: ['applications'], summary: 'File the end-of-allocation report of an approved application', protect: true }, scope: 'applications:write' })
    .input(
      z.object({
        applicationId: uuidField,
        summary: textField(REPORT_SUMMARY_MIN, REPORT_SUMMARY_MAX, { multiline: true }),
        publications: z.array(entry).max(MAX_PUBLICATIONS).default([]),
        datasets: z.array(entry).max(MAX_DATASETS).default([]),
      }),
    )
    .output(z.object({ applicationId: z.string(), publications: z.array(z.string()), datasets: z.array(z.string()), filedAt: isoDateOut, updatedAt: isoDateOut }))
    .mutation(({ ctx, input }) => fileReport(ctx.db, ctx.tenant, input, ctx.now())),

  /** Staff: the requests whose period ended without a report (longest overdue first), and the latest reports filed. */
  overview: staffProcedure()
    .output(
      z.object({
        missing: z.array(z.object({ applicationId: z.string(), projectTitle: z.string(), orgName: z.string(), periodEnd: z.string(), requestedAt: isoDateOut.nullable(), pis: z.array(z.object({ userId: z.string(), name: z.string() })) })),
        filed: z.array(z.object({ applicationId: z.string(), projectTitle: z.string(), orgName: z.string(), filedAt: isoDateOut, updatedAt: isoDateOut, publications: z.array(z.string()), datasets: z.array(z.string()), filedByName: z.string() })),
      }),
    )
    .query(async ({ ctx }) => {
      const [missing, filed] = await Promise.all([missingReports(ctx.db, todayOf(ctx)), filedReports(ctx.db)]);
      return { missing, filed };
    }),
});
