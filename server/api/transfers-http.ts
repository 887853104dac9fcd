// The byte-heavy file routes, answered before Next.js (issue #27): an upload's tus PATCH (the browser's
// `PATCH /api/uploads/<id>`, the REST API's `PATCH /api/v1/uploads/<id>`) and a file's download (the
// browser's `GET|HEAD /api/projects/<id>/files/download`, the REST API's `GET|HEAD
// /api/v1/projects/<id>/files/content`). Through a route handler every byte went from the Node request
// into a web stream and back (Next's request body, its piping of a Response body to the socket): an
// upload of 1 GiB ran at 0.39 of a local copy, a download at 0.37, and Next dropped the download's
// Content-Length (chunked, so no progress bar could tell how far along it was). Here the same code
// answers — the browser's person from the session cookie as next-auth reads it and the tRPC context as
// its route built it, the REST API's handler with its token check, rate limit and error shape, then
// uploads-http.ts and files-http.ts with their rules — but a PATCH's body is the Node request itself and
// a download's body goes to the socket chunk by chunk with its length. Every other request under those
// paths (a tus POST, HEAD, DELETE; the rest of the REST API) stays with Next's routes. The
// OpenAI-compatible gateway's calls (`/api/v1/openai/v1/…`, issue #29) come here too: a model's
// stream is piped to the socket as a Node stream, without Next's route or a web stream between
// (node-response.ts, bench:gateway). So do the browser's tRPC calls (`/api/trpc/…`, issue #30;
// trpc-http.ts): there Next's routing, proxy and session read were most of a call's CPU.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '~/db/client';
import { clientAddress } from '~/server/core/rate-limits';
import { env } from '~/server/env.js';
import { LOCALE_COOKIE, negotiateLocale } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import { observeRequest } from '~/server/observability/metrics';
import { inRequestScope, requestIdFrom } from '~/server/request-scope';
import { apiSecurityHeaders } from '~/server/security-headers';
import { portalSession } from '~/server/auth/session-cookie';
import { requestGate } from './context';
import { ORG_COOKIE } from './cookies';
import { downloadResponse, downloadTargetOf } from './files-http';
import { parseCookies } from './sessions-headers';
import { createContextInner, type Context } from './trpc';
import { MAX_GATEWAY_BODY_BYTES } from './openai-gateway';
import type { RestHandler } from './rest';
import { uploadResponse } from './uploads-http';
import { writeResponse } from './node-response';
import { compressedAnswer, trpcResponse, TRPC_PATH } from './trpc-http';

