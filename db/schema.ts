// The portal's tables. The only place that knows them; services import from here.
import { sql } from 'drizzle-orm';
import { ACCESS_INTAKES, REVIEW_PATHS, WORKLOAD_KINDS, type ReviewRoute } from '../server/core/applications';
import type { RubricCriterion } from '../server/core/reviews';
import { AUTH_TOKEN_PURPOSES } from '../server/core/auth/tokens';
import type { MailAttachmentRef } from '../server/core/mail/delivery';
import { MAIL_KIND_NAMES } from '../server/core/mail/kinds';
import { SCHEDULER_JOB_STATES, type JobDependencyType } from '../server/core/scheduler/port';
import {
  bigint,
  bigserial,
  boolean,
  char,
  check,
  date,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  smallint,
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
    /** Null for an account that signs in only through single sign-on (OIDC). */
    passwordHash: text('password_hash'),
    locale: text('locale'),
    /** The IANA time zone the person reads times in (pages, mails, PDFs); the ledger's days stay UTC. */
    timeZone: text('time_zone').notNull().default('Europe/Berlin'),
    /** When the person proved they receive mail at `email` (a link mailed to it, or an identity provider that vouches for it). */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
    /**
     * The person's user on the cluster (POSIX): their jobs run as it. From the centre's directory (the
     * single sign-on's claim, or staff), else made from the mail address when first needed
     * (server/core/scheduler/identity.ts).
     */
    posixName: text('posix_name'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('users_email_lower_idx').on(sql`lower(${t.email})`),
    uniqueIndex('users_posix_name_idx').on(t.posixName),
    check('users_posix_name_ck', sql`${t.posixName} ~ '^[a-z_][a-z0-9_-]{0,31}$'`),
  ],
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
    /** Company tenants: most they may spend in a calendar month, in euro cents; null = no cap. */
    monthlyCapCents: bigint('monthly_cap_cents', { mode: 'number' }),
    /** The month (its first day) whose cap was last reported reached: the notice and mail go out once per month. */
    capReachedNoticedMonth: date('cap_reached_noticed_month'),
    /** Company tenants: when and by whom the price list was accepted to start paying as they go (issue #10). */
    priceListAcceptedAt: timestamp('price_list_accepted_at', { withTimezone: true }),
    priceListAcceptedBy: uuid('price_list_accepted_by').references(() => users.id),
    /** Members must sign in through single sign-on (OIDC): the password sign-in refuses them (set by staff). */
    requireSso: boolean('require_sso').notNull().default(false),
    /** The centre's own tenant (at most one): its project runs the shared models (issue #29), its allocation bears their GPU time. */
    centre: boolean('centre').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('organisations_name_lower_idx').on(sql`lower(${t.name})`), uniqueIndex('organisations_centre_idx').on(t.centre).where(sql`${t.centre}`)],
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

// ---- Resource catalogue: sites, resource classes, tariffs, access modes (synced from configuration) ----

export const sites = pgTable('sites', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The German name (the catalogue gives every site both; null only before the first sync). */
  nameDe: text('name_de'),
  country: char('country', { length: 2 }).notNull(),
  inEu: boolean('in_eu').notNull(),
  /** Power usage effectiveness × 1000 (1.08 → 1080). */
  pueMilli: integer('pue_milli').notNull(),
  gridGco2PerKwh: integer('grid_gco2_per_kwh').notNull(),
  /** Share of facility energy recovered as usable heat, in per-mille. */
  heatReusePermille: integer('heat_reuse_permille').notNull(),
  /** What a company pays for a TB-month of storage in the site's workspaces, in cents (research tenants pay nothing). */
  storageCentsPerTbMonth: integer('storage_cents_per_tb_month').notNull().default(0),
});

export const resourceClasses = pgTable('resource_classes', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The German name (the catalogue gives every class both; null only before the first sync). */
  nameDe: text('name_de'),
  siteId: text('site_id')
    .notNull()
    .references(() => sites.id),
  gpuModel: text('gpu_model').notNull(),
  gpusPerNode: integer('gpus_per_node').notNull(),
  nodes: integer('nodes').notNull(),
  maxWalltimeSeconds: integer('max_walltime_seconds').notNull(),
  gpuIdlePowerW: integer('gpu_idle_power_w').notNull(),
  gpuMaxPowerW: integer('gpu_max_power_w').notNull(),
  nodeBasePowerW: integer('node_base_power_w').notNull(),
  /** Dense BF16 peak per GPU in TFLOP/s, for runtime estimates. */
  peakTflops: integer('peak_tflops').notNull(),
  active: boolean('active').notNull().default(true),
});

export const tariffs = pgTable(
  'tariffs',
  {
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    tenantKind: orgKind('tenant_kind').notNull(),
    centsPerGpuHour: integer('cents_per_gpu_hour').notNull(),
  },
  (t) => [primaryKey({ columns: [t.resourceClassId, t.tenantKind] })],
);

export const reviewPath = pgEnum('review_path', REVIEW_PATHS);
/** How an access mode takes requests: each decided as it comes, or gathered into a call's rounds and reviewed together after each cut-off (issue #32). */
export const accessIntake = pgEnum('access_intake', ACCESS_INTAKES);
export const workloadKind = pgEnum('workload_kind', WORKLOAD_KINDS);

export const accessModes = pgTable('access_modes', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Largest total request in GPU-seconds; null = any size. */
  maxGpuSeconds: bigint('max_gpu_seconds', { mode: 'number' }),
  /** Smallest total new request or renewal in GPU-seconds (a smaller one belongs in another mode); null = none. */
  minGpuSeconds: bigint('min_gpu_seconds', { mode: 'number' }),
  intake: accessIntake('intake').notNull().default('first_come'),
  durationDays: integer('duration_days').notNull(),
  reviewPath: reviewPath('review_path').notNull(),
  targetDecisionWorkingDays: integer('target_decision_working_days').notNull(),
  /** Storage a request's line gets when it names none (GB = 10^9 bytes), and the most one line may ask (null: any). */
  defaultStorageGb: integer('default_storage_gb').notNull().default(0),
  maxStorageGb: integer('max_storage_gb'),
  sortOrder: integer('sort_order').notNull().default(0),
  active: boolean('active').notNull().default(true),
});

// ---- Calls and rounds (issue #32) ----

export const roundStatus = pgEnum('round_status', ['open', 'closed']);

/**
 * A call of an access mode that takes requests in rounds (Large Scale): staff open it with its cut-offs and
 * the GPU-hours given out per round. The centre's, not a tenant's: tenants read calls and rounds, only the
 * portal's own connection writes them (drizzle/0067).
 */
export const calls = pgTable(
  'calls',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    accessModeId: text('access_mode_id')
      .notNull()
      .references(() => accessModes.id),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    /** GPU-seconds the centre gives out in each round: the ranking's cut line. */
    gpuSecondsPerRound: bigint('gpu_seconds_per_round', { mode: 'number' }).notNull(),
    /** What its reviewers score, each criterion 1–5 (server/core/reviews.ts DEFAULT_RUBRIC unless staff gave another). */
    rubric: jsonb('rubric').$type<RubricCriterion[]>().notNull(),
    createdBy: uuid('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [index('calls_mode_idx').on(t.accessModeId), check('calls_budget_ck', sql`${t.gpuSecondsPerRound} > 0`)],
);

/** A round of a call: applications submitted up to its cut-off join it; it closes at the cut-off (the worker). */
export const callRounds = pgTable(
  'call_rounds',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    callId: uuid('call_id')
      .notNull()
      .references(() => calls.id),
    cutoffAt: timestamp('cutoff_at', { withTimezone: true }).notNull(),
    status: roundStatus('status').notNull().default('open'),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('call_rounds_cutoff_idx').on(t.callId, t.cutoffAt), index('call_rounds_open_idx').on(t.status, t.cutoffAt)],
);

// ---- Projects, applications, decisions ----

export const projectRole = pgEnum('project_role', ['pi', 'manager', 'member']);

