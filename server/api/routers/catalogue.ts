import { z } from 'zod';
import { router, tenantProcedure, authedProcedure } from '~/server/api/trpc';
import { organisations } from '~/db/schema';
import { eq } from 'drizzle-orm';
import type { Db } from '~/db/client';
import type { TenantActor } from '~/server/services/actor';
import { listAccessModes, listResourceClasses, priceList, storagePriceList } from '~/server/services/catalogue';
import { payAsYouGoTerms } from '~/server/services/billing/billing';
import { roundForSubmission } from '~/server/services/ledger/calls';
import { resourceClassOut } from '~/server/api/outputs';
import { accessModeOut, priceListRowOut, storagePriceRowOut } from './catalogue.outputs';

/** The data-residency rule of the caller's tenant, which decides where its jobs may run. */
async function residencyOf(ctx: { db: Db; tenant: TenantActor }) {
  const [org] = await ctx.db.select({ residency: organisations.residency }).from(organisations).where(eq(organisations.id, ctx.tenant.org.id));
  return org!.residency;
}

export const catalogueRouter = router({
  /** The resource classes the active tenant may apply for and run on (its residency rule applied), with its tariff. */
  resourceClasses: tenantProcedure('member')
    .output(z.array(resourceClassOut))
    .query(async ({ ctx }) => listResourceClasses(ctx.db, { kind: ctx.tenant.org.kind, residency: await residencyOf(ctx) }, ctx.locale)),

  /**
   * What a GPU-hour of each resource class costs the active tenant, and draws and emits at its site; what a
   * TB-month of storage costs at each site (issue #27); the classes and sites its residency rule excludes are marked.
   */
  priceList: tenantProcedure('member')
    .output(z.object({ rows: z.array(priceListRowOut), storage: z.array(storagePriceRowOut), payAsYouGo: z.object({ startingCreditCents: z.number().int(), durationDays: z.number().int(), storageGb: z.number().int() }) }))
    .query(async ({ ctx }) => {
      const tenant = { kind: ctx.tenant.org.kind, residency: await residencyOf(ctx) };
      return { rows: await priceList(ctx.db, tenant, ctx.locale), storage: await storagePriceList(ctx.db, tenant, ctx.locale), payAsYouGo: payAsYouGoTerms() };
    }),

  /** The access modes; a mode taking requests in rounds says when its next open round closes (issue #32), null when no call has one. */
  accessModes: authedProcedure.output(z.array(accessModeOut)).query(async ({ ctx }) => {
    const modes = await listAccessModes(ctx.db);
    return Promise.all(modes.map(async (m) => ({ ...m, nextCutoffAt: m.intake === 'rounds' ? ((await roundForSubmission(ctx.db, m.id, ctx.now()))?.cutoffAt ?? null) : null })));
  }),
});
