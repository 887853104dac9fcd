// The REST API at `/api/v1` (issue #13): the tRPC procedures that declare `meta.openapi`, served by
// trpc-to-openapi for scripts and machines. Who calls is a personal API token only (no cookie is
// read: the tenant is the token's); every answer carries its request id and the token's rate-limit
// headers, and every refusal has one JSON shape, `{ error: { code, message, fields, requestId } }`.
// The route (app/api/v1/[...path]/route.ts) only wires this to the process's database.
import { downloadResponse, downloadTargetOf } from './files-http';
import { uploadResponse } from './uploads-http';
import { gatewayResponse } from './openai-gateway';
import type { Body } from '~/server/services/files/upload-receive';
import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { createOpenApiFetchHandler } from 'trpc-to-openapi';
import type { Db } from '~/db/client';
import type { ApiTokenAuth } from '~/server/core/rest/scopes';
import { apiTokenRule, clientAddress } from '~/server/core/rate-limits';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { AppError, DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '~/server/errors';
import { negotiateLocale, translate, type Locale } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import { inRequestScope, requestIdFrom } from '~/server/request-scope';
import { hit } from '~/server/services/rate-limits';
import { setRequestLimitHeaders } from './rate-headers';
import type { FairGate } from './fair-gate';
import { MAX_BODY_BYTES, readBody } from './http-guard';
import { IDEMPOTENT_POSTS, restDocument } from './rest-document';
import { appRouter, createCaller } from './root';
import { createContextInner, describeFieldErrors, type Context } from './trpc';

export const REST_PREFIX = '/api/v1';

/** The OpenAI-compatible gateway below the REST API (core/jobs/inference.ts GATEWAY_PATH). */
const GATEWAY_PREFIX = '/openai/v1';

/** What the REST API needs of its process; tests pass their own database, clock, scheduler and token check. */
export interface RestDeps {
  db: () => Promise<Db>;
  /** server/services/identity/api-tokens.ts authenticateToken: throws AppError('UNAUTHORIZED') for any token that may not call. */
  authenticate: (db: Db, authorization: string | null, options: { now: Date; address?: string }) => Promise<ApiTokenAuth>;
  /** The portal's own address (PORTAL_URL), for the document's server. */
  portalUrl: string | ((req: Request) => string);
  /** Requests a token may make per minute (API_RATE_LIMIT_PER_MINUTE). */
  perMinute: number;
  trustProxy?: boolean;
  now?: () => Date;
  scheduler?: SchedulerPort;
  gate?: FairGate;
}

/** The one error shape of the REST API. */
export interface RestError {
  error: { code: string; message: string; fields?: Record<string, string>; requestId: string };
}

interface Answer {
  requestId: string;
  headers: Headers;
}

function json(answer: Answer, status: number, body: unknown): Response {
  const headers = new Headers(answer.headers);
  headers.set('content-type', 'application/json; charset=utf-8');
  return new Response(JSON.stringify(body), { status, headers });
}

function refuse(answer: Answer, code: TRPCError['code'], message: string, fields?: Record<string, string>): Response {
  const body: RestError = { error: { code, message, fields, requestId: answer.requestId } };
  return json(answer, getHTTPStatusCodeFromError(new TRPCError({ code })), body);
}

/** retryAfterOf is the wait a rate-limit refusal names (server/services/rate-limits.ts `limit`), in seconds. */
function retryAfterOf(error: unknown): number | undefined {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (!(cause instanceof AppError)) return undefined;
  if (cause.code === 'TOO_MANY_REQUESTS') return Number(cause.params.seconds ?? 0) || undefined;
  // Busy or the database out of reach: a moment, as the message says.
  if (cause.code === 'SERVICE_UNAVAILABLE') return Number(cause.params.seconds ?? 0) || 1;
  return undefined;
}

/** The error shape trpc-to-openapi answers with: the portal's tRPC error shape (server/api/trpc.ts) plus the code's name. */
interface OpenApiErrorBody {
  code?: string;
  message?: string;
  data?: { fieldErrors?: Record<string, string>; reason?: string };
}

/**
 * asRestError rewrites trpc-to-openapi's error answer into the REST shape. Field errors are the tRPC
 * formatter's (localised, named by field); trpc-to-openapi replaces a validation error's message
 * with an English "Input validation failed", so the message is made from them again.
 */
async function asRestError(answer: Answer, response: Response, locale: Locale, noProcedure: { method: string; path: string } | null): Promise<Response> {
  const body = (await response.json().catch(() => ({}))) as OpenApiErrorBody;
  const fields = body.data?.fieldErrors;
  if (noProcedure) return refuse(answer, 'NOT_FOUND', translate(locale, 'api.unknownPath', noProcedure));
  const code = (body.code ?? 'INTERNAL_SERVER_ERROR') as TRPCError['code'];
  // A refusal with a name of its own (server/errors.ts ERROR_REASONS) answers with that name: `idempotency_key_reused`.
  const message = fields && !body.data?.reason ? describeFieldErrors(fields) : (body.message ?? translate(locale, 'common.unexpectedError'));
  const restBody: RestError = { error: { code: body.data?.reason ?? code, message, fields, requestId: answer.requestId } };
  return json(answer, response.status, restBody);
}

/** usageCsv answers `/usage.csv` with the very bytes of the usage page's download (report.csv, app/api/reports/usage.csv). */
async function usageCsv(answer: Answer, ctx: Context, url: URL): Promise<Response> {
  const q = url.searchParams;
  const period = q.get('month') ? { month: q.get('month')! } : q.get('quarter') ? { quarter: q.get('quarter')! } : { from: q.get('from') ?? '', to: q.get('to') ?? '' };
  const { csv, from, to } = await createCaller(ctx).report.csv({ period });
  const headers = new Headers(answer.headers);
  headers.set('content-type', 'text/csv; charset=utf-8');
  headers.set('content-disposition', `attachment; filename="usage-${from}-${to}.csv"`);
  return new Response(csv, { status: 200, headers });
}

/** errorOfCall renders an error thrown by a call made outside trpc-to-openapi (the CSV) in the REST shape. */
function errorOfCall(answer: Answer, error: unknown, locale: Locale): Response {
  if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
    const cause = error.cause;
    const fields = cause instanceof AppError && cause.field ? { [cause.field]: error.message } : undefined;
    return refuse(answer, error.code, error.message, fields);
  }
  logger().error({ err: error }, 'a REST call failed');
  return refuse(answer, 'INTERNAL_SERVER_ERROR', translate(locale, 'common.unexpectedError'));
}

