// next-auth configuration: e-mail + password (credentials) with JWT sessions.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { NextAuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { env } from '~/server/env.js';
import { getDb } from '~/server/db';
import { clientAddress } from '~/server/core/rate-limits';
import { verifyCredentials } from '~/server/services/accounts';
import { recordSignInFailure, recordSignInSuccess, signInBlocked } from '~/server/services/rate-limits';
import { endSession, startSession } from '~/server/services/sessions';

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

let cached: NextAuthOptions | undefined;

/** authOptions returns the next-auth options (built once, on first use, never at build time). */
export function authOptions(): NextAuthOptions {
  if (cached) return cached;
  const config = env();
  // With PORTAL_URL set, links and cookies follow it; otherwise trust the request's host (local use).
  if (config.PORTAL_URL) process.env.NEXTAUTH_URL ??= config.PORTAL_URL;
  else process.env.AUTH_TRUST_HOST ??= 'true';
  cached = {
    secret: authSecret(),
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
          // The session this sign-in opens: the cookie names it, and ending it ends the cookie's use.
          const sid = await startSession(db, user.id, { userAgent: headerReader(req?.headers).get('user-agent'), address: keys.address });
          return { ...user, sid };
        },
      }),
    ],
    callbacks: {
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
