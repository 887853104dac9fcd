// What the staff router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { allocationStatus, applicationKind, budgetUnit, orgKind, orgStatus, residency, reviewPath } from '~/db/schema';
import { allocationOverviewOut, creditLineRequestOut, isoDateOut, tenantOut, usageReportOut } from '~/server/api/outputs';

const int = z.number().int();

/** A row of the staff's tenant list. */
export const tenantRowOut = tenantOut;

// ---- Allocations ----

/** A tenant's money as staff see it beside a change of its credit lines and monthly cap (server/services/billing/cap-figures.ts). */
export const capFiguresOut = z.object({
  orgId: z.string(),
  orgName: z.string(),
  capCents: z.number().int().nullable(),
  linesCents: z.number().int(),
  spentThisMonthCents: z.number().int(),
  spentByMonth: z.array(z.object({ month: z.string(), cents: z.number().int() })),
});

/** An allocation as staff see it; a credit line with its tenant's cap figures (null for GPU-hours). */
export const staffAllocationOverviewOut = allocationOverviewOut.extend({ orgName: z.string(), money: capFiguresOut.nullable() });

/** A row of the staff's allocation list. */
export const staffAllocationRowOut = z.object({
  allocation: z.object({
    id: z.string(),
    projectId: z.string(),
    unit: z.enum(budgetUnit.enumValues),
    status: z.enum(allocationStatus.enumValues),
    periodStart: z.string(),
    periodEnd: z.string(),
    granted: z.number().int(),
    charged: z.number().int(),
    reserved: z.number().int(),
  }),
  projectTitle: z.string(),
  orgName: z.string(),
  resourceClassName: z.string().nullable(),
});

// ---- Applications ----

/** A row of the reviewers' queue, aged in working days against the access mode's target. */
export const reviewQueueRowOut = z.object({
  id: z.string(),
  submittedAt: isoDateOut.nullable(),
  kind: z.enum(applicationKind.enumValues),
  projectTitle: z.string(),
  orgId: z.string(),
  orgName: z.string(),
  modeName: z.string(),
  reviewPath: z.enum(reviewPath.enumValues),
  reviewReason: z.enum(['accessMode', 'instantOnceActive']),
  targetDays: z.number().int(),
  requestedGpuSeconds: z.number().int(),
  ageWorkingDays: z.number().int(),
  /** When the decision is due, in the centre's working time (issue #32). */
  dueAt: isoDateOut,
  due: z.enum(['overdue', 'dueToday', 'onTime']),
  overdue: z.boolean(),
  /** The round of a call it joined (a mode taking requests in rounds), its cut-off and whether it has closed. */
  roundId: z.string().nullable(),
  roundCutoffAt: isoDateOut.nullable(),
  roundStatus: z.enum(['open', 'closed']).nullable(),
  /** Its panel (issue #32): reviewers assigned and not declined, how many scored, the viewer's own review's state. */
  reviews: z.object({ assigned: z.number().int(), scored: z.number().int(), mine: z.enum(['assigned', 'scored', 'declined']).nullable() }),
  /** End-of-allocation reports its project's PI owes on earlier requests (issue #32). */
  missingReportsOfPi: z.number().int(),
});

// ---- Outbox, audit log, cluster, scheduler budgets, tenants ----

export const mailOutboxOut = z.object({
  /** Whether an SMTP server is configured (SMTP_URL): without one mails are kept here and none is sent. */
  configured: z.boolean(),
  from: z.string(),
  counts: z.object({ pending: z.number().int(), sent: z.number().int(), failed: z.number().int() }),
  mails: z.array(
    z.object({
      id: z.number().int(),
      kind: z.string(),
      toAddress: z.string(),
      locale: z.string(),
      subject: z.string(),
      /** The mail's text, in the demo without SMTP only (its links can then be opened from here). */
      text: z.string().optional(),
      status: z.enum(['pending', 'sent', 'failed']),
      attempts: z.number().int(),
      nextAttemptAt: isoDateOut,
      lastError: z.string().nullable(),
      sentAt: isoDateOut.nullable(),
      createdAt: isoDateOut,
    }),
  ),
});

