import { z } from 'zod';
import { router, staffProcedure } from '~/server/api/trpc';
import { reasonField, uuidField } from '~/server/api/fields';
import { listAudit, listAuditActors } from '~/server/services/audit';
import { changeTenantStatus, listTenants, tenantStatusCounts } from '~/server/services/tenants';

export const staffRouter = router({
  tenants: staffProcedure()
    .input(z.object({ status: z.enum(['pending_verification', 'active', 'suspended']).optional() }).default({}))
    .query(({ ctx, input }) => listTenants(ctx.db, input)),

  tenantCounts: staffProcedure().query(({ ctx }) => tenantStatusCounts(ctx.db)),

  changeTenantStatus: staffProcedure('admin')
    .input(z.object({ orgId: uuidField, action: z.enum(['verify', 'suspend', 'reactivate']), reason: reasonField }))
    .mutation(({ ctx, input }) => changeTenantStatus(ctx.db, ctx.actor, input)),

  auditActors: staffProcedure().query(({ ctx }) => listAuditActors(ctx.db)),

  audit: staffProcedure()
    .input(
      z
        .object({
          orgId: uuidField.optional(),
          actorUserId: uuidField.optional(),
          beforeId: z.number().int().positive().optional(),
          limit: z.number().int().min(1).max(500).default(100),
        })
        .default({ limit: 100 }),
    )
    .query(({ ctx, input }) => listAudit(ctx.db, input)),
});