/**
 * requestOf is the request trpc-to-openapi reads: the body read up to MAX_BODY_BYTES (null: larger),
 * JSON by default (an empty POST such as a cancel needs no header), and the Idempotency-Key header
 * as the submission's idempotencyKey — or a fresh one, so a submission without the header is simply
 * not deduplicated.
 */
async function requestOf(req: Request, path: string): Promise<Request | null | 'not-json'> {
  if (req.method === 'GET' || req.method === 'HEAD') return new Request(req.url, { method: req.method, headers: req.headers });
  const bytes = await readBody(req, MAX_BODY_BYTES);
  if (bytes === null) return null;
  const headers = new Headers(req.headers);
  let text = new TextDecoder().decode(bytes);
  if (!text.trim()) text = '{}';
  if (!headers.get('content-type')) headers.set('content-type', 'application/json');
  if (headers.get('content-type')?.startsWith('application/json')) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return 'not-json';
    }
    if (req.method === 'POST' && IDEMPOTENT_POSTS.has(path) && body && typeof body === 'object' && !Array.isArray(body)) {
      const key = req.headers.get('idempotency-key');
      text = JSON.stringify({ ...body, idempotencyKey: key ?? (body as { idempotencyKey?: unknown }).idempotencyKey ?? crypto.randomUUID() });
    }
  }
  headers.delete('content-length');
  return new Request(req.url, { method: req.method, headers, body: text });
}

/** `/projects/{projectId}/files/content`: a file or folder of a workspace (`?site=&path=`). */
const FILE_CONTENT = /^\/projects\/([^/]+)\/files\/content$/;

/** withAnswer adds the request id and rate-limit headers to a response made outside trpc-to-openapi. */
function withAnswer(answer: Answer, response: Response): Response {
  for (const [name, value] of answer.headers) if (!response.headers.has(name)) response.headers.set(name, value);
  return response;
}

/**
 * The REST API's request handler. `body` stands in for the request's own body where the portal's HTTP
 * server took the request before Next.js (an upload's PATCH: the Node request itself, server/api/transfers-http.ts).
 */
export type RestHandler = (req: Request, body?: Body | null) => Promise<Response>;