export const auditEventOut = z.object({
  id: z.number().int(),
  at: isoDateOut,
  action: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  reason: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).nullable(),
  isStaffAction: z.boolean(),
  actorUserId: z.string().nullable(),
  actorName: z.string().nullable(),
  actorEmail: z.string().nullable(),
  orgId: z.string().nullable(),
  orgName: z.string().nullable(),
});

/** The cluster now as the scheduler describes it, the last day's samples for the utilisation chart, and each site's facility power against its cap. */
export const clusterOut = z.object({
  description: z.object({
    at: isoDateOut,
    partitions: z.array(z.object({ name: z.string(), siteId: z.string(), gpuModel: z.string(), nodes: z.number().int(), gpusPerNode: z.number().int(), maxWalltimeSeconds: z.number().int() })),
    nodes: z.array(z.object({ name: z.string(), partition: z.string(), state: z.enum(['idle', 'allocated', 'down']), gpus: z.number().int(), allocatedGpus: z.number().int(), powerW: z.number() })),
    pendingJobs: z.number().int(),
    runningJobs: z.number().int(),
    powerW: z.number(),
  }).nullable(),
  /** Each partition's class as the reader's language names it (the cards' titles). */
  partitionLabels: z.array(z.object({ partition: z.string(), className: z.string() })),
  samples: z.array(z.object({ at: isoDateOut, partition: z.string(), totalGpus: z.number().int(), allocatedGpus: z.number().int() })),
  /** Per site: facility power (IT × PUE, W) at each sample time of the last day and now (null: the scheduler did not answer), and its cap (null: none). */
  sitePower: z.array(
    z.object({
      siteId: z.string(),
      siteName: z.string(),
      pueMilli: z.number().int(),
      capW: z.number().int().nullable(),
      points: z.array(z.object({ at: isoDateOut, facilityW: z.number().int() })),
      nowW: z.number().int().nullable(),
    }),
  ),
  /** Whether the scheduler answered now; while it does not, since when (as the worker saw it) and why. */
  scheduler: z.object({ reachable: z.boolean(), error: z.string().nullable(), unreachableSince: isoDateOut.nullable(), lastOkAt: isoDateOut.nullable() }),
  /** Each cluster (one per group of sites; one `default` for a single scheduler): the sites it runs, whether it answers, since when not and why. */
  clusters: z.array(
    z.object({ name: z.string(), sites: z.array(z.string()).nullable(), reachable: z.boolean(), error: z.string().nullable(), unreachableSince: isoDateOut.nullable(), lastOkAt: isoDateOut.nullable() }),
  ),
});

const budgetMismatchOut = z.object({ account: z.string(), projectTitle: z.string().nullable(), partition: z.string(), asked: z.number().int(), read: z.number().int().nullable() });

/** The scheduler's own budgets for staff: the last sync and the jobs it holds on a budget limit (server/services/cluster/scheduler-budgets.ts). */
export const schedulerBudgetsOut = z.object({
  enforcing: z.boolean(),
  /** The ledger's GPU-seconds per project account and class beside the scheduler's accounting, from the last full sync. */
  usage: z
    .object({
      at: isoDateOut,
      since: isoDateOut,
      rows: z.array(
        z.object({
          account: z.string(),
          projectTitle: z.string().nullable(),
          orgName: z.string().nullable(),
          partition: z.string(),
          portalGpuSeconds: z.number().int(),
          schedulerGpuSeconds: z.number().int(),
          differenceGpuSeconds: z.number().int(),
        }),
      ),
    })
    .nullable(),
  lastSync: z
    .object({ at: isoDateOut, ok: z.boolean(), budgets: z.number().int(), projects: z.number().int().nullable(), mismatches: z.array(budgetMismatchOut), error: z.string().nullable() })
    .nullable(),
  holds: z
    .array(
      z.object({
        schedulerJobId: z.string(),
        portalJobId: z.string().nullable(),
        account: z.string(),
        projectTitle: z.string().nullable(),
        orgName: z.string().nullable(),
        partition: z.string(),
        gpus: z.number().int(),
        timeLimitSeconds: z.number().int(),
        reason: z.string(),
        submittedAt: isoDateOut.nullable(),
        portalHasBudget: z.boolean(),
        drift: z.enum(['staleLimit', 'aroundPortal', 'agreed']),
      }),
    )
    .nullable(),
  unreachable: z.boolean(),
});

