// Output shapes shared by the routers (`.output()`): what a procedure answers, and nothing else —
// zod drops any field a schema does not name, so a column added to a table does not leak to the
// browser by accident. Issue #9 asks for one on every procedure; test: server/api/outputs.test.ts.
import { TOKEN_SCOPES } from '~/server/core/rest/scopes';
import { z } from 'zod';
import { INVOICE_STATUSES } from '~/server/core/billing/payments';
import { VAT_TREATMENTS } from '~/server/core/billing/vat-treatment';
import {
  allocationStatus,
  applicationKind,
  applicationStatus,
  budgetUnit,
  decisionOutcome,
  jobKind,
  jobState,
  ledgerKind,
  memberRole,
  orgKind,
  orgStatus,
  projectRole,
  residency,
  reviewPath,
  staffRole,
  workloadKind,
  creditRequestStatus,
} from '~/db/schema';
import { GROUP_BY } from '~/server/services/usage/reports';

/** A point in time: a Date to tRPC (superjson), an ISO-8601 string in the REST API's JSON, documented so. */
export const isoDateOut = z.date().meta({ format: 'date-time' });

/** A mutation that answers nothing. */
export const nothing = z.void();

export const memberRoleOut = z.enum(memberRole.enumValues);

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
  createdAt: isoDateOut,
  expiresAt: isoDateOut,
  lastUsedAt: isoDateOut.nullable(),
  lastUsedFrom: z.string().nullable(),
  revokedAt: isoDateOut.nullable(),
  state: z.enum(['active', 'expired', 'revoked']),
});

export const notificationOut = z.object({ id: z.string(), text: z.string(), link: z.string().nullable(), read: z.boolean(), createdAt: isoDateOut });

/** A tenant as everyone who may see it sees it. */
const tenantOut = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(orgKind.enumValues),
  country: z.string(),
  residency: z.enum(residency.enumValues),
  status: z.enum(orgStatus.enumValues),
  statusReason: z.string().nullable(),
  createdAt: isoDateOut,
  memberCount: z.number(),
});

/** The caller's own tenant, with its cap and the caller's role. */
export const organisationOut = tenantOut.extend({ monthlyCapCents: z.number().nullable(), priceListAcceptedAt: isoDateOut.nullable(), myRole: memberRoleOut, hasCreditLine: z.boolean() });

/** A row of the price list: one GPU-hour of a resource class for the caller's kind of tenant. */
export const priceListRowOut = z.object({
  resourceClassId: z.string(),
  name: z.string(),
  gpuModel: z.string(),
  siteName: z.string(),
  country: z.string(),
  inEu: z.boolean(),
  pueMilli: z.number().int(),
  gridGco2PerKwh: z.number().int(),
  allowed: z.boolean(),
  centsPerGpuHour: z.number().int(),
  itWhPerGpuHour: z.number().int(),
  facilityWhPerGpuHour: z.number().int(),
  co2eGramsPerGpuHour: z.number().int(),
  assumedGpuUtilPercent: z.number().int(),
});

/** A tenant's billing profile: the invoices' addressee. */
export const billingProfileOut = z.object({
  legalName: z.string(),
  street: z.string(),
  postcode: z.string(),
  city: z.string(),
  country: z.string(),
  vatId: z.string().nullable(),
  billingEmail: z.string(),
  purchaseOrder: z.string().nullable(),
  updatedAt: isoDateOut,
});

export const memberOut = z.object({ userId: z.string(), name: z.string(), email: z.string(), role: memberRoleOut, since: isoDateOut });

export const openInvitationOut = z.object({ id: z.string(), email: z.string(), role: memberRoleOut, expiresAt: isoDateOut, createdAt: isoDateOut });

/** A new invitation; `mailed` = an SMTP server is configured, so the mail with the link goes out (else it waits in the outbox). */
export const createdInvitationOut = z.object({ id: z.string(), email: z.string(), role: memberRoleOut, expiresAt: isoDateOut, path: z.string(), mailed: z.boolean() });

