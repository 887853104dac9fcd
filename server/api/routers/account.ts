import { z } from 'zod';
import { authedProcedure, publicProcedure, rateLimit, router } from '~/server/api/trpc';
import { linkBase } from '~/server/portal-url';
import { authTokenField, emailField, textField, invitationTokenField, orgKindField, orgNameField, countryField, passwordField, personNameField, residencyField, timeZoneField, uuidField } from '~/server/api/fields';
import { nothing } from '~/server/api/outputs';
import { apiTokenOut, identityOut, meOut, myOrganisation, sessionOut } from './account.outputs';
import { ssoProviderName } from '~/server/auth/sso-providers';
import { listIdentities, unlinkIdentity } from '~/server/services/identity/identities';
import { createApiToken, listApiTokens, listTokenProjects, revokeApiToken } from '~/server/services/identity/api-tokens';
import { API_TOKEN_MAX_DAYS } from '~/server/core/rest/tokens';
import { TOKEN_SCOPES } from '~/server/core/rest/scopes';
import { hasPassword, requestSignUp, setTimeZone } from '~/server/services/identity/accounts';
import { resendVerification, verificationLinkUsable, verifyEmail } from '~/server/services/identity/email-verification';
import { requestPasswordReset, resetLinkUsable, resetPassword } from '~/server/services/identity/password-reset';
import { listMyOrganisations } from '~/server/services/tenants/organisations';
import { changePassword, endAllSessions, endOwnSession, listSessions } from '~/server/services/identity/sessions';

export const signUpInput = z.object({
  name: personNameField,
  email: emailField,
  password: passwordField,
  organisation: z.object({ name: orgNameField, kind: orgKindField, country: countryField, residency: residencyField }).optional(),
  invitationToken: invitationTokenField.optional(),
});

export const resetPasswordInput = z
  .object({ token: authTokenField, password: passwordField, passwordConfirm: z.string().max(200) })
  .refine((input) => input.password === input.passwordConfirm, { message: 'auth.reset.mismatch', path: ['passwordConfirm'] });