/** One tenant's usage for staff: who the tenant is, and the report its owner sees. */
export const tenantUsageOut = z.object({
  org: z.object({ id: z.string(), name: z.string(), kind: z.enum(orgKind.enumValues), country: z.string(), residency: z.enum(residency.enumValues), status: z.enum(orgStatus.enumValues), monthlyCapCents: z.number().int().nullable() }),
  report: usageReportOut,
});

/** A company project credit lines can be granted to, with its tenant's cap figures. */
export const companyProjectOut = z.object({ id: z.string(), title: z.string(), orgName: z.string(), money: capFiguresOut });

// ---- TCO per GPU-hour ----

const tcoAtOut = z.object({
  utilisationBp: int,
  yearly: z.object({ capitalCents: int, maintenanceCents: int, electricityCents: int, heatCreditCents: int, energyCents: int, overheadCents: int, totalCents: int, itEnergyWh: int, facilityEnergyWh: int, heatReusedWh: int }),
  deliveredGpuSeconds: int,
  perGpuHour: z.object({ capitalCents: int, maintenanceCents: int, energyCents: int, overheadCents: int, totalCents: int }).nullable(),
});

/** The TCO page (server/services/planning/tco.ts TcoReport): cost per delivered GPU-hour per resource class, money in cents, utilisation in bp. */
export const tcoReportOut = z.object({
  period: z.enum(['last30Days', 'last90Days']),
  range: z.object({ from: z.string(), to: z.string(), days: int }),
  whatIfBp: int.nullable(),
  classes: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      siteId: z.string(),
      siteName: z.string(),
      gpus: int,
      measured: z.object({ usedGpuSeconds: int, capacityGpuSeconds: int, utilisation: z.number(), utilisationBp: int }),
      missing: z.array(z.string()),
      costs: z
        .object({
          inputs: z.object({
            nodes: int,
            gpusPerNode: int,
            gpuIdlePowerW: int,
            gpuMaxPowerW: int,
            nodeBasePowerW: int,
            capitalCostPerNodeEur: int,
            depreciationYears: int,
            maintenancePerNodePerYearEur: int,
            pueMilli: int,
            heatReusePermille: int,
            energyPriceEurPerMwh: int,
            heatValueEurPerMwh: int,
            overheadPerYearEur: int,
            overheadShareCents: int,
          }),
          atMeasured: tcoAtOut,
          atWhatIf: tcoAtOut.nullable(),
          tariffs: z.array(z.object({ kind: z.enum(['academic', 'company']), centsPerGpuHour: int, breakEvenBp: int.nullable() })),
          curve: z.array(z.object({ utilisationBp: int, totalCents: int })),
        })
        .nullable(),
    }),
  ),
});

// ---- Credit-line requests ----

/** A request in the staff queue, with what the decision needs: the line and cap now, the spend, the cap suggested. */
export const creditRequestInQueueOut = creditLineRequestOut.extend({
  orgKind: z.enum(['academic', 'company']),
  orgCountry: z.string(),
  lineCents: z.number().int(),
  capCents: z.number().int().nullable(),
  suggestedCapCents: z.number().int().nullable(),
  spentThisMonthCents: z.number().int(),
  spentByMonth: z.array(z.object({ month: z.string(), cents: z.number().int() })),
});