export const invitationPreviewOut = z.object({ orgName: z.string(), inviterName: z.string(), email: z.string(), role: memberRoleOut, expiresAt: isoDateOut });

export const jobStateOut = z.enum(jobState.enumValues);

/** A row of the staff's tenant list. */
export const tenantRowOut = tenantOut;

/** What a project says it is for: research its field of science, a company its workload and data residency. */
export const projectPurposeOut = z.object({ fieldOfScience: z.string().nullable(), workloadKind: z.enum(workloadKind.enumValues).nullable(), dataResidency: z.enum(residency.enumValues).nullable() });

export const projectCreatedOut = z.object({ id: z.string(), orgId: z.string(), title: z.string(), abstract: z.string(), ...projectPurposeOut.shape, createdBy: z.string(), createdAt: isoDateOut });

/** An allocation's balance after a staff change (the ledger's cached sums, in its unit). */
export const balanceOut = z.object({ granted: z.number(), charged: z.number(), reserved: z.number(), expired: z.number(), overrun: z.number() });

export const accessModeOut = z.object({
  id: z.string(),
  name: z.string(),
  maxGpuSeconds: z.number().nullable(),
  durationDays: z.number(),
  reviewPath: z.enum(reviewPath.enumValues),
  targetDecisionWorkingDays: z.number(),
  sortOrder: z.number(),
  active: z.boolean(),
});

export const resourceClassOut = z.object({
  id: z.string(),
  name: z.string(),
  gpuModel: z.string(),
  gpusPerNode: z.number(),
  nodes: z.number(),
  maxWalltimeSeconds: z.number(),
  siteId: z.string(),
  siteName: z.string(),
  country: z.string(),
  inEu: z.boolean(),
  centsPerGpuHour: z.number(),
});

// ---- Allocations ----

/** An allocation's page: balance, burn-down, projection and latest ledger rows (not the cached sums, notice marks or owning ids). */
export const allocationOverviewOut = z.object({
  id: z.string(),
  projectId: z.string(),
  projectTitle: z.string(),
  resourceClassName: z.string().nullable(),
  unit: z.enum(budgetUnit.enumValues),
  periodStart: z.string(),
  periodEnd: z.string(),
  status: z.enum(allocationStatus.enumValues),
  statusReason: z.string().nullable(),
  maxGpusAtOnce: z.number().int().nullable(),
  maxWalltimeSeconds: z.number().int().nullable(),
  maxQueuedJobs: z.number().int().nullable(),
  balance: balanceOut.extend({ available: z.number() }),
  days: z.array(z.object({ day: z.string(), amount: z.number().int() })),
  projection: z.object({ ratePerDay: z.number(), exhaustsOn: z.string().nullable(), exhaustsBeforeEnd: z.boolean(), unusedAtEnd: z.number().int(), lastDay: z.string() }),
  entries: z.array(
    z.object({
      id: z.number().int(),
      kind: z.enum(ledgerKind.enumValues),
      amount: z.number().int(),
      overrun: z.number().int(),
      jobId: z.string().nullable(),
      reason: z.string().nullable(),
      at: isoDateOut,
      actorName: z.string().nullable(),
    }),
  ),
});

/** A row of a tenant's allocation list (the REST API's `/allocations`): the page's head and balance, no chart or ledger. */
export const allocationRowOut = allocationOverviewOut
  .pick({ id: true, projectId: true, projectTitle: true, resourceClassName: true, unit: true, periodStart: true, periodEnd: true, status: true, statusReason: true, maxGpusAtOnce: true, maxWalltimeSeconds: true, maxQueuedJobs: true, balance: true })
  .extend({ resourceClassId: z.string().nullable() });

/** The same page for staff, who also see whose allocation it is. */
/** A tenant's money as staff see it beside a change of its credit lines and monthly cap (server/services/cap-figures.ts). */
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

/** A draft just saved. */
export const applicationCreatedOut = z.object({
  id: z.string(),
  projectId: z.string(),
  accessModeId: z.string(),
  kind: z.enum(applicationKind.enumValues),
  status: z.enum(applicationStatus.enumValues),
  periodStart: z.string(),
  periodEnd: z.string(),
});