export const projects = pgTable(
  'projects',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    title: text('title').notNull(),
    abstract: text('abstract').notNull(),
    /** Research projects: their field of science; null for a company's project. */
    fieldOfScience: text('field_of_science'),
    /** Company projects: what they want to run and where their data may go (issue #10); null for research. */
    workloadKind: workloadKind('workload_kind'),
    dataResidency: residency('data_residency'),
    createdBy: uuid('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [index('projects_org_idx').on(t.orgId)],
);

export const projectMembers = pgTable(
  'project_members',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    role: projectRole('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index('project_members_user_idx').on(t.userId)],
);

export const applicationKind = pgEnum('application_kind', ['new', 'top_up', 'renewal']);
export const applicationStatus = pgEnum('application_status', ['draft', 'submitted', 'changes_requested', 'approved', 'rejected']);

export const applications = pgTable(
  'applications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    accessModeId: text('access_mode_id')
      .notNull()
      .references(() => accessModes.id),
    kind: applicationKind('kind').notNull().default('new'),
    /** For top-ups and renewals: the allocation they extend. */
    baseAllocationId: uuid('base_allocation_id'),
    status: applicationStatus('status').notNull().default('draft'),
    periodStart: date('period_start', { mode: 'string' }).notNull(),
    periodEnd: date('period_end', { mode: 'string' }).notNull(),
    justification: text('justification').notNull(),
    /** The path it was sent down when submitted and why (server/core/applications.ts reviewRouteFor); null for drafts. */
    reviewRoute: jsonb('review_route').$type<ReviewRoute>(),
    createdBy: uuid('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    submittedAt: timestamp('submitted_at', { withTimezone: true }),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    /** The round of a call it joined when submitted (an access mode taking requests in rounds); null otherwise. */
    roundId: uuid('round_id').references(() => callRounds.id),
    /** When its PI was asked for the end-of-allocation report (the worker, once its period ended). */
    reportRequestedAt: timestamp('report_requested_at', { withTimezone: true }),
  },
  (t) => [index('applications_project_idx').on(t.projectId), index('applications_status_idx').on(t.status, t.submittedAt), index('applications_round_idx').on(t.roundId), check('applications_period_ck', sql`${t.periodEnd} > ${t.periodStart}`)],
);

export const applicationLines = pgTable(
  'application_lines',
  {
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    requestedGpuSeconds: bigint('requested_gpu_seconds', { mode: 'number' }).notNull(),
    /** Storage asked for beside the GPU-hours, in GB, in the workspace at the class's site. */
    requestedStorageGb: integer('requested_storage_gb').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.resourceClassId] }), check('application_lines_positive_ck', sql`${t.requestedGpuSeconds} > 0 and ${t.requestedStorageGb} >= 0`)],
);

export const decisionOutcome = pgEnum('decision_outcome', ['approved', 'rejected', 'changes_requested']);

