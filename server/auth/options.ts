// next-auth configuration: e-mail + password (credentials) and single sign-on through the OIDC
// providers of OIDC_PROVIDERS, with JWT sessions naming a row of the sessions table.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { NextAuthOptions } from 'next-auth';
import { cookies, headers } from 'next/headers';
import CredentialsProvider from 'next-auth/providers/credentials';
import type { OAuthConfig } from 'next-auth/providers/oauth';
import type { TokenSet } from 'openid-client';
import { env, type PortalEnv } from '~/server/env.js';
import { getDb } from '~/server/db';
import { ssoProfileOf } from '~/server/core/identities';
import { clientAddress } from '~/server/core/rate-limits';
import { safeLocalPath } from '~/server/core/redirect';
import { verifyCredentials } from '~/server/services/identity/accounts';
import { linkWithPassword, resolveSsoSignIn, ssoRequiredBy } from '~/server/services/identity/identities';
import { signLinkToken, verifyLinkToken, type PendingLink } from './link-token';
import { recordSignInFailure, recordSignInSuccess, signInBlocked } from '~/server/services/rate-limits';
import { endSession, startSession } from '~/server/services/identity/sessions';

/** next-auth hands authorize() the request's headers as a plain object. */
function headerReader(headers: Record<string, unknown> | undefined): { get(name: string): string | null } {
  return { get: (name) => (typeof headers?.[name] === 'string' ? (headers[name]) : null) };
}

/**
 * In production the secret must come from NEXTAUTH_SECRET (the env schema enforces it).
 * In demo mode a random one is created once in the data folder, so sessions survive restarts.
 */
function authSecret(): string {
  const config = env();
  if (config.NEXTAUTH_SECRET) return config.NEXTAUTH_SECRET;
  if (config.PORTAL_ENV === 'production') throw new Error('NEXTAUTH_SECRET is required in production');
  const file = path.resolve(config.PORTAL_DATA_DIR, 'auth-secret');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const secret = randomBytes(48).toString('base64url');
    fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  }
}

type OidcProviderConfig = PortalEnv['OIDC_PROVIDERS'][number];

/** The error codes sign-in hands the sign-in page (`?error=` or signIn()'s `error`), which maps them to messages. */
export const SIGN_IN_ERRORS = { ssoRequired: 'SsoRequired', wrongPassword: 'WrongPassword', linkExpired: 'LinkExpired', ssoNoEmail: 'SsoNoEmail', ssoFailed: 'SsoFailed' } as const;

/** oidcProvider turns one configured identity provider into next-auth's OAuth provider (OpenID Connect). */
function oidcProvider(config: OidcProviderConfig): OAuthConfig<Record<string, unknown>> {
  return {
    id: config.id,
    name: config.name,
    type: 'oauth',
    wellKnown: `${config.issuer}/.well-known/openid-configuration`,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    // openid-client checks the ID token: signature (the provider's JWKS), iss, aud, exp and the nonce.
    idToken: true,
    checks: ['pkce', 'state', 'nonce'],
    authorization: { params: { scope: config.scopes } },
    userinfo: {
      // Providers such as Helmholtz AAI put entitlements only in userinfo: the checked ID token's claims win, userinfo adds.
      async request({ tokens, client }) {
        // next-auth hands the openid-client TokenSet its callback returned (typed as its parameters).
        const tokenSet = tokens as unknown as TokenSet;
        const claims = tokenSet.claims() as Record<string, unknown>;
        try {
          return { ...(await client.userinfo(tokenSet)), ...claims };
        } catch (error) {
          console.warn(`sso: userinfo of ${config.id} failed, using the ID token's claims only:`, error instanceof Error ? error.message : error);
          return claims;
        }
      },
    },
    profile(claims) {
      const read = (name: string) => (typeof claims[name] === 'string' ? claims[name] : null);
      return { id: String(claims.sub), email: read(config.claims.email), name: read(config.claims.name) };
    },
  };
}

/** Where the person signs in from: the session list shows it. */
async function requestOrigin(): Promise<{ userAgent: string | null; address: string | undefined }> {
  const h = await headers();
  return { userAgent: h.get('user-agent'), address: clientAddress(h, env().PORTAL_TRUST_PROXY) };
}

/** Where the sign-in was headed: next-auth keeps it in a cookie while the person is at the provider. */
async function pendingCallbackUrl(): Promise<string> {
  const jar = await cookies();
  const value = jar.get('__Secure-next-auth.callback-url')?.value ?? jar.get('next-auth.callback-url')?.value;
  try {
    const url = new URL(value ?? '/dashboard', 'http://portal.invalid');
    return safeLocalPath(`${url.pathname}${url.search}`);
  } catch {
    return '/dashboard';
  }
}

/** pendingLink reads the signed pending link of /sign-in/link; null when forged or expired. */
export function pendingLink(token: string, now = new Date()): PendingLink | null {
  return verifyLinkToken(authSecret(), token, now);
}

let cached: NextAuthOptions | undefined;

