// Monthly invoices for company tenants, and credit notes against them.
//
// An invoice covers the settled jobs of one tenant that ENDED in one calendar month (UTC), one line
// per resource class and tariff (a closing invoice, issued when a contract ends, covers the month so
// far, and the month's invoice then covers the rest: each invoice records [coversFrom, coversUntil)); a line's net is the sum of its jobs' frozen `cost_cents`, so it is
// reproducible from the jobs. Numbers come from `document_counters` (one row per series and year,
// incremented with INSERT … ON CONFLICT DO UPDATE … RETURNING) in the same transaction that inserts
// the invoice: a rolled-back issue gives its number back, so numbers have no gaps and no duplicates.
// Issuing again returns the existing one (unique index on the tenant and where its coverage starts).
// The issuer (catalogue) and the customer's billing profile are copied onto the invoice with the VAT
// treatment (server/core/billing/vat-treatment.ts) and the due date. Issued invoices, their lines and
// credit notes never change (database triggers); corrections are credit notes.
import { and, asc, desc, eq, gt, gte, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { allocations, billingProfiles, creditNotes, documentCounters, invoiceLines as invoiceLinesTable, invoices, jobs, memberships, modelCalls, organisations, outsideJobs, projectBudgets, resourceClasses, sites, storageDays, storageUsage, users, type InvoiceRecipient } from '~/db/schema';
import { configuredCatalogue, localName, type Issuer } from '~/server/catalogue';
import { dueDate, vatTreatmentFor } from '~/server/core/billing/vat-treatment';
import {
  counterSeries,
  coveredDays,
  creditNoteAmounts,
  DEFAULT_VAT_PERMILLE,
  documentNumber,
  FIRST_INVOICE_MONTH,
  invoiceLines,
  invoiceTotals,
  isMonth,
  monthHasEnded,
  monthlyRunDue,
  monthOf,
  monthPeriod,
  previousMonth,
  storageLines,
  type DocumentKind,
} from '~/server/core/billing/invoicing';
import { translate } from '~/server/i18n';
import { siteShortName, storageToInvoice } from '~/server/services/usage/storage';
import { roleAtLeast } from '~/server/core/roles';
import { AppError, isUniqueViolation } from '~/server/errors';
import { isStaff, type Actor, type TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { notify } from '~/server/services/mail/notifications';
import { paidSums, paymentsOf, paymentState, remindersOf } from './payments';
import { inTransaction } from '~/server/services/transaction';

export type Invoice = typeof invoices.$inferSelect;
export type InvoiceLine = typeof invoiceLinesTable.$inferSelect;
export type CreditNote = typeof creditNotes.$inferSelect;

export interface IssuedInvoice extends Invoice {
  lines: InvoiceLine[];
  /** False when the invoice already existed and was returned as it was. */
  created: boolean;
}

export interface IssueInvoiceInput {
  orgId: string;
  /** The month to invoice, YYYY-MM (UTC). */
  month: string;
  now: Date;
  /** The standard VAT rate in per-mille; defaults to DEFAULT_VAT_PERMILLE (19 %). Reverse charge makes it 0. */
  vatPermille?: number;
  /** The staff member issuing on demand; null or absent for the monthly run. */
  actorUserId?: string | null;
  /**
   * A closing invoice: the current month up to now, as a centre issues when a contract ends. The
   * month's own invoice later covers whatever the tenant still ran after it.
   */
  closing?: boolean;
  /** Who issues it; defaults to the catalogue's issuer. */
  issuer?: Issuer;
}

/**
 * issueInvoice issues a company tenant's invoice for a month that has ended (or, closing, for the
 * current month so far), or returns the one already issued; null when the tenant had no usage in
 * what is left to invoice. Refuses while jobs that started before the covered period's end are still
 * unsettled (their usage might belong to it).
 */
export async function issueInvoice(db: Db, input: IssueInvoiceInput): Promise<IssuedInvoice | null> {
  const { orgId, month, now } = input;
  const standardVatPermille = input.vatPermille ?? DEFAULT_VAT_PERMILLE;
  const issuer = input.issuer ?? configuredCatalogue().issuer;
  if (!isMonth(month)) throw new AppError('BAD_REQUEST', 'invoice.error.monthInvalid', {}, 'month');
  if (month < FIRST_INVOICE_MONTH) throw new AppError('BAD_REQUEST', 'invoice.error.monthTooEarly', {}, 'month');
  if (input.closing) {
    if (month !== monthOf(now)) throw new AppError('BAD_REQUEST', 'invoice.error.closingCurrentMonth', {}, 'month');
  } else if (!monthHasEnded(month, now)) {
    throw new AppError('PRECONDITION_FAILED', 'invoice.error.monthNotOver', { month }, 'month');
  }
  const period = monthPeriod(month);
  const until = input.closing ? now : period.end;

  // What earlier invoices of the month (a closing invoice) already covered.
  const previous = await lastInvoiceOfMonth(db, orgId, period.firstDay);
  const from = previous ? previous.coversUntil : period.start;
  if (previous && from.getTime() >= until.getTime()) return { ...previous, created: false };

  try {
    return await inTransaction(db, async (tx) => {
      const [org] = await tx
        .select({ id: organisations.id, name: organisations.name, kind: organisations.kind, country: organisations.country, profile: billingProfiles })
        .from(organisations)
        .leftJoin(billingProfiles, eq(billingProfiles.orgId, organisations.id))
        .where(eq(organisations.id, orgId));
      if (!org) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'orgId');
      if (org.kind !== 'company') throw new AppError('BAD_REQUEST', 'invoice.error.companyOnly', { org: org.name }, 'orgId');

      const [open] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(jobs)
        .where(and(eq(jobs.orgId, orgId), isNull(jobs.settledAt), isNotNull(jobs.startedAt), lt(jobs.startedAt, until)));
      if (open && open.n > 0) throw new AppError('PRECONDITION_FAILED', 'invoice.error.jobsOpen', { count: open.n, month });

      let usage = await tx
        .select({
          resourceClassId: jobs.resourceClassId,
          resourceClassName: resourceClasses.name,
          resourceClassNameDe: resourceClasses.nameDe,
          centsPerGpuHour: jobs.centsPerGpuHour,
          jobs: sql<number>`count(*)::int`,
          gpuSeconds: sql<string>`sum(${jobs.gpuSeconds})`,
          costCents: sql<string>`coalesce(sum(${jobs.costCents}), 0)`,
          // The project's cost centre and PO number as they are when the invoice is issued (issue #24).
          costCentre: projectBudgets.costCentre,
          purchaseOrder: projectBudgets.purchaseOrder,
          // Interactive sessions (issue #28) on a line of their own.
          interactive: sql<boolean>`${jobs.kind} = 'interactive'`,
        })
        .from(jobs)
        .innerJoin(resourceClasses, eq(resourceClasses.id, jobs.resourceClassId))
        .leftJoin(projectBudgets, eq(projectBudgets.projectId, jobs.projectId))
        .where(and(eq(jobs.orgId, orgId), isNotNull(jobs.settledAt), gte(jobs.endedAt, from), lt(jobs.endedAt, until), gt(jobs.gpuSeconds, 0)))
        .groupBy(jobs.resourceClassId, resourceClasses.name, resourceClasses.nameDe, jobs.centsPerGpuHour, projectBudgets.costCentre, projectBudgets.purchaseOrder, sql`${jobs.kind} = 'interactive'`);
      // Jobs run around the portal and charged to the company's credit line (server/services/cluster/outside-usage.ts)
      // are billed as they were charged, on the line of their class and price.
      const outside = await tx
        .select({
          resourceClassId: sql<string>`${outsideJobs.resourceClassId}`,
          resourceClassName: resourceClasses.name,
          resourceClassNameDe: resourceClasses.nameDe,
          centsPerGpuHour: sql<number>`${outsideJobs.centsPerGpuHour}`,
          jobs: sql<number>`count(*)::int`,
          gpuSeconds: sql<string>`sum(${outsideJobs.gpuSeconds})`,
          costCents: sql<string>`sum(${outsideJobs.chargedAmount})`,
          costCentre: projectBudgets.costCentre,
          purchaseOrder: projectBudgets.purchaseOrder,
          interactive: sql<boolean>`false`,
        })
        .from(outsideJobs)
        .innerJoin(allocations, eq(allocations.id, outsideJobs.allocationId))
        .innerJoin(resourceClasses, eq(resourceClasses.id, outsideJobs.resourceClassId))
        .leftJoin(projectBudgets, eq(projectBudgets.projectId, outsideJobs.projectId))
        .where(and(eq(outsideJobs.orgId, orgId), eq(allocations.unit, 'cents'), isNotNull(outsideJobs.centsPerGpuHour), gt(outsideJobs.chargedAmount, 0), gte(outsideJobs.endedAt, from), lt(outsideJobs.endedAt, until)))
        .groupBy(outsideJobs.resourceClassId, resourceClasses.name, resourceClasses.nameDe, outsideJobs.centsPerGpuHour, projectBudgets.costCentre, projectBudgets.purchaseOrder);
      // invoiceLines groups them with the portal's own jobs of the same class, price, cost centre and PO.
      usage = [...usage, ...outside];
      // Storage (issue #27): what the workspaces held on the covered days, a line per site after the compute
      // lines, from the same days and maths as the usage page (server/services/usage/storage.ts).
      const days = coveredDays(from, until);
      const storage = days ? await storageToInvoice(tx, orgId, days) : [];
      const storageValues = storageLines(storage);
      // Model calls through the gateway (issue #29) charged to a credit line: a line per model, prices, cost
      // centre and PO; its net is what the ledger charged them (services/inference/metering.ts), to the cent.
      const tokenUsage = await tx
        .select({
          model: modelCalls.model,
          inputCentsPerMTokens: modelCalls.inputCentsPerMTokens,
          outputCentsPerMTokens: modelCalls.outputCentsPerMTokens,
          calls: sql<number>`count(*)::int`,
          inputTokens: sql<string>`sum(${modelCalls.promptTokens})`,
          outputTokens: sql<string>`sum(${modelCalls.completionTokens})`,
          netCents: sql<string>`sum(${modelCalls.chargedAmount})`,
          costCentre: projectBudgets.costCentre,
          purchaseOrder: projectBudgets.purchaseOrder,
        })
        .from(modelCalls)
        .leftJoin(projectBudgets, eq(projectBudgets.projectId, modelCalls.projectId))
        .where(and(eq(modelCalls.orgId, orgId), eq(modelCalls.unit, 'cents'), eq(modelCalls.status, 'settled'), gte(modelCalls.endedAt, from), lt(modelCalls.endedAt, until)))
        .groupBy(modelCalls.model, modelCalls.inputCentsPerMTokens, modelCalls.outputCentsPerMTokens, projectBudgets.costCentre, projectBudgets.purchaseOrder)
        .having(sql`sum(${modelCalls.chargedAmount}) > 0`)
        .orderBy(modelCalls.model, projectBudgets.costCentre, projectBudgets.purchaseOrder);
      if (usage.length === 0 && storageValues.length === 0 && tokenUsage.length === 0) return previous ? { ...previous, created: false } : null;

      // The customer as its billing profile says now; copied, since the invoice never changes.
      const recipient: InvoiceRecipient = org.profile
        ? {
            name: org.profile.legalName,
            street: org.profile.street,
            postcode: org.profile.postcode,
            city: org.profile.city,
            country: org.profile.country,
            vatId: org.profile.vatId,
            billingEmail: org.profile.billingEmail,
            purchaseOrder: org.profile.purchaseOrder,
          }
        : { name: org.name, country: org.country };
      const vat = vatTreatmentFor({ issuerCountry: issuer.country, customerCountry: recipient.country, customerVatId: recipient.vatId ?? null, standardVatPermille });

      const computeLines = invoiceLines(usage.map((u) => ({ resourceClassId: u.resourceClassId, centsPerGpuHour: u.centsPerGpuHour, jobs: u.jobs, gpuSeconds: Number(u.gpuSeconds), costCents: Number(u.costCents), costCentre: u.costCentre, purchaseOrder: u.purchaseOrder, interactive: u.interactive })));
      const siteNames = new Map(storage.map((u) => [u.siteId, { en: siteShortName(u.nameEn), de: siteShortName(u.nameDe) }]));
      const storageRows = storageValues.map((line, i) => ({
        ...line,
        kind: 'storage' as const,
        lineNo: computeLines.length + i + 1,
        jobs: 0,
        gpuSeconds: 0,
        unitPriceCentsPerGpuHour: 0,
        description: translate('en', 'invoice.line.storage', { site: siteNames.get(line.siteId)?.en ?? line.siteId }),
        descriptionDe: translate('de', 'invoice.line.storage', { site: siteNames.get(line.siteId)?.de ?? line.siteId }),
      }));
      const tokenRows = tokenUsage.map((u, i) => ({
        kind: 'tokens' as const,
        lineNo: computeLines.length + storageRows.length + i + 1,
        model: u.model,
        jobs: u.calls,
        gpuSeconds: 0,
        unitPriceCentsPerGpuHour: 0,
        inputTokens: Number(u.inputTokens),
        outputTokens: Number(u.outputTokens),
        inputCentsPerMTokens: u.inputCentsPerMTokens,
        outputCentsPerMTokens: u.outputCentsPerMTokens,
        netCents: Number(u.netCents),
        costCentre: u.costCentre,
        purchaseOrder: u.purchaseOrder,
        description: translate('en', 'invoice.line.tokens', { model: u.model }),
        descriptionDe: translate('de', 'invoice.line.tokens', { model: u.model }),
      }));
      const lines = [...computeLines, ...storageRows, ...tokenRows];
      // Frozen in both languages: the invoice reads the same in English and German however the catalogue changes later.
      const names = new Map(usage.map((u) => [u.resourceClassId, { en: u.resourceClassName, de: localName('de', { name: u.resourceClassName, nameDe: u.resourceClassNameDe }) }]));
      const totals = invoiceTotals(lines, vat.vatPermille);
      const number = await nextDocumentNumber(tx, 'invoice', now.getUTCFullYear());

      const [invoice] = await tx
        .insert(invoices)
        .values({
          number,
          orgId,
          periodMonth: period.firstDay,
          coversFrom: from,
          coversUntil: until,
          issuedAt: now,
          recipient,
          issuer,
          vatTreatment: vat.treatment,
          dueDate: dueDate(now, issuer.paymentTermsDays),
          vatPermille: vat.vatPermille,
          ...totals,
        })
        .returning();
      if (!invoice) throw new Error('invoice insert returned nothing');
      const lineRows = await tx
        .insert(invoiceLinesTable)
        .values([
          ...computeLines.map(({ interactive, ...line }) => {
            const name = { en: names.get(line.resourceClassId)?.en ?? line.resourceClassId, de: names.get(line.resourceClassId)?.de ?? null };
            // A line of interactive sessions says so, in both languages.
            const description = interactive ? translate('en', 'invoice.line.sessions', { name: name.en }) : name.en;
            const descriptionDe = interactive ? translate('de', 'invoice.line.sessions', { name: name.de ?? name.en }) : name.de;
            return { invoiceId: invoice.id, kind: 'compute' as const, description, descriptionDe, ...line };
          }),
          ...storageRows.map((line) => ({ invoiceId: invoice.id, ...line })),
          ...tokenRows.map((line) => ({ invoiceId: invoice.id, ...line })),
        ])
        .returning();
      await recordAudit(tx, {
        actorUserId: input.actorUserId ?? null,
        orgId,
        action: 'invoice.issued',
        targetType: 'invoice',
        targetId: invoice.id,
        data: { number, month, closing: Boolean(input.closing), ...totals, vatPermille: vat.vatPermille, vatTreatment: vat.treatment, lines: lines.length, storageLines: storageRows.length, tokenLines: tokenRows.length },
        isStaffAction: Boolean(input.actorUserId),
      });
      // The owners hear of it, by mail with the PDF (rendered when the mail is sent, in each reader's language).
      const owners = await tx.select({ userId: memberships.userId }).from(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.role, 'owner')));
      await notify(
        tx,
        owners.map((o) => o.userId),
        'notice.invoiceIssued',
        { number, month, gross: invoice.grossCents / 100, due: invoice.dueDate ?? '' },
        `/invoices/${invoice.id}`,
        { orgId, dedupeKey: `invoice:${invoice.id}`, attachments: (locale) => [{ kind: 'invoice-pdf', invoiceId: invoice.id, locale }], paragraphs: [['mail.invoiceIssued.attached']] },
      );
      return { ...invoice, lines: lineRows.sort((a, b) => a.lineNo - b.lineNo), created: true };
    });
  } catch (error) {
    // Issued concurrently for the same tenant and period: the other transaction won; ours left no trace.
    if (isUniqueViolation(error, 'invoices_org_covers_from_idx')) {
      const winner = await lastInvoiceOfMonth(db, orgId, period.firstDay);
      if (winner) return { ...winner, created: false };
    }
    throw error;
  }
}