export const decisions = pgTable(
  'decisions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id),
    /** Null when the access mode approves instantly (the portal decided). */
    reviewerUserId: uuid('reviewer_user_id').references(() => users.id),
    outcome: decisionOutcome('outcome').notNull(),
    comment: text('comment').notNull(),
    /** Granted GPU-seconds (and storage in GB; absent on decisions before storage lines) per resource class, for approvals. */
    grantedLines: jsonb('granted_lines').$type<{ resourceClassId: string; gpuSeconds: number; storageGb?: number }[]>(),
    decidedAt: timestamp('decided_at', { withTimezone: true }).notNull().defaultNow(),
    /** Order of decisions, also when two share a timestamp. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (t) => [index('decisions_application_idx').on(t.applicationId)],
);

// ---- Panels, scores and conflicts of interest (issue #32) ----

export const reviewStatus = pgEnum('review_status', ['assigned', 'scored', 'declined']);

/**
 * A reviewer assigned to an application (by staff, one by one or as a round's panel): scores it on its
 * call's rubric, or declines. The applicant's tenant reads a review's scores and its comment to the
 * applicant once the application is decided, never who wrote it nor the internal note (drizzle/0068).
 */
export const reviewAssignments = pgTable(
  'review_assignments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id),
    /** The applicant's tenant (for its row-level policy). */
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    reviewerUserId: uuid('reviewer_user_id')
      .notNull()
      .references(() => users.id),
    assignedBy: uuid('assigned_by')
      .notNull()
      .references(() => users.id),
    assignedAt: timestamp('assigned_at', { withTimezone: true }).notNull().defaultNow(),
    status: reviewStatus('status').notNull().default('assigned'),
    /** Each rubric criterion's score, 1–5, once scored. */
    scores: jsonb('scores').$type<Record<string, number>>(),
    commentToApplicant: text('comment_to_applicant').notNull().default(''),
    /** For staff only. */
    internalNote: text('internal_note').notNull().default(''),
    declineReason: text('decline_reason'),
    scoredAt: timestamp('scored_at', { withTimezone: true }),
    /** The last reminder mailed for it (reviewers are reminded of reviews that are due). */
    remindedAt: timestamp('reminded_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('review_assignments_unique_idx').on(t.applicationId, t.reviewerUserId),
    index('review_assignments_reviewer_idx').on(t.reviewerUserId, t.status),
    check('review_assignments_scored_ck', sql`(${t.status} = 'scored') = (${t.scores} is not null and ${t.scoredAt} is not null)`),
  ],
);

/**
 * The end-of-allocation report of an approved request (issue #32): what its allocation produced, filed by
 * the project's PI or a manager once its period ends (server/core/reports.ts). One per request; filing
 * again replaces it (audited with both versions).
 */
export const allocationReports = pgTable(
  'allocation_reports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    summary: text('summary').notNull(),
    /** DOIs, bare and in lower case. */
    publications: jsonb('publications').$type<string[]>().notNull(),
    /** Data sets: `doi:<doi>` or an https address. */
    datasets: jsonb('datasets').$type<string[]>().notNull(),
    filedBy: uuid('filed_by')
      .notNull()
      .references(() => users.id),
    filedAt: timestamp('filed_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('allocation_reports_application_idx').on(t.applicationId), index('allocation_reports_org_idx').on(t.orgId)],
);

/** A round's panel: its reviewers are assigned each of its applications when the round closes (or at once when it has). */
export const roundReviewers = pgTable(
  'round_reviewers',
  {
    roundId: uuid('round_id')
      .notNull()
      .references(() => callRounds.id),
    reviewerUserId: uuid('reviewer_user_id')
      .notNull()
      .references(() => users.id),
    assignedBy: uuid('assigned_by')
      .notNull()
      .references(() => users.id),
    assignedAt: timestamp('assigned_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.roundId, t.reviewerUserId] })],
);

export const reviewConflictKind = pgEnum('review_conflict_kind', ['declared', 'override']);

/**
 * Conflicts of interest a reviewer declared on an application, and admins' overrides of a conflict
 * (automatic or declared), each with its reason. Append-only: the latest row for a reviewer and an
 * application decides (server/core/reviews.ts conflictState).
 */
export const reviewConflicts = pgTable(
  'review_conflicts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    applicationId: uuid('application_id')
      .notNull()
      .references(() => applications.id),
    reviewerUserId: uuid('reviewer_user_id')
      .notNull()
      .references(() => users.id),
    kind: reviewConflictKind('kind').notNull(),
    reason: text('reason').notNull(),
    createdBy: uuid('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (t) => [index('review_conflicts_idx').on(t.applicationId, t.reviewerUserId)],
);

// ---- Allocations and the ledger ----

export const budgetUnit = pgEnum('budget_unit', ['gpu_seconds', 'cents']);
export const allocationStatus = pgEnum('allocation_status', ['active', 'expired', 'suspended']);

export const allocations = pgTable(
  'allocations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    /** Null for a company credit line, which pays for any resource class at the tenant's tariff. */
    resourceClassId: text('resource_class_id').references(() => resourceClasses.id),
    applicationId: uuid('application_id').references(() => applications.id),
    unit: budgetUnit('unit').notNull(),
    periodStart: date('period_start', { mode: 'string' }).notNull(),
    periodEnd: date('period_end', { mode: 'string' }).notNull(),
    status: allocationStatus('status').notNull().default('active'),
    statusReason: text('status_reason'),
    maxGpusAtOnce: integer('max_gpus_at_once'),
    maxWalltimeSeconds: integer('max_walltime_seconds'),
    maxQueuedJobs: integer('max_queued_jobs'),
    /**
     * The storage line (issue #27), GB = 10^9 bytes: the project's quota at a site is the sum of its active
     * allocations' lines whose class is at that site, a credit line's (no class) counting at every site.
     */
    storageGb: integer('storage_gb').notNull().default(0),
    // Cached balance, updated under a row lock in the same transaction as each ledger entry.
    granted: bigint('granted', { mode: 'number' }).notNull().default(0),
    charged: bigint('charged', { mode: 'number' }).notNull().default(0),
    reserved: bigint('reserved', { mode: 'number' }).notNull().default(0),
    expired: bigint('expired', { mode: 'number' }).notNull().default(0),
    overrun: bigint('overrun', { mode: 'number' }).notNull().default(0),
    /**
     * Model calls through the gateway metered on this allocation (issue #29), in millionths of its unit: a
     * call's charge is what it moves this past a whole unit (core/inference/metering.ts `chargeWithCarry`),
     * so the ledger's charges for calls are Σ usage × price, to the unit.
     */
    inferenceMicro: bigint('inference_micro', { mode: 'number' }).notNull().default(0),
    /** Highest usage notice sent (per-mille: 800, 1000), so each is sent once. */
    noticedPermille: integer('noticed_permille').notNull().default(0),
    /**
     * What the allocation has in flight, kept by triggers on jobs (drizzle/0042) in the same statement as
     * each job's insert, state change, settlement or delete: GPUs of its active jobs (SUBMITTING, PENDING,
     * RUNNING, not settled) and how many of them are queued (SUBMITTING, PENDING). Admission reads them
     * under the allocation's lock instead of counting the queue.
     */
    activeGpus: bigint('active_gpus', { mode: 'number' }).notNull().default(0),
    queuedJobs: integer('queued_jobs').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    index('allocations_project_idx').on(t.projectId),
    index('allocations_org_idx').on(t.orgId),
    check('allocations_balance_ck', sql`${t.charged} - ${t.overrun} + ${t.reserved} + ${t.expired} <= ${t.granted} and ${t.reserved} >= 0 and ${t.charged} >= 0`),
    check('allocations_period_ck', sql`${t.periodEnd} > ${t.periodStart}`),
    check('allocations_in_flight_ck', sql`${t.activeGpus} >= 0 and ${t.queuedJobs} >= 0`),
    check('allocations_storage_ck', sql`${t.storageGb} >= 0`),
  ],
);

export const ledgerKind = pgEnum('ledger_kind', ['grant', 'reserve', 'release', 'charge', 'adjust', 'refund', 'expire']);

/** Append-only: a trigger refuses UPDATE and DELETE. */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    allocationId: uuid('allocation_id')
      .notNull()
      .references(() => allocations.id),
    kind: ledgerKind('kind').notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    overrun: bigint('overrun', { mode: 'number' }).notNull().default(0),
    /** The job a reserve, release or charge belongs to. */
    jobId: uuid('job_id'),
    /** A job array's task a release or charge belongs to (each task is settled as it ends); null: the job as a whole. */
    taskIndex: integer('task_index'),
    /**
     * 0: the job's own reserve and release; n ≥ 1: the n-th extension of a session's time limit, its
     * reserve (and, if the scheduler refused the extension, the release that takes it back).
     */
    extension: smallint('extension').notNull().default(0),
    /** The model call (issue #29) a reserve, release or charge belongs to; null for everything else. */
    modelCallId: uuid('model_call_id'),
    actorUserId: uuid('actor_user_id').references(() => users.id),
    reason: text('reason'),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('ledger_entries_allocation_idx').on(t.allocationId, t.at),
    // Each job (each task of an array, each extension of a session) reserves, releases and is charged at most once: settling twice writes nothing.
    uniqueIndex('ledger_entries_job_kind_idx').on(t.jobId, t.kind, sql`coalesce(${t.taskIndex}, -1)`, t.extension).where(sql`${t.jobId} is not null`),
    // A model call reserves, releases and is charged at most once.
    uniqueIndex('ledger_entries_model_call_kind_idx').on(t.modelCallId, t.kind).where(sql`${t.modelCallId} is not null`),
    // Every kind moves a positive amount (a charge may be 0, an adjustment either way but not 0); an overrun is part of a charge.
    check('ledger_entries_amount_ck', sql`(${t.kind} = 'adjust' and ${t.amount} <> 0) or (${t.kind} = 'charge' and ${t.amount} >= 0) or ${t.amount} > 0`),
    check('ledger_entries_overrun_ck', sql`${t.overrun} = 0 or (${t.kind} = 'charge' and ${t.overrun} between 0 and ${t.amount})`),
  ],
);

export const notifications = pgTable(
  'notifications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** A message key of the catalogue and its parameters, rendered in the reader's language. */
    messageKey: text('message_key').notNull(),
    params: jsonb('params').$type<Record<string, string | number>>().notNull(),
    link: text('link'),
    readAt: timestamp('read_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index('notifications_user_idx').on(t.userId, t.createdAt)],
);

// ---- Jobs ----

export const jobKind = pgEnum('job_kind', ['training', 'fine_tuning', 'inference', 'batch', 'interactive']);
/** The portal's own SUBMITTING (not yet at the scheduler), then the scheduler's states. */
export const jobState = pgEnum('job_state', ['SUBMITTING', ...SCHEDULER_JOB_STATES]);

export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    allocationId: uuid('allocation_id')
      .notNull()
      .references(() => allocations.id),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    /** A double click or a retried request with the same key returns the first job. */
    idempotencyKey: text('idempotency_key').notNull(),
    /** A hash of the submission the key was first used with (issue #31): the same key with another body is refused. Null on jobs from before. */
    idempotencyFingerprint: text('idempotency_fingerprint'),
    name: text('name').notNull(),
    kind: jobKind('kind').notNull(),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    gpus: integer('gpus').notNull(),
    nodes: integer('nodes').notNull(),
    walltimeSeconds: integer('walltime_seconds').notNull(),
    image: text('image').notNull(),
    command: text('command').notNull(),
    env: jsonb('env').$type<Record<string, string>>().notNull(),
    /** The estimate shown before submitting (runtime, GPU-hours, cost, energy) with its assumptions. */
    estimate: jsonb('estimate').$type<Record<string, unknown>>(),
    /** What the simulated cluster is told happens (runtime, utilisation, exit code). */
    simulation: jsonb('simulation').$type<{ runtimeSeconds: number; gpuUtilPercent: number; exitCode: number }>(),
    state: jobState('state').notNull().default('SUBMITTING'),
    pendingReason: text('pending_reason'),
    schedulerJobId: text('scheduler_job_id'),
    /** Budget held at submission: GPU-seconds, or cents on a credit line. */
    reservedAmount: bigint('reserved_amount', { mode: 'number' }).notNull(),
    reservedUnit: budgetUnit('reserved_unit').notNull(),
    /** Tariff at submission, cents per GPU-hour. */
    centsPerGpuHour: integer('cents_per_gpu_hour').notNull(),
    submittedAt: timestamp('submitted_at', { withTimezone: true }).notNull().defaultNow(),
    /** Earliest start asked for (Slurm's --begin); null: as soon as possible. */
    beginAt: timestamp('begin_at', { withTimezone: true }),
    startedAt: timestamp('started_at', { withTimezone: true }),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    /** The exit code as Slurm reports it: 0 when a signal ended the job (then exit_signal says which). */
    exitCode: integer('exit_code'),
    /** The signal that ended the job (TIMEOUT: 15), null when it exited by itself or never ran. */
    exitSignal: integer('exit_signal'),
    nodeList: jsonb('node_list').$type<string[]>(),
    // Usage, fixed at settlement.
    gpuSeconds: bigint('gpu_seconds', { mode: 'number' }),
    energyWh: bigint('energy_wh', { mode: 'number' }),
    energyMeasured: boolean('energy_measured'),
    costCents: bigint('cost_cents', { mode: 'number' }),
    chargedAmount: bigint('charged_amount', { mode: 'number' }),
    /** Footprint, fixed at settlement from the site's figures of that day. */
    facilityEnergyWh: bigint('facility_energy_wh', { mode: 'number' }),
    heatReusedWh: bigint('heat_reused_wh', { mode: 'number' }),
    co2eGrams: bigint('co2e_grams', { mode: 'number' }),
    /** Seconds from submission to start (null if it never started). */
    waitSeconds: integer('wait_seconds'),
    settledAt: timestamp('settled_at', { withTimezone: true }),
    cancelRequestedAt: timestamp('cancel_requested_at', { withTimezone: true }),
    /** Lease of the one process handing this SUBMITTING job to the scheduler (see jobs.ts claimHandover). */
    handoverUntil: timestamp('handover_until', { withTimezone: true }),
    /** How many hand-overs were started (the lease taken); on the first the scheduler cannot know the job yet. */
    handoverAttempts: integer('handover_attempts').notNull().default(0),
    /** Start only after these jobs of the project ended as `type` asks (Slurm's --dependency); null: no dependency. */
    dependency: jsonb('dependency').$type<{ type: JobDependencyType; jobIds: string[] }>(),
    /** Who the job runs as on the cluster, fixed at the hand-over: the person's POSIX user and the project's group. */
    runAsUser: text('run_as_user'),
    runAsGroup: text('run_as_group'),
    /** A job array (Slurm's --array): its canonical text ("0-19%4"), its number of tasks and the most running at once; null: one job. */
    arraySpec: text('array_spec'),
    arrayTasks: integer('array_tasks'),
    arrayThrottle: integer('array_throttle'),
    /** A job array's tasks running now and tasks ended (each settled as it ends); the others wait. */
    tasksRunning: integer('tasks_running').notNull().default(0),
    tasksEnded: integer('tasks_ended').notNull().default(0),
    /** An interactive session (kind `interactive`, issue #28): the catalogue's app, e.g. `jupyter`; null for other jobs. */
    app: text('app'),
    /** An inference service (kind `inference`, issue #29): the model name it serves, as callers name it at the gateway; null for other jobs. */
    servedModel: text('served_model'),
    /** An interactive session ends after this many seconds without traffic through the portal's proxy. */
    idleTimeoutSeconds: integer('idle_timeout_seconds'),
    /** When the portal's proxy last carried traffic of this session (written at most every 30 s per session). */
    sessionSeenAt: timestamp('session_seen_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('jobs_idempotency_idx').on(t.userId, t.idempotencyKey),
    index('jobs_org_idx').on(t.orgId, t.submittedAt),
    index('jobs_org_ended_idx').on(t.orgId, t.endedAt),
    index('jobs_started_idx').on(t.startedAt),
    index('jobs_allocation_idx').on(t.allocationId, t.state),
    index('jobs_open_idx').on(t.state).where(sql`${t.settledAt} is null`),
    // Under row-level security an enum comparison (not leakproof) cannot be an index condition, but it
    // still proves a partial index's predicate: these keep the hot lookups of open jobs narrow for
    // tenant calls and for the portal's own (FORCEd) path alike (drizzle/0019).
    index('jobs_allocation_open_idx').on(t.allocationId).where(sql`${t.settledAt} is null`),
    index('jobs_handover_idx').on(t.handoverUntil).where(sql`${t.state} = 'SUBMITTING' and ${t.settledAt} is null`),
    index('jobs_cancelling_idx').on(t.id).where(sql`${t.cancelRequestedAt} is not null and ${t.settledAt} is null`),
    check('jobs_shape_ck', sql`${t.gpus} > 0 and ${t.nodes} > 0 and ${t.walltimeSeconds} > 0`),
    check('jobs_served_model_ck', sql`(${t.servedModel} is null) = (${t.kind} <> 'inference')`),
    check('jobs_session_ck', sql`(${t.app} is null and ${t.idleTimeoutSeconds} is null) or (${t.app} is not null and ${t.idleTimeoutSeconds} between 300 and 86400)`),
    check(
      'jobs_array_ck',
      sql`(${t.arrayTasks} is null and ${t.tasksRunning} = 0 and ${t.tasksEnded} = 0) or (${t.arrayTasks} between 1 and 10000 and ${t.tasksRunning} >= 0 and ${t.tasksEnded} >= 0 and ${t.tasksRunning} + ${t.tasksEnded} <= ${t.arrayTasks})`,
    ),
  ],
);

/**
 * The tasks of a job array that started, one row per task index as the scheduler reports it; a task's
 * usage is settled (charged, its share of the reservation released) once, when it ends.
 */
export const jobTasks = pgTable(
  'job_tasks',
  {
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    taskIndex: integer('task_index').notNull(),
    schedulerJobId: text('scheduler_job_id').notNull(),
    state: jobState('state').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    exitCode: integer('exit_code'),
    exitSignal: integer('exit_signal'),
    nodeList: jsonb('node_list').$type<string[]>().notNull(),
    gpuSeconds: bigint('gpu_seconds', { mode: 'number' }).notNull(),
    energyWh: bigint('energy_wh', { mode: 'number' }).notNull(),
    /** Fixed at the task's settlement: in the job's reserved unit, and in cents. */
    chargedAmount: bigint('charged_amount', { mode: 'number' }),
    costCents: bigint('cost_cents', { mode: 'number' }),
    settledAt: timestamp('settled_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.taskIndex] }), check('job_tasks_amounts_ck', sql`${t.gpuSeconds} >= 0 and ${t.energyWh} >= 0 and ${t.taskIndex} >= 0`)],
);

export const jobEvents = pgTable(
  'job_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: uuid('job_id')
      .notNull()
      .references(() => jobs.id),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    state: jobState('state').notNull(),
    /** A message key of the catalogue or a scheduler reason code. */
    message: text('message'),
    data: jsonb('data').$type<Record<string, unknown>>(),
  },
  (t) => [index('job_events_job_idx').on(t.jobId, t.at)],
);

/**
 * The simulated cluster: one small row per cluster, locked by every call of every process. The
 * engine itself lives in each process's memory, rebuilt from `sim_cluster_snapshots` plus the
 * operations after it in `sim_cluster_ops` (server/adapters/scheduler/simulated.ts).
 */
export const simClusterState = pgTable('sim_cluster_state', {
  id: text('id').primaryKey(),
  /** Calls committed so far (every call bumps it, reads too). */
  version: bigint('version', { mode: 'number' }).notNull(),
  /** Seq of the last operation in sim_cluster_ops (0: none yet). */
  opSeq: bigint('op_seq', { mode: 'number' }).notNull().default(0),
  /** The furthest simulated time any call has advanced the cluster to: no later operation is earlier. */
  simNowSeconds: bigint('sim_now_seconds', { mode: 'number' }).notNull().default(0),
  /** Wall-clock instant that corresponds to `simAnchorSeconds` on the simulation clock. */
  wallAnchor: timestamp('wall_anchor', { withTimezone: true }).notNull(),
  simAnchorSeconds: bigint('sim_anchor_seconds', { mode: 'number' }).notNull(),
  speed: integer('speed').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const simOpKind = pgEnum('sim_op_kind', ['submit', 'cancel', 'extend']);

/** The simulated cluster's operations, append-only: what changed the engine besides the passing of time, in order. */
export const simClusterOps = pgTable(
  'sim_cluster_ops',
  {
    clusterId: text('cluster_id').notNull(),
    /** 1, 2, 3, … per cluster, without gaps. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** Simulated time the operation took effect; never decreases along seq. */
    atSeconds: bigint('at_seconds', { mode: 'number' }).notNull(),
    kind: simOpKind('kind').notNull(),
    /** submit: the engine's job spec; cancel: the job id. */
    payload: jsonb('payload').notNull(),
  },
  (t) => [primaryKey({ columns: [t.clusterId, t.seq] })],
);

/** Serialised engines (server/core/sim EngineState) after operation `seq`, written off the request path. */
export const simClusterSnapshots = pgTable(
  'sim_cluster_snapshots',
  {
    clusterId: text('cluster_id').notNull(),
    /** The last operation the state includes. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    state: jsonb('state').notNull(),
    /** The engine's simulated time in the state. */
    simSeconds: bigint('sim_seconds', { mode: 'number' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.clusterId, t.seq] })],
);

/** Jobs the simulated cluster has finished, kept after the engine forgets them, so their accounting can be read. */
export const simFinishedJobs = pgTable('sim_finished_jobs', {
  portalJobId: text('portal_job_id').primaryKey(),
  clusterId: text('cluster_id').notNull(),
  status: jsonb('status').notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true }).notNull(),
});

/** Samples of the cluster's load and power, for the staff cluster page. */
export const clusterSamples = pgTable(
  'cluster_samples',
  {
    at: timestamp('at', { withTimezone: true }).notNull(),
    partition: text('partition').notNull(),
    totalGpus: integer('total_gpus').notNull(),
    allocatedGpus: integer('allocated_gpus').notNull(),
    downGpus: integer('down_gpus').notNull(),
    powerW: integer('power_w').notNull(),
    pendingJobs: integer('pending_jobs').notNull(),
  },
  (t) => [primaryKey({ columns: [t.at, t.partition] })],
);

/**
 * Each sync of the budgets the scheduler enforces itself (server/services/cluster/scheduler-budgets.ts): when,
 * for which projects (null = all), how many budgets, and what the scheduler read back differently
 * (drift) or why it failed. Centre internals: the tenant role may not read it (drizzle/0028).
 */
export const schedulerBudgetSyncs = pgTable(
  'scheduler_budget_syncs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    projectIds: jsonb('project_ids').$type<string[]>(),
    ok: boolean('ok').notNull(),
    budgets: integer('budgets').notNull(),
    mismatches: jsonb('mismatches').$type<{ account: string; partition: string; asked: number; read: number | null }[]>().notNull(),
    error: text('error'),
    /**
     * With a full sync of a scheduler that reports its accounting: the ledger's GPU-seconds per project account
     * and class beside the scheduler's, for jobs ended since `since` (server/core/scheduler/usage-check.ts).
     */
    usage: jsonb('usage').$type<{ since: string; rows: { account: string; partition: string; portalGpuSeconds: number; schedulerGpuSeconds: number; differenceGpuSeconds: number }[] }>(),
  },
  (t) => [index('scheduler_budget_syncs_at_idx').on(t.at)],
);

/**
 * Jobs that ran in a project's account at the scheduler without the portal (`sbatch -A <project>` from a
 * shell), read back from its accounting and charged to the project's allocation once: the key is the
 * cluster and the scheduler's job id. Without an allocation for its class the job is recorded, uncharged.
 */
export const outsideJobs = pgTable(
  'outside_jobs',
  {
    cluster: text('cluster').notNull(),
    schedulerJobId: text('scheduler_job_id').notNull(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    /** The allocation charged (null: none for its class, so nothing was charged). */
    allocationId: uuid('allocation_id').references(() => allocations.id),
    name: text('name').notNull(),
    partition: text('partition').notNull(),
    resourceClassId: text('resource_class_id'),
    /** The Unix user it ran as. */
    schedulerUser: text('scheduler_user'),
    /** The person of the tenant whose POSIX user that is (users.posix_name), when one is: their spending counts it. */
    userId: uuid('user_id').references(() => users.id),
    state: jobState('state').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    gpuSeconds: bigint('gpu_seconds', { mode: 'number' }).notNull(),
    /** What was charged, in the allocation's unit (0 when nothing was). */
    chargedAmount: bigint('charged_amount', { mode: 'number' }).notNull().default(0),
    /** The tariff it was charged at, on a credit line (cents per GPU-hour; null on a GPU-hour budget): its invoice line's price. */
    centsPerGpuHour: integer('cents_per_gpu_hour'),
    importedAt: timestamp('imported_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.cluster, t.schedulerJobId] }), index('outside_jobs_project_idx').on(t.projectId, t.endedAt)],
);

export const modelCallStatus = pgEnum('model_call_status', ['open', 'settled', 'lost']);

/**
 * A call through the OpenAI-compatible gateway (issue #29): who made it with which token, for which project
 * and allocation, to which model and replica, what it reserved, and once it ended its tokens, cost, energy
 * and CO2e, frozen. Never the prompt or the answer. `open` until the answer ended (then `settled`); one whose
 * gateway process died is released by the worker after MODEL_CALL_LOST_AFTER_MS (`lost`, charged nothing).
 */
export const modelCalls = pgTable(
  'model_calls',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    allocationId: uuid('allocation_id')
      .notNull()
      .references(() => allocations.id),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    tokenId: uuid('token_id').references(() => apiTokens.id, { onDelete: 'set null' }),
    requestId: text('request_id').notNull(),
    model: text('model').notNull(),
    /** chat, completion or embedding. */
    endpoint: text('endpoint').notNull(),
    /** A shared model of the centre (catalogue) rather than one of the tenant's own services. */
    shared: boolean('shared').notNull().default(false),
    /** The replica's job and site that answered (null until one did). */
    serviceJobId: uuid('service_job_id'),
    siteId: text('site_id'),
    resourceClassId: text('resource_class_id'),
    unit: budgetUnit('unit').notNull(),
    /** Prices frozen at the call, per token in millionths of the allocation's unit, and in cents per million tokens (what an invoice shows). */
    inputMicroPerToken: bigint('input_micro_per_token', { mode: 'number' }).notNull(),
    outputMicroPerToken: bigint('output_micro_per_token', { mode: 'number' }).notNull(),
    inputCentsPerMTokens: integer('input_cents_per_m_tokens').notNull(),
    outputCentsPerMTokens: integer('output_cents_per_m_tokens').notNull(),
    /** Energy a token takes on the replica's GPU class, micro-watt-hours (IT). */
    uwhPerToken: integer('uwh_per_token').notNull().default(0),
    reservedAmount: bigint('reserved_amount', { mode: 'number' }).notNull(),
    status: modelCallStatus('status').notNull().default('open'),
    httpStatus: integer('http_status'),
    aborted: boolean('aborted').notNull().default(false),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    /** Σ tokens × price in millionths of the unit, and the whole units it moved the allocation's meter on (the ledger's charge). */
    costMicro: bigint('cost_micro', { mode: 'number' }).notNull().default(0),
    chargedAmount: bigint('charged_amount', { mode: 'number' }).notNull().default(0),
    /** Facility energy (IT × PUE), micro-watt-hours, and its CO2e, micrograms. */
    energyUwh: bigint('energy_uwh', { mode: 'number' }).notNull().default(0),
    co2eUg: bigint('co2e_ug', { mode: 'number' }).notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [
    index('model_calls_org_idx').on(t.orgId, t.startedAt),
    index('model_calls_allocation_idx').on(t.allocationId, t.endedAt),
    index('model_calls_open_idx').on(t.startedAt).where(sql`${t.status} = 'open'`),
    // A service's traffic on its job page.
    index('model_calls_service_idx').on(t.serviceJobId).where(sql`${t.serviceJobId} is not null`),
  ],
);

// ---- Usage, invoices ----

/** Daily usage per tenant × project × user × resource class × job kind, maintained as jobs settle. */
export const usageRollups = pgTable(
  'usage_rollups',
  {
    day: date('day', { mode: 'string' }).notNull(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    kind: jobKind('kind').notNull(),
    jobs: integer('jobs').notNull(),
    gpuSeconds: bigint('gpu_seconds', { mode: 'number' }).notNull(),
    /** Sum of waits of the jobs that started, and how many started, for the average wait. */
    waitSeconds: bigint('wait_seconds', { mode: 'number' }).notNull(),
    startedJobs: integer('started_jobs').notNull(),
    costCents: bigint('cost_cents', { mode: 'number' }).notNull(),
    energyWh: bigint('energy_wh', { mode: 'number' }).notNull(),
    facilityEnergyWh: bigint('facility_energy_wh', { mode: 'number' }).notNull(),
    heatReusedWh: bigint('heat_reused_wh', { mode: 'number' }).notNull(),
    co2eGrams: bigint('co2e_grams', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.day, t.projectId, t.userId, t.resourceClassId, t.kind] }),
    index('usage_rollups_day_idx').on(t.day),
  ],
);

/** The usage figures a centre rollup row sums (as `usage_rollups` does). */
function centreFigures() {
  return {
    jobs: integer('jobs').notNull(),
    gpuSeconds: bigint('gpu_seconds', { mode: 'number' }).notNull(),
    costCents: bigint('cost_cents', { mode: 'number' }).notNull(),
    energyWh: bigint('energy_wh', { mode: 'number' }).notNull(),
    facilityEnergyWh: bigint('facility_energy_wh', { mode: 'number' }).notNull(),
    heatReusedWh: bigint('heat_reused_wh', { mode: 'number' }).notNull(),
    co2eGrams: bigint('co2e_grams', { mode: 'number' }).notNull(),
  };
}

/**
 * The centre dashboard's daily figures per partition and tenant kind (issue #30), maintained in the settling
 * transaction beside `usage_rollups` from the same parts (server/services/usage/usage.ts), so a month, a
 * quarter or a year of a large centre is read from a few thousand rows, never from the jobs. The waits are
 * booked on the day the job started (the dashboard's waits are those of jobs that started in the range):
 * how many, their sum, and their counts per wait bucket (`wait_counts`, bucket → jobs; core/usage/wait-buckets.ts).
 */
export const centreDays = pgTable(
  'centre_days',
  {
    day: date('day', { mode: 'string' }).notNull(),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    orgKind: orgKind('org_kind').notNull(),
    ...centreFigures(),
    startedJobs: integer('started_jobs').notNull(),
    waitSeconds: bigint('wait_seconds', { mode: 'number' }).notNull(),
    waitCounts: jsonb('wait_counts').$type<Record<string, number>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.resourceClassId, t.orgKind] })],
);