/** A browser upload's PATCH: `/api/uploads/<id>` (the id is `<site>.<uuid>`). */
const UPLOAD_PATH = /^\/api\/uploads\/[^/?#]+\/?$/;
/** A browser download: `/api/projects/<project id>/files/download?site=&path=`. */
const DOWNLOAD_PATH = /^\/api\/projects\/([^/?#]+)\/files\/download$/;
/** The REST API's: `/api/v1/uploads/<id>` and `/api/v1/projects/<project id>/files/content?site=&path=`. */
const REST_UPLOAD_PATH = /^\/api\/v1\/uploads\/[^/?#]+\/?$/;
const REST_DOWNLOAD_PATH = /^\/api\/v1\/projects\/[^/?#]+\/files\/content\/?$/;

/** The route names the metrics use for these requests (as the route handlers' instrumentRoute did). */
const UPLOAD_ROUTE = '/api/uploads';
const DOWNLOAD_ROUTE = '/api/projects/[projectId]/files/download';
const REST_ROUTE = '/api/v1';
const TRPC_ROUTE = '/api/trpc';

/** The OpenAI-compatible gateway's calls (server/api/openai-gateway.ts): a stream's events go to the socket as they come. */
const GATEWAY_PATH = /^\/api\/v1\/openai\/v1(\/|$)/;

type Route = { kind: 'upload' } | { kind: 'download'; projectId: string } | { kind: 'rest' } | { kind: 'gateway' } | { kind: 'trpc' };

/** routeOf tells whether a request is one of those this server answers itself, and which. */
export function routeOf(method: string | undefined, url: string | undefined): Route | null {
  if (!url || !method) return null;
  const path = url.split(/[?#]/, 1)[0]!;
  if (method === 'PATCH' && UPLOAD_PATH.test(path)) return { kind: 'upload' };
  if ((method === 'GET' || method === 'POST') && GATEWAY_PATH.test(path)) return { kind: 'gateway' };
  if ((method === 'GET' || method === 'POST') && TRPC_PATH.test(path)) return { kind: 'trpc' };
  if ((method === 'PATCH' && REST_UPLOAD_PATH.test(path)) || ((method === 'GET' || method === 'HEAD') && REST_DOWNLOAD_PATH.test(path))) return { kind: 'rest' };
  const download = DOWNLOAD_PATH.exec(path);
  if (download && (method === 'GET' || method === 'HEAD')) {
    try {
      return { kind: 'download', projectId: decodeURIComponent(download[1]!) };
    } catch {
      return null; // a malformed escape: Next's route answers it
    }
  }
  return null;
}

export interface TransferDeps {
  db: Db;
  /** next-auth's secret (its session cookie is decoded with it). */
  authSecret: string;
  trustProxy: boolean;
  https: boolean;
  /** The process's REST API handler (server/api/rest-handler.ts). */
  rest: RestHandler;
}

/** The handlers the portal's HTTP server calls (scripts/server.mjs, through server/transfers.ts). */
export interface Transfers {
  owns(method: string | undefined, url: string | undefined): boolean;
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
}

/** createTransfers answers the two routes on the process's database. */
export function createTransfers(deps: TransferDeps): Transfers {
  return {
    owns: (method, url) => routeOf(method, url) !== null,
    handleRequest(req, res) {
      const route = routeOf(req.method, req.url);
      if (!route) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const started = performance.now();
      const requestId = requestIdFrom(headerOf(req.headers, 'x-request-id'));
      void inRequestScope({ requestId }, () => answer(deps, route, req, res, requestId))
        .catch((error: unknown) => {
          logger().error({ err: error, method: req.method, url: req.url }, 'a request answered before Next failed');
          if (!res.headersSent) {
            res.statusCode = 500;
            res.end();
          } else res.destroy();
        })
        .finally(() => observeRequest(ROUTE_NAMES[route.kind], req.method ?? 'GET', res.statusCode, (performance.now() - started) / 1000));
    },
  };
}

/** The route names the metrics use (as the route handlers' instrumentRoute did). */
const ROUTE_NAMES: Record<Route['kind'], string> = { upload: UPLOAD_ROUTE, download: DOWNLOAD_ROUTE, rest: REST_ROUTE, gateway: REST_ROUTE, trpc: TRPC_ROUTE };

/** A Host header as HTTP allows it (a name or address, a port); anything else is not used to build the request's address. */
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

async function answer(deps: TransferDeps, route: Route, req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
  // The client going away (the socket closed before the answer was sent) aborts what reads or writes for it.
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const request = new Request(new URL(req.url!, 'http://portal.invalid'), { method: req.method, headers: headersOf(req.headers), signal: gone.signal });
  let response: Response;
  if (route.kind === 'trpc') {
    // The request's own address (the host it came to), as Next's route sees it: the Origin check compares with it.
    const host = headerOf(req.headers, 'host');
    const address = new URL(req.url!, `http://${host && HOST.test(host) ? host : 'localhost'}`);
    const cookies = parseCookies(req.headers.cookie);
    response = await trpcResponse({
      request: new Request(address, { method: req.method, headers: request.headers, signal: gone.signal }),
      req,
      cookies,
      requestId,
      context: () => browserContext(deps, request.headers, cookies),
      readBody: readUpTo,
    }).then((answer) => compressedAnswer(answer, request.headers.get('accept-encoding')));
    response.headers.set('x-request-id', requestId);
  } else if (route.kind === 'gateway') {
    // A model call's body is small JSON: read whole (to the gateway's limit, one byte more to tell it was over).
    const body = await readUpTo(req, MAX_GATEWAY_BODY_BYTES + 1);
    response = await deps.rest(new Request(request, body ? { body: new Uint8Array(body) } : {}));
  } else if (route.kind === 'rest') response = await deps.rest(request, req);
  else {
    const ctx = await browserContext(deps, request.headers, parseCookies(req.headers.cookie));
    response =
      route.kind === 'upload'
        ? await uploadResponse(ctx, request, UPLOAD_ROUTE, req)
        : await downloadResponse(ctx, request, downloadTargetOf(route.projectId, new URL(request.url)), (status, _code, message, field) =>
            new Response(`${field ? `${field}: ` : ''}${message}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } }),
          );
  }
  // The API's security headers (proxy.ts sets them on Next's answers) where the answer has none of its own.
  for (const [name, value] of Object.entries(apiSecurityHeaders({ https: deps.https }))) if (!response.headers.has(name)) response.headers.set(name, value);
  // A PATCH, or a tRPC call's POST, whose body was not read to its end (refused before the bytes, or
  // stopped): the rest is not waited for — the answer closes the connection rather than leave unread
  // bytes on it.
  if ((req.method === 'PATCH' || (route.kind === 'trpc' && req.method === 'POST')) && !req.readableEnded && !req.destroyed) response.headers.set('connection', 'close');
  await writeResponse(res, response, gone.signal, (error) => logger().warn({ err: error, method: req.method, url: req.url }, 'an answer’s body failed mid-way; the connection is closed'));
}

/** browserContext is the tRPC context of a browser's request, as createRequestContext builds it inside Next. */
async function browserContext(deps: TransferDeps, headers: Headers, cookies: ReadonlyMap<string, string>): Promise<Context> {
  const session = await portalSession(cookies, deps.authSecret);
  const address = clientAddress(headers, deps.trustProxy);
  return createContextInner({
    db: deps.db,
    userId: session?.userId ?? null,
    ...(session ? { sessionId: session.sessionId } : {}),
    locale: negotiateLocale(cookies.get(LOCALE_COOKIE), headers.get('accept-language')),
    ...(cookies.get(ORG_COOKIE) ? { activeOrgId: cookies.get(ORG_COOKIE) } : {}),
    gate: requestGate(),
    memo: {},
    limits: true,
    ...(address ? { address } : {}),
  });
}

/** readUpTo reads a request's body up to `max` bytes (more is dropped: the reader refuses it by its size); null when it has none. */
async function readUpTo(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size >= max) continue;
    chunks.push(chunk);
    size += chunk.length;
  }
  return size === 0 ? null : Buffer.concat(chunks).subarray(0, max);
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** headersOf turns Node's request headers into a Headers (a repeated header joined as HTTP joins it). */
function headersOf(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : value);
  }
  return headers;
}

/** The process's settings for the transfers. */
export function transferSettings(): Pick<TransferDeps, 'trustProxy' | 'https'> {
  const config = env();
  return { trustProxy: config.PORTAL_TRUST_PROXY, https: (config.PORTAL_URL ?? '').startsWith('https://') };
}