/** nextDocumentNumber takes the next number of a series inside the caller's transaction (the counter row stays locked until it ends). */
async function nextDocumentNumber(tx: Tx, kind: DocumentKind, year: number): Promise<string> {
  const [row] = await tx
    .insert(documentCounters)
    .values({ series: counterSeries(kind, year), lastValue: 1 })
    .onConflictDoUpdate({ target: documentCounters.series, set: { lastValue: sql`${documentCounters.lastValue} + 1` } })
    .returning({ value: documentCounters.lastValue });
  if (!row) throw new Error('document counter returned nothing');
  return documentNumber(kind, year, row.value);
}

/** lastInvoiceOfMonth is the tenant's latest invoice for a month (the one whose coverage ends last), with its lines. */
async function lastInvoiceOfMonth(db: DbOrTx, orgId: string, periodMonth: string): Promise<(Invoice & { lines: InvoiceLine[] }) | undefined> {
  const [invoice] = await db
    .select()
    .from(invoices)
    .where(and(eq(invoices.orgId, orgId), eq(invoices.periodMonth, periodMonth)))
    .orderBy(desc(invoices.coversUntil))
    .limit(1);
  if (!invoice) return undefined;
  return { ...invoice, lines: await linesOf(db, invoice.id) };
}

function linesOf(db: DbOrTx, invoiceId: string) {
  return db.select().from(invoiceLinesTable).where(eq(invoiceLinesTable.invoiceId, invoiceId)).orderBy(asc(invoiceLinesTable.lineNo));
}