/** createRestHandler returns the REST API's request handler. */
export function createRestHandler(deps: RestDeps): RestHandler {
  const now = deps.now ?? (() => new Date());
  const rule = apiTokenRule(deps.perMinute);
  return (req, body = req.body) => {
    const requestId = requestIdFrom(req.headers.get('x-request-id'));
    return inRequestScope({ requestId }, () => answerRequest(req, body, requestId)).catch((error: unknown) => {
      // Before or beside the procedures (the token, the rate limit): the database out of reach is 503, not 500.
      if (!isDatabaseUnavailable(error)) throw error;
      logger().warn({ err: error, method: req.method, requestId }, 'database unavailable');
      const answer: Answer = { requestId, headers: new Headers({ 'x-request-id': requestId, 'cache-control': 'no-store', 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }) };
      const locale = negotiateLocale(undefined, req.headers.get('accept-language'));
      return refuse(answer, 'SERVICE_UNAVAILABLE', translate(locale, 'error.databaseUnavailable', { seconds: DATABASE_RETRY_AFTER_SECONDS }));
    });
  };

  async function answerRequest(req: Request, body: Body | null | undefined, requestId: string): Promise<Response> {
    // Language from Accept-Language only: the API reads no cookie.
    const locale = negotiateLocale(undefined, req.headers.get('accept-language'));
    const url = new URL(req.url);
    const path = url.pathname.slice(url.pathname.indexOf(REST_PREFIX) + REST_PREFIX.length).replace(/\/+$/, '') || '/';
    const answer: Answer = { requestId, headers: new Headers({ 'x-request-id': requestId, 'cache-control': 'no-store' }) };

    if (path === '/openapi.json' && req.method === 'GET') return json(answer, 200, restDocument(typeof deps.portalUrl === 'string' ? deps.portalUrl : deps.portalUrl(req)));

    const db = await deps.db();
    const at = now();
    const address = clientAddress(req.headers, deps.trustProxy ?? false);
    let token: ApiTokenAuth;
    try {
      token = await deps.authenticate(db, req.headers.get('authorization'), { now: at, address });
    } catch (error) {
      if (error instanceof AppError) return refuse(answer, error.code, translate(locale, error.key, error.params));
      throw error;
    }

    // The OpenAI-compatible gateway (issue #29) counts the request itself, beside the rest of its work
    // (server/api/openai-gateway.ts gatewayResponse); its answers and refusals are in OpenAI's shape.
    const gateway = path === GATEWAY_PREFIX || path.startsWith(`${GATEWAY_PREFIX}/`);
    if (!gateway) {
      // One count per request and token, shared by every process (the rate_limits table).
      const verdict = await hit(db, `apiToken:${token.id}`, rule, at);
      setRequestLimitHeaders(answer.headers, rule, verdict);
      if (!verdict.allowed) {
        answer.headers.set('retry-after', String(verdict.retryAfterSeconds));
        return refuse(answer, 'TOO_MANY_REQUESTS', translate(locale, 'api.rateLimited', { limit: rule.limit, seconds: verdict.retryAfterSeconds }));
      }
    }

    return inRequestScope({ requestId, token: { id: token.id, name: token.name } }, async () => {
      // The tenant and the person are the token's (server/api/trpc.ts checks its scopes).
      const ctx = createContextInner({
        db,
        userId: token.userId,
        activeOrgId: token.orgId ?? undefined,
        token,
        locale,
        now,
        limits: true,
        memo: {},
        ...(address ? { address } : {}),
        ...(deps.scheduler ? { scheduler: deps.scheduler } : {}),
        ...(deps.gate ? { gate: deps.gate } : {}),
      });

      if (path === '/usage.csv' && req.method === 'GET') {
        try {
          return await usageCsv(answer, ctx, url);
        } catch (error) {
          return errorOfCall(answer, error, locale);
        }
      }

      if (gateway) return withAnswer(answer, await gatewayResponse(ctx, req, path.slice(GATEWAY_PREFIX.length) || '/', new Headers(answer.headers), rule));

      // Files: resumable uploads (tus) and downloads (Range; a folder as a tar) stream, never read whole.
      if (path === '/uploads' || path.startsWith('/uploads/')) return withAnswer(answer, await uploadResponse(ctx, req, `${REST_PREFIX}/uploads`, body));
      const content = FILE_CONTENT.exec(path);
      if (content && (req.method === 'GET' || req.method === 'HEAD')) {
        const refuseFile = (_status: number, code: string, message: string, field?: string) => refuse(answer, code as TRPCError['code'], message, field ? { [field]: message } : undefined);
        return withAnswer(answer, await downloadResponse(ctx, req, downloadTargetOf(content[1]!, url), refuseFile));
      }

      const request = await requestOf(req, path);
      if (request === null) return refuse(answer, 'PAYLOAD_TOO_LARGE', translate(locale, 'error.bodyTooLarge'));
      if (request === 'not-json') return refuse(answer, 'BAD_REQUEST', translate(locale, 'api.bodyNotJson'));
      let failure: { error: TRPCError; matched: boolean } | undefined;
      const response = await createOpenApiFetchHandler({
        endpoint: REST_PREFIX,
        req: request,
        router: appRouter,
        createContext: () => Promise.resolve(ctx),
        onError: ({ error, path: procedurePath }) => {
          failure = { error, matched: procedurePath !== undefined };
          if (error.code === 'INTERNAL_SERVER_ERROR') logger().error({ err: error.cause ?? error, method: req.method, path }, 'a REST call failed');
        },
      });
      for (const [name, value] of answer.headers) response.headers.set(name, value);
      if (response.status < 400) return response;
      const retryAfter = retryAfterOf(failure?.error);
      if (retryAfter) answer.headers.set('retry-after', String(retryAfter));
      return asRestError(answer, response, locale, failure && !failure.matched ? { method: req.method, path } : null);
    });
  }
}
