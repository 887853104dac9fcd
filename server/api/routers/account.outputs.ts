// What the account router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { orgKind, orgStatus, staffRole } from '~/db/schema';
import { TOKEN_SCOPES } from '~/server/core/rest/scopes';
import { isoDateOut, memberRoleOut } from '~/server/api/outputs';

export const myOrganisation = z.object({ id: z.string(), name: z.string(), kind: z.enum(orgKind.enumValues), status: z.enum(orgStatus.enumValues), role: memberRoleOut });

export const meOut = z.object({ userId: z.string(), name: z.string(), email: z.string(), staffRoles: z.array(z.enum(staffRole.enumValues)), emailVerified: z.boolean(), timeZone: z.string() });

export const sessionOut = z.object({ id: z.string(), current: z.boolean(), createdAt: isoDateOut, lastSeenAt: isoDateOut, userAgent: z.string().nullable(), address: z.string().nullable() });

/** A provider identity linked to the caller's account (the profile page). */
export const identityOut = z.object({ id: z.string(), provider: z.string(), providerName: z.string(), email: z.string().nullable(), createdAt: isoDateOut, lastUsedAt: isoDateOut });

/** A personal API token as its owner sees it (never the token itself, which is shown once when made). */
export const apiTokenOut = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  orgId: z.string().nullable(),
  orgName: z.string().nullable(),
  scopes: z.array(z.enum(TOKEN_SCOPES)),
  projectId: z.string().nullable(),
  projectTitle: z.string().nullable(),
  createdAt: isoDateOut,
  expiresAt: isoDateOut,
  lastUsedAt: isoDateOut.nullable(),
  lastUsedFrom: z.string().nullable(),
  revokedAt: isoDateOut.nullable(),
  state: z.enum(['active', 'expired', 'revoked']),
});
