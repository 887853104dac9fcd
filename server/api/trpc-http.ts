// The browser's tRPC calls (`/api/trpc/<procedure>[,<procedure>…]`), answered before Next.js (issue #30,
// pages under a crowd). Next's route (app/api/trpc/[trpc]/route.ts) answers them the same way; through it
// each call also paid Next's routing, its proxy (proxy.ts, which sets the API's headers), the request's
// async storage and next-auth's getServerSession, which decodes the session cookie and then encrypts a
// renewed one that a route handler throws away. Here the same checks run in the same order — the Origin
// of a mutation, the size of its body, the person from the session cookie as next-auth reads it, the
// tRPC context as createRequestContext builds it — on the Node request, and tRPC's fetch adapter answers.
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { env } from '~/server/env.js';
import { AppError } from '~/server/errors';
import { negotiateLocale, LOCALE_COOKIE } from '~/server/i18n';
import { inRequestScope } from '~/server/request-scope';
import { requestLinkBase } from '~/server/portal-url';
import { MAX_BATCH_SIZE, MAX_BODY_BYTES, originAllowed, refusal } from './http-guard';
import { appRouter } from './root';
import type { Context } from './trpc';

const gzipped = promisify(gzip);

/** Answers of at least this many bytes go gzip-compressed to a client that takes gzip (Next's compression, which answered before, compresses from 1 KiB). */
export const COMPRESS_FROM_BYTES = 1024;

/** acceptsGzip reads an Accept-Encoding header: gzip (or *) named with a weight above 0. */
export function acceptsGzip(acceptEncoding: string | null | undefined): boolean {
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (name !== 'gzip' && name !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (!q || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/**
 * compressedAnswer is a tRPC answer as the client gets it: whole (tRPC's JSON is small and not streamed)
 * with its length, gzip-compressed when it is COMPRESS_FROM_BYTES or more and the client takes gzip —
 * from a distant browser a month's job list is a tenth of its size.
 */
export async function compressedAnswer(response: Response, acceptEncoding: string | null | undefined): Promise<Response> {
  const headers = new Headers(response.headers);
  headers.append('vary', 'Accept-Encoding');
  const body = new Uint8Array(await response.arrayBuffer());
  if (body.byteLength < COMPRESS_FROM_BYTES || !acceptsGzip(acceptEncoding)) {
    headers.set('content-length', String(body.byteLength));
    return new Response(body, { status: response.status, headers });
  }
  const zipped = await gzipped(body);
  headers.set('content-encoding', 'gzip');
  headers.set('content-length', String(zipped.byteLength));
  return new Response(new Uint8Array(zipped), { status: response.status, headers });
}

/** A tRPC call's path: one procedure or a batch of them, comma-separated. */
export const TRPC_PATH = /^\/api\/trpc\/[^/?#]+$/;

/** How many calls a request batches (`/api/trpc/a,b,c?batch=1`), 0 when it is not batched. */
export function batchSize(url: URL): number {
  if (url.searchParams.get('batch') !== '1') return 0;
  let procedures: string;
  try {
    procedures = decodeURIComponent(url.pathname.slice('/api/trpc/'.length));
  } catch {
    return 1;
  }
  return procedures.split(',').length;
}

/** What a tRPC call needs of the request it came with. */
export interface TrpcCall {
  /** The request as the fetch adapter reads it: its address (the host it came to), method, headers, and a POST's body. */
  request: Request;
  /** The Node request, to read a POST's body from. */
  req: IncomingMessage;
  cookies: ReadonlyMap<string, string>;
  requestId: string;
  /** Builds the tRPC context of the request (the session cookie read). */
  context: () => Promise<Context>;
  /** Reads the body up to `max` bytes (one more to tell it was over); null when there is none. */
  readBody: (req: IncomingMessage, max: number) => Promise<Buffer | null>;
}

/** trpcResponse answers a browser's tRPC request as app/api/trpc/[trpc]/route.ts does. */
export async function trpcResponse(call: TrpcCall): Promise<Response> {
  const { request } = call;
  const url = new URL(request.url);
  const locale = negotiateLocale(call.cookies.get(LOCALE_COOKIE), request.headers.get('accept-language'));
  let req = request;
  if (request.method === 'POST') {
    // Mutations: from the portal's own pages only (cross-site requests refused), bodies of at most 1 MiB.
    if (!originAllowed(request.headers, request.url, env().PORTAL_URL || undefined)) return refusal(locale, 403, 'error.crossOrigin', batchSize(url));
    const declared = Number(request.headers.get('content-length') ?? '');
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) return refusal(locale, 413, 'error.bodyTooLarge', batchSize(url));
    const body = await call.readBody(call.req, MAX_BODY_BYTES + 1);
    if (body && body.length > MAX_BODY_BYTES) return refusal(locale, 413, 'error.bodyTooLarge', batchSize(url));
    req = new Request(request.url, { method: 'POST', headers: request.headers, body: body ? new Uint8Array(body) : new Uint8Array(), signal: request.signal });
  }
  // Without PORTAL_URL (demo), links in mails written during the request follow the address it came to.
  const baseUrl = requestLinkBase(request.headers, url.protocol);
  return inRequestScope({ requestId: call.requestId, ...(baseUrl ? { baseUrl } : {}) }, () =>
    fetchRequestHandler({
      endpoint: '/api/trpc',
      req,
      router: appRouter,
      createContext: call.context,
      maxBatchSize: MAX_BATCH_SIZE,
      // A call refused by a rate limit says when to come back (server/services/rate-limits.ts).
      responseMeta: ({ errors }) => {
        const seconds = Math.max(0, ...errors.map((e) => (e.code === 'TOO_MANY_REQUESTS' && e.cause instanceof AppError ? Number(e.cause.params?.seconds ?? 0) : 0)));
        return seconds > 0 ? { headers: new Headers({ 'retry-after': String(seconds) }) } : {};
      },
    }),
  );
}
