import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '~/db/client';
import { allocations, organisations } from '~/db/schema';
import { AppError } from '~/server/errors';
import { periodField, periodOf } from './report';
import { GROUP_BY, organisationUsage } from '~/server/services/usage/reports';
import { budgetSync, router, schedulerOf, staffProcedure, todayOf } from '~/server/api/trpc';
import { capEurosField, commentField, dayField, emailField, reasonField, resourceClassIdField, storageGbField, uuidField } from '~/server/api/fields';
import { applicationOut, balanceOut, nothing } from '~/server/api/outputs';
import { auditEventOut, clusterOut, companyProjectOut, creditRequestInQueueOut, mailOutboxOut, reviewQueueRowOut, schedulerBudgetsOut, staffAllocationOverviewOut, staffAllocationRowOut, tenantRowOut, tenantUsageOut, tcoReportOut } from './staff.outputs';
import { configuredCatalogue } from '~/server/catalogue';
import { TCO_PERIODS, tcoReport } from '~/server/services/planning/tco';
import { gpuHoursToSeconds } from '~/server/core/ledger/units';
import { clusterView } from '~/server/services/cluster/cluster';
import { companyProjectsForCredit, grantCreditLine, listAllocations, setAllocationLimits, setMonthlyCap, staffAllocationOverview } from '~/server/services/ledger/allocations';
import { decideApplication, getApplication, reviewQueue } from '~/server/services/ledger/applications';
import { creditRequestQueue, decideCreditLineRequest } from '~/server/services/billing/credit-requests';
import { adjustAllocation, refundCharge } from '~/server/services/ledger/ledger';
import { auditPage, listAuditActors } from '~/server/services/audit';
import { AUDIT_KINDS } from '~/server/core/audit';
import { liftSignInLockout } from '~/server/services/rate-limits';
import { listOutbox, outboxCounts } from '~/server/services/mail/mail';
import { env } from '~/server/env.js';
import { endSessionsByStaff } from '~/server/services/identity/sessions';
import { schedulerBudgetsView } from '~/server/services/cluster/scheduler-budgets';
import { changeTenantStatus, listTenants, setRequireSso, tenantSignIn, tenantStatusCounts } from '~/server/services/tenants/tenants';

/** The TCO page’s question: the period of measured utilisation, and optionally another utilisation in percent (rounded to 0.01). */
export const tcoInput = z.object({
  period: z.enum(TCO_PERIODS).default('last30Days'),
  whatIfPercent: z.number().min(1).max(100).optional(),
});

/** capCentsOf turns a cap in euros as sent into cents (a fraction stays one, for the service to refuse). */
function capCentsOf(capEuros: number | null | undefined): number | null | undefined {
  return capEuros == null ? capEuros : capEuros * 100;
}