/** An application with its lines, decisions and resulting allocations, for its tenant and for staff. */
export const applicationOut = z.object({
  id: z.string(),
  projectId: z.string(),
  projectTitle: z.string(),
  purpose: projectPurposeOut,
  orgName: z.string(),
  orgKind: z.enum(orgKind.enumValues),
  reviewPath: z.enum(reviewPath.enumValues),
  /** Why it went to a reviewer although its mode approves instantly; null otherwise. */
  reviewNote: z.object({ reason: z.literal('instantOnceActive'), activeUntil: z.string() }).nullable(),
  accessModeId: z.string(),
  modeName: z.string(),
  targetDays: z.number().int(),
  kind: z.enum(applicationKind.enumValues),
  baseAllocationId: z.string().nullable(),
  status: z.enum(applicationStatus.enumValues),
  periodStart: z.string(),
  periodEnd: z.string(),
  justification: z.string(),
  applicantName: z.string(),
  submittedAt: isoDateOut.nullable(),
  canEdit: z.boolean(),
  lines: z.array(z.object({ resourceClassId: z.string(), name: z.string(), gpuSeconds: z.number().int() })),
  decisions: z.array(
    z.object({
      id: z.string(),
      outcome: z.enum(decisionOutcome.enumValues),
      comment: z.string(),
      grantedLines: z.array(z.object({ resourceClassId: z.string(), gpuSeconds: z.number().int() })).nullable(),
      decidedAt: isoDateOut,
      reviewerName: z.string().nullable(),
    }),
  ),
  allocations: z.array(z.object({ id: z.string(), resourceClassId: z.string().nullable() })),
});

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
  overdue: z.boolean(),
});

// ---- Projects ----

/** A budget's sums as the project cards draw them. */
const budgetSumsOut = z.object({ unit: z.enum(budgetUnit.enumValues), granted: z.number().int(), charged: z.number().int(), reserved: z.number().int(), expired: z.number().int() });

/** A card of the project list. */
export const projectRowOut = z.object({ id: z.string(), title: z.string(), ...projectPurposeOut.shape, piName: z.string(), activeAllocations: z.array(budgetSumsOut) });

/** A project's page: the project, its people, allocations and applications, and what the caller may do. */
export const projectPageOut = z.object({
  project: z.object({ id: z.string(), title: z.string(), abstract: z.string(), ...projectPurposeOut.shape }),
  projectRole: z.enum(projectRole.enumValues).nullable(),
  canManage: z.boolean(),
  members: z.array(z.object({ userId: z.string(), name: z.string(), email: z.string(), role: z.enum(projectRole.enumValues) })),
  allocations: z.array(
    budgetSumsOut.extend({
      id: z.string(),
      resourceClassId: z.string().nullable(),
      resourceClassName: z.string().nullable(),
      applicationId: z.string().nullable(),
      status: z.enum(allocationStatus.enumValues),
      periodStart: z.string(),
      periodEnd: z.string(),
    }),
  ),
  applications: z.array(
    z.object({ id: z.string(), kind: z.enum(applicationKind.enumValues), status: z.enum(applicationStatus.enumValues), periodStart: z.string(), periodEnd: z.string(), createdAt: isoDateOut }),
  ),
});

// ---- Jobs ----

/** What a job would reserve, cost and consume. */
const reservationShortfallOut = z.discriminatedUnion('limit', [
  z.object({ limit: z.literal('gpusAtOnce'), limitGpus: z.number().int(), inUseGpus: z.number().int(), requestedGpus: z.number().int(), maxGpus: z.number().int() }),
  z.object({ limit: z.enum(['budget', 'monthlyCap', 'projectMonthly', 'projectTotal', 'personMonthly']), unit: z.enum(budgetUnit.enumValues), needed: z.number().int(), left: z.number().int(), gpus: z.number().int(), maxWalltimeSeconds: z.number().int() }),
]);