/** The centre dashboard's daily figures per partition and tenant, for its biggest tenants (maintained as `centre_days`). */
export const centreTenantDays = pgTable(
  'centre_tenant_days',
  {
    day: date('day', { mode: 'string' }).notNull(),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    ...centreFigures(),
  },
  (t) => [primaryKey({ columns: [t.day, t.resourceClassId, t.orgId] })],
);

/** `centre_days` by calendar month (`month` is its first day): a whole month of the dashboard's range is one row per partition and kind. */
export const centreMonths = pgTable(
  'centre_months',
  {
    month: date('month', { mode: 'string' }).notNull(),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    orgKind: orgKind('org_kind').notNull(),
    ...centreFigures(),
    startedJobs: integer('started_jobs').notNull(),
    waitSeconds: bigint('wait_seconds', { mode: 'number' }).notNull(),
    waitCounts: jsonb('wait_counts').$type<Record<string, number>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.month, t.resourceClassId, t.orgKind] }), check('centre_months_first_day', sql`extract(day from ${t.month}) = 1`)],
);

/** `centre_tenant_days` by calendar month: a year's biggest tenants from twelve rows per tenant and partition. */
export const centreTenantMonths = pgTable(
  'centre_tenant_months',
  {
    month: date('month', { mode: 'string' }).notNull(),
    resourceClassId: text('resource_class_id')
      .notNull()
      .references(() => resourceClasses.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    ...centreFigures(),
  },
  (t) => [primaryKey({ columns: [t.month, t.resourceClassId, t.orgId] }), check('centre_tenant_months_first_day', sql`extract(day from ${t.month}) = 1`)],
);

/**
 * What each project's workspace at a site holds (issue #27, server/services/files/storage.ts): bytes as last
 * measured — added to on each upload, taken from on each delete, set by the worker's scan, which also sees
 * what jobs wrote — and the alert level reached (0, 80, 100), so each crossing of a share alerts once.
 */
export const storageUsage = pgTable(
  'storage_usage',
  {
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    measuredAt: timestamp('measured_at', { withTimezone: true }).notNull(),
    /** When the worker's scan last walked the workspace (null: only writes through the portal counted so far). */
    scannedAt: timestamp('scanned_at', { withTimezone: true }),
    alertedPercent: integer('alerted_percent').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.siteId] }), index('storage_usage_org_idx').on(t.orgId), check('storage_usage_bytes_ck', sql`${t.bytes} >= 0`)],
);