// ---- Credit notes -----------------------------------------------------------------------------

/**
 * issueCreditNote credits part or all of an invoice's net amount (staff admins), with VAT at the
 * invoice's rate, numbered in its own series (CN-YYYY-NNNNNN). The invoice itself never changes;
 * more than its remaining net is refused.
 */
export async function issueCreditNote(db: Db, staff: Actor, input: { invoiceId: string; netCents: number; reason: string; now?: Date }): Promise<CreditNote> {
  if (!isStaff(staff, 'admin')) throw new AppError('FORBIDDEN', 'error.adminOnly');
  const now = input.now ?? new Date();
  return inTransaction(db, async (tx) => {
    // Locks the invoice (no change to it) so concurrent credit notes see each other's amounts.
    const [invoice] = await tx.select().from(invoices).where(eq(invoices.id, input.invoiceId)).for('no key update');
    if (!invoice) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'invoiceId');
    const credited = await creditedOf(tx, invoice.id);
    const priced = creditNoteAmounts(invoice, credited, input.netCents);
    if (!priced.ok) {
      if (priced.refusal.reason === 'notPositive') throw new AppError('BAD_REQUEST', 'invoice.error.creditNotPositive', {}, 'netCents');
      throw new AppError('BAD_REQUEST', 'invoice.error.creditExceedsRemaining', { remaining: priced.refusal.remainingCents / 100, number: invoice.number }, 'netCents');
    }
    const number = await nextDocumentNumber(tx, 'creditNote', now.getUTCFullYear());
    const [note] = await tx
      .insert(creditNotes)
      .values({ number, invoiceId: invoice.id, orgId: invoice.orgId, issuedAt: now, reason: input.reason, issuedBy: staff.userId, ...priced.amounts })
      .returning();
    if (!note) throw new Error('credit note insert returned nothing');
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: invoice.orgId,
      action: 'invoice.credit_note_issued',
      targetType: 'invoice',
      targetId: invoice.id,
      reason: input.reason,
      data: { creditNote: number, creditNoteId: note.id, invoice: invoice.number, ...priced.amounts },
      isStaffAction: true,
    });
    return note;
  });
}