/** A job's estimate before submitting, with what is left now and every limit its reservation would break. */
export const jobEstimateOut = z.object({
  room: z.object({
    unit: z.enum(budgetUnit.enumValues),
    available: z.number().int(),
    monthCapLeftCents: z.number().int().nullable(),
    gpusAtOnce: z.object({ limit: z.number().int(), inUse: z.number().int() }).nullable(),
    /** Credit lines of a company: what the project's monthly and total budget and the caller's monthly limit leave, in cents (only those set). */
    budgetsLeftCents: z.array(z.object({ limit: z.enum(['projectMonthly', 'projectTotal', 'personMonthly']), leftCents: z.number().int() })).optional(),
  }),
  shortfalls: z.array(reservationShortfallOut),
  /** Set when the job could never start under its site's facility power cap (admission refuses it): the cap, the GPUs asked for and the most that fit. */
  powerCap: z.object({ capKw: z.number(), requestedGpus: z.number().int(), maxGpus: z.number().int() }).nullable(),
  overdueInvoices: z.array(z.string()),
  unit: z.enum(budgetUnit.enumValues),
  reservation: z.number().int(),
  reservedGpuSeconds: z.number().int(),
  maxCostCents: z.number().int(),
  expectedCostCents: z.number().int(),
  centsPerGpuHour: z.number().int(),
  maxEnergyWh: z.number().int(),
  expectedEnergyWh: z.number().int(),
  assumedGpuUtilPercent: z.number().int(),
});

/** `job.lowCarbonStart`: the start in the window with the least CO2e at the job's site, and what it saves against now. */
export const lowCarbonStartOut = z.object({
  begin: isoDateOut,
  startsNow: z.boolean(),
  /** The site's time zone, the one its grid profile's hours are in. */
  timeZone: z.string(),
  co2eNowGrams: z.number().int(),
  co2eAtBeginGrams: z.number().int(),
  savedGrams: z.number().int(),
  savedPercent: z.number().int(),
  /** Null when the site has no energy price in the catalogue. */
  energyCostNowCents: z.number().int().nullable(),
  energyCostAtBeginCents: z.number().int().nullable(),
  facilityPowerW: z.number().int(),
  runtimeSeconds: z.number().int(),
  assumedGpuUtilPercent: z.number().int(),
});

/** The fine-tuning template's estimate. Products of the caller's decimals, so no integer checks: FLOPs exceed 2^53. */
export const fineTuneEstimateOut = z.object({
  totalFlops: z.number(),
  gpuSeconds: z.number(),
  runtimeSeconds: z.number(),
  walltimeSeconds: z.number(),
  peakTflops: z.number(),
  gpuModel: z.string(),
  utilisationPercent: z.number(),
});

/** A row of the job list (no command, environment, simulation or hand-over lease). */
export const jobRowOut = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(jobKind.enumValues),
  state: jobStateOut,
  pendingReason: z.string().nullable(),
  projectId: z.string(),
  resourceClassId: z.string(),
  resourceClassName: z.string(),
  siteId: z.string(),
  gpus: z.number().int(),
  nodes: z.number().int(),
  submittedAt: isoDateOut,
  startedAt: isoDateOut.nullable(),
  endedAt: isoDateOut.nullable(),
  gpuSeconds: z.number().int().nullable(),
  costCents: z.number().int().nullable(),
  energyWh: z.number().int().nullable(),
});

/** Where the caller may run jobs: allocations with what is left, and the catalogue their tenant may use (no power model). */
export const jobTargetsOut = z.object({
  allocations: z.array(
    z.object({ id: z.string(), projectId: z.string(), projectTitle: z.string(), projectResidency: z.enum(residency.enumValues).nullable(), unit: z.enum(budgetUnit.enumValues), resourceClassId: z.string().nullable(), available: z.number().int() }),
  ),
  resourceClasses: z.array(resourceClassOut),
});

// ---- Usage reports ----

const figuresOut = z.object({
  jobs: z.number().int(),
  gpuSeconds: z.number().int(),
  avgWaitSeconds: z.number().int().nullable(),
  costCents: z.number().int(),
  energyWh: z.number().int(),
  facilityEnergyWh: z.number().int(),
  heatReusedWh: z.number().int(),
  co2eGrams: z.number().int(),
});

