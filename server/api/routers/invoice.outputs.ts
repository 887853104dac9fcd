// What the invoice router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { invoiceRowOut, isoDateOut, paymentStateOut } from '~/server/api/outputs';

/** The staff's invoice list also names the tenant. */
export const staffInvoiceRowOut = invoiceRowOut.extend({ orgId: z.string(), orgName: z.string() });

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
