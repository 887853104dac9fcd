import { z } from 'zod';
import { applicationKind, applicationStatus } from '~/db/schema';
import { budgetSync, router, tenantProcedure, todayOf } from '~/server/api/trpc';
import { catalogueIdField, dayField, gpuHoursField, resourceClassIdField, storageGbField, textField, uuidField } from '~/server/api/fields';
import { applicationOut } from '~/server/api/outputs';
import { gpuHoursToSeconds } from '~/server/core/ledger/units';
import { createApplication, getApplication, submitApplication, updateApplication } from '~/server/services/ledger/applications';

/** A draft just saved. */
const applicationCreatedOut = z.object({
  id: z.string(),
  projectId: z.string(),
  accessModeId: z.string(),
  kind: z.enum(applicationKind.enumValues),
  status: z.enum(applicationStatus.enumValues),
  periodStart: z.string(),
  periodEnd: z.string(),
});

const applicationFields = {
  accessModeId: catalogueIdField,
  kind: z.enum(['new', 'top_up', 'renewal']).default('new'),
  baseAllocationId: uuidField.optional(),
  /** Not asked for a top-up, which keeps its allocation's period (a different one is refused). */
  periodStart: dayField.optional(),
  periodEnd: dayField.optional(),
  justification: textField(20, 20_000, { multiline: true }),
  /** Each line's GPU-hours, and storage in GB at the class's site (absent: the access mode's default; a top-up: none). */
  lines: z.array(z.object({ resourceClassId: resourceClassIdField, gpuHours: gpuHoursField, storageGb: storageGbField.optional() })).min(1).max(20),
};

function toSeconds<T extends { lines: { resourceClassId: string; gpuHours: number; storageGb?: number }[] }>(input: T) {
  return { ...input, lines: input.lines.map((l) => ({ resourceClassId: l.resourceClassId, gpuSeconds: gpuHoursToSeconds(l.gpuHours), ...(l.storageGb === undefined ? {} : { storageGb: l.storageGb }) })) };
}

export const applicationRouter = router({
  get: tenantProcedure('member')
    .input(z.object({ applicationId: uuidField }))
    .output(applicationOut)
    .query(({ ctx, input }) => getApplication(ctx.db, { tenant: ctx.tenant }, input.applicationId, ctx.locale, ctx.now())),

  create: tenantProcedure('member')
    .meta({ openapi: { method: 'POST', path: '/applications', tags: ['applications'], summary: 'Create a draft application for compute time', protect: true }, scope: 'applications:write' })
    .input(z.object({ projectId: uuidField, ...applicationFields }))
    .output(applicationCreatedOut)
    .mutation(({ ctx, input }) => createApplication(ctx.db, ctx.tenant, toSeconds(input), todayOf(ctx))),

  update: tenantProcedure('member')
    .meta({ scope: 'applications:write' })
    .input(z.object({ applicationId: uuidField, ...applicationFields }))
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { applicationId, ...rest } = input;
      await updateApplication(ctx.db, ctx.tenant, applicationId, toSeconds(rest), todayOf(ctx));
      return { id: applicationId };
    }),

  submit: tenantProcedure('member')
    .meta({ openapi: { method: 'POST', path: '/applications/{applicationId}/submit', tags: ['applications'], summary: 'Submit a draft application for review (an instant access mode approves it at once)', protect: true }, scope: 'applications:write' })
    .input(z.object({ applicationId: uuidField }))
    .output(z.object({ id: z.string(), status: z.enum(['approved', 'submitted']) }))
    .mutation(async ({ ctx, input }) => {
      // Why a request went to review is on the application (application.get's reviewNote).
      const { status } = await submitApplication(ctx.db, ctx.tenant, input.applicationId, ctx.now(), budgetSync(ctx));
      return { id: input.applicationId, status };
    }),
});