export const staffRouter = router({
  tenants: staffProcedure()
    .input(z.object({ status: z.enum(['pending_verification', 'active', 'suspended']).optional() }).default({}))
    .output(z.array(tenantRowOut))
    .query(({ ctx, input }) => listTenants(ctx.db, input)),

  tenantCounts: staffProcedure()
    .output(z.object({ pending_verification: z.number(), active: z.number(), suspended: z.number() }))
    .query(({ ctx }) => tenantStatusCounts(ctx.db)),

  mailOutbox: staffProcedure()
    .output(mailOutboxOut)
    .query(async ({ ctx }) => {
      // A demo without SMTP shows the mails' text, so its verification and reset links can be opened;
      // elsewhere staff do not see links that would let them into other people's accounts.
      const withText = env().PORTAL_ENV === 'demo' && !env().SMTP_URL;
      const [mails, counts] = await Promise.all([listOutbox(ctx.db, 200, { withText }), outboxCounts(ctx.db)]);
      return { configured: Boolean(env().SMTP_URL), from: env().MAIL_FROM, counts, mails };
    }),

  liftSignInLockout: staffProcedure('admin')
    .input(z.object({ email: emailField, reason: reasonField }))
    .output(z.object({ wasLocked: z.boolean() }))
    .mutation(({ ctx, input }) => liftSignInLockout(ctx.db, ctx.actor, input.email, input.reason)),

  endSessions: staffProcedure('admin')
    .input(z.object({ email: emailField, reason: reasonField }))
    .output(z.object({ endedSessions: z.number() }))
    .mutation(({ ctx, input }) => endSessionsByStaff(ctx.db, ctx.actor, input.email, input.reason)),

  changeTenantStatus: staffProcedure('admin')
    .input(z.object({ orgId: uuidField, action: z.enum(['verify', 'suspend', 'reactivate']), reason: reasonField }))
    .output(z.object({ status: z.enum(['pending_verification', 'active', 'suspended']) }))
    .mutation(({ ctx, input }) => changeTenantStatus(ctx.db, ctx.actor, input, budgetSync(ctx))),

  /** How a tenant's members must sign in. */
  tenantSignIn: staffProcedure().input(z.object({ orgId: uuidField })).output(z.object({ requireSso: z.boolean() })).query(({ ctx, input }) => tenantSignIn(ctx.db, input.orgId)),

  setRequireSso: staffProcedure('admin')
    .input(z.object({ orgId: uuidField, requireSso: z.boolean(), reason: reasonField }))
    .output(z.object({ requireSso: z.boolean() }))
    .mutation(({ ctx, input }) => setRequireSso(ctx.db, ctx.actor, input)),

  auditActors: staffProcedure()
    .output(z.array(z.object({ id: z.string(), name: z.string(), email: z.string() })))
    .query(({ ctx }) => listAuditActors(ctx.db)),

  audit: staffProcedure()
    .input(
      z
        .object({
          orgId: uuidField.optional(),
          actorUserId: uuidField.optional(),
          action: z.enum(AUDIT_KINDS).optional(),
          from: dayField.optional(),
          to: dayField.optional(),
          cursor: z.string().max(200).optional(),
          limit: z.number().int().min(1).max(500).default(100),
        })
        .refine((input) => !input.from || !input.to || input.to >= input.from, { message: 'staff.audit.periodInvalid', path: ['to'] })
        .default({ limit: 100 }),
    )
    .output(z.array(auditEventOut))
    .query(({ ctx, input }) => auditPage(ctx.db, input)),

  /** TCO per delivered GPU-hour per resource class at the measured (and a what-if) utilisation, beside the tariffs. */
  tco: staffProcedure()
    .input(tcoInput)
    .output(tcoReportOut)
    .query(({ ctx, input }) => tcoReport(ctx.db, configuredCatalogue(), { period: input.period, today: todayOf(ctx), whatIfBp: input.whatIfPercent === undefined ? undefined : Math.round(input.whatIfPercent * 100), locale: ctx.locale })),

  /** The cluster now, the last day's samples, and each site's facility power against its cap. */
  cluster: staffProcedure()
    .output(clusterOut)
    .query(async ({ ctx }) => clusterView(ctx.db, await schedulerOf(ctx), configuredCatalogue(), ctx.now(), ctx.locale)),

  /** The budgets a scheduler enforces itself: the last sync, and the jobs it holds on them (drift). */
  schedulerBudgets: staffProcedure()
    .output(schedulerBudgetsOut)
    .query(async ({ ctx }) => schedulerBudgetsView(ctx.db, await schedulerOf(ctx), ctx.now())),

  applicationQueue: staffProcedure()
    .output(z.array(reviewQueueRowOut))
    .query(({ ctx }) => reviewQueue(ctx.db, ctx.actor, ctx.now())),

  application: staffProcedure()
    .input(z.object({ applicationId: uuidField }))
    .output(applicationOut)
    .query(({ ctx, input }) => getApplication(ctx.db, { staff: ctx.actor }, input.applicationId, ctx.locale, ctx.now())),

  /** Companies' requests for a larger credit line, waiting for a decision, oldest first. */
  creditRequestQueue: staffProcedure()
    .output(z.array(creditRequestInQueueOut))
    .query(({ ctx }) => creditRequestQueue(ctx.db, ctx.now())),

  /**
   * An admin raises a company's credit line and sets its monthly cap in one decision (the line as asked
   * unless `grantedEuros` says otherwise, with a comment; `capEuros` null: no cap), or rejects the request with a comment.
   */
  decideCreditRequest: staffProcedure('admin')
    .input(
      z.object({
        requestId: uuidField,
        outcome: z.enum(['approved', 'rejected']),
        grantedEuros: z.number().int().min(1).max(100_000_000).optional(),
        capEuros: z.number().int().min(1).max(100_000_000).nullable().optional(),
        comment: commentField.default(''),
      }),
    )
    .output(z.object({ status: z.enum(['approved', 'rejected']), raisedByCents: z.number().int() }))
    .mutation(({ ctx, input }) =>
      decideCreditLineRequest(
        ctx.db,
        ctx.actor,
        { requestId: input.requestId, outcome: input.outcome, grantedCents: input.grantedEuros === undefined ? undefined : input.grantedEuros * 100, capCents: capCentsOf(input.capEuros), comment: input.comment },
        ctx.now(),
        budgetSync(ctx),
      ),
    ),

  decide: staffProcedure()
    .input(
      z.object({
        applicationId: uuidField,
        outcome: z.enum(['approved', 'rejected', 'changes_requested']),
        /** GPU-hours and storage (GB) per line; a line without storage grants the storage it asked for. */
        grantedLines: z.array(z.object({ resourceClassId: resourceClassIdField, gpuHours: z.number().int().min(0).max(10_000_000), storageGb: storageGbField.optional() })).max(20).default([]),
        comment: commentField.default(''),
      }),
    )
    .output(z.object({ status: z.enum(['approved', 'rejected', 'changes_requested']), allocationIds: z.array(z.string()) }))
    .mutation(({ ctx, input }) =>
      decideApplication(ctx.db, ctx.actor, input.applicationId, {
        outcome: input.outcome,
        comment: input.comment,
        grantedLines: input.grantedLines.map((l) => ({ resourceClassId: l.resourceClassId, gpuSeconds: gpuHoursToSeconds(l.gpuHours), ...(l.storageGb === undefined ? {} : { storageGb: l.storageGb }) })),
      }, ctx.now(), budgetSync(ctx)),
    ),

  /** One tenant's usage, cost and energy in a period, for staff (the same figures the tenant sees). */
  tenantUsage: staffProcedure()
    .input(z.object({ orgId: uuidField, period: periodField, groupBy: z.enum(GROUP_BY).default('project') }))
    .output(tenantUsageOut)
    .query(async ({ ctx, input }) => {
      const [org] = await ctx.db.select().from(organisations).where(eq(organisations.id, input.orgId));
      if (!org) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'orgId');
      return { org, report: await organisationUsage(ctx.db, org.id, { all: true }, { ...periodOf(input.period), groupBy: input.groupBy }, ctx.locale) };
    }),

  /** Active companies' projects a credit line can be granted to, each with its tenant's cap and spend. */
  companyProjects: staffProcedure()
    .output(z.array(companyProjectOut))
    .query(({ ctx }) => companyProjectsForCredit(ctx.db, todayOf(ctx))),

  allocations: staffProcedure()
    .input(z.object({ orgId: uuidField.optional() }).default({}))
    .output(z.array(staffAllocationRowOut))
    .query(({ ctx, input }) => listAllocations(ctx.db, input, ctx.locale)),

  allocation: staffProcedure()
    .input(z.object({ allocationId: uuidField }))
    .output(staffAllocationOverviewOut)
    .query(({ ctx, input }) => staffAllocationOverview(ctx.db, ctx.actor, input.allocationId, todayOf(ctx), ctx.locale)),

  /**
   * Raise or lower a budget, in GPU-hours for GPU-hour allocations or in euros for credit lines; with a
   * credit line, `capEuros` sets the tenant's monthly cap in the same decision (null: no cap; absent: unchanged).
   */
  adjustAllocation: staffProcedure('admin')
    .input(z.object({ allocationId: uuidField, amount: z.number().int().min(-10_000_000).max(10_000_000).refine((n) => n !== 0, 'validation.nonZero'), reason: reasonField, capEuros: capEurosField }))
    .output(balanceOut)
    .mutation(async ({ ctx, input }) => {
      const unit = await unitOf(ctx.db, input.allocationId);
      return adjustAllocation(
        ctx.db,
        ctx.actor,
        { allocationId: input.allocationId, amount: unit === 'cents' ? input.amount * 100 : gpuHoursToSeconds(input.amount), reason: input.reason, capCents: capCentsOf(input.capEuros) },
        budgetSync(ctx),
      );
    }),

  refund: staffProcedure('admin')
    .input(z.object({ allocationId: uuidField, amount: z.number().int().min(1).max(10_000_000), reason: reasonField }))
    .output(balanceOut)
    .mutation(async ({ ctx, input }) => {
      const unit = await unitOf(ctx.db, input.allocationId);
      return refundCharge(ctx.db, ctx.actor, { allocationId: input.allocationId, amount: unit === 'cents' ? input.amount * 100 : gpuHoursToSeconds(input.amount), reason: input.reason });
    }),

  setAllocationLimits: staffProcedure('admin')
    .input(
      z.object({
        allocationId: uuidField,
        maxGpusAtOnce: z.number().int().min(1).max(100_000),
        maxWalltimeHours: z.number().int().min(1).max(24 * 30),
        maxQueuedJobs: z.number().int().min(1).max(100_000),
        /** The storage line in GB (issue #27); absent: unchanged. */
        storageGb: storageGbField.optional(),
        reason: reasonField,
      }),
    )
    .output(nothing)
    .mutation(({ ctx, input }) =>
      setAllocationLimits(ctx.db, ctx.actor, { allocationId: input.allocationId, maxGpusAtOnce: input.maxGpusAtOnce, maxWalltimeSeconds: input.maxWalltimeHours * 3600, maxQueuedJobs: input.maxQueuedJobs, storageGb: input.storageGb, reason: input.reason }),
    ),

  /** A company project's credit line; `capEuros` sets the tenant's monthly cap with it (null: no cap; absent: unchanged). */
  grantCreditLine: staffProcedure('admin')
    .input(z.object({ projectId: uuidField, amountEuros: z.number().int().min(1).max(100_000_000), periodStart: dayField, periodEnd: dayField, reason: reasonField, capEuros: capEurosField, storageGb: storageGbField.optional() }))
    .output(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) =>
      grantCreditLine(
        ctx.db,
        ctx.actor,
        { projectId: input.projectId, amountCents: input.amountEuros * 100, periodStart: input.periodStart, periodEnd: input.periodEnd, reason: input.reason, capCents: capCentsOf(input.capEuros), storageGb: input.storageGb },
        budgetSync(ctx),
      ),
    ),

  setMonthlyCap: staffProcedure('admin')
    .input(z.object({ orgId: uuidField, capEuros: z.number().int().min(1).max(100_000_000).nullable(), reason: reasonField }))
    .output(nothing)
    .mutation(({ ctx, input }) => setMonthlyCap(ctx.db, ctx.actor, { orgId: input.orgId, capCents: input.capEuros === null ? null : input.capEuros * 100, reason: input.reason, asStaff: true })),
});

async function unitOf(db: Db, allocationId: string) {
  const [row] = await db.select({ unit: allocations.unit }).from(allocations).where(eq(allocations.id, allocationId));
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'allocationId');
  return row.unit;
}
