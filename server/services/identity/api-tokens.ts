// Personal API tokens (issue #13): made on the profile page or by `npm run token:create`, shown once,
// stored only as a SHA-256 hash, revocable; every REST call is authenticated here. The rules (shape,
// checksum, who may ask for which scopes, expiry) are in server/core/rest/tokens.ts.
import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db, Tx } from '~/db/client';
import { apiTokens, memberships, organisations, projectMembers, projects } from '~/db/schema';
import { roleAtLeast, type MemberRole } from '~/server/core/roles';
import type { ApiTokenAuth, TokenScope } from '~/server/core/rest/scopes';
import {
  API_TOKEN_MAX_LIVE,
  API_TOKEN_RANDOM_BYTES,
  API_TOKEN_SHOWN_CHARS,
  apiTokenFrom,
  apiTokenState,
  apiTokenWellFormed,
  bearerToken,
  lastUsedNeedsWrite,
  tokenRequestProblem,
  type ApiTokenState,
} from '~/server/core/rest/tokens';
import { AppError } from '~/server/errors';
import { isStaff, type Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { inTransaction } from '~/server/services/transaction';
import { forgetKept, keptFor } from '~/server/services/kept';

const DAY_MS = 86_400_000;

/** hashApiToken is what is stored of a token: its SHA-256, hex (a token has 178 random bits: no salt or slow hash needed). */
function hashApiToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface ApiTokenView {
  id: string;
  name: string;
  prefix: string;
  orgId: string | null;
  orgName: string | null;
  scopes: TokenScope[];
  /** The project a model-calling token pays from (scope `inference`). */
  projectId: string | null;
  projectTitle: string | null;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
  lastUsedFrom: string | null;
  revokedAt: Date | null;
  state: ApiTokenState;
}

export interface CreateApiTokenInput {
  name: string;
  orgId: string | null;
  scopes: TokenScope[];
  expiresInDays: number;
  /** The project whose budget pays the token's model calls: required with the scope `inference`, else none. */
  projectId?: string | null;
}

/** spendableProjects is `projectId` if it is a project of the tenant the person may submit to (a member, or any as a manager or owner), else nothing. */
async function spendableProjects(tx: Tx, userId: string, orgId: string, role: MemberRole | null, projectId: string): Promise<string[]> {
  const [row] = await tx
    .select({ id: projects.id, member: projectMembers.userId })
    .from(projects)
    .leftJoin(projectMembers, and(eq(projectMembers.projectId, projects.id), eq(projectMembers.userId, userId)))
    .where(and(eq(projects.id, projectId), eq(projects.orgId, orgId)));
  if (!row) return [];
  return row.member || (role !== null && roleAtLeast(role, 'manager')) ? [row.id] : [];
}

/**
 * createApiToken makes a token for the actor and returns it once (only its hash is kept), audited in
 * the same transaction. `by` names who made it when that is not the owner (the operator command).
 */
export async function createApiToken(db: Db, actor: Actor, input: CreateApiTokenInput, now: Date, by: { operator?: string } = {}): Promise<{ token: string; view: ApiTokenView }> {
  return inTransaction(db, async (tx) => {
    const memberships_ = await tx.select({ orgId: memberships.orgId, role: memberships.role }).from(memberships).where(eq(memberships.userId, actor.userId));
    const memberOf = memberships_.map((m) => m.orgId);
    const scopes = [...new Set(input.scopes)];
    // The project a model-calling token pays from: one of the tenant's the person submits jobs to (a member, or any as a lead).
    const projectIds = input.projectId && input.orgId ? await spendableProjects(tx, actor.userId, input.orgId, memberships_.find((m) => m.orgId === input.orgId)?.role ?? null, input.projectId) : [];
    const problem = tokenRequestProblem({ ...input, scopes }, { isStaff: isStaff(actor), memberOf, projects: projectIds });
    if (problem) throw new AppError('BAD_REQUEST', problem.key, undefined, problem.field);
    const [live] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(apiTokens)
      .where(and(eq(apiTokens.userId, actor.userId), isNull(apiTokens.revokedAt), gt(apiTokens.expiresAt, now)));
    if ((live?.n ?? 0) >= API_TOKEN_MAX_LIVE) throw new AppError('BAD_REQUEST', 'apiToken.tooMany', { max: API_TOKEN_MAX_LIVE }, 'name');
    const token = apiTokenFrom(randomBytes(API_TOKEN_RANDOM_BYTES));
    const [row] = await tx
      .insert(apiTokens)
      .values({
        userId: actor.userId,
        orgId: input.orgId,
        name: input.name,
        tokenHash: hashApiToken(token),
        prefix: token.slice(0, API_TOKEN_SHOWN_CHARS),
        scopes,
        projectId: input.projectId ?? null,
        expiresAt: new Date(now.getTime() + input.expiresInDays * DAY_MS),
        createdAt: now,
      })
      .returning();
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: input.orgId,
      action: 'api_token.created',
      targetType: 'api_token',
      targetId: row!.id,
      data: { name: input.name, prefix: row!.prefix, scopes, ...(input.projectId ? { projectId: input.projectId } : {}), expiresAt: row!.expiresAt.toISOString(), ...(by.operator ? { operator: by.operator } : {}) },
    });
    const orgName = input.orgId ? ((await tx.select({ name: organisations.name }).from(organisations).where(eq(organisations.id, input.orgId)))[0]?.name ?? null) : null;
    const projectTitle = input.projectId ? ((await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, input.projectId)))[0]?.title ?? null) : null;
    return { token, view: toView({ ...row!, orgName, projectTitle }, now) };
  });
}

