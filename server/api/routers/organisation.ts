import { z } from 'zod';
import { router, tenantProcedure } from '~/server/api/trpc';
import { env } from '~/server/env.js';
import { linkBase } from '~/server/portal-url';
import { countryField, emailField, memberRoleField, reasonField, textField, uuidField } from '~/server/api/fields';
import { creditLineRequestOut, nothing } from '~/server/api/outputs';
import { billingProfileOut, createdInvitationOut, memberOut, openInvitationOut, organisationOut, spendLimitOut } from './organisation.outputs';
import { creditLinesOf, requestLargerCreditLine } from '~/server/services/billing/credit-requests';
import { getBillingProfile, setBillingProfile, startPayAsYouGo } from '~/server/services/billing/billing';
import { createInvitation, listOpenInvitations, revokeInvitation } from '~/server/services/tenants/invitations';
import { changeMemberRole, getOrganisation, listMembers } from '~/server/services/tenants/organisations';
import { listSpendLimits, setMemberSpendLimit } from '~/server/services/billing/spending-limits';

const billingProfileInput = z.object({
  legalName: textField(2, 200),
  street: textField(2, 200),
  postcode: textField(2, 16),
  city: textField(1, 100),
  country: countryField,
  vatId: textField(0, 32).nullish(),
  billingEmail: emailField,
  purchaseOrder: textField(0, 64).nullish(),
});

export const organisationRouter = router({
  current: tenantProcedure('member').output(organisationOut).query(({ ctx }) => getOrganisation(ctx.db, ctx.tenant)),

  /** Who the tenant's invoices are made out to (null until it is filled in). */
  billingProfile: tenantProcedure('member').output(billingProfileOut.nullable()).query(({ ctx }) => getBillingProfile(ctx.db, ctx.tenant)),

  setBillingProfile: tenantProcedure('manager')
    .input(billingProfileInput)
    .output(billingProfileOut)
    .mutation(({ ctx, input }) => setBillingProfile(ctx.db, ctx.tenant, input, ctx.now())),

  /** The owner accepts the price list: a company without a credit line gets its starting line on a project of its own; one with a line keeps it and its cap. */
  startPayAsYouGo: tenantProcedure('owner')
    .output(z.object({ projectId: z.string().nullable(), allocationId: z.string().nullable(), creditCents: z.number().int() }))
    // The starting credit line is a grant, which the tenant role may not write (drizzle/0064): the acceptance runs on
    // the portal's own connection once the request's transaction (which wrote nothing) is committed, scoped to this tenant.
    .mutation(async ({ ctx }) => startPayAsYouGo(await ctx.commit(), ctx.tenant, ctx.now())),

  /** The company's active credit lines and its requests for larger ones. */
  creditLines: tenantProcedure('owner')
    .output(
      z.object({
        lines: z.array(z.object({ allocationId: z.string(), projectTitle: z.string(), grantedCents: z.number().int(), periodEnd: z.string() })),
        requests: z.array(creditLineRequestOut),
      }),
    )
    .query(({ ctx }) => creditLinesOf(ctx.db, ctx.tenant)),

  /** The owner asks staff for a larger credit line (the new line in euros, with a reason). */
  requestCreditLine: tenantProcedure('owner')
    .input(z.object({ allocationId: uuidField, amountEuros: z.number().int().min(1).max(100_000_000), reason: reasonField }))
    .output(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => requestLargerCreditLine(ctx.db, ctx.tenant, { allocationId: input.allocationId, requestedCents: input.amountEuros * 100, reason: input.reason }, ctx.now())),

  members: tenantProcedure('member').output(z.array(memberOut)).query(({ ctx }) => listMembers(ctx.db, ctx.tenant)),

  invitations: tenantProcedure('manager').output(z.array(openInvitationOut)).query(({ ctx }) => listOpenInvitations(ctx.db, ctx.tenant.org.id)),

  invite: tenantProcedure('manager')
    .input(z.object({ email: emailField, role: memberRoleField }))
    .output(createdInvitationOut)
    .mutation(async ({ ctx, input }) => {
      const invitation = await createInvitation(ctx.db, ctx.tenant, input, { locale: ctx.locale, baseUrl: linkBase() });
      return { id: invitation.id, email: invitation.email, role: invitation.role, expiresAt: invitation.expiresAt, path: `/invitations/${invitation.token}`, mailed: Boolean(env().SMTP_URL) };
    }),

  revokeInvitation: tenantProcedure('manager')
    .input(z.object({ invitationId: uuidField }))
    .output(nothing)
    .mutation(({ ctx, input }) => revokeInvitation(ctx.db, ctx.tenant, input.invitationId)),

  changeRole: tenantProcedure('manager')
    .input(z.object({ userId: uuidField, role: memberRoleField }))
    .output(nothing)
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenant, input.userId, input.role)),

  removeMember: tenantProcedure('manager')
    .input(z.object({ userId: uuidField }))
    .output(nothing)
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.tenant, input.userId, null)),

  /** Each person's monthly limit on the company's credit lines (owners and managers). */
  spendLimits: tenantProcedure('manager').output(z.array(spendLimitOut)).query(({ ctx }) => listSpendLimits(ctx.db, ctx.tenant)),

  /** Owners and managers set (or clear, with null) a person's monthly limit in whole euros. */
  setSpendLimit: tenantProcedure('manager')
    .input(z.object({ userId: uuidField, monthlyEuros: z.number().int().min(0).max(100_000_000).nullable() }))
    .output(nothing)
    .mutation(({ ctx, input }) => setMemberSpendLimit(ctx.db, ctx.tenant, { userId: input.userId, monthlyCents: input.monthlyEuros === null ? null : input.monthlyEuros * 100 }, ctx.now())),
});