/** A tenant's usage in a period: totals, groups and the daily series per project (tenant and staff alike). */
export const usageReportOut = z.object({
  period: z.object({ from: z.string(), to: z.string() }),
  groupBy: z.enum(GROUP_BY),
  totals: figuresOut,
  groups: z.array(figuresOut.extend({ key: z.string(), label: z.string() })),
  series: z.array(z.object({ day: z.string(), projectId: z.string(), gpuSeconds: z.number().int(), costCents: z.number().int(), energyWh: z.number().int() })),
  projects: z.array(z.object({ id: z.string(), title: z.string() })),
});

/** A settled job of a period with its frozen figures: the columns of the usage CSV (docs/CSV.md). */
export const reportJobOut = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  projectTitle: z.string(),
  userName: z.string(),
  resourceClassId: z.string(),
  siteId: z.string(),
  kind: z.enum(jobKind.enumValues),
  state: jobStateOut,
  submittedAt: isoDateOut,
  startedAt: isoDateOut.nullable(),
  endedAt: isoDateOut.nullable(),
  waitSeconds: z.number().int().nullable(),
  gpus: z.number().int(),
  gpuSeconds: z.number().int().nullable(),
  costCents: z.number().int().nullable(),
  energyWh: z.number().int().nullable(),
  energyMeasured: z.boolean().nullable(),
  facilityEnergyWh: z.number().int().nullable(),
  heatReusedWh: z.number().int().nullable(),
  co2eGrams: z.number().int().nullable(),
});

/** The per-job CSV with the period it covers (for the download's name). */
export const reportCsvOut = z.object({ from: z.string(), to: z.string(), csv: z.string() });

// ---- Invoices ----

const recipientOut = z.object({
  name: z.string(),
  country: z.string(),
  street: z.string().optional(),
  postcode: z.string().optional(),
  city: z.string().optional(),
  vatId: z.string().nullable().optional(),
  billingEmail: z.string().optional(),
  purchaseOrder: z.string().nullable().optional(),
});

const issuerOut = z.object({
  name: z.string(),
  street: z.string(),
  postcode: z.string(),
  city: z.string(),
  country: z.string(),
  vatId: z.string(),
  taxNumber: z.string(),
  registerEntry: z.string(),
  bankName: z.string(),
  iban: z.string(),
  bic: z.string(),
  paymentTermsDays: z.number().int(),
  email: z.string(),
  phone: z.string(),
});

/** An invoice's payment status and open balance, derived on the day asked (server/core/billing/payments.ts). */
export const paymentStateOut = z.object({
  dueDate: z.string().nullable(),
  paidCents: z.number().int(),
  openCents: z.number().int(),
  status: z.enum(INVOICE_STATUSES),
  daysOverdue: z.number().int(),
});

/** A row of an invoice list, with what its credit notes took back. */
export const invoiceRowOut = z.object({
  id: z.string(),
  number: z.string(),
  periodMonth: z.string(),
  issuedAt: isoDateOut,
  recipient: recipientOut,
  netCents: z.number().int(),
  vatCents: z.number().int(),
  grossCents: z.number().int(),
  creditedNetCents: z.number().int(),
  creditedGrossCents: z.number().int(),
  ...paymentStateOut.shape,
});

/** The staff's invoice list also names the tenant. */
export const staffInvoiceRowOut = invoiceRowOut.extend({ orgId: z.string(), orgName: z.string() });

