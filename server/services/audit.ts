// The append-only audit log: who did what to which record, and why.
import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '~/db/client';
import { auditEvents, organisations, users } from '~/db/schema';
import { decodeAuditCursor, type AuditKind, type AuditPosition } from '~/server/core/audit';
import { AppError } from '~/server/errors';
import { requestScope } from '~/server/request-scope';
import { stampAt } from './replay-clock';

export interface AuditInput {
  actorUserId: string | null;
  orgId: string | null;
  action: AuditKind;
  targetType: string;
  targetId: string;
  reason?: string | null;
  data?: Record<string, unknown>;
  isStaffAction?: boolean;
}

/** recordAudit appends one audit event; call it inside the transaction that makes the change. */
export async function recordAudit(db: DbOrTx, event: AuditInput): Promise<void> {
  // A change made with a personal API token names the token (server/request-scope.ts).
  const token = requestScope()?.token;
  const data = token ? { ...event.data, apiToken: token.name, apiTokenId: token.id } : (event.data ?? null);
  await db.insert(auditEvents).values({
    actorUserId: event.actorUserId,
    orgId: event.orgId,
    action: event.action,
    targetType: event.targetType,
    targetId: event.targetId,
    reason: event.reason ?? null,
    data,
    isStaffAction: event.isStaffAction ?? false,
    ...stampAt(),
  });
}

export interface AuditFilter {
  orgId?: string;
  actorUserId?: string;
  action?: AuditKind;
  /** Only events at or after this instant. */
  from?: Date;
  /** Only events before this instant. */
  to?: Date;
  /** Only events after this one in the list's order: a page's cursor. */
  after?: AuditPosition;
  limit: number;
}

const atMillis = sql`date_trunc('milliseconds', ${auditEvents.at})`;

/**
 * listAudit returns audit events, newest first by the time they record (ties by id, so pages never
 * skip or repeat a row), with actor and tenant names. Not by id: the demo's replayed history writes
 * rows dated months back after rows dated now.
 */
export async function listAudit(db: DbOrTx, filter: AuditFilter) {
  const actor = alias(users, 'actor');
  const conditions: SQL[] = [];
  if (filter.orgId) conditions.push(eq(auditEvents.orgId, filter.orgId));
  if (filter.actorUserId) conditions.push(eq(auditEvents.actorUserId, filter.actorUserId));
  if (filter.action) conditions.push(eq(auditEvents.action, filter.action));
  if (filter.from) conditions.push(gte(auditEvents.at, filter.from));
  if (filter.to) conditions.push(lt(auditEvents.at, filter.to));
  // A cursor carries milliseconds, the column microseconds: order and compare at the cursor's precision.
  if (filter.after) conditions.push(sql`(${atMillis}, ${auditEvents.id}) < (${filter.after.at.toISOString()}::timestamptz, ${filter.after.id})`);
  return db
    .select({
      id: auditEvents.id,
      at: auditEvents.at,
      action: auditEvents.action,
      targetType: auditEvents.targetType,
      targetId: auditEvents.targetId,
      reason: auditEvents.reason,
      data: auditEvents.data,
      isStaffAction: auditEvents.isStaffAction,
      actorUserId: auditEvents.actorUserId,
      actorName: actor.name,
      actorEmail: actor.email,
      orgId: auditEvents.orgId,
      orgName: organisations.name,
    })
    .from(auditEvents)
    .leftJoin(actor, eq(actor.id, auditEvents.actorUserId))
    .leftJoin(organisations, eq(organisations.id, auditEvents.orgId))
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(desc(atMillis), desc(auditEvents.id))
    .limit(filter.limit);
}

export interface AuditQuery {
  orgId?: string;
  actorUserId?: string;
  action?: AuditKind;
  /** First UTC day of the period (YYYY-MM-DD). */
  from?: string;
  /** Last UTC day of the period, inclusive. */
  to?: string;
  /** encodeAuditCursor of the previous page's last row. */
  cursor?: string;
  limit: number;
}

/** auditPage answers the staff audit page's question: one page of the filtered log, newest first. */
export async function auditPage(db: DbOrTx, query: AuditQuery) {
  const after = query.cursor === undefined ? undefined : decodeAuditCursor(query.cursor);
  if (after === null) throw new AppError('BAD_REQUEST', 'api.cursorInvalid', {}, 'cursor');
  const { cursor: _cursor, from, to, ...filter } = query;
  return listAudit(db, {
    ...filter,
    after,
    from: from ? new Date(`${from}T00:00:00Z`) : undefined,
    to: to ? new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000) : undefined,
  });
}

/** listAuditActors lists the people who appear as actors in the audit log, for its filter. */
export async function listAuditActors(db: DbOrTx) {
  return db
    .selectDistinct({ id: users.id, name: users.name, email: users.email })
    .from(auditEvents)
    .innerJoin(users, eq(users.id, auditEvents.actorUserId))
    .orderBy(users.name);
}
