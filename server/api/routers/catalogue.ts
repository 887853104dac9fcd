import { z } from 'zod';
import { router, tenantProcedure, authedProcedure } from '~/server/api/trpc';
import { organisations } from '~/db/schema';
import { eq } from 'drizzle-orm';
import { listAccessModes, listResourceClasses } from '~/server/services/catalogue';
import { accessModeOut, resourceClassOut } from '~/server/api/outputs';

export const catalogueRouter = router({
  /** The resource classes the active tenant may apply for and run on (its residency rule applied), with its tariff. */
  resourceClasses: tenantProcedure('member')
    .output(z.array(resourceClassOut))
    .query(async ({ ctx }) => {
    const [org] = await ctx.db.select({ residency: organisations.residency }).from(organisations).where(eq(organisations.id, ctx.tenant.org.id));
    return listResourceClasses(ctx.db, { kind: ctx.tenant.org.kind, residency: org!.residency });
  }),

  accessModes: authedProcedure.output(z.array(accessModeOut)).query(({ ctx }) => listAccessModes(ctx.db)),
});