/**
 * Each workspace's daily high-water mark (the most it held that day, the day starting with what the last
 * measurement before it said): TB-months are summed from these rows, for the usage page and the invoice alike.
 */
export const storageDays = pgTable(
  'storage_days',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    day: date('day', { mode: 'string' }).notNull(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.day, t.projectId, t.siteId] }), index('storage_days_day_idx').on(t.day), check('storage_days_bytes_ck', sql`${t.bytes} >= 0`)],
);

/** Gap-free document numbers: one row per series (e.g. invoice-2026), locked while a number is taken. */
export const documentCounters = pgTable('document_counters', {
  series: text('series').primaryKey(),
  lastValue: integer('last_value').notNull(),
});

/** An issued invoice never changes (a trigger refuses UPDATE and DELETE); corrections are credit notes. */
export const invoices = pgTable(
  'invoices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    number: text('number').notNull().unique(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    /** First day of the invoiced month. */
    periodMonth: date('period_month', { mode: 'string' }).notNull(),
    /**
     * The usage covered: jobs that ended in [coversFrom, coversUntil). A monthly invoice covers its
     * month (or what a closing invoice left of it); a closing invoice the month so far.
     */
    coversFrom: timestamp('covers_from', { withTimezone: true }).notNull(),
    coversUntil: timestamp('covers_until', { withTimezone: true }).notNull(),
    issuedAt: timestamp('issued_at', { withTimezone: true }).notNull().defaultNow(),
    /** The recipient as it was when issued: its billing profile (name, address, VAT ID, PO); only name and country on invoices issued before billing profiles. */
    recipient: jsonb('recipient').$type<InvoiceRecipient>().notNull(),
    /** The issuer as configured when issued; null on invoices issued before the issuer was configured. */
    issuer: jsonb('issuer').$type<InvoiceIssuer>(),
    /** 'standard' or 'reverseCharge' (server/core/billing/vat-treatment.ts). */
    vatTreatment: text('vat_treatment').$type<'standard' | 'reverseCharge'>().notNull().default('standard'),
    /** Issue day plus the issuer's payment terms; null on invoices issued before payment terms. */
    dueDate: date('due_date', { mode: 'string' }),
    netCents: bigint('net_cents', { mode: 'number' }).notNull(),
    vatPermille: integer('vat_permille').notNull(),
    vatCents: bigint('vat_cents', { mode: 'number' }).notNull(),
    grossCents: bigint('gross_cents', { mode: 'number' }).notNull(),
  },
  (t) => [uniqueIndex('invoices_org_covers_from_idx').on(t.orgId, t.coversFrom), index('invoices_org_month_idx').on(t.orgId, t.periodMonth)],
);

