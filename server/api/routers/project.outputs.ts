// What the project router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { allocationStatus, applicationKind, applicationStatus, budgetUnit, projectRole } from '~/db/schema';
import { isoDateOut, projectPurposeOut } from '~/server/api/outputs';

export const projectCreatedOut = z.object({ id: z.string(), orgId: z.string(), title: z.string(), abstract: z.string(), ...projectPurposeOut.shape, createdBy: z.string(), createdAt: isoDateOut });

/** A budget's sums as the project cards draw them. */
const budgetSumsOut = z.object({ unit: z.enum(budgetUnit.enumValues), granted: z.number().int(), charged: z.number().int(), reserved: z.number().int(), expired: z.number().int() });

/** A card of the project list. */
export const projectRowOut = z.object({ id: z.string(), title: z.string(), ...projectPurposeOut.shape, piName: z.string(), activeAllocations: z.array(budgetSumsOut) });

/** A project's page: the project, its people, allocations and applications, and what the caller may do. */
export const projectPageOut = z.object({
  project: z.object({ id: z.string(), title: z.string(), abstract: z.string(), ...projectPurposeOut.shape }),
  projectRole: z.enum(projectRole.enumValues).nullable(),
  canManage: z.boolean(),
  members: z.array(z.object({ userId: z.string(), name: z.string(), email: z.string(), role: z.enum(projectRole.enumValues) })),
  allocations: z.array(
    budgetSumsOut.extend({
      id: z.string(),
      resourceClassId: z.string().nullable(),
      resourceClassName: z.string().nullable(),
      applicationId: z.string().nullable(),
      status: z.enum(allocationStatus.enumValues),
      periodStart: z.string(),
      periodEnd: z.string(),
      /** The allocation's storage line, GB (issue #27). */
      storageGb: z.number().int(),
    }),
  ),
  applications: z.array(
    z.object({ id: z.string(), kind: z.enum(applicationKind.enumValues), status: z.enum(applicationStatus.enumValues), periodStart: z.string(), periodEnd: z.string(), createdAt: isoDateOut }),
  ),
});

/** A project's storage at each site it has a workspace at (issue #27): what it holds as last measured, its quota, the share used. */
export const projectStorageOut = z.array(
  z.object({
    siteId: z.string(),
    siteName: z.string(),
    usedBytes: z.number().int(),
    grantedGb: z.number().int(),
    /** Whole percent of the quota used; null without a quota. */
    usedPercent: z.number().int().nullable(),
    measuredAt: isoDateOut.nullable(),
    scannedAt: isoDateOut.nullable(),
  }),
);

/** A project's budgets in cents (null: none) and what its invoice lines carry. */
export const projectBudgetOut = z.object({ monthlyCents: z.number().int().nullable(), totalCents: z.number().int().nullable(), costCentre: z.string().nullable(), purchaseOrder: z.string().nullable() });