async function creditedOf(db: DbOrTx, invoiceId: string): Promise<{ netCents: number; vatCents: number }> {
  const [row] = await db
    .select({ net: sql<string>`coalesce(sum(${creditNotes.netCents}), 0)`, vat: sql<string>`coalesce(sum(${creditNotes.vatCents}), 0)` })
    .from(creditNotes)
    .where(eq(creditNotes.invoiceId, invoiceId));
  return { netCents: Number(row?.net ?? 0), vatCents: Number(row?.vat ?? 0) };
}

// ---- The monthly run --------------------------------------------------------------------------

export interface MonthlyRunResult {
  month: string;
  /** False in the first minutes of a month, while jobs that ran at midnight may still be settling. */
  due: boolean;
  issued: { orgId: string; invoiceId: string; number: string }[];
  /** Tenants skipped this time (jobs still open, or an error); the next run tries again. */
  waiting: { orgId: string; reason: string }[];
}

/**
 * issueMonthlyInvoices issues last month's invoice for every company tenant that had usage in it and
 * has none yet. Idempotent: safe to call every minute; tenants still waiting are retried next time.
 */
export async function issueMonthlyInvoices(db: Db, now: Date, options: { vatPermille?: number; actorUserId?: string | null } = {}): Promise<MonthlyRunResult> {
  const month = previousMonth(now);
  const result: MonthlyRunResult = { month, due: monthlyRunDue(now), issued: [], waiting: [] };
  if (!result.due) return result;
  const period = monthPeriod(month);
  const candidates = await db
    .select({ id: organisations.id })
    .from(organisations)
    .where(
      and(
        eq(organisations.kind, 'company'),
        // Usage in the month that no invoice of the month covers yet (a closing invoice may have covered part of it).
        or(
          sql`exists (select 1 from ${jobs} where ${jobs.orgId} = ${organisations.id} and ${jobs.settledAt} is not null and ${jobs.gpuSeconds} > 0 and ${jobs.endedAt} < ${period.end.toISOString()}
          and ${jobs.endedAt} >= coalesce((select max(${invoices.coversUntil}) from ${invoices} where ${invoices.orgId} = ${organisations.id} and ${invoices.periodMonth} = ${period.firstDay}), ${period.start.toISOString()}))`,
          // Storage at a site with a price, held on a day of the month (or held since before its end, its days not
          // yet booked), and the month not yet covered to its end.
          sql`exists (select 1 from ${storageUsage} join ${sites} on ${sites.id} = ${storageUsage.siteId} where ${storageUsage.orgId} = ${organisations.id} and ${sites.storageCentsPerTbMonth} > 0
            and ((${storageUsage.bytes} > 0 and ${storageUsage.measuredAt} < ${period.end.toISOString()}) or exists (select 1 from ${storageDays} where ${storageDays.orgId} = ${storageUsage.orgId} and ${storageDays.projectId} = ${storageUsage.projectId} and ${storageDays.siteId} = ${storageUsage.siteId} and ${storageDays.bytes} > 0 and ${storageDays.day} between ${period.firstDay} and ${period.lastDay})))
            and coalesce((select max(${invoices.coversUntil}) from ${invoices} where ${invoices.orgId} = ${organisations.id} and ${invoices.periodMonth} = ${period.firstDay}), ${period.start.toISOString()}) < ${period.end.toISOString()}`,
        ),
      ),
    )
    .orderBy(asc(organisations.name));
  for (const org of candidates) {
    try {
      const invoice = await issueInvoice(db, { orgId: org.id, month, now, vatPermille: options.vatPermille, actorUserId: options.actorUserId });
      if (invoice?.created) result.issued.push({ orgId: org.id, invoiceId: invoice.id, number: invoice.number });
    } catch (error) {
      result.waiting.push({ orgId: org.id, reason: error instanceof AppError ? error.key : error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}

// ---- Reading ----------------------------------------------------------------------------------

/** Per invoice, what its credit notes have credited so far. */
function creditedSums(db: DbOrTx) {
  return db
    .select({
      invoiceId: creditNotes.invoiceId,
      net: sql<string>`sum(${creditNotes.netCents})`.as('credited_net'),
      gross: sql<string>`sum(${creditNotes.grossCents})`.as('credited_gross'),
    })
    .from(creditNotes)
    .groupBy(creditNotes.invoiceId)
    .as('credited');
}

function invoiceSummary(credited: ReturnType<typeof creditedSums>, paid: ReturnType<typeof paidSums>) {
  return {
    id: invoices.id,
    number: invoices.number,
    orgId: invoices.orgId,
    periodMonth: invoices.periodMonth,
    issuedAt: invoices.issuedAt,
    recipient: invoices.recipient,
    netCents: invoices.netCents,
    vatPermille: invoices.vatPermille,
    vatCents: invoices.vatCents,
    grossCents: invoices.grossCents,
    creditedNetCents: sql<number>`coalesce(${credited.net}, 0)`.mapWith(Number),
    creditedGrossCents: sql<number>`coalesce(${credited.gross}, 0)`.mapWith(Number),
    dueDate: invoices.dueDate,
    paidCents: sql<number>`coalesce(${paid.paid}, 0)`.mapWith(Number),
  };
}

/** withPaymentState adds each listed invoice's derived status and open balance on a day. */
function withPaymentState<T extends { grossCents: number; dueDate: string | null; paidCents: number; creditedGrossCents: number }>(rows: T[], today: string) {
  return rows.map((row) => ({ ...row, ...paymentState(row, row, today) }));
}

/** listInvoices lists the acting company tenant's invoices, newest month first, with their payment status on a day (owners and managers; academic tenants have none). */
export async function listInvoices(db: DbOrTx, tenant: TenantActor, today: string) {
  if (!roleAtLeast(tenant.role, 'manager')) throw new AppError('FORBIDDEN', 'invoice.error.managersOnly', { org: tenant.org.name });
  if (tenant.org.kind !== 'company') return [];
  const credited = creditedSums(db);
  const paid = paidSums(db);
  const rows = await db
    .select(invoiceSummary(credited, paid))
    .from(invoices)
    .leftJoin(credited, eq(credited.invoiceId, invoices.id))
    .leftJoin(paid, eq(paid.invoiceId, invoices.id))
    .where(eq(invoices.orgId, tenant.org.id))
    .orderBy(desc(invoices.periodMonth), desc(invoices.number));
  return withPaymentState(rows, today);
}

/** listAllInvoices lists every invoice for staff, newest first, optionally of one tenant, with their payment status on a day. */
export async function listAllInvoices(db: DbOrTx, filter: { orgId?: string }, today: string) {
  const credited = creditedSums(db);
  const paid = paidSums(db);
  const rows = await db
    .select({ ...invoiceSummary(credited, paid), orgName: organisations.name })
    .from(invoices)
    .innerJoin(organisations, eq(organisations.id, invoices.orgId))
    .leftJoin(credited, eq(credited.invoiceId, invoices.id))
    .leftJoin(paid, eq(paid.invoiceId, invoices.id))
    .where(filter.orgId ? eq(invoices.orgId, filter.orgId) : undefined)
    .orderBy(desc(invoices.periodMonth), desc(invoices.number));
  return withPaymentState(rows, today);
}

/**
 * getInvoice returns one invoice with its lines and credit notes. A tenant sees only its own
 * (anything else is NOT_FOUND) and only as owner or manager; staff see every invoice.
 */
export async function getInvoice(db: DbOrTx, viewer: { tenant?: TenantActor; staff?: Actor }, invoiceId: string, today: string = new Date().toISOString().slice(0, 10)) {
  const [invoice] = await db.select().from(invoices).where(eq(invoices.id, invoiceId));
  if (!invoice) throw new AppError('NOT_FOUND', 'error.notFound');
  if (viewer.tenant) {
    if (invoice.orgId !== viewer.tenant.org.id) throw new AppError('NOT_FOUND', 'error.notFound');
    if (!roleAtLeast(viewer.tenant.role, 'manager')) throw new AppError('FORBIDDEN', 'invoice.error.managersOnly', { org: viewer.tenant.org.name });
  } else if (!viewer.staff || !isStaff(viewer.staff)) {
    throw new AppError('NOT_FOUND', 'error.notFound');
  }
  return invoiceView(db, invoice, today);
}

/**
 * loadInvoiceForMail loads an invoice as its page shows it, for the PDF its mail carries. The worker
 * calls it when sending a mail the issuing transaction addressed to the tenant's owners; no viewer.
 */
export async function loadInvoiceForMail(db: DbOrTx, invoiceId: string, today: string = new Date().toISOString().slice(0, 10)) {
  const [invoice] = await db.select().from(invoices).where(eq(invoices.id, invoiceId));
  if (!invoice) throw new AppError('NOT_FOUND', 'error.notFound');
  return invoiceView(db, invoice, today);
}

async function invoiceView(db: DbOrTx, invoice: Invoice, today: string) {
  const [lines, notes, payments, reminders] = await Promise.all([
    linesOf(db, invoice.id),
    db
      .select({
        id: creditNotes.id,
        number: creditNotes.number,
        issuedAt: creditNotes.issuedAt,
        reason: creditNotes.reason,
        netCents: creditNotes.netCents,
        vatCents: creditNotes.vatCents,
        grossCents: creditNotes.grossCents,
        issuedByName: users.name,
      })
      .from(creditNotes)
      .innerJoin(users, eq(users.id, creditNotes.issuedBy))
      .where(eq(creditNotes.invoiceId, invoice.id))
      .orderBy(asc(creditNotes.issuedAt), asc(creditNotes.number)),
    paymentsOf(db, invoice.id),
    remindersOf(db, invoice.id),
  ]);
  const creditedNetCents = notes.reduce((sum, n) => sum + n.netCents, 0);
  const creditedGrossCents = notes.reduce((sum, n) => sum + n.grossCents, 0);
  const paidCents = payments.reduce((sum, p) => sum + p.amountCents, 0);
  const month = invoice.periodMonth.slice(0, 7);
  const period = monthPeriod(month);
  return {
    ...invoice,
    month,
    // The last day with covered usage: the month's last, or the day a closing invoice was issued.
    periodLastDay: new Date(invoice.coversUntil.getTime() - 1).toISOString().slice(0, 10),
    closing: invoice.coversUntil.getTime() < period.end.getTime(),
    lines,
    creditNotes: notes,
    creditedNetCents,
    remainingNetCents: invoice.netCents - creditedNetCents,
    creditedGrossCents,
    payments,
    reminders,
    ...paymentState(invoice, { paidCents, creditedGrossCents }, today),
  };
}
