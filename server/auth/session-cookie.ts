// The person a request's session cookie names, read as next-auth reads it (getToken): the pages' and the
// tRPC calls' context (server/api/context.ts, server/api/transfers-http.ts) and the session proxy. Only
// the cookie is decoded: next-auth's getServerSession also encrypts a renewed cookie, which a server
// component or route handler cannot set and throws away.
import { getToken } from 'next-auth/jwt';

/**
 * portalSession decodes next-auth's session cookie among the request's cookies (next-auth's getToken,
 * which also joins a long token split over `.0`, `.1` …): the person and the session row it names, or
 * null (no cookie, forged, expired, or from before sessions were recorded). Only the cookie counts:
 * getToken is given no headers, so a bearer header is not read.
 */
export async function portalSession(cookies: ReadonlyMap<string, string>, authSecret: string): Promise<{ userId: string; sessionId: string } | null> {
  const req = { cookies: Object.fromEntries(cookies), headers: {} } as unknown as Parameters<typeof getToken>[0]['req'];
  // Over https next-auth names its cookie with the `__Secure-` prefix, over http without.
  for (const secureCookie of [true, false]) {
    const claims = await getToken({ req, secret: authSecret, secureCookie, logger: quietLogger });
    if (claims) return typeof claims.sub === 'string' && typeof claims.sid === 'string' ? { userId: claims.sub, sessionId: claims.sid } : null;
  }
  return null;
}

/** next-auth's cookie store warns about oversized cookies on the console; the callers log their own way. */
const quietLogger = { error: () => undefined, warn: () => undefined, debug: () => undefined };
