// The REST API (issue #13): server/api/rest.ts, with the process's database, token check and fair gate.
import { requestGate } from '~/server/api/context';
import { createRestHandler } from '~/server/api/rest';
import { getDb } from '~/server/db';
import { env, portalBaseUrl } from '~/server/env.js';
import { requestLinkBase } from '~/server/portal-url';
import { instrumentRoute } from '~/server/observability/metrics';
import { authenticateToken } from '~/server/services/identity/api-tokens';

export const dynamic = 'force-dynamic';

let handler: ((req: Request) => Promise<Response>) | undefined;

// Recorded under one route label: the request scope and X-Request-Id are the REST handler's own (it adds the token).
const rest = instrumentRoute('/api/v1', (req: Request): Promise<Response> => {
  const config = env();
  handler ??= createRestHandler({
    db: getDb,
    authenticate: authenticateToken,
    // PORTAL_URL, else (demo) the address the request came to.
    portalUrl: (req) => requestLinkBase(req.headers, new URL(req.url).protocol) ?? portalBaseUrl(),
    perMinute: config.API_RATE_LIMIT_PER_MINUTE,
    trustProxy: config.PORTAL_TRUST_PROXY,
    gate: requestGate(),
  });
  return handler(req);
});

export const GET = rest;
export const POST = rest;
export const PUT = rest;
export const PATCH = rest;
export const DELETE = rest;
// HEAD: a download's size, and a resumable upload's offset (tus); OPTIONS: tus's capabilities.
export const HEAD = rest;
export const OPTIONS = rest;
