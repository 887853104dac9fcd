import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '~/server/api/root';
import { createRequestContext, requestLocale } from '~/server/api/context';
import { MAX_BATCH_SIZE, MAX_BODY_BYTES, originAllowed, readBody, refusal } from '~/server/api/http-guard';
import { env } from '~/server/env.js';
import { AppError } from '~/server/errors';
import { instrumentRoute } from '~/server/observability/metrics';
import { withRequestId } from '~/server/observability/request-id';
import { requestLinkBase } from '~/server/portal-url';
import { batchSize } from '~/server/api/trpc-http';

export const dynamic = 'force-dynamic';

// The portal's own server (scripts/server.mjs) answers these requests before Next (server/api/trpc-http.ts,
// the same checks in the same order); this route answers them under another server, e.g. `next dev`.


function trpc(req: Request) {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: createRequestContext,
    maxBatchSize: MAX_BATCH_SIZE,
    // A call refused by a rate limit says when to come back (server/services/rate-limits.ts).
    responseMeta: ({ errors }) => {
      const seconds = Math.max(0, ...errors.map((e) => (e.code === 'TOO_MANY_REQUESTS' && e.cause instanceof AppError ? Number(e.cause.params?.seconds ?? 0) : 0)));
      return seconds > 0 ? { headers: new Headers({ 'retry-after': String(seconds) }) } : {};
    },
  });
}

// Each request runs in its own scope (its id in every log line below it) and answers with X-Request-Id.
// Without PORTAL_URL (demo), links in mails written during the request follow the address it came to.
const scopeOf = (req: Request) => ({ baseUrl: requestLinkBase(req.headers, new URL(req.url).protocol) });

export const GET = instrumentRoute('/api/trpc', (req: Request) => withRequestId(req, () => trpc(req), scopeOf(req)));

/** Mutations: from the portal's own pages only (cross-site requests refused), bodies of at most 1 MiB. */
export const POST = instrumentRoute(
  '/api/trpc',
  (req: Request) =>
    withRequestId(req, async () => {
      if (!originAllowed(req.headers, req.url, env().PORTAL_URL || undefined)) {
        return refusal(await requestLocale(), 403, 'error.crossOrigin', batchSize(new URL(req.url)));
      }
      const body = await readBody(req, MAX_BODY_BYTES);
      if (body === null) return refusal(await requestLocale(), 413, 'error.bodyTooLarge', batchSize(new URL(req.url)));
      return trpc(new Request(req.url, { method: 'POST', headers: req.headers, body }));
    }, scopeOf(req)),
);
