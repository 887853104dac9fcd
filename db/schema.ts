// The portal's tables. The only place that knows them; services import from here.
import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  char,
  index,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

export const orgKind = pgEnum('org_kind', ['academic', 'company']);
export const residency = pgEnum('residency', ['any', 'EU', 'DE']);
export const orgStatus = pgEnum('org_status', ['pending_verification', 'active', 'suspended']);
export const memberRole = pgEnum('member_role', ['owner', 'manager', 'member']);
export const staffRole = pgEnum('staff_role', ['reviewer', 'admin']);

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    locale: text('locale'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('users_email_lower_idx').on(sql`lower(${t.email})`)],
);

export const organisations = pgTable(
  'organisations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    kind: orgKind('kind').notNull(),
    country: char('country', { length: 2 }).notNull(),
    residency: residency('residency').notNull().default('any'),
    status: orgStatus('status').notNull(),
    statusReason: text('status_reason'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('organisations_name_lower_idx').on(sql`lower(${t.name})`)],
);

export const memberships = pgTable(
  'memberships',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: memberRole('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export const staffRoles = pgTable(
  'staff_roles',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: staffRole('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.role] })],
);

export const invitations = pgTable(
  'invitations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    role: memberRole('role').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    invitedBy: uuid('invited_by')
      .notNull()
      .references(() => users.id),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    acceptedBy: uuid('accepted_by').references(() => users.id),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index('invitations_org_idx').on(t.orgId)],
);

/** Append-only: a trigger (see drizzle/0001) refuses UPDATE and DELETE. */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    actorUserId: uuid('actor_user_id').references(() => users.id),
    orgId: uuid('org_id').references(() => organisations.id),
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    reason: text('reason'),
    data: jsonb('data').$type<Record<string, unknown>>(),
    isStaffAction: boolean('is_staff_action').notNull().default(false),
  },
  (t) => [
    index('audit_events_org_idx').on(t.orgId, t.at),
    index('audit_events_actor_idx').on(t.actorUserId, t.at),
  ],
);

export type User = typeof users.$inferSelect;
export type Organisation = typeof organisations.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type MemberRole = (typeof memberRole.enumValues)[number];
export type StaffRole = (typeof staffRole.enumValues)[number];
export type OrgStatus = (typeof orgStatus.enumValues)[number];
export type OrgKind = (typeof orgKind.enumValues)[number];
export type Residency = (typeof residency.enumValues)[number];
