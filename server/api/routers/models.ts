// The centre's shared models (issue #29): every signed-in person reads the list (the Models page); the
// centre's admins start and stop their replicas.
import { z } from 'zod';
import { authedProcedure, router, schedulerOf, staffProcedure } from '~/server/api/trpc';
import { resourceClassIdField, uuidField } from '~/server/api/fields';
import { configuredCatalogue, localName } from '~/server/catalogue';
import { isStaff } from '~/server/services/actor';
import { sharedModelsOverview, startSharedModel, stopSharedModel } from '~/server/services/inference/shared-models';
import { sharedModelOut } from './models.outputs';

const modelIdField = z.string().trim().min(1).max(100);

export const modelsRouter = router({
  /** The centre's shared models with their prices per tenant kind and where they are served now; staff also see each replica and the last day's calls. */
  shared: authedProcedure.output(z.array(sharedModelOut)).query(async ({ ctx }) => {
    const catalogue = configuredCatalogue();
    const siteName = (id: string) => {
      const site = catalogue.sites.find((s) => s.id === id);
      return site ? localName(ctx.locale, site) : id;
    };
    const staff = isStaff(ctx.actor);
    return (await sharedModelsOverview(ctx.db, ctx.now())).map((m) => {
      const running = m.replicas.filter((r) => r.state === 'RUNNING');
      const sites = [...new Set(running.map((r) => r.siteId))];
      return {
        id: m.id,
        name: m.name,
        contextLength: m.contextLength,
        classes: m.resourceClassIds.flatMap((id) => {
          const rc = catalogue.resourceClasses.find((c) => c.id === id);
          return rc ? [{ id, name: localName(ctx.locale, rc), siteId: rc.siteId, siteName: siteName(rc.siteId) }] : [];
        }),
        prices: m.prices,
        servedAt: sites.map((siteId) => ({ siteId, siteName: siteName(siteId), replicas: running.filter((r) => r.siteId === siteId).length })),
        replicas: staff ? m.replicas.map((r) => ({ ...r, siteName: siteName(r.siteId) })) : [],
        calls24h: staff ? m.calls24h : null,
        tokens24h: staff ? m.tokens24h : null,
      };
    });
  }),

  /** Starts a replica of a shared model on one of its classes (default: its first); its GPU time is the centre's. */
  start: staffProcedure('admin')
    .input(z.object({ modelId: modelIdField, resourceClassId: resourceClassIdField.optional() }))
    .output(z.object({ jobId: z.string() }))
    .mutation(({ ctx, input }) => startSharedModel(ctx.db, async () => ({ db: ctx.db, scheduler: await schedulerOf(ctx) }), ctx.actor, input, ctx.now())),

  /** Stops a replica of a shared model (it ends COMPLETED, its GPU time charged to the centre). */
  stop: staffProcedure('admin')
    .input(z.object({ jobId: uuidField }))
    .output(z.object({ state: z.string() }))
    .mutation(({ ctx, input }) => stopSharedModel(ctx.db, async () => ({ db: ctx.db, scheduler: await schedulerOf(ctx) }), ctx.actor, input, ctx.now())),
});
