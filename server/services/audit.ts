// The append-only audit log: who did what to which record, and why.
import { and, desc, eq, lt, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '~/db/client';
import { auditEvents, organisations, users } from '~/db/schema';
import { requestScope } from '~/server/request-scope';
import { stampAt } from './replay-clock';

export interface AuditInput {
  actorUserId: string | null;
  orgId: string | null;
  action: string;
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
  beforeId?: number;
  limit: number;
}

/** listAudit returns audit events, newest first, with actor and tenant names. */
export async function listAudit(db: DbOrTx, filter: AuditFilter) {
  const actor = alias(users, 'actor');
  const conditions: SQL[] = [];
  if (filter.orgId) conditions.push(eq(auditEvents.orgId, filter.orgId));
  if (filter.actorUserId) conditions.push(eq(auditEvents.actorUserId, filter.actorUserId));
  if (filter.beforeId) conditions.push(lt(auditEvents.id, filter.beforeId));
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
    .orderBy(desc(auditEvents.id))
    .limit(filter.limit);
}

/** listAuditActors lists the people who appear as actors in the audit log, for its filter. */
export async function listAuditActors(db: DbOrTx) {
  return db
    .selectDistinct({ id: users.id, name: users.name, email: users.email })
    .from(auditEvents)
    .innerJoin(users, eq(users.id, auditEvents.actorUserId))
    .orderBy(users.name);
}
