// Output shapes shared by the routers (`.output()`): what a procedure answers, and nothing else —
// zod drops any field a schema does not name, so a column added to a table does not leak to the
// browser by accident. Issue #9 asks for one on every procedure; test: server/api/outputs.test.ts.
import { z } from 'zod';
import { jobState, memberRole, orgKind, orgStatus, residency, reviewPath, staffRole } from '~/db/schema';

/** A mutation that answers nothing. */
export const nothing = z.void();

export const memberRoleOut = z.enum(memberRole.enumValues);

export const myOrganisation = z.object({ id: z.string(), name: z.string(), kind: z.enum(orgKind.enumValues), status: z.enum(orgStatus.enumValues), role: memberRoleOut });

export const meOut = z.object({ userId: z.string(), name: z.string(), email: z.string(), staffRoles: z.array(z.enum(staffRole.enumValues)) });

export const sessionOut = z.object({ id: z.string(), current: z.boolean(), createdAt: z.date(), lastSeenAt: z.date(), userAgent: z.string().nullable(), address: z.string().nullable() });

export const notificationOut = z.object({ id: z.string(), text: z.string(), link: z.string().nullable(), read: z.boolean(), createdAt: z.date() });

/** A tenant as everyone who may see it sees it. */
const tenantOut = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(orgKind.enumValues),
  country: z.string(),
  residency: z.enum(residency.enumValues),
  status: z.enum(orgStatus.enumValues),
  statusReason: z.string().nullable(),
  createdAt: z.date(),
  memberCount: z.number(),
});

/** The caller's own tenant, with its cap and the caller's role. */
export const organisationOut = tenantOut.extend({ monthlyCapCents: z.number().nullable(), myRole: memberRoleOut });

export const memberOut = z.object({ userId: z.string(), name: z.string(), email: z.string(), role: memberRoleOut, since: z.date() });

export const openInvitationOut = z.object({ id: z.string(), email: z.string(), role: memberRoleOut, expiresAt: z.date(), createdAt: z.date() });

export const createdInvitationOut = z.object({ id: z.string(), email: z.string(), role: memberRoleOut, expiresAt: z.date(), path: z.string() });

export const invitationPreviewOut = z.object({ orgName: z.string(), inviterName: z.string(), email: z.string(), role: memberRoleOut, expiresAt: z.date() });

export const jobStateOut = z.enum(jobState.enumValues);

/** A row of the staff's tenant list. */
export const tenantRowOut = tenantOut;

export const projectCreatedOut = z.object({ id: z.string(), orgId: z.string(), title: z.string(), abstract: z.string(), fieldOfScience: z.string(), createdBy: z.string(), createdAt: z.date() });

/** An allocation's balance after a staff change (the ledger's cached sums, in its unit). */
export const balanceOut = z.object({ granted: z.number(), charged: z.number(), reserved: z.number(), expired: z.number(), overrun: z.number() });

export const accessModeOut = z.object({
  id: z.string(),
  name: z.string(),
  maxGpuSeconds: z.number().nullable(),
  durationDays: z.number(),
  reviewPath: z.enum(reviewPath.enumValues),
  targetDecisionWorkingDays: z.number(),
  sortOrder: z.number(),
  active: z.boolean(),
});

export const resourceClassOut = z.object({
  id: z.string(),
  name: z.string(),
  gpuModel: z.string(),
  gpusPerNode: z.number(),
  nodes: z.number(),
  maxWalltimeSeconds: z.number(),
  siteId: z.string(),
  siteName: z.string(),
  country: z.string(),
  inEu: z.boolean(),
  centsPerGpuHour: z.number(),
});