/** The printable invoice: lines, totals and credit notes (not who at the centre issued them). */
export const invoiceOut = z.object({
  id: z.string(),
  number: z.string(),
  month: z.string(),
  periodMonth: z.string(),
  periodLastDay: z.string(),
  /** The usage covered: jobs that ended in [coversFrom, coversUntil). */
  coversFrom: isoDateOut,
  coversUntil: isoDateOut,
  /** True when the invoice ends before its month does (a closing invoice). */
  closing: z.boolean(),
  issuedAt: isoDateOut,
  dueDate: z.string().nullable(),
  recipient: recipientOut,
  issuer: issuerOut.nullable(),
  vatTreatment: z.enum(VAT_TREATMENTS),
  netCents: z.number().int(),
  vatPermille: z.number().int(),
  vatCents: z.number().int(),
  grossCents: z.number().int(),
  lines: z.array(
    z.object({
      lineNo: z.number().int(),
      resourceClassId: z.string(),
      description: z.string(),
      /** The description in German (null on invoices issued before names had two languages). */
      descriptionDe: z.string().nullable(),
      jobs: z.number().int(),
      gpuSeconds: z.number().int(),
      unitPriceCentsPerGpuHour: z.number().int(),
      netCents: z.number().int(),
      /** The projects' cost centre and purchase-order number (issue #24); null without. */
      costCentre: z.string().nullable(),
      purchaseOrder: z.string().nullable(),
    }),
  ),
  creditNotes: z.array(z.object({ id: z.string(), number: z.string(), issuedAt: isoDateOut, reason: z.string(), netCents: z.number().int(), vatCents: z.number().int(), grossCents: z.number().int() })),
  creditedNetCents: z.number().int(),
  remainingNetCents: z.number().int(),
  creditedGrossCents: z.number().int(),
  /** Payments and reversals (negative), as recorded; not who at the centre recorded them. */
  payments: z.array(z.object({ id: z.string(), paidOn: z.string(), amountCents: z.number().int(), reference: z.string(), reversesId: z.string().nullable(), recordedAt: isoDateOut })),
  reminders: z.array(z.object({ level: z.number().int(), sentOn: z.string() })),
  ...paymentStateOut.omit({ dueDate: true }).shape,
});

/** A recorded payment or reversal, with the invoice's status after it. */
export const paymentOut = z.object({ id: z.string(), invoiceId: z.string(), paidOn: z.string(), amountCents: z.number().int(), reference: z.string(), reversesId: z.string().nullable(), ...paymentStateOut.omit({ dueDate: true }).shape });

/** The invoices with something open, for staff (the open-items list and CSV). */
export const openItemOut = z.object({
  invoiceId: z.string(),
  number: z.string(),
  orgId: z.string(),
  orgName: z.string(),
  issuedOn: z.string(),
  grossCents: z.number().int(),
  creditedGrossCents: z.number().int(),
  ...paymentStateOut.shape,
});

/** An on-demand issue: the invoice (new or the one already issued), or null without usage that month. */
export const issueInvoiceOut = z.object({
  invoice: z
    .object({
      id: z.string(),
      number: z.string(),
      orgId: z.string(),
      periodMonth: z.string(),
      issuedAt: isoDateOut,
      netCents: z.number().int(),
      vatCents: z.number().int(),
      grossCents: z.number().int(),
      /** False when the invoice had already been issued and is returned as it was. */
      created: z.boolean(),
    })
    .nullable(),
});

export const monthlyRunOut = z.object({
  month: z.string(),
  due: z.boolean(),
  issued: z.array(z.object({ orgId: z.string(), invoiceId: z.string(), number: z.string() })),
  waiting: z.array(z.object({ orgId: z.string(), reason: z.string() })),
});

export const creditNoteOut = z.object({
  id: z.string(),
  number: z.string(),
  invoiceId: z.string(),
  orgId: z.string(),
  issuedAt: isoDateOut,
  reason: z.string(),
  issuedBy: z.string(),
  netCents: z.number().int(),
  vatCents: z.number().int(),
  grossCents: z.number().int(),
});

// ---- Staff ----

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
});

const budgetMismatchOut = z.object({ account: z.string(), projectTitle: z.string().nullable(), partition: z.string(), asked: z.number().int(), read: z.number().int().nullable() });

