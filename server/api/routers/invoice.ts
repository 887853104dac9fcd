// Invoices of company tenants: owners and managers read their own; staff read all, issue on demand
// and issue credit notes. There is deliberately no procedure that changes or deletes an invoice:
// issued invoices are immutable (also in the database); corrections are credit notes.
import { z } from 'zod';
import { env } from '~/server/env.js';
import { dayField, reasonField, textField, uuidField } from '~/server/api/fields';
import { invoiceOut, invoiceRowOut } from '~/server/api/outputs';
import { creditNoteOut, issueInvoiceOut, monthlyRunOut, openItemOut, paymentOut, staffInvoiceRowOut } from './invoice.outputs';
import { router, staffProcedure, tenantProcedure } from '~/server/api/trpc';
import { FIRST_INVOICE_MONTH, MONTH_PATTERN, monthOf } from '~/server/core/billing/invoicing';
import { AppError } from '~/server/errors';
import { getInvoice, issueCreditNote, issueInvoice, issueMonthlyInvoices, listAllInvoices, listInvoices } from '~/server/services/billing/invoices';
import { liftOverdueBlock, openItems, openItemsCsv, recordPayment, reversePayment } from '~/server/services/billing/payments';

/** A calendar month YYYY-MM, not before January 2000 (not in the future is checked against the request's clock). */
const monthField = z
  .string()
  .trim()
  .regex(MONTH_PATTERN, { message: 'invoice.error.monthInvalid' })
  .refine((month) => month >= FIRST_INVOICE_MONTH, { message: 'invoice.error.monthTooEarly' });

/** The largest credit note, in cents (10 million euros). */
const MAX_CREDIT_CENTS = 1_000_000_000;

/** The request's day (UTC), on which an invoice's status is derived. */
const dayOf = (now: Date) => now.toISOString().slice(0, 10);

export const invoiceRouter = router({
  /** The acting company tenant's invoices (owners and managers). */
  list: tenantProcedure('manager')
    .output(z.array(invoiceRowOut))
    .query(({ ctx }) => listInvoices(ctx.db, ctx.tenant, dayOf(ctx.now()))),

  /** One of the acting tenant's invoices with its lines and credit notes. */
  get: tenantProcedure('manager')
    .input(z.object({ id: uuidField }))
    .output(invoiceOut)
    .query(({ ctx, input }) => getInvoice(ctx.db, { tenant: ctx.tenant }, input.id, dayOf(ctx.now()))),

  /** Any invoice, for centre staff. */
  staffGet: staffProcedure()
    .input(z.object({ id: uuidField }))
    .output(invoiceOut)
    .query(({ ctx, input }) => getInvoice(ctx.db, { staff: ctx.actor }, input.id, dayOf(ctx.now()))),

  /** Every invoice (optionally of one tenant), for centre staff. */
  staffList: staffProcedure()
    .input(z.object({ orgId: uuidField.optional() }).default({}))
    .output(z.array(staffInvoiceRowOut))
    .query(({ ctx, input }) => listAllInvoices(ctx.db, input, dayOf(ctx.now()))),

  /**
   * Issue a tenant's invoice for an ended month now, or (closing) a closing invoice for the current
   * month so far, as when a contract ends (staff admins); returns the existing one if already issued,
   * null without usage.
   */
  issue: staffProcedure('admin')
    .input(z.object({ orgId: uuidField, month: monthField, closing: z.boolean().default(false) }))
    .output(issueInvoiceOut)
    .mutation(async ({ ctx, input }) => {
      const now = ctx.now();
      if (input.month > monthOf(now)) throw new AppError('BAD_REQUEST', 'invoice.error.monthInFuture', {}, 'month');
      const invoice = await issueInvoice(ctx.db, { orgId: input.orgId, month: input.month, closing: input.closing, now, actorUserId: ctx.actor.userId, vatPermille: env().VAT_PERMILLE });
      return { invoice };
    }),

  /** Issue last month's invoices for every company tenant that has none yet (staff admins; the worker does the same). */
  issueMonthly: staffProcedure('admin')
    .output(monthlyRunOut)
    .mutation(({ ctx }) => issueMonthlyInvoices(ctx.db, ctx.now(), { actorUserId: ctx.actor.userId, vatPermille: env().VAT_PERMILLE })),

  /** Credit part or all of an invoice's net amount (staff admins); the invoice itself is not changed. */
  creditNote: staffProcedure('admin')
    .input(z.object({ invoiceId: uuidField, netCents: z.number().int().min(1).max(MAX_CREDIT_CENTS), reason: reasonField }))
    .output(creditNoteOut)
    .mutation(({ ctx, input }) => issueCreditNote(ctx.db, ctx.actor, { ...input, now: ctx.now() })),

  /** Record money received on an invoice (staff admins): part payments add up, more than is open is refused. */
  recordPayment: staffProcedure('admin')
    .input(z.object({ invoiceId: uuidField, paidOn: dayField, amountCents: z.number().int().min(1).max(MAX_CREDIT_CENTS), reference: textField(1, 200) }))
    .output(paymentOut)
    .mutation(({ ctx, input }) => recordPayment(ctx.db, ctx.actor, { ...input, now: ctx.now() })),

  /** Undo a recorded payment by a reversal row (staff admins; once per payment, with a reason). */
  reversePayment: staffProcedure('admin')
    .input(z.object({ paymentId: uuidField, reason: reasonField }))
    .output(paymentOut)
    .mutation(({ ctx, input }) => reversePayment(ctx.db, ctx.actor, { ...input, now: ctx.now() })),

  /** The invoices with an open balance today, most overdue first (staff). */
  openItems: staffProcedure()
    .output(z.array(openItemOut))
    .query(({ ctx }) => openItems(ctx.db, dayOf(ctx.now()))),

  /** The open items as CSV for a finance system (staff); the download route serves it. */
  openItemsCsv: staffProcedure()
    .output(z.object({ csv: z.string(), day: z.string() }))
    .query(async ({ ctx }) => ({ csv: await openItemsCsv(ctx.db, dayOf(ctx.now())), day: dayOf(ctx.now()) })),

  /** Let a tenant with overdue invoices submit again until a day (staff admins; audited with the reason). */
  liftOverdueBlock: staffProcedure('admin')
    .input(z.object({ orgId: uuidField, untilDay: dayField, reason: reasonField }))
    .output(z.object({ id: z.string(), orgId: z.string(), untilDay: z.string() }))
    .mutation(({ ctx, input }) => liftOverdueBlock(ctx.db, ctx.actor, { ...input, now: ctx.now() })),
});
