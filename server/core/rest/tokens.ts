// Personal API tokens (issue #13). Pure: the token's shape, its checksum, and what a person may ask for.
// server/services/identity/api-tokens.ts makes, stores (hashed) and checks them.
//
// A token is `afp_` + 30 random base62 characters + a 6-character CRC-32 of the rest, like GitHub's
// tokens: the prefix lets secret scanners find a leaked one, the checksum lets them (and the portal,
// before any lookup) tell a real token from a look-alike string.

import { STAFF_SCOPES, TENANT_SCOPES, type TokenScope } from './scopes';

export const API_TOKEN_PREFIX = 'afp_';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_TOKEN_PATTERN = /^afp_[0-9A-Za-z]{36}$/;
/** Random bytes the service hands to apiTokenFrom: enough that 30 of them fall below 248 (each does with p = 0.97). */
export const API_TOKEN_RANDOM_BYTES = 64;
/** The longest a token may live, and the lifetime the form proposes. */
export const API_TOKEN_MAX_DAYS = 365;
export const API_TOKEN_DEFAULT_DAYS = 90;
/** How many live (not revoked, not expired) tokens one person may hold. */
export const API_TOKEN_MAX_LIVE = 50;
/** Characters of a token shown in lists (`afp_` and six). */
export const API_TOKEN_SHOWN_CHARS = 10;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** crc32 of a string's UTF-16 code units (tokens are ASCII). */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/**
 * apiTokenFrom makes a token from random bytes: bytes below 248 become base62 characters (248 = 4 × 62,
 * so every character is equally likely), the others are skipped.
 */
export function apiTokenFrom(random: Uint8Array): string {
  let body = API_TOKEN_PREFIX;
  for (const byte of random) {
    if (body.length === API_TOKEN_PREFIX.length + RANDOM_CHARS) break;
    if (byte < 248) body += BASE62[byte % 62];
  }
  if (body.length < API_TOKEN_PREFIX.length + RANDOM_CHARS) throw new Error('not enough random bytes for a token');
  return body + base62(crc32(body), CHECKSUM_CHARS);
}

/** apiTokenWellFormed tells whether a string is shaped like a token and its checksum holds. */
export function apiTokenWellFormed(token: string): boolean {
  if (!API_TOKEN_PATTERN.test(token)) return false;
  const body = token.slice(0, -CHECKSUM_CHARS);
  return token.slice(-CHECKSUM_CHARS) === base62(crc32(body), CHECKSUM_CHARS);
}

/** bearerToken reads `Authorization: Bearer <token>` (the scheme in any case); null when absent or another scheme. */
export function bearerToken(header: string | null | undefined): string | null {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}

/** What a person asks for when creating a token. */
export interface TokenRequest {
  orgId: string | null;
  scopes: readonly TokenScope[];
  expiresInDays: number;
  /** The project whose budget pays the token's model calls (scope `inference`); none without that scope. */
  projectId?: string | null;
}

export type TokenRequestProblem =
  | { field: 'scopes'; key: 'apiToken.scopesNeeded' | 'apiToken.staffScopeNotStaff' }
  | { field: 'orgId'; key: 'apiToken.orgNeeded' | 'apiToken.notMember' }
  | { field: 'projectId'; key: 'apiToken.projectNeeded' | 'apiToken.projectOnlyForInference' | 'apiToken.projectNotYours' }
  | { field: 'expiresInDays'; key: 'apiToken.expiryRange' };

/**
 * tokenRequestProblem says what is wrong with a request for a token, or null: tenant scopes need a
 * tenant the person belongs to, staff scopes a staff role, the scope `inference` a project of that
 * tenant the person may spend on (`projects`: those), and a token lives 1 to 365 days.
 */
export function tokenRequestProblem(request: TokenRequest, person: { isStaff: boolean; memberOf: readonly string[]; projects?: readonly string[] }): TokenRequestProblem | null {
  if (request.scopes.length === 0) return { field: 'scopes', key: 'apiToken.scopesNeeded' };
  const wantsTenant = request.scopes.some((s) => (TENANT_SCOPES as readonly string[]).includes(s));
  const wantsStaff = request.scopes.some((s) => (STAFF_SCOPES as readonly string[]).includes(s));
  if (wantsStaff && !person.isStaff) return { field: 'scopes', key: 'apiToken.staffScopeNotStaff' };
  if (wantsTenant && !request.orgId) return { field: 'orgId', key: 'apiToken.orgNeeded' };
  if (request.orgId && !person.memberOf.includes(request.orgId)) return { field: 'orgId', key: 'apiToken.notMember' };
  const wantsInference = request.scopes.includes('inference');
  if (wantsInference && !request.projectId) return { field: 'projectId', key: 'apiToken.projectNeeded' };
  if (!wantsInference && request.projectId) return { field: 'projectId', key: 'apiToken.projectOnlyForInference' };
  if (request.projectId && !(person.projects ?? []).includes(request.projectId)) return { field: 'projectId', key: 'apiToken.projectNotYours' };
  if (!Number.isInteger(request.expiresInDays) || request.expiresInDays < 1 || request.expiresInDays > API_TOKEN_MAX_DAYS) {
    return { field: 'expiresInDays', key: 'apiToken.expiryRange' };
  }
  return null;
}

export type ApiTokenState = 'active' | 'expired' | 'revoked';

/** apiTokenState: revoked beats expired; the instant of expiry is already too late. */
export function apiTokenState(token: { expiresAt: Date; revokedAt: Date | null }, now: Date): ApiTokenState {
  if (token.revokedAt) return 'revoked';
  return token.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** How stale last-used may get before a use writes it again (one write per token a minute, not per call). */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** lastUsedNeedsWrite tells whether a use at `now` from `address` should update the token's last-used record. */
export function lastUsedNeedsWrite(token: { lastUsedAt: Date | null; lastUsedFrom: string | null }, now: Date, address: string | null): boolean {
  if (!token.lastUsedAt) return true;
  if ((address ?? null) !== token.lastUsedFrom) return true;
  return now.getTime() - token.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}