export const accountRouter = router({
  signUp: publicProcedure
    .input(signUpInput)
    // The same answer whether or not the e-mail has an account (no enumeration): sign in next.
    .output(z.object({ next: z.literal('signIn') }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'signUpEmail', input.email);
      await rateLimit(ctx, 'signUpAddress', ctx.address);
      return requestSignUp(ctx.db, input, { mail: { locale: ctx.locale, baseUrl: linkBase() }, now: ctx.now(), requestedFrom: ctx.address });
    }),

  // Password reset and address check by mailed links (server/services/identity/password-reset.ts, email-verification.ts).
  requestPasswordReset: publicProcedure
    .input(z.object({ email: emailField }))
    // The same answer whether or not the address has an account (no enumeration); limits count every address.
    .output(z.object({ sent: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'passwordResetEmail', input.email);
      await rateLimit(ctx, 'passwordResetAddress', ctx.address);
      return requestPasswordReset(ctx.db, input.email, { locale: ctx.locale, baseUrl: linkBase(), now: ctx.now(), requestedFrom: ctx.address });
    }),

  resetLinkUsable: publicProcedure.input(z.object({ token: authTokenField })).output(z.boolean()).query(({ ctx, input }) => resetLinkUsable(ctx.db, input.token, ctx.now())),

  resetPassword: publicProcedure
    .input(resetPasswordInput)
    .output(z.object({ email: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'authLink', ctx.address);
      return { email: (await resetPassword(ctx.db, input, ctx.now())).email };
    }),

  verificationLinkUsable: publicProcedure.input(z.object({ token: authTokenField })).output(z.boolean()).query(({ ctx, input }) => verificationLinkUsable(ctx.db, input.token, ctx.now())),

  verifyEmail: publicProcedure
    .input(z.object({ token: authTokenField }))
    .output(z.object({ email: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'authLink', ctx.address);
      return verifyEmail(ctx.db, input.token, ctx.now());
    }),

  resendVerification: authedProcedure.output(z.object({ sent: z.boolean(), email: z.string() })).mutation(async ({ ctx }) => {
    await rateLimit(ctx, 'verificationResend', ctx.actor.userId);
    return resendVerification(ctx.db, ctx.actor, { locale: ctx.locale, baseUrl: linkBase() }, ctx.now(), ctx.address);
  }),

  me: authedProcedure.output(meOut).query(({ ctx }) => ({
    userId: ctx.actor.userId,
    name: ctx.actor.name,
    email: ctx.actor.email,
    staffRoles: ctx.actor.staffRoles,
    emailVerified: ctx.emailVerified,
    timeZone: ctx.timeZone,
  })),

  /** The time zone the person reads times in: pages, mails and PDFs (server/i18n/format.ts). */
  setTimeZone: authedProcedure.input(z.object({ timeZone: timeZoneField })).output(z.object({ timeZone: z.string() })).mutation(({ ctx, input }) => setTimeZone(ctx.db, ctx.actor.userId, input.timeZone)),

  myOrganisations: authedProcedure.output(z.array(myOrganisation)).query(({ ctx }) => listMyOrganisations(ctx.db, ctx.actor.userId)),

  /** Where the person is signed in: their open sessions, this one marked. */
  sessions: authedProcedure.output(z.array(sessionOut)).query(async ({ ctx }) =>
    (await listSessions(ctx.db, ctx.actor.userId)).map((s) => ({ ...s, current: s.id === ctx.sessionId })),
  ),

  endSession: authedProcedure.input(z.object({ sessionId: uuidField })).output(nothing).mutation(({ ctx, input }) => endOwnSession(ctx.db, ctx.actor, input.sessionId)),

  endOtherSessions: authedProcedure.output(z.object({ endedSessions: z.number() })).mutation(async ({ ctx }) => ({ endedSessions: await endAllSessions(ctx.db, ctx.actor.userId, 'ended_by_user', ctx.sessionId) })),

  /** Whether the account has a password (the profile offers to change it, or to set a first one by mail). */
  hasPassword: authedProcedure.output(z.boolean()).query(({ ctx }) => hasPassword(ctx.db, ctx.actor.userId)),

  /** The identity providers linked to the account (single sign-on). */
  identities: authedProcedure.output(z.array(identityOut)).query(({ ctx }) => listIdentities(ctx.db, ctx.actor.userId, ssoProviderName)),

  unlinkIdentity: authedProcedure.input(z.object({ identityId: uuidField })).output(nothing).mutation(({ ctx, input }) => unlinkIdentity(ctx.db, ctx.actor, input.identityId)),

  changePassword: authedProcedure
    .input(z.object({ currentPassword: z.string().min(1).max(200), newPassword: passwordField }))
    .output(z.object({ endedSessions: z.number() }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'passwordChange', ctx.actor.userId);
      return changePassword(ctx.db, ctx.actor, { ...input, sessionId: ctx.sessionId });
    }),

  // Personal API tokens (server/services/identity/api-tokens.ts): made, listed and revoked here, never by a token.
  apiTokens: authedProcedure.output(z.array(apiTokenOut)).query(({ ctx }) => listApiTokens(ctx.db, ctx.actor.userId, ctx.now())),

  /** The projects a token with the scope `inference` may pay from, per tenant (the token form's choice). */
  tokenProjects: authedProcedure
    .output(z.array(z.object({ id: z.string(), title: z.string(), orgId: z.string() })))
    .query(({ ctx }) => listTokenProjects(ctx.db, ctx.actor.userId)),

  createApiToken: authedProcedure
    .input(
      z.object({
        name: textField(1, 80),
        orgId: uuidField.nullable(),
        scopes: z.array(z.enum(TOKEN_SCOPES)).min(1, 'apiToken.scopesNeeded').max(TOKEN_SCOPES.length),
        expiresInDays: z.number().int().min(1, 'apiToken.expiryRange').max(API_TOKEN_MAX_DAYS, 'apiToken.expiryRange'),
        /** The project whose budget pays the token's model calls: with the scope `inference` only. */
        projectId: uuidField.nullable().optional(),
      }),
    )
    .output(z.object({ token: z.string(), view: apiTokenOut }))
    .mutation(async ({ ctx, input }) => {
      await rateLimit(ctx, 'apiTokenCreate', ctx.actor.userId);
      return createApiToken(ctx.db, ctx.actor, input, ctx.now());
    }),

  revokeApiToken: authedProcedure.input(z.object({ tokenId: uuidField })).output(nothing).mutation(({ ctx, input }) => revokeApiToken(ctx.db, ctx.actor, input.tokenId, ctx.now())),
});
