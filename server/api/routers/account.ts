import { z } from 'zod';
import { authedProcedure, publicProcedure, rateLimit, router } from '~/server/api/trpc';
import { emailField, invitationTokenField, orgKindField, orgNameField, countryField, passwordField, personNameField, residencyField } from '~/server/api/fields';
import { signUp } from '~/server/services/accounts';
import { listMyOrganisations } from '~/server/services/organisations';

export const signUpInput = z.object({
  name: personNameField,
  email: emailField,
  password: passwordField,
  organisation: z.object({ name: orgNameField, kind: orgKindField, country: countryField, residency: residencyField }).optional(),
  invitationToken: invitationTokenField.optional(),
});

export const accountRouter = router({
  signUp: publicProcedure
    .input(signUpInput)
    .output(z.object({ userId: z.string(), orgId: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'signUpEmail', input.email);
      await rateLimit(ctx, 'signUpAddress', ctx.address);
      return signUp(ctx.db, input);
    }),

  me: authedProcedure.query(({ ctx }) => ({
    userId: ctx.actor.userId,
    name: ctx.actor.name,
    email: ctx.actor.email,
    staffRoles: ctx.actor.staffRoles,
  })),

  myOrganisations: authedProcedure.query(({ ctx }) => listMyOrganisations(ctx.db, ctx.actor.userId)),
});
