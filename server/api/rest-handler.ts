// The process's REST API handler (server/api/rest.ts) on the process's database, token check, settings
// and fair gate: one for the route (app/api/v1/[...path]/route.ts) and the file transfers the portal's
// HTTP server answers before Next (server/api/transfers-http.ts), so both count a token's requests alike.
import { requestGate } from './context';
import { createRestHandler, type RestHandler } from './rest';
import { getDb } from '~/server/db';
import { env, portalBaseUrl } from '~/server/env.js';
import { requestLinkBase } from '~/server/portal-url';
import { authenticateToken } from '~/server/services/identity/api-tokens';

const holder = globalThis as { __portalRestHandler?: RestHandler };

/** processRestHandler returns the process's REST handler, made on first use. */
export function processRestHandler(): RestHandler {
  const config = env();
  holder.__portalRestHandler ??= createRestHandler({
    db: getDb,
    authenticate: authenticateToken,
    // PORTAL_URL, else (demo) the address the request came to.
    portalUrl: (req) => requestLinkBase(req.headers, new URL(req.url).protocol) ?? portalBaseUrl(),
    perMinute: config.API_RATE_LIMIT_PER_MINUTE,
    trustProxy: config.PORTAL_TRUST_PROXY,
    gate: requestGate(),
  });
  return holder.__portalRestHandler;
}