/** The scheduler's own budgets for staff: the last sync and the jobs it holds on a budget limit (server/services/cluster/scheduler-budgets.ts). */
export const schedulerBudgetsOut = z.object({
  enforcing: z.boolean(),
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

// ---- Centre dashboard ----

export const centrePartitionOut = z.object({ id: z.string(), name: z.string(), active: z.boolean() });

/** Usage of one tenant in the range (top lists). */
const centreTenantOut = z.object({
  orgId: z.string(),
  name: z.string(),
  kind: z.enum(orgKind.enumValues),
  jobs: z.number().int(),
  gpuSeconds: z.number().int(),
  energyWh: z.number().int(),
  facilityEnergyWh: z.number().int(),
  heatReusedWh: z.number().int(),
  co2eGrams: z.number().int(),
  costCents: z.number().int(),
});

/** Allocated against capacity; utilisation and over-subscription are fractions (may exceed 1). */
const centreAllocationTotalOut = z.object({
  allocations: z.number().int(),
  grantedGpuSeconds: z.number().int(),
  chargedGpuSeconds: z.number().int(),
  grantedInRangeGpuSeconds: z.number().int(),
  capacityGpuSeconds: z.number().int(),
  oversubscription: z.number(),
});

/** Every figure of the centre dashboard (server/services/usage/centre.ts CentreDashboard): aggregates only, no rows. */
export const centreDashboardOut = z.object({
  range: z.object({ from: z.string(), to: z.string(), days: z.number().int() }),
  filters: z.object({ partition: z.string().nullable(), tenantKind: z.enum(orgKind.enumValues).nullable() }),
  partitions: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      siteId: z.string(),
      capacityGpus: z.number().int(),
      usedGpuSeconds: z.number().int(),
      capacityGpuSeconds: z.number().int(),
      utilisation: z.number(),
      days: z.array(z.object({ day: z.string(), usedGpuSeconds: z.number().int(), capacityGpuSeconds: z.number().int(), utilisation: z.number() })),
    }),
  ),
  utilisation: z.object({ usedGpuSeconds: z.number().int(), capacityGpuSeconds: z.number().int(), utilisation: z.number() }),
  wait: z.object({ startedJobs: z.number().int(), p50Seconds: z.number().int().nullable(), p90Seconds: z.number().int().nullable(), meanSeconds: z.number().int().nullable() }),
  allocations: z.object({ rows: z.array(centreAllocationTotalOut.extend({ partition: z.string(), name: z.string() })), total: centreAllocationTotalOut }),
  topByGpuHours: z.array(centreTenantOut),
  topByFacilityEnergy: z.array(centreTenantOut),
  totals: z.object({
    jobs: z.number().int(),
    gpuSeconds: z.number().int(),
    energyWh: z.number().int(),
    facilityEnergyWh: z.number().int(),
    heatReusedWh: z.number().int(),
    co2eGrams: z.number().int(),
    costCents: z.number().int(),
    itKwhPerGpuHour: z.number().nullable(),
    facilityKwhPerGpuHour: z.number().nullable(),
    pue: z.number().nullable(),
  }),
  sites: z.array(z.object({ id: z.string(), name: z.string(), energyWh: z.number().int(), facilityEnergyWh: z.number().int(), pue: z.number().nullable() })),
  byKind: z.array(z.object({ kind: z.enum(orgKind.enumValues), meaning: z.enum(['revenue', 'grantValue']), costCents: z.number().int(), gpuSeconds: z.number().int(), jobs: z.number().int() })),
});

/** A dashboard table as CSV text with its download name. */
export const centreCsvOut = z.object({ filename: z.string(), body: z.string() });

// ---- TCO per GPU-hour ----

const int = z.number().int();
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

/** A company's request for a larger credit line, as its owner and the reviewers see it (amounts in cents). */
export const creditLineRequestOut = z.object({
  id: z.string(),
  orgId: z.string(),
  orgName: z.string(),
  allocationId: z.string(),
  projectTitle: z.string(),
  currentCents: z.number().int(),
  requestedCents: z.number().int(),
  reason: z.string(),
  status: z.enum(creditRequestStatus.enumValues),
  requestedByName: z.string(),
  createdAt: isoDateOut,
  decidedAt: isoDateOut.nullable(),
  decisionComment: z.string().nullable(),
});

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

