// The REST API's own shapes (issue #13): lists with cursors or an `items` wrapper and flat query
// parameters, where the browser's procedures answer differently. Each delegates to the same service
// as its browser twin; the rest of `/api/v1` are the browser's procedures themselves (their
// `meta.openapi`), so a script and the web form run the same code.
import { z } from 'zod';
import { jobState } from '~/db/schema';
import { uuidField } from '~/server/api/fields';
import { allocationOverviewOut, invoiceRowOut, jobRowOut, usageReportOut } from '~/server/api/outputs';
import { router, tenantProcedure } from '~/server/api/trpc';
import { decodeCursor, pageOf } from '~/server/core/rest/cursor';
import { AppError } from '~/server/errors';
import { listTenantAllocations } from '~/server/services/ledger/allocations';
import { listInvoices } from '~/server/services/billing/invoices';
import { listJobs } from '~/server/services/jobs/jobs';
import { GROUP_BY, usageReport } from '~/server/services/usage/reports';
import { periodOf } from './report';

/** A row of a tenant's allocation list (the REST API's `/allocations`): the page's head and balance, no chart or ledger. */
const allocationRowOut = allocationOverviewOut
  .pick({ id: true, projectId: true, projectTitle: true, resourceClassName: true, unit: true, periodStart: true, periodEnd: true, status: true, statusReason: true, maxGpusAtOnce: true, maxWalltimeSeconds: true, maxQueuedJobs: true, balance: true })
  .extend({ resourceClassId: z.string().nullable() });

/** A period as query parameters: `month=YYYY-MM`, `quarter=YYYY-Qn`, or `from=…&to=…` (days, inclusive). */
const periodParams = {
  month: z.string().max(7).optional(),
  quarter: z.string().max(7).optional(),
  from: z.string().max(10).optional(),
  to: z.string().max(10).optional(),
};

/** periodFromParams picks the period the parameters name (month, else quarter, else the range). */
export function periodFromParams(input: { month?: string; quarter?: string; from?: string; to?: string }) {
  if (input.month !== undefined) return periodOf({ month: input.month });
  if (input.quarter !== undefined) return periodOf({ quarter: input.quarter });
  return periodOf({ from: input.from ?? '', to: input.to ?? '' });
}

export const apiRouter = router({
  jobs: tenantProcedure('member')
    .meta({ openapi: { method: 'GET', path: '/jobs', tags: ['jobs'], summary: 'List jobs, newest first (a page; pass nextCursor as cursor for the next)', protect: true } })
    .input(
      z.object({
        limit: z.number().int().min(1).max(500).default(50),
        cursor: z.string().max(200).optional(),
        state: z.enum(jobState.enumValues).optional(),
        status: z.enum(['active', 'finished', 'all']).default('all'),
        projectId: uuidField.optional(),
        kind: z.enum(['training', 'fine_tuning', 'inference', 'batch', 'interactive']).optional(),
      }),
    )
    .output(z.object({ items: z.array(jobRowOut), nextCursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
      if (after === null) throw new AppError('BAD_REQUEST', 'api.cursorInvalid', {}, 'cursor');
      const { cursor: _cursor, ...filter } = input;
      const rows = await listJobs(ctx.db, ctx.tenant, { ...filter, limit: input.limit + 1, after: after && { submittedAt: after.at, id: after.id } });
      return pageOf(rows, input.limit, (row) => ({ at: row.submittedAt, id: row.id }));
    }),

  allocations: tenantProcedure('member')
    .meta({ openapi: { method: 'GET', path: '/allocations', tags: ['allocations'], summary: 'List allocations with their balances', protect: true } })
    .output(z.object({ items: z.array(allocationRowOut) }))
    .query(async ({ ctx }) => ({ items: await listTenantAllocations(ctx.db, ctx.tenant) })),

  usage: tenantProcedure('member')
    .meta({ openapi: { method: 'GET', path: '/usage', tags: ['usage'], summary: 'Usage report for a period (month=YYYY-MM, quarter=YYYY-Qn or from/to)', protect: true } })
    .input(z.object({ ...periodParams, groupBy: z.enum(GROUP_BY).default('project') }))
    .output(usageReportOut)
    .query(({ ctx, input }) => usageReport(ctx.db, ctx.tenant, { ...periodFromParams(input), groupBy: input.groupBy })),

  invoices: tenantProcedure('manager')
    .meta({ openapi: { method: 'GET', path: '/invoices', tags: ['invoices'], summary: 'List invoices (company tenants; owners and managers)', protect: true } })
    .output(z.object({ items: z.array(invoiceRowOut) }))
    .query(async ({ ctx }) => ({ items: await listInvoices(ctx.db, ctx.tenant, ctx.now().toISOString().slice(0, 10)) })),
});
