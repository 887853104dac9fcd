// The portal's HTTP server as tests need it: the requests scripts/server.mjs answers before Next.js
// (server/api/transfers-http.ts) on a real socket, the rest answered 418 ("would have gone to Next").
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode } from 'next-auth/jwt';
import type { Db } from '~/db/client';
import { createRestHandler } from '~/server/api/rest';
import { createTransfers } from '~/server/api/transfers-http';
import { endSession, startSession } from '~/server/services/identity/sessions';
import { apiTokens } from './api-tokens';

export interface TransfersServer {
  port: number;
  tokens: ReturnType<typeof apiTokens>;
  close(): Promise<void>;
}

/** startTransfersServer listens on a free loopback port with next-auth's secret `authSecret`. */
export async function startTransfersServer(db: Db, authSecret: string): Promise<TransfersServer> {
  const tokens = apiTokens(db);
  const rest = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 100_000 });
  const transfers = createTransfers({ db, authSecret, trustProxy: false, https: false, rest });
  const server = http.createServer((req, res) => {
    if (transfers.owns(req.method, req.url)) transfers.handleRequest(req, res);
    else {
      res.statusCode = 418; // would have gone to Next
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    tokens,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** signedInCookie is the Cookie header of a browser signed in as `userId` (a session row, as next-auth's sign-in makes one). */
export async function signedInCookie(db: Db, authSecret: string, userId: string, orgId?: string, locale = 'en'): Promise<{ cookie: string; sessionId: string }> {
  const sessionId = await startSession(db, userId, { userAgent: 'vitest' });
  const jwt = await encode({ token: { sub: userId, sid: sessionId, name: 'Test', email: 'test@example.org' }, secret: authSecret });
  return { cookie: `next-auth.session-token=${jwt}; portal-locale=${locale}${orgId ? `; portal-org=${orgId}` : ''}`, sessionId };
}

/** refusedCookies are the Cookie headers that name nobody: none, one signed with another secret, one whose session ended. */
export async function refusedCookies(db: Db, authSecret: string, userId: string, orgId?: string): Promise<(readonly [who: string, cookie: string])[]> {
  const ended = await signedInCookie(db, authSecret, userId, orgId);
  await endSession(db, ended.sessionId, 'signed_out');
  const forged = `next-auth.session-token=${await encode({ token: { sub: userId, sid: ended.sessionId }, secret: randomBytes(32).toString('hex') })}`;
  return [
    ['nobody', ''],
    ['a forged cookie', forged],
    ['an ended session', ended.cookie],
  ];
}
