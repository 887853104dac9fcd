// What the organisation router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { isoDateOut, memberRoleOut, tenantOut } from '~/server/api/outputs';

/** The caller's own tenant, with its cap and the caller's role. */
export const organisationOut = tenantOut.extend({ monthlyCapCents: z.number().nullable(), priceListAcceptedAt: isoDateOut.nullable(), myRole: memberRoleOut, hasCreditLine: z.boolean() });

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

/** Each person's monthly limit in cents. */
export const spendLimitOut = z.object({ userId: z.string(), monthlyCents: z.number().int() });
