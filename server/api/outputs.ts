// Output shapes several routers share (`.output()`), and the invoice the documents and mails are made from:
// what a procedure answers, and nothing else — zod drops any field a schema does not name, so a column added
// to a table does not leak to the browser by accident. A router's own shapes are beside it
// (server/api/routers/<router>.outputs.ts, or in the router file when small). Issue #9 asks for one on
// every procedure; test: server/api/outputs.test.ts.
import { z } from 'zod';
import { allocationStatus, applicationKind, applicationStatus, budgetUnit, creditRequestStatus, decisionOutcome, jobKind, jobState, ledgerKind, memberRole, orgKind, orgStatus, residency, reviewPath, workloadKind } from '~/db/schema';
import { INVOICE_STATUSES } from '~/server/core/billing/payments';
import { VAT_TREATMENTS } from '~/server/core/billing/vat-treatment';
import { GROUP_BY } from '~/server/services/usage/reports';

/** A point in time: a Date to tRPC (superjson), an ISO-8601 string in the REST API's JSON, documented so. */
export const isoDateOut = z.date().meta({ format: 'date-time' });

/** A mutation that answers nothing. */
export const nothing = z.void();

export const memberRoleOut = z.enum(memberRole.enumValues);

/** A tenant as everyone who may see it sees it. */
export const tenantOut = z.object({
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

export const jobStateOut = z.enum(jobState.enumValues);

/** What a project says it is for: research its field of science, a company its workload and data residency. */
export const projectPurposeOut = z.object({ fieldOfScience: z.string().nullable(), workloadKind: z.enum(workloadKind.enumValues).nullable(), dataResidency: z.enum(residency.enumValues).nullable() });

/** An allocation's balance after a staff change (the ledger's cached sums, in its unit). */
export const balanceOut = z.object({ granted: z.number(), charged: z.number(), reserved: z.number(), expired: z.number(), overrun: z.number() });

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
  /** The storage line, GB (issue #27). */
  storageGb: z.number().int(),
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

// ---- Applications ----

/** A criterion of a call's rubric (issue #32). */
export const rubricCriterionOut = z.object({ id: z.string(), name: z.string(), nameDe: z.string() });

/** An end-of-allocation report as filed (issue #32). */
export const allocationReportOut = z.object({
  summary: z.string(),
  /** DOIs, bare. */
  publications: z.array(z.string()),
  /** `doi:<doi>` or an https address. */
  datasets: z.array(z.string()),
  filedAt: isoDateOut,
  updatedAt: isoDateOut,
  filedByName: z.string(),
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
  /** While submitted: when the decision is due, in the centre's working time (issue #32). */
  decisionDueAt: isoDateOut.nullable(),
  /** The cut-off of the call's round it joined (a mode taking requests in rounds); null otherwise. */
  roundCutoffAt: isoDateOut.nullable(),
  kind: z.enum(applicationKind.enumValues),
  baseAllocationId: z.string().nullable(),
  status: z.enum(applicationStatus.enumValues),
  periodStart: z.string(),
  periodEnd: z.string(),
  justification: z.string(),
  applicantName: z.string(),
  submittedAt: isoDateOut.nullable(),
  canEdit: z.boolean(),
  /** Each line's GPU-seconds and storage asked for (GB, issue #27). */
  lines: z.array(z.object({ resourceClassId: z.string(), name: z.string(), gpuSeconds: z.number().int(), storageGb: z.number().int() })),
  decisions: z.array(
    z.object({
      id: z.string(),
      outcome: z.enum(decisionOutcome.enumValues),
      comment: z.string(),
      /** What was granted per line; storage is absent on decisions made before storage lines. */
      grantedLines: z.array(z.object({ resourceClassId: z.string(), gpuSeconds: z.number().int(), storageGb: z.number().int().optional() })).nullable(),
      decidedAt: isoDateOut,
      reviewerName: z.string().nullable(),
    }),
  ),
  allocations: z.array(z.object({ id: z.string(), resourceClassId: z.string().nullable() })),
  /** Its scored reviews as the applicant reads them once it is decided (issue #32): scores and comment, no reviewer. */
  reviews: z.object({
    rubric: z.array(rubricCriterionOut),
    items: z.array(z.object({ id: z.string(), scores: z.record(z.string(), z.number().int()), commentToApplicant: z.string(), scoredAt: isoDateOut })),
  }),
  /** Its end-of-allocation report (approved new and renewed requests; null otherwise): owed once its period has ended. */
  report: z
    .object({
      owed: z.boolean(),
      /** The first day it is owed (the day after the period's last). */
      dueFrom: z.string(),
      report: allocationReportOut.nullable(),
      /** What its allocations used of their grant, GPU-seconds. */
      used: z.object({ granted: z.number().int(), charged: z.number().int() }),
      /** Whether the viewer may file it (the project's PI and managers). */
      canFile: z.boolean(),
    })
    .nullable(),
  /** Staff only (empty for applicants): reports the project's PI owes on other requests. */
  missingReportsOfPi: z.array(z.object({ applicationId: z.string(), projectTitle: z.string(), periodEnd: z.string() })),
});

// ---- Jobs ----

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
  /** A job array: its text, its tasks and how many are in each state (running, waiting, and each final state); null: one job. */
  array: z.object({ text: z.string(), tasks: z.number().int(), counts: z.record(z.string(), z.number().int()) }).nullable(),
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
      /** GPU-hours of a resource class, storage at a site in TB-months (issue #27), or model calls' tokens (issue #29). */
      kind: z.enum(['compute', 'storage', 'tokens']),
      /** A compute line's class (null on a storage line). */
      resourceClassId: z.string().nullable(),
      /** A storage line's site (null on a compute line). */
      siteId: z.string().nullable(),
      description: z.string(),
      /** The description in German (null on invoices issued before names had two languages). */
      descriptionDe: z.string().nullable(),
      jobs: z.number().int(),
      gpuSeconds: z.number().int(),
      unitPriceCentsPerGpuHour: z.number().int(),
      /** A storage line's TB-months in thousandths (1234 = 1.234) and price per TB-month; null on a compute line. */
      milliTbMonths: z.number().int().nullable(),
      unitPriceCentsPerTbMonth: z.number().int().nullable(),
      /** A token line's model (its calls are `jobs`), tokens in and out and prices per million; null on other lines. */
      model: z.string().nullable(),
      inputTokens: z.number().int().nullable(),
      outputTokens: z.number().int().nullable(),
      inputCentsPerMTokens: z.number().int().nullable(),
      outputCentsPerMTokens: z.number().int().nullable(),
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