/** authOptions returns the next-auth options (built once, on first use, never at build time). */
export function authOptions(): NextAuthOptions {
  if (cached) return cached;
  const config = env();
  // With PORTAL_URL set, links and cookies follow it; otherwise trust the request's host (local use).
  if (config.PORTAL_URL) process.env.NEXTAUTH_URL ??= config.PORTAL_URL;
  else process.env.AUTH_TRUST_HOST ??= 'true';
  const secret = authSecret();
  cached = {
    secret,
    session: { strategy: 'jwt', maxAge: 14 * 24 * 3600 },
    pages: { signIn: '/sign-in', error: '/sign-in' },
    providers: [
      CredentialsProvider({
        name: 'E-mail',
        credentials: { email: { label: 'E-mail', type: 'email' }, password: { label: 'Password', type: 'password' } },
        async authorize(credentials, req) {
          const email = credentials?.email;
          const password = credentials?.password;
          if (typeof email !== 'string' || typeof password !== 'string' || email.length > 254 || password.length > 200) {
            return null;
          }
          const db = await getDb();
          const keys = { account: email, address: clientAddress(headerReader(req?.headers), env().PORTAL_TRUST_PROXY) };
          const now = new Date();
          // The route refuses locked accounts with 429 before this runs (app/api/auth/[...nextauth]);
          // this check covers a lock that began in between.
          if (!(await signInBlocked(db, keys, now)).allowed) return null;
          const user = await verifyCredentials(db, email, password);
          if (!user) {
            await recordSignInFailure(db, keys, now);
            return null;
          }
          await recordSignInSuccess(db, email);
          // A tenant that requires single sign-on keeps its members' passwords out; said only after the
          // right password, so it tells nobody else who belongs where.
          const ssoOrg = await ssoRequiredBy(db, user.id);
          if (ssoOrg) throw new Error(`${SIGN_IN_ERRORS.ssoRequired}:${ssoOrg}`);
          // The session this sign-in opens: the cookie names it, and ending it ends the cookie's use.
          const sid = await startSession(db, user.id, { userAgent: headerReader(req?.headers).get('user-agent'), address: keys.address });
          return { ...user, sid };
        },
      }),
      // The second half of linking a provider identity to an existing account: the signed pending link
      // from the provider's callback and the account's password (/sign-in/link).
      CredentialsProvider({
        id: 'sso-link',
        name: 'Link',
        credentials: { token: { label: 'Token', type: 'text' }, password: { label: 'Password', type: 'password' } },
        async authorize(credentials, req) {
          const token = credentials?.token;
          const password = credentials?.password;
          if (typeof token !== 'string' || typeof password !== 'string' || password.length > 200) return null;
          const now = new Date();
          const pending = verifyLinkToken(secret, token, now);
          if (!pending) throw new Error(SIGN_IN_ERRORS.linkExpired);
          const mappings = config.OIDC_PROVIDERS.find((p) => p.id === pending.profile.provider)?.entitlements ?? [];
          const db = await getDb();
          const address = clientAddress(headerReader(req?.headers), env().PORTAL_TRUST_PROXY);
          const result = await linkWithPassword(db, pending, password, { address }, mappings, now);
          if ('refused' in result) {
            throw new Error(result.refused === 'lockedOut' ? `RateLimited:${result.retryAfterSeconds ?? 60}` : SIGN_IN_ERRORS.wrongPassword);
          }
          const sid = await startSession(db, result.user.id, { userAgent: headerReader(req?.headers).get('user-agent'), address });
          return { ...result.user, sid };
        },
      }),
      ...config.OIDC_PROVIDERS.map(oidcProvider),
    ],
    callbacks: {
      /**
       * A provider's sign-in resolves to an account here (server/services/identity/identities.ts): the linked one,
       * a new one, or — for an address that has an account — the link page that asks for its password.
       */
      async signIn({ user, account, profile }) {
        if (account?.type !== 'oauth') return true;
        const provider = config.OIDC_PROVIDERS.find((p) => p.id === account.provider);
        const sso = provider && profile ? ssoProfileOf(provider.id, profile as Record<string, unknown>, provider.claims) : null;
        if (!provider || !sso) return `/sign-in?error=${SIGN_IN_ERRORS.ssoFailed}`;
        const db = await getDb();
        const now = new Date();
        let outcome;
        try {
          outcome = await resolveSsoSignIn(db, sso, provider.entitlements, now);
        } catch (error) {
          if (error instanceof Error && error.message === 'signIn.ssoNoEmail') return `/sign-in?error=${SIGN_IN_ERRORS.ssoNoEmail}`;
          throw error;
        }
        if (outcome.kind === 'confirmLink') {
          const token = signLinkToken(secret, { userId: outcome.userId, profile: sso, callbackUrl: await pendingCallbackUrl() }, now);
          return `/sign-in/link?token=${token}`;
        }
        // Every session goes through the sessions table, as with a password: sign-out and the session list work alike.
        const sid = await startSession(db, outcome.user.id, await requestOrigin(), now);
        Object.assign(user, { id: outcome.user.id, email: outcome.user.email, name: outcome.user.name, sid });
        return true;
      },
      jwt({ token, user }) {
        if (user) {
          token.sub = user.id;
          token.sid = (user as { sid?: string }).sid;
        }
        return token;
      },
      session({ session, token }) {
        if (session.user && token.sub) {
          const person = session.user as { id?: string; sid?: string };
          person.id = token.sub;
          if (typeof token.sid === 'string') person.sid = token.sid;
        }
        return session;
      },
    },
    events: {
      // Signing out ends the session in the database too: the old cookie no longer lets anyone in.
      async signOut({ token }) {
        if (typeof token?.sid === 'string') await endSession(await getDb(), token.sid, 'signed_out');
      },
    },
  };
  return cached;
}