function toView(row: typeof apiTokens.$inferSelect & { orgName: string | null; projectTitle: string | null }, now: Date): ApiTokenView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    orgId: row.orgId,
    orgName: row.orgName,
    scopes: row.scopes as TokenScope[],
    projectId: row.projectId,
    projectTitle: row.projectTitle,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    lastUsedFrom: row.lastUsedFrom,
    revokedAt: row.revokedAt,
    state: apiTokenState(row, now),
  };
}

/** listTokenProjects lists the projects a person's model-calling tokens may pay from, per tenant: those they are a member of, and every one of a tenant they manage or own. */
export async function listTokenProjects(db: Db, userId: string): Promise<{ id: string; title: string; orgId: string }[]> {
  return db
    .selectDistinct({ id: projects.id, title: projects.title, orgId: projects.orgId })
    .from(projects)
    .innerJoin(memberships, and(eq(memberships.orgId, projects.orgId), eq(memberships.userId, userId)))
    .leftJoin(projectMembers, and(eq(projectMembers.projectId, projects.id), eq(projectMembers.userId, userId)))
    .where(sql`${projectMembers.userId} is not null or ${memberships.role} in ('owner', 'manager')`)
    .orderBy(projects.orgId, projects.title)
    .limit(500);
}

/** listApiTokens lists a person's tokens, newest first, with their tenant's name and state. */
export async function listApiTokens(db: Db, userId: string, now: Date): Promise<ApiTokenView[]> {
  const rows = await db
    .select({ token: apiTokens, orgName: organisations.name, projectTitle: projects.title })
    .from(apiTokens)
    .leftJoin(organisations, eq(organisations.id, apiTokens.orgId))
    .leftJoin(projects, eq(projects.id, apiTokens.projectId))
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.createdAt))
    .limit(200);
  return rows.map((r) => toView({ ...r.token, orgName: r.orgName, projectTitle: r.projectTitle }, now));
}

/** revokeApiToken revokes one of the actor's own tokens (again: nothing changes), audited. */
export async function revokeApiToken(db: Db, actor: Actor, tokenId: string, now: Date): Promise<void> {
  await inTransaction(db, async (tx) => {
    const [row] = await tx
      .select({ id: apiTokens.id, orgId: apiTokens.orgId, name: apiTokens.name, prefix: apiTokens.prefix, revokedAt: apiTokens.revokedAt })
      .from(apiTokens)
      .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.userId, actor.userId)))
      .for('update');
    // Someone else's token is as unknown as one that does not exist.
    if (!row) throw new AppError('NOT_FOUND', 'apiToken.notFound');
    if (row.revokedAt) return;
    await tx.update(apiTokens).set({ revokedAt: now, revokedBy: actor.userId }).where(eq(apiTokens.id, row.id));
    await recordAudit(tx, { actorUserId: actor.userId, orgId: row.orgId, action: 'api_token.revoked', targetType: 'api_token', targetId: row.id, data: { name: row.name, prefix: row.prefix } });
  });
  // Refused at once here; every other process reads its tokens again within TOKEN_KEPT_MS.
  forgetKept(TOKENS_KEPT);
}

/** How long a process reuses a token's row (a busy client's calls read it once a second, not each): a revocation reaches every process within it. */
const TOKEN_KEPT_MS = 1000;
const TOKENS_KEPT = 'apiTokenRows';
type TokenRow = typeof apiTokens.$inferSelect;
const tokenRows = keptFor<TokenRow>(TOKENS_KEPT, TOKEN_KEPT_MS);

class UnknownToken extends Error {}

/** tokenRow reads a token's row by its hash, kept TOKEN_KEPT_MS; an unknown token is never kept (nobody fills the memory with guesses). */
async function tokenRow(db: Db, hash: string): Promise<TokenRow | null> {
  try {
    return await tokenRows(hash, async () => {
      const [row] = await db.select().from(apiTokens).where(eq(apiTokens.tokenHash, hash)).limit(1);
      if (!row) throw new UnknownToken();
      return row;
    });
  } catch (error) {
    if (error instanceof UnknownToken) return null;
    throw error;
  }
}

/**
 * authenticateToken checks `Authorization: Bearer afp_…` and returns what the call may do. Missing,
 * malformed, unknown, expired and revoked tokens are all refused with 401 (an unknown and a revoked
 * token are told apart only in the message, never by timing of a lookup that found a row: both
 * look one row up by hash). A token's row is kept a second (TOKEN_KEPT_MS; revoking it here forgets
 * it at once). Last use is written at most once a minute per token and address.
 */
export async function authenticateToken(db: Db, authorization: string | null, options: { now: Date; address?: string | null }): Promise<ApiTokenAuth> {
  const token = bearerToken(authorization);
  if (!token) throw new AppError('UNAUTHORIZED', 'apiToken.missing');
  if (!apiTokenWellFormed(token)) throw new AppError('UNAUTHORIZED', 'apiToken.invalid');
  const row = await tokenRow(db, hashApiToken(token));
  if (!row) throw new AppError('UNAUTHORIZED', 'apiToken.invalid');
  const state = apiTokenState(row, options.now);
  if (state !== 'active') throw new AppError('UNAUTHORIZED', state === 'revoked' ? 'apiToken.revoked' : 'apiToken.expired');
  const address = options.address ?? null;
  if (lastUsedNeedsWrite(row, options.now, address)) {
    await db.update(apiTokens).set({ lastUsedAt: options.now, lastUsedFrom: address }).where(eq(apiTokens.id, row.id));
    // The kept row too: the next calls of the minute write nothing.
    row.lastUsedAt = options.now;
    row.lastUsedFrom = address;
  }
  return { id: row.id, name: row.name, userId: row.userId, orgId: row.orgId, scopes: row.scopes as TokenScope[], projectId: row.projectId };
}