export interface InvoiceRecipient {
  name: string;
  country: string;
  street?: string;
  postcode?: string;
  city?: string;
  vatId?: string | null;
  billingEmail?: string;
  purchaseOrder?: string | null;
}

export interface InvoiceIssuer {
  name: string;
  street: string;
  postcode: string;
  city: string;
  country: string;
  vatId: string;
  taxNumber: string;
  registerEntry: string;
  bankName: string;
  iban: string;
  bic: string;
  paymentTermsDays: number;
  email: string;
  phone: string;
}

export const invoiceLines = pgTable(
  'invoice_lines',
  {
    invoiceId: uuid('invoice_id')
      .notNull()
      .references(() => invoices.id),
    lineNo: integer('line_no').notNull(),
    /** What the line bills: GPU-hours of a resource class, or storage at a site (issue #27). */
    kind: text('kind').$type<InvoiceLineKind>().notNull().default('compute'),
    /** The class of a compute line (null on a storage line). */
    resourceClassId: text('resource_class_id').references(() => resourceClasses.id),
    /** The site of a storage line (null on a compute line). */
    siteId: text('site_id').references(() => sites.id),
    description: text('description').notNull(),
    /** The description in German, frozen with it (null on invoices issued before names had two languages). */
    descriptionDe: text('description_de'),
    jobs: integer('jobs').notNull(),
    gpuSeconds: bigint('gpu_seconds', { mode: 'number' }).notNull(),
    unitPriceCentsPerGpuHour: integer('unit_price_cents_per_gpu_hour').notNull(),
    /** A storage line: the month's byte-days (exact), the TB-months shown (thousandths, rounded half up once) and the price per TB-month. */
    storageByteDays: bigint('storage_byte_days', { mode: 'bigint' }),
    milliTbMonths: bigint('milli_tb_months', { mode: 'number' }),
    unitPriceCentsPerTbMonth: integer('unit_price_cents_per_tb_month'),
    /**
     * A token line (issue #29): calls of one model through the gateway at one pair of prices — the model,
     * its calls (in `jobs`), tokens in and out, and the prices per million; its net is what the ledger charged them.
     */
    model: text('model'),
    inputTokens: bigint('input_tokens', { mode: 'number' }),
    outputTokens: bigint('output_tokens', { mode: 'number' }),
    inputCentsPerMTokens: integer('input_cents_per_m_tokens'),
    outputCentsPerMTokens: integer('output_cents_per_m_tokens'),
    netCents: bigint('net_cents', { mode: 'number' }).notNull(),
    /** The projects' cost centre and purchase-order number (issue #24); a line per distinct pair. */
    costCentre: text('cost_centre'),
    purchaseOrder: text('purchase_order'),
  },
  (t) => [
    primaryKey({ columns: [t.invoiceId, t.lineNo] }),
    check(
      'invoice_lines_kind_ck',
      sql`(${t.kind} = 'compute' and ${t.resourceClassId} is not null) or (${t.kind} = 'storage' and ${t.siteId} is not null and ${t.storageByteDays} >= 0 and ${t.milliTbMonths} >= 0 and ${t.unitPriceCentsPerTbMonth} >= 0) or (${t.kind} = 'tokens' and ${t.model} is not null and ${t.inputTokens} >= 0 and ${t.outputTokens} >= 0 and ${t.inputCentsPerMTokens} >= 0 and ${t.outputCentsPerMTokens} >= 0)`,
    ),
  ],
);

