import NextAuth from 'next-auth';
import { authOptions } from '~/server/auth/options';
import { clientAddress } from '~/server/core/rate-limits';
import { getDb } from '~/server/db';
import { env } from '~/server/env.js';
import { instrumentRoute } from '~/server/observability/metrics';
import { signInBlocked } from '~/server/services/rate-limits';

export const dynamic = 'force-dynamic';

type RouteContext = { params: Promise<{ nextauth: string[] }> };

/**
 * A sign-in with a password for an account or from an address that is locked out (too many wrong
 * passwords, server/services/rate-limits.ts) is refused with 429 and Retry-After before the password
 * is even checked — the right password too, until the lock ends. The answer keeps next-auth's shape
 * (`{ url }` with `error=RateLimited:<seconds>`), which the sign-in form turns into its message.
 */
async function lockedOut(req: Request, ctx: RouteContext): Promise<Response | null> {
  const { nextauth } = await ctx.params;
  if (req.method !== 'POST' || nextauth.join('/') !== 'callback/credentials') return null;
  const form = await req.clone().formData().catch(() => null);
  const email = form?.get('email');
  if (typeof email !== 'string' || email.length === 0 || email.length > 254) return null;
  const verdict = await signInBlocked(await getDb(), { account: email, address: clientAddress(req.headers, env().PORTAL_TRUST_PROXY) }, new Date());
  if (verdict.allowed) return null;
  const url = new URL('/sign-in', req.url);
  url.searchParams.set('error', `RateLimited:${verdict.retryAfterSeconds}`);
  return Response.json({ url: url.toString() }, { status: 429, headers: { 'retry-after': String(verdict.retryAfterSeconds) } });
}

const handler = instrumentRoute('/api/auth/[...nextauth]', async (req: Request, ctx: RouteContext) => {
  const refused = await lockedOut(req, ctx);
  if (refused) return refused;
  const nextAuth = NextAuth(authOptions()) as (req: Request, ctx: RouteContext) => Promise<Response>;
  return nextAuth(req, ctx);
});

export { handler as GET, handler as POST };
