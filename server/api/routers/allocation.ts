import { z } from 'zod';
import { router, tenantProcedure, todayOf } from '~/server/api/trpc';
import { textField, uuidField } from '~/server/api/fields';
import { allocationOverviewOut, nothing } from '~/server/api/outputs';
import { getAllocationOverview, setMonthlyCap } from '~/server/services/ledger/allocations';

export const allocationRouter = router({
  overview: tenantProcedure('member')
    .input(z.object({ allocationId: uuidField }))
    .output(allocationOverviewOut)
    .query(({ ctx, input }) => getAllocationOverview(ctx.db, { tenant: ctx.tenant }, input.allocationId, todayOf(ctx), ctx.locale)),

  /** A company owner caps the tenant's monthly spending (null removes the cap). */
  setMonthlyCap: tenantProcedure('owner')
    .input(z.object({ capEuros: z.number().int().min(1).max(100_000_000).nullable(), reason: textField(0, 1000, { multiline: true }).default('set by the owner') }))
    .output(nothing)
    .mutation(({ ctx, input }) =>
      setMonthlyCap(ctx.db, ctx.tenant, { orgId: ctx.tenant.org.id, capCents: input.capEuros === null ? null : input.capEuros * 100, reason: input.reason, asStaff: false }),
    ),
});