export type InvoiceLineKind = 'compute' | 'storage' | 'tokens';

/**
 * A company tenant's billing profile: who its invoices are made out to (issue #10). Required before its
 * first paid job; the VAT ID is checked for its country's shape and check digit (server/core/billing).
 */
export const billingProfiles = pgTable('billing_profiles', {
  orgId: uuid('org_id')
    .primaryKey()
    .references(() => organisations.id, { onDelete: 'cascade' }),
  legalName: text('legal_name').notNull(),
  street: text('street').notNull(),
  postcode: text('postcode').notNull(),
  city: text('city').notNull(),
  country: char('country', { length: 2 }).notNull(),
  /** Normalised (DE136695976); null where the company has none (outside the EU, or not registered). */
  vatId: text('vat_id'),
  billingEmail: text('billing_email').notNull(),
  purchaseOrder: text('purchase_order'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  updatedBy: uuid('updated_by').references(() => users.id),
});

export const creditRequestStatus = pgEnum('credit_request_status', ['submitted', 'approved', 'rejected']);

/**
 * A company owner's request for a larger credit line (issue #10): decided by staff in the review queue;
 * an approval grants the difference on the credit line in the ledger.
 */
export const creditLineRequests = pgTable(
  'credit_line_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    allocationId: uuid('allocation_id')
      .notNull()
      .references(() => allocations.id),
    /** The credit line granted when asked, and the line asked for, in euro cents. */
    currentCents: bigint('current_cents', { mode: 'number' }).notNull(),
    requestedCents: bigint('requested_cents', { mode: 'number' }).notNull(),
    reason: text('reason').notNull(),
    status: creditRequestStatus('status').notNull().default('submitted'),
    requestedBy: uuid('requested_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    decidedBy: uuid('decided_by').references(() => users.id),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    decisionComment: text('decision_comment'),
  },
  (t) => [
    index('credit_line_requests_org_idx').on(t.orgId),
    index('credit_line_requests_status_idx').on(t.status, t.createdAt),
    // One open request per credit line, also when two are sent at the same moment.
    uniqueIndex('credit_line_requests_one_open_idx').on(t.allocationId).where(sql`${t.status} = 'submitted'`),
    check('credit_line_requests_larger_ck', sql`${t.requestedCents} > ${t.currentCents}`)],
);

/**
 * What a company spends on one project (issue #24): a monthly and a total budget in euro cents (null = none),
 * and the cost centre and purchase-order number its invoice lines carry. Set by owners and managers.
 */
export const projectBudgets = pgTable(
  'project_budgets',
  {
    projectId: uuid('project_id')
      .primaryKey()
      .references(() => projects.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    monthlyCents: bigint('monthly_cents', { mode: 'number' }),
    totalCents: bigint('total_cents', { mode: 'number' }),
    costCentre: text('cost_centre'),
    purchaseOrder: text('purchase_order'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    updatedBy: uuid('updated_by').references(() => users.id),
  },
  (t) => [index('project_budgets_org_idx').on(t.orgId), check('project_budgets_amounts_ck', sql`${t.monthlyCents} >= 0 and ${t.totalCents} >= 0`)],
);

/** The most one person may spend on a company's credit lines in a calendar month, in euro cents (issue #24). */
export const memberSpendLimits = pgTable(
  'member_spend_limits',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    monthlyCents: bigint('monthly_cents', { mode: 'number' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    updatedBy: uuid('updated_by').references(() => users.id),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] }), check('member_spend_limits_amount_ck', sql`${t.monthlyCents} >= 0`)],
);

/**
 * One row per budget alert sent (issue #24): a budget or cap (`scope`, `subjectId`), its period (a month as
 * yyyy-mm, or `total`) and the threshold crossed. The primary key makes each alert once per threshold and period.
 */
export const budgetAlerts = pgTable(
  'budget_alerts',
  {
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    subjectId: text('subject_id').notNull(),
    period: text('period').notNull(),
    thresholdPercent: integer('threshold_percent').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.scope, t.subjectId, t.period, t.thresholdPercent] })],
);

export const creditNotes = pgTable('credit_notes', {
  id: uuid('id').primaryKey().defaultRandom(),
  number: text('number').notNull().unique(),
  invoiceId: uuid('invoice_id')
    .notNull()
    .references(() => invoices.id),
  orgId: uuid('org_id')
    .notNull()
    .references(() => organisations.id),
  issuedAt: timestamp('issued_at', { withTimezone: true }).notNull().defaultNow(),
  reason: text('reason').notNull(),
  issuedBy: uuid('issued_by')
    .notNull()
    .references(() => users.id),
  /** Positive amounts credited back to the customer. */
  netCents: bigint('net_cents', { mode: 'number' }).notNull(),
  vatCents: bigint('vat_cents', { mode: 'number' }).notNull(),
  grossCents: bigint('gross_cents', { mode: 'number' }).notNull(),
});

/**
 * Payments received on an invoice (issue #24), recorded by staff: append-only like the ledger (a
 * trigger refuses UPDATE and DELETE); a correction is a reversal row with the negative amount that
 * names the payment it reverses (once). An invoice's status and open balance are derived from these
 * rows, its credit notes and its due date (server/core/billing/payments.ts); nothing else stores them.
 */
export const invoicePayments = pgTable(
  'invoice_payments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    invoiceId: uuid('invoice_id')
      .notNull()
      .references(() => invoices.id),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    /** The day the money arrived (value date of the bank statement). */
    paidOn: date('paid_on', { mode: 'string' }).notNull(),
    /** Positive for a payment, negative for a reversal. */
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    /** The bank statement's reference (or the reason of a reversal). */
    reference: text('reference').notNull(),
    /** A reversal names the payment it undoes. */
    reversesId: uuid('reverses_id'),
    recordedBy: uuid('recorded_by')
      .notNull()
      .references(() => users.id),
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('invoice_payments_invoice_idx').on(t.invoiceId), uniqueIndex('invoice_payments_reverses_idx').on(t.reversesId)],
);

/** Payment reminders sent for an overdue invoice: one row per invoice and level, so each is sent once. */
export const invoiceReminders = pgTable(
  'invoice_reminders',
  {
    invoiceId: uuid('invoice_id')
      .notNull()
      .references(() => invoices.id),
    /** 1 = first reminder, 2 = second. */
    level: integer('level').notNull(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    sentOn: date('sent_on', { mode: 'string' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.invoiceId, t.level] })],
);

/**
 * Staff lifting the overdue-invoice block of a tenant until a day (inclusive), with a reason: rows are
 * only added (the latest that still runs applies), so who lifted it when stays on record.
 */
export const overdueBlockLifts = pgTable(
  'overdue_block_lifts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organisations.id),
    untilDay: date('until_day', { mode: 'string' }).notNull(),
    reason: text('reason').notNull(),
    liftedBy: uuid('lifted_by')
      .notNull()
      .references(() => users.id),
    liftedAt: timestamp('lifted_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('overdue_block_lifts_org_idx').on(t.orgId, t.untilDay)],
);

/**
 * Sign-in sessions (server/services/identity/sessions.ts). The session cookie (a next-auth JWT) names its row;
 * a session ended here (sign-out, a password change, removal from the last tenant, staff) no longer
 * lets its cookie in, on the next request.
 */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    userAgent: text('user_agent'),
    address: text('address'),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    /** signed_out, password_changed, ended_by_user, ended_by_staff, removed */
    endReason: text('end_reason'),
  },
  (t) => [index('sessions_user_idx').on(t.userId, t.endedAt)],
);

