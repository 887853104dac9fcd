// What a personal API token may do: its scopes. Pure rules; the check is in server/api/trpc.ts.

/**
 * Tenant scopes: read the tenant's records; submit and cancel jobs; create and submit applications; read
 * and write files in project workspaces (issue #27).
 */
export const TENANT_SCOPES = ['read', 'jobs:write', 'applications:write', 'files:read', 'files:write', 'inference'] as const;
/** Staff scopes: read the centre's records; act as staff. Only people with a staff role may hold them. */
export const STAFF_SCOPES = ['staff:read', 'staff:write'] as const;
export const TOKEN_SCOPES = [...TENANT_SCOPES, ...STAFF_SCOPES] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** What a request authenticated with a personal API token knows of it. */
export interface ApiTokenAuth {
  id: string;
  name: string;
  userId: string;
  /** The tenant the token acts for (null: a staff-only token). */
  orgId: string | null;
  scopes: TokenScope[];
  /** The project a token with the scope `inference` calls models for (issue #29); null otherwise. */
  projectId: string | null;
}

/**
 * scopeNeeded is the scope a token needs for a call: the procedure's own (`meta.scope`), else `read`
 * for a tenant read and `staff:read` / `staff:write` for staff calls; a tenant mutation that names no
 * scope is not open to tokens at all (null).
 */
export function scopeNeeded(kind: 'tenant' | 'staff' | 'account', type: 'query' | 'mutation' | 'subscription', declared?: TokenScope): TokenScope | null {
  if (declared) return declared;
  if (kind === 'staff') return type === 'query' ? 'staff:read' : 'staff:write';
  return type === 'query' ? 'read' : null;
}