// ---- What-if planning ----

const whatIfChangeOut = z.union([
  z.object({ kind: z.literal('nodes'), classId: z.string(), delta: int }),
  z.object({ kind: z.literal('newClass'), id: z.string(), siteId: z.string(), templateClassId: z.string(), nodes: int, gpusPerNode: int, fromClassId: z.string(), sharePercent: int }),
  z.object({ kind: z.literal('powerCap'), siteId: z.string(), capKw: z.number().nullable() }),
  z.object({ kind: z.literal('pue'), siteId: z.string(), pueMilli: int }),
  z.object({ kind: z.literal('grid'), siteId: z.string(), gco2PerKwh: int }),
  z.object({ kind: z.literal('policy'), policy: z.enum(['fifo', 'easy', 'multifactor']) }),
]);

/** A what-if run in the list (server/services/planning/what-if.ts WhatIfRunSummary). */
export const whatIfRunSummaryOut = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: isoDateOut,
  createdByName: z.string(),
  fromDay: z.string(),
  toDay: z.string(),
  changes: z.array(whatIfChangeOut),
  status: z.enum(['queued', 'running', 'done', 'failed']),
  progressPermille: int,
  startedAt: isoDateOut.nullable(),
  finishedAt: isoDateOut.nullable(),
  error: z.string().nullable(),
});

/** One machine's replay (server/core/whatif/replay.ts WhatIfOutcome): energy in Wh, CO2e in g, money in cents, utilisation in bp. */
const whatIfOutcomeOut = z.object({
  jobs: int,
  jobsRun: int,
  jobsNeverRun: z.object({ partition: int, nodes: int, walltime: int, power: int }),
  gpus: int,
  utilisationBp: int,
  waitP50Seconds: int,
  waitP90Seconds: int,
  waitMeanSeconds: int,
  boundedSlowdownMilli: int,
  jobsDelayedByPowerCap: int,
  itEnergyWh: int,
  facilityEnergyWh: int,
  heatReusedWh: int,
  co2eGrams: int,
  revenueCents: int,
  classes: z.array(z.object({ id: z.string(), siteId: z.string(), gpus: int, jobs: int, waitP50Seconds: int, waitP90Seconds: int, utilisationBp: int })),
  sites: z.array(z.object({ id: z.string(), peakFacilityPowerW: int, powerCapW: int.nullable(), hourlyPeakW: z.array(int) })),
});

/** A what-if run with its result once done. */
export const whatIfRunOut = whatIfRunSummaryOut.extend({
  result: z
    .object({
      history: z.object({ submitted: int, replayed: int, neverStarted: int, unknownRuntime: int, recordedWaitP50Seconds: int, recordedWaitP90Seconds: int }),
      current: whatIfOutcomeOut,
      proposed: whatIfOutcomeOut,
      elapsedMs: int,
    })
    .nullable(),
});

// ---- Budgets inside a company (issue #24) ----

/** A project's budgets in cents (null: none) and what its invoice lines carry. */
export const projectBudgetOut = z.object({ monthlyCents: z.number().int().nullable(), totalCents: z.number().int().nullable(), costCentre: z.string().nullable(), purchaseOrder: z.string().nullable() });

/** Each person's monthly limit in cents. */
export const spendLimitOut = z.object({ userId: z.string(), monthlyCents: z.number().int() });

/** The usage page's budgets: the tenant's cap and each project's and person's budget with this month's (and the total) spend. */
export const spendingOverviewOut = z.object({
  month: z.string(),
  cap: z.object({ capCents: z.number().int(), spentCents: z.number().int() }).nullable(),
  projects: z.array(z.object({ projectId: z.string(), title: z.string(), monthlyCents: z.number().int().nullable(), monthSpentCents: z.number().int(), totalCents: z.number().int().nullable(), totalSpentCents: z.number().int() })),
  people: z.array(z.object({ userId: z.string(), name: z.string(), monthlyCents: z.number().int(), monthSpentCents: z.number().int() })),
});