/**
 * Identities at OIDC providers linked to an account: who signs in as (provider, subject) is that user.
 * `provider` is the id in OIDC_PROVIDERS; `email` is what the provider said when the link was made.
 */
export const userIdentities = pgTable(
  'user_identities',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    subject: text('subject').notNull(),
    email: text('email'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('user_identities_provider_subject_idx').on(t.provider, t.subject), index('user_identities_user_idx').on(t.userId)],
);

/**
 * Request counters and sign-in lockouts (server/services/rate-limits.ts), one row per key such as
 * `signin:account:<e-mail>`: a fixed window of hits, the failures of the current window, how many
 * lockouts in a row and until when the key is blocked. Shared by every process of the portal.
 * UNLOGGED (drizzle/0060, which drizzle-kit does not model): no WAL flush per count; a crash or a
 * failover starts the counters empty.
 */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
  hits: integer('hits').notNull().default(0),
  lockouts: integer('lockouts').notNull().default(0),
  blockedUntil: timestamp('blocked_until', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const authTokenPurpose = pgEnum('auth_token_purpose', AUTH_TOKEN_PURPOSES);

/**
 * One-time links mailed to a person (server/services/identity/auth-tokens.ts): a password reset, an address
 * check. Only the SHA-256 of the token is stored, so a copy of the database opens no account. The
 * newest link of a person and purpose is the only one that works: issuing another, or using one,
 * voids the rest.
 */
export const authTokens = pgTable(
  'auth_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    purpose: authTokenPurpose('purpose').notNull(),
    /** SHA-256 of the token, hex. */
    tokenHash: text('token_hash').notNull(),
    /** The address the link was mailed to: a verification confirms that address and no other. */
    email: text('email').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    /** A newer link of the same purpose, or a completed reset, voided this one. */
    voidedAt: timestamp('voided_at', { withTimezone: true }),
    /** The client address that asked for it, when a trusted proxy reports one (for the audit of abuse). */
    requestedFrom: text('requested_from'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('auth_tokens_hash_idx').on(t.tokenHash), index('auth_tokens_user_idx').on(t.userId, t.purpose)],
);

export type User = typeof users.$inferSelect;
export type Organisation = typeof organisations.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type MemberRole = (typeof memberRole.enumValues)[number];
export type StaffRole = (typeof staffRole.enumValues)[number];
export type OrgStatus = (typeof orgStatus.enumValues)[number];
export type OrgKind = (typeof orgKind.enumValues)[number];
export type Residency = (typeof residency.enumValues)[number];

/**
 * Whether the scheduler answered the worker's last round (one row). Pages read it to say "scheduler
 * unreachable" (staff) and "waiting to be forwarded" (a submitted job) instead of failing.
 */
export const schedulerStatus = pgTable(
  'scheduler_status',
  {
    /** The cluster this row is about: one row each (a single-cluster portal's scheduler is `default`). */
    cluster: text('cluster').primaryKey(),
    reachable: boolean('reachable').notNull(),
    /** When the scheduler was last seen answering, and since when it has not (null while it answers). */
    lastOkAt: timestamp('last_ok_at', { withTimezone: true }),
    unreachableSince: timestamp('unreachable_since', { withTimezone: true }),
    lastError: text('last_error'),
    checkedAt: timestamp('checked_at', { withTimezone: true }).notNull(),
  },
);

// ---- E-mail ----

export const mailStatus = pgEnum('mail_status', ['pending', 'sent', 'failed']);

/**
 * The transactional outbox of e-mail: a mail is written in the same transaction as what it tells of,
 * and the worker sends it afterwards (server/services/mail/mail.ts), once, retrying with back-off while the
 * SMTP server is away. Without an SMTP server configured the mails stay here, shown to staff.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** What the mail is (invitation, password_reset, …): for staff and tests, not for sending. */
    kind: text('kind').notNull(),
    /** The tenant the mail is about, if any (a tenant's own writes may only add its own mails). */
    orgId: uuid('org_id').references(() => organisations.id),
    toUserId: uuid('to_user_id').references(() => users.id),
    toAddress: text('to_address').notNull(),
    locale: text('locale').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body').notNull(),
    /** Mails that must go out once per occasion (a reminder per person and day) carry a key; a second one is not written. */
    dedupeKey: text('dedupe_key'),
    status: mailStatus('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    /** A worker sending the mail holds it until then; a worker that died lets it go when it runs out. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    lastError: text('last_error'),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    messageId: text('message_id'),
    /** Files rendered when the mail is sent (an invoice's PDF), named here so the outbox stays small. */
    attachments: jsonb('attachments').$type<MailAttachmentRef[]>(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('mail_outbox_dedupe_idx').on(t.dedupeKey),
    index('mail_outbox_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('mail_outbox_created_idx').on(t.createdAt),
  ],
);

export const mailKind = pgEnum('mail_kind', MAIL_KIND_NAMES);

/**
 * A person's choice of mail per kind (server/core/mail/kinds.ts); a kind without a row gets its
 * default. The in-app notice is written either way.
 */
export const notificationPreferences = pgTable(
  'notification_preferences',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: mailKind('kind').notNull(),
    email: boolean('email').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.kind] })],
);

/**
 * Work the worker does once per UTC day (the expiry reminders): the row claims the day, in the same
 * transaction as the work, so a second run or a second worker at the same moment does nothing.
 */
export const dailyTaskRuns = pgTable(
  'daily_task_runs',
  {
    task: text('task').notNull(),
    day: date('day').notNull(),
    doneAt: timestamp('done_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.task, t.day] })],
);

/**
 * Personal API tokens (issue #13): a person's key for scripts, for one tenant, with scopes and an
 * expiry. Only the SHA-256 of the token is stored; `prefix` (its first characters) lets the person
 * tell their tokens apart. Out of the tenant role's reach (drizzle/0035): the portal's own connection
 * authenticates them.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The tenant the token acts for; null only for a staff-only token. */
    orgId: uuid('org_id').references(() => organisations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** SHA-256 of the token, hex. */
    tokenHash: text('token_hash').notNull(),
    /** The token's first characters (`afp_` and six more), shown in lists. */
    prefix: text('prefix').notNull(),
    scopes: text('scopes').array().notNull(),
    /**
     * The project a token with the scope `inference` calls models for (issue #29): its budget pays, its
     * residency decides where the calls may go. Null for a token without that scope.
     */
    projectId: uuid('project_id').references(() => projects.id),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    lastUsedFrom: text('last_used_from'),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /** Who revoked it: the owner, or staff (null when it was the owner or nobody). */
    revokedBy: uuid('revoked_by').references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('api_tokens_hash_idx').on(t.tokenHash), index('api_tokens_user_idx').on(t.userId, t.createdAt)],
);

export const whatIfStatus = pgEnum('what_if_status', ['queued', 'running', 'done', 'failed']);

/**
 * What-if planning runs (issue #14): a period of the centre's own history replayed in the worker on
 * the current machine and on a proposed one (server/services/planning/what-if.ts). `changes` is the proposal
 * (server/core/whatif/machine.ts `WhatIfChange[]`), `result` both outcomes side by side once done.
 * A worker holds a run while `lease_until` is ahead; a run whose lease ran out is taken again.
 * Centre internals: out of the tenant role's reach (drizzle/0037).
 */
export const whatIfRuns = pgTable(
  'what_if_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    title: text('title').notNull(),
    createdBy: uuid('created_by')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    /** The history replayed: jobs submitted in [from, to] (whole UTC days). */
    fromDay: date('from_day').notNull(),
    toDay: date('to_day').notNull(),
    changes: jsonb('changes').$type<unknown[]>().notNull(),
    status: whatIfStatus('status').notNull().default('queued'),
    /** Per-mille of the work done (both replays). */
    progressPermille: integer('progress_permille').notNull().default(0),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    error: text('error'),
    result: jsonb('result').$type<Record<string, unknown>>(),
  },
  (t) => [index('what_if_runs_created_idx').on(t.createdAt), index('what_if_runs_open_idx').on(t.createdAt).where(sql`status in ('queued', 'running')`)],
);
