// The OpenAI-compatible gateway (issue #29) at `/api/v1/openai/v1/…`, so the official `openai` clients
// work with `baseURL` set to it and a personal API token with the scope `inference` as the key. The REST
// handler (rest.ts) has checked the token, counted it against its rate limit and built the context;
// here every answer — refusals too — is in OpenAI's shape, `{"error": {"message", "type", "param",
// "code"}}`, so the clients raise their own error classes.
//
// The models a tenant may call are the models its running inference services serve (its replicas,
// services/inference/replicas.ts). A request goes to the least busy of the model's replicas; one whose
// server cannot be reached before it answered is left for the next (failover before the first byte).
// Neither the prompt nor the answer is stored or logged: the log has the request id, the model, the
// replica, the status and the time.
//
// Each call is measured as it passes (core/inference/usage-tap.ts): its `usage` — for a stream the
// gateway asks the server for it and keeps the extra chunk from a client that did not ask — the time to
// its first token and its tokens per second, per model and site in Prometheus.
//
// Each call is paid from the token's project (services/inference/metering.ts): its worst case is reserved
// before it is forwarded — refused with 402 and the figures when a budget, cap or limit would not hold it —
// and its real usage charged when the answer ends, before the client sees the end; a client that leaves
// mid-answer pays what it was sent.
//
// Limits: the REST API's requests a minute per token, and INFERENCE_TOKENS_PER_MINUTE (each call at its
// worst case), both in OpenAI's `x-ratelimit-*-requests` / `-tokens` headers; beyond them 429.
//
// Still to come (issue #29, next steps, docs in server/services/inference/README.md): the centre's shared models.
import { countChatTokens, countPromptTokens } from '~/bin/portal-model-server/tokens.mjs';
import { rootsOf, schedulerOf, type Context } from '~/server/api/trpc';
import { ENDPOINT_OF_PATH, worstCaseTokens, type TokenCounter } from '~/server/core/inference/metering';
import { SseTap, WholeTap, type TapResult } from '~/server/core/inference/usage-tap';
import { env } from '~/server/env.js';
import { AppError } from '~/server/errors';
import { translate, type MessageKey } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import { metrics } from '~/server/observability/metrics';
import { isHealthy, noteForward, watchReplicas } from '~/server/services/inference/health';
import { openModelCall, settleModelCall, type OpenCall } from '~/server/services/inference/metering';
import { hit } from '~/server/services/rate-limits';
import type { RateRule } from '~/server/core/rate-limits';
import { setRequestLimitHeaders } from './rate-headers';
import { replicaOf, residencyAllows, servicesForCall, strictestResidency, type CallerResidency, type Replica, type ServiceRow } from '~/server/services/inference/replicas';
import { configuredCatalogue } from '~/server/catalogue';
import type { Residency } from '~/db/schema';
import { readBody } from './http-guard';
import { responseOfStream } from './node-response';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';

/** The model servers' rule counts a request's input tokens (bin/portal-model-server/tokens.mjs), so the reservation and their `usage` agree. */
const COUNTER: TokenCounter = { chat: (messages) => countChatTokens(messages), prompt: (prompt) => countPromptTokens(prompt) };

/** The paths below `/openai/v1` the gateway forwards (POST) — the ones the model servers answer. */
const FORWARDED = new Set(['/chat/completions', '/completions', '/embeddings']);

/** The largest request body the gateway takes (a long context or a batch of embedding inputs). */
export const MAX_GATEWAY_BODY_BYTES = 8 * 1024 * 1024;

/** How long a model server may take to answer with its headers before the next replica is tried. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Requests in flight per replica (job id), this process: the least busy replica gets the next one. */
const inFlight: Map<string, number> = ((globalThis as { __portalGatewayInFlight?: Map<string, number> }).__portalGatewayInFlight ??= new Map<string, number>());

type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'insufficient_quota' | 'api_error';

/** openAiError is a refusal in OpenAI's shape. */
export function openAiError(status: number, message: string, type: ErrorType, code: string | null, param: string | null = null, headers?: Headers): Response {
  const all = new Headers(headers);
  all.set('content-type', 'application/json; charset=utf-8');
  return new Response(JSON.stringify({ error: { message, type, param, code } }), { status, headers: all });
}

/**
 * How long this process takes where a model is served for a tenant's project (its services, their
 * connection files) as fresh; until ROUTE_STALE_MS it is still used, while it is looked up again beside the call.
 */
const ROUTE_TTL_MS = 1000;
const ROUTE_STALE_MS = 5_000;
const ROUTES_MAX = 10_000;

type Route =
  | { kind: 'noProject' }
  | { kind: 'unknown' }
  | { kind: 'abroad'; residency: Residency }
  | { kind: 'served'; services: ServiceRow[]; replicas: readonly Replica[]; kept?: boolean };

/** Routes of the last second, per tenant, project and model: a busy model's calls read the database and the connection files once a second, not each. */
const routes: Map<string, { route: Route; at: number }> = ((globalThis as { __portalGatewayRoutes?: Map<string, { route: Route; at: number }> }).__portalGatewayRoutes ??= new Map<string, { route: Route; at: number }>());
/** Look-ups under way in the background, one per route. */
const refreshing = new Set<string>();

/**
 * routeOf decides where a project's calls of a model may go: its tenant's running services of the model (read
 * as the tenant), at sites the project's residency allows, whose servers wrote where they listen. A route
 * with replicas is kept (a replica that fails is dropped from it at once, and a kept route none of whose
 * replicas answers is looked up afresh): fresh for ROUTE_TTL_MS; older, up to ROUTE_STALE_MS, it still
 * serves the call while the next one's is looked up beside it, so no call waits for the look-up. One
 * without replicas is not kept.
 */
async function routeOf(ctx: Context, key: string, call: { orgId: string; projectId: string; model: string }): Promise<Route> {
  const kept = routes.get(key);
  const age = kept ? performance.now() - kept.at : Number.POSITIVE_INFINITY;
  if (kept && age < ROUTE_STALE_MS) {
    if (age >= ROUTE_TTL_MS && !refreshing.has(key)) {
      refreshing.add(key);
      lookUpRoute(ctx, key, call)
        .catch((error: unknown) => {
          routes.delete(key);
          logger().warn({ component: 'gateway', err: error }, 'a model’s route could not be looked up again; the next call looks it up');
        })
        .finally(() => refreshing.delete(key));
    }
    return kept.route.kind === 'served' ? { ...kept.route, kept: true } : kept.route;
  }
  return lookUpRoute(ctx, key, call);
}

/** lookUpRoute reads a route afresh and keeps it when it has replicas (else forgets the one kept). */
async function lookUpRoute(ctx: Context, key: string, call: { orgId: string; projectId: string; model: string }): Promise<Route> {
  const route = await readRoute(ctx, call);
  if (route.kind === 'served' && route.replicas.length > 0) {
    if (routes.size >= ROUTES_MAX) routes.clear();
    routes.set(key, { route, at: performance.now() });
  } else routes.delete(key);
  return route;
}

async function readRoute(ctx: Context, call: { orgId: string; projectId: string; model: string }): Promise<Route> {
  const { services: all, residency } = await servicesForCall(ctx.db, call.orgId, call.projectId, call.model);
  if (!residency) return { kind: 'noProject' };
  if (all.length === 0) return { kind: 'unknown' };
  // Residency: only replicas at sites the project's rule allows; none there is a refusal that names the rule, never a call served abroad.
  const services = all.filter((s) => siteAllowed(residency, s.siteId));
  if (services.length === 0) return { kind: 'abroad', residency: strictestResidency(residency) };
  const deps = { roots: rootsOf(ctx), scheduler: await schedulerOf(ctx) };
  const replicas = (await Promise.all(services.map((s) => replicaOf(s, deps)))).filter((r): r is Replica => r !== null);
  return { kind: 'served', services, replicas };
}

/** routeRefusal answers a call whose route serves nothing: its project is gone, nobody runs the model, or only abroad. */
function routeRefusal(route: Exclude<Route, { kind: 'served' }>, model: string, headers: Headers): Response {
  if (route.kind === 'noProject') return openAiError(403, 'The project this API token pays from is not one of its tenant’s: make a new token.', 'permission_error', 'no_project', null, headers);
  if (route.kind === 'unknown') return modelNotFound(model, headers);
  return residencyRefusal(model, route.residency, headers);
}

/** openAiRateHeaders repeats the REST API's request limit (x-ratelimit-limit, -remaining, -reset) under OpenAI's names. */
function openAiRateHeaders(headers: Headers): void {
  const limit = headers.get('x-ratelimit-limit');
  if (limit === null) return;
  headers.set('x-ratelimit-limit-requests', limit);
  headers.set('x-ratelimit-remaining-requests', headers.get('x-ratelimit-remaining') ?? '0');
  headers.set('x-ratelimit-reset-requests', `${headers.get('x-ratelimit-reset') ?? '0'}s`);
}

/** A token's requests a minute, counted for this request: the rule and the count's verdict, once the statement answered. */
type RequestsCount = Promise<{ allowed: boolean; hits: number; retryAfterSeconds: number; rule: RateRule }>;

/**
 * gatewayResponse answers one request below `/openai/v1` (`path` is what follows it, e.g. `/chat/completions`),
 * always in OpenAI's shape: a database too busy to decide is 503 with retry-after, any other failure a 500
 * logged with the request id (never the prompt). The request is counted against the token's requests a
 * minute (`requestRule`, the REST API's) beside the rest of the work; beyond it, 429 and nothing forwarded.
 */
export async function gatewayResponse(ctx: Context, req: Request, path: string, headers: Headers, requestRule: RateRule): Promise<Response> {
  const token = ctx.token;
  const counted = token ? hit(ctx.db, `apiToken:${token.id}`, requestRule, ctx.now()) : Promise.resolve({ allowed: true, hits: 0, retryAfterSeconds: 0 });
  const requests: RequestsCount = counted.then((verdict) => {
    if (token) {
      setRequestLimitHeaders(headers, requestRule, verdict);
      openAiRateHeaders(headers);
    }
    return { ...verdict, rule: requestRule };
  });
  requests.catch(() => undefined); // awaited below; a failure is the request's
  try {
    const response = await answerRequest(ctx, req, path, headers, requests);
    const verdict = await requests;
    if (!verdict.allowed && response.status !== 429) {
      await response.body?.cancel().catch(() => undefined);
      return requestsRefusal(requestRule, verdict, headers);
    }
    for (const name of RATE_HEADERS) {
      const value = headers.get(name);
      if (value !== null && !response.headers.has(name)) response.headers.set(name, value);
    }
    return response;
  } catch (error) {
    if (req.signal.aborted) throw error;
    if (error instanceof AppError && error.code === 'SERVICE_UNAVAILABLE') {
      headers.set('retry-after', '1');
      return openAiError(503, translate('en', error.key, error.params), 'api_error', 'server_busy', null, headers);
    }
    const requestId = headers.get('x-request-id') ?? '';
    logger().error({ component: 'gateway', requestId, path, err: error }, 'a model call failed in the gateway');
    return openAiError(500, `The gateway failed on this request; it was logged with the request id ${requestId}.`, 'api_error', 'internal_error', null, headers);
  }
}

/** The rate-limit headers every answer carries (the REST API's names and OpenAI's). */
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'];

/** requestsRefusal is the 429 of a token past its requests a minute, in OpenAI's shape. */
function requestsRefusal(rule: RateRule, verdict: { retryAfterSeconds: number }, headers: Headers): Response {
  headers.set('retry-after', String(verdict.retryAfterSeconds));
  return openAiError(429, `Rate limit reached for requests: this token may make ${rule.limit} requests a minute; try again in ${verdict.retryAfterSeconds} s.`, 'rate_limit_error', 'rate_limit_exceeded', null, headers);
}

async function answerRequest(ctx: Context, req: Request, path: string, headers: Headers, requests: RequestsCount): Promise<Response> {
  const token = ctx.token;
  const orgId = token?.orgId;
  if (!token || !orgId) return openAiError(403, 'This API token acts for no tenant: make a token of the tenant whose models it calls.', 'permission_error', 'no_tenant', null, headers);
  if (!token.scopes.includes('inference')) {
    return openAiError(403, 'This API token lacks the scope “inference”: make one with it (Account → API tokens) to call models.', 'permission_error', 'insufficient_scope', null, headers);
  }

  if (!token.projectId) {
    return openAiError(403, 'This API token names no project to pay for its calls: make a token with the scope “inference” and a project (Account → API tokens).', 'permission_error', 'no_project', null, headers);
  }
  const projectId = token.projectId;

  if (path === '/models' || path.startsWith('/models/')) {
    if (req.method !== 'GET') return openAiError(405, `${req.method} is not allowed here: use GET.`, 'invalid_request_error', 'method_not_allowed', null, headers);
    // The models this token may call: the tenant's running services at sites its project's residency allows.
    const { services, residency } = await servicesForCall(ctx.db, orgId, projectId);
    const models = modelList(residency ? services.filter((s) => siteAllowed(residency, s.siteId)) : []);
    if (path === '/models') return json({ object: 'list', data: models }, headers);
    let id: string;
    try {
      id = decodeURIComponent(path.slice('/models/'.length));
    } catch {
      id = '';
    }
    const model = models.find((m) => m.id === id);
    return model ? json(model, headers) : modelNotFound(id, headers);
  }

  if (!FORWARDED.has(path)) return openAiError(404, `Unknown path ${path}: the gateway answers /models, /chat/completions, /completions and /embeddings.`, 'invalid_request_error', 'unknown_url', null, headers);
  if (req.method !== 'POST') return openAiError(405, `${req.method} is not allowed here: use POST.`, 'invalid_request_error', 'method_not_allowed', null, headers);
  const body = await readBody(req, MAX_GATEWAY_BODY_BYTES);
  if (body === null) return openAiError(413, `The request body is larger than ${MAX_GATEWAY_BODY_BYTES / 1024 / 1024} MiB.`, 'invalid_request_error', 'request_too_large', null, headers);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return openAiError(400, 'The request body is not valid JSON.', 'invalid_request_error', 'invalid_json', null, headers);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return openAiError(400, 'The request body must be a JSON object.', 'invalid_request_error', 'invalid_json', null, headers);
  const model = (parsed as { model?: unknown }).model;
  if (typeof model !== 'string' || model === '') return openAiError(400, 'Give the model to call as "model" (GET /models lists yours).', 'invalid_request_error', 'missing_required_parameter', 'model', headers);
  // A stream's tokens are known from its last chunk's `usage`, which a server sends only when asked: the
  // gateway asks for it on the client's behalf and takes that chunk out of what the client did not ask for.
  const request = parsed as { stream?: unknown; stream_options?: { include_usage?: unknown } | null };
  const streamed = request.stream === true;
  const hideUsage = streamed && request.stream_options?.include_usage !== true;
  const upstreamBody = hideUsage ? new TextEncoder().encode(JSON.stringify({ ...request, stream_options: { ...(request.stream_options ?? {}), include_usage: true } })) : body;

  const routeKey = `${orgId}\n${projectId}\n${model}`;
  const route = await routeOf(ctx, routeKey, { orgId, projectId, model });
  if (route.kind !== 'served') return routeRefusal(route, model, headers);
  const { services } = route;
  const replicas = [...route.replicas];
  if (replicas.length === 0) {
    headers.set('retry-after', '10');
    return openAiError(503, `The model ${model} is starting: its server does not answer yet. Try again in a few seconds.`, 'api_error', 'model_starting', null, headers);
  }
  // Healthy first (active health checks), then the least busy (ties: the order the services started in).
  watchReplicas(replicas);
  replicas.sort((a, b) => Number(isHealthy(b.jobId)) - Number(isHealthy(a.jobId)) || (inFlight.get(a.jobId) ?? 0) - (inFlight.get(b.jobId) ?? 0));
  const requestId = headers.get('x-request-id') ?? '';
  const endpoint = ENDPOINT_OF_PATH[path]!;
  const worst = worstCaseTokens(endpoint, parsed as Record<string, unknown>, COUNTER);
  const classOf = new Map(services.map((s) => [s.jobId, s.resourceClassId]));
  const started = performance.now();
  // The call's admission — its tokens a minute, then its reservation — and its forward go at once: the
  // model's first token takes longer than both, so the client waits for neither alone. No byte of the
  // answer passes before the call is admitted; a refused call's forward is cancelled.
  const opened = admit(ctx, headers, requests, {
    orgId,
    userId: token.userId,
    tokenId: token.id,
    projectId,
    requestId,
    model,
    endpoint,
    worst,
    resourceClassId: classOf.get(replicas[0]!.jobId) ?? null,
    shared: services.some((s) => s.shared === true),
    now: ctx.now(),
  });
  const refusal = (failed: { response: Response } | { error: unknown }): Response => {
    if ('response' in failed) {
      refusedNow(projectId);
      return failed.response;
    }
    if (!(failed.error instanceof AppError)) throw failed.error;
    refusedNow(projectId);
    return budgetRefusal(failed.error, headers);
  };
  /** closeWith settles the call, once reserved, as ended without an answer. */
  const closeWith = (outcome: Omit<Parameters<typeof settleModelCall>[2], 'now'>) => void opened.then((o) => (o.ok ? settle(ctx, o.call, outcome) : undefined));
  // Past the token's requests a minute nothing is forwarded (its count went out when the request came in);
  // a project refused a moment ago is admitted before it is forwarded.
  if (!(await requests).allowed || refusedLately(projectId)) {
    const first = await opened;
    if (!first.ok) return refusal(first);
  }
  const refused = new AbortController();
  void opened.then((o) => (o.ok ? undefined : refused.abort()));
  const signal = AbortSignal.any([req.signal, refused.signal]);
  // A route kept from an earlier call may name replicas that ended since: when none of them answers, the
  // route is looked up afresh once and its replicas not yet tried are tried.
  const tried = new Set<string>();
  let fresh = !route.kept;
  for (let queue = replicas; ; ) {
    for (const replica of queue) {
      tried.add(replica.jobId);
      let upstream: Upstream | null;
      try {
        upstream = await forward(replica, path, upstreamBody, requestId, signal);
      } catch (error) {
        const o = await opened;
        if (!o.ok && !req.signal.aborted) return refusal(o);
        // The client left before any answer: nothing was used.
        closeWith({ promptTokens: 0, completionTokens: 0, httpStatus: 499, aborted: true, replica: null });
        throw error;
      }
      noteForward(replica.jobId, upstream !== null);
      if (upstream === null) {
        routes.delete(routeKey); // looked up afresh next time
        metrics().gatewayErrors.inc({ model, site: replica.siteId, kind: 'unreachable' });
        continue; // not reached before it answered: the next replica
      }
      const o = await opened;
      if (!o.ok) {
        upstream.release();
        upstream.body.destroy();
        return refusal(o);
      }
      const call = o.call;
      const answer = new Headers(headers);
      for (const name of ['content-type', 'cache-control']) {
        const value = upstream.headers[name];
        if (typeof value === 'string') answer.set(name, value);
      }
      const isStream = (upstream.headers['content-type'] ?? '').startsWith('text/event-stream');
      // Events go as they come: no proxy may hold or compress them.
      if (isStream) {
        answer.set('cache-control', 'no-cache, no-transform');
        answer.set('x-accel-buffering', 'no');
      }
      const metered = meter(upstream.body, {
        stream: isStream,
        hideUsage: hideUsage && isStream,
        release: upstream.release,
        onEnd: (tapped, ended) => {
          recordCall({ requestId, model, replica, status: upstream.status, tapped, started, ended });
          // What the answer used: its usage; cut short, its input (counted by the servers' rule) and the tokens sent.
          const ok = upstream.status < 400;
          const promptTokens = ok ? (tapped.promptTokens ?? worst.prompt) : 0;
          const completionTokens = ok ? (tapped.completionTokens ?? tapped.streamedPieces) : 0;
          return settle(ctx, call, { promptTokens, completionTokens, httpStatus: upstream.status, aborted: tapped.aborted, replica: { jobId: replica.jobId, siteId: replica.siteId } });
        },
      });
      return responseOfStream(metered, { status: upstream.status, headers: answer });
    }
    if (fresh) break;
    fresh = true;
    routes.delete(routeKey);
    const again = await routeOf(ctx, routeKey, { orgId, projectId, model });
    if (again.kind !== 'served') {
      closeWith({ promptTokens: 0, completionTokens: 0, httpStatus: 404, aborted: false, replica: null });
      return routeRefusal(again, model, headers);
    }
    queue = again.replicas.filter((r) => !tried.has(r.jobId));
    if (queue.length === 0) break;
  }
  closeWith({ promptTokens: 0, completionTokens: 0, httpStatus: 503, aborted: false, replica: null });
  headers.set('retry-after', '5');
  return openAiError(503, `No server of the model ${model} answered. Try again in a few seconds.`, 'api_error', 'model_unavailable', null, headers);
}

/**
 * admit counts a call's tokens against its API token's tokens a minute (OpenAI's x-ratelimit-*-tokens
 * headers; each call at its worst case, as OpenAI counts them) and, within them, reserves its worst case
 * (openModelCall). Never rejects: the call, a refusal to send (429), or the reservation's error.
 */
async function admit(ctx: Context, headers: Headers, requests: RequestsCount, input: Parameters<typeof openModelCall>[1]): Promise<{ ok: true; call: OpenCall } | { ok: false; response: Response } | { ok: false; error: unknown }> {
  try {
    const rule = { limit: env().INFERENCE_TOKENS_PER_MINUTE, windowMs: 60_000 };
    // Both counts go out at once (the request's is on its way since the request came in).
    const [counted, verdict] = await Promise.all([requests, hit(ctx.db, `inferenceTokens:${input.tokenId}`, rule, input.now, input.worst.prompt + input.worst.completion)]);
    if (!counted.allowed) return { ok: false, response: requestsRefusal(counted.rule, counted, headers) };
    headers.set('x-ratelimit-limit-tokens', String(rule.limit));
    headers.set('x-ratelimit-remaining-tokens', String(Math.max(0, rule.limit - verdict.hits)));
    headers.set('x-ratelimit-reset-tokens', `${verdict.retryAfterSeconds}s`);
    if (!verdict.allowed) {
      headers.set('retry-after', String(verdict.retryAfterSeconds));
      const message = `Rate limit reached for tokens: this token may send ${rule.limit} tokens a minute (a call counts its input and max_tokens); try again in ${verdict.retryAfterSeconds} s.`;
      return { ok: false, response: openAiError(429, message, 'rate_limit_error', 'rate_limit_exceeded', null, headers) };
    }
    return { ok: true, call: await openModelCall(ctx.db, input) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** How long after a refusal a project's calls reserve before they are forwarded (no model works for a project out of budget). */
const REFUSED_FOR_MS = 10_000;
const refusedAt = new Map<string, number>();

function refusedNow(projectId: string): void {
  if (refusedAt.size >= ROUTES_MAX) refusedAt.clear();
  refusedAt.set(projectId, performance.now());
}

function refusedLately(projectId: string): boolean {
  const at = refusedAt.get(projectId);
  if (at === undefined) return false;
  if (performance.now() - at < REFUSED_FOR_MS) return true;
  refusedAt.delete(projectId);
  return false;
}

/** What a replica answered: its status and headers, its body (the Node stream of the model server's socket), and `release` (the replica is no longer busy). */
interface Upstream {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
  release: () => void;
}

/** Connections to the model servers, kept open between calls (as fetch's pool did). */
const upstreamAgent: http.Agent = ((globalThis as { __portalGatewayAgent?: http.Agent }).__portalGatewayAgent ??= new http.Agent({ keepAlive: true, keepAliveMsecs: 30_000 }));

/**
 * forward sends the request to one replica; null when it could not be reached or failed before its
 * headers (CONNECT_TIMEOUT_MS). Node's http client, not fetch: the answer stays a Node stream (node-response.ts).
 */
function forward(replica: Replica, path: string, body: Uint8Array<ArrayBuffer>, requestId: string, signal: AbortSignal): Promise<Upstream | null> {
  inFlight.set(replica.jobId, (inFlight.get(replica.jobId) ?? 0) + 1);
  let counted = true;
  const release = () => {
    if (!counted) return;
    counted = false;
    const left = (inFlight.get(replica.jobId) ?? 1) - 1;
    if (left <= 0) inFlight.delete(replica.jobId);
    else inFlight.set(replica.jobId, left);
  };
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      release();
      reject(signal.reason instanceof Error ? signal.reason : new Error('the call was aborted before it was forwarded'));
      return;
    }
    const request = http.request({
      host: replica.address,
      port: replica.port,
      path: `/v1${path}`,
      method: 'POST',
      agent: upstreamAgent,
      headers: { authorization: `Bearer ${replica.secret}`, 'content-type': 'application/json', 'content-length': String(body.byteLength), ...(requestId ? { 'x-request-id': requestId } : {}) },
      signal,
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    let answered = false;
    request.once('response', (response) => {
      answered = true;
      clearTimeout(timer);
      resolve({ status: response.statusCode ?? 502, headers: response.headers, body: response, release });
    });
    request.on('error', (error) => {
      clearTimeout(timer);
      // After the headers, a failure is the answer's (its body errs); before them, the next replica is tried.
      if (answered) return;
      release();
      if (signal.aborted) reject(error);
      else {
        logger().warn({ component: 'gateway', requestId, jobId: replica.jobId, site: replica.siteId, err: error }, 'a model server could not be reached; the next replica is tried');
        resolve(null);
      }
    });
    request.end(body);
  });
}

/**
 * meter passes an answer's body through as it comes (a stream's events at once, as the bytes came),
 * reading its usage on the way (core/inference/usage-tap.ts); `onEnd` gets what was read when the body
 * ended — before the client sees the end —, failed or the client went away (`aborted`), and the replica is
 * released then. A Node stream: no promise per event (node-response.ts says why).
 */
function meter(
  body: IncomingMessage,
  o: { stream: boolean; hideUsage: boolean; release: () => void; onEnd: (tapped: TapResult & { aborted: boolean }, ended: number) => Promise<void> },
): Readable {
  const sse = o.stream ? new SseTap(o.hideUsage) : null;
  const whole = o.stream ? null : new WholeTap();
  let finished: Promise<void> | null = null;
  const finish = (aborted: boolean): Promise<void> => {
    if (finished) return finished;
    o.release();
    const at = performance.now();
    if (whole) whole.end();
    finished = o.onEnd({ ...(sse ?? whole)!.result, aborted }, at);
    return finished;
  };
  const metered = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const now = performance.now();
      if (whole) {
        whole.feed(chunk, now);
        done(null, chunk);
        return;
      }
      for (const piece of sse!.feed(chunk, now)) this.push(piece);
      done();
    },
    flush(done) {
      if (sse) for (const piece of sse.end(performance.now())) this.push(piece);
      // The call is settled before the client sees its end: what it cost is in the ledger when the answer is.
      finish(false).then(() => done(), done);
    },
  });
  // The model server's answer cut short (it died, its connection broke): the client's is cut too.
  body.on('error', (error) => metered.destroy(error));
  // Its failure is seen by whoever reads it (node-response.ts: the connection is closed), never thrown.
  metered.on('error', () => undefined);
  const cutShort = () => {
    if (!body.complete) metered.destroy(new Error('the model server’s answer ended before its end'));
  };
  body.once('close', cutShort);
  // It may have broken already, while the call was being admitted.
  if (body.destroyed) cutShort();
  // Ended before its end (the client went away, or the above): charged what was sent; the model server's answer is dropped.
  metered.once('close', () => {
    if (!finished) void finish(true);
    if (!body.complete) body.destroy();
  });
  body.pipe(metered);
  return metered;
}

/** settle settles a call in the ledger; a failure is logged (the worker releases a call left open), never thrown at the client. */
async function settle(ctx: Context, call: OpenCall, outcome: Omit<Parameters<typeof settleModelCall>[2], 'now'>): Promise<void> {
  try {
    await settleModelCall(ctx.db, call, { ...outcome, now: ctx.now() });
  } catch (error) {
    logger().error({ component: 'gateway', callId: call.id, err: error }, 'a model call could not be settled; the worker releases it later');
  }
}

/** The OpenAI code of each refusal the metering gives. */
const REFUSAL_CODES: Partial<Record<MessageKey, string>> = {
  'ledger.insufficientCents': 'budget_exhausted',
  'ledger.insufficientGpu': 'budget_exhausted',
  'ledger.monthlyCap': 'monthly_cap_reached',
  'ledger.allocationNotActive': 'no_budget',
  'ledger.outsidePeriod': 'no_budget',
  'inference.noAllocation': 'no_budget',
  'inference.invoicesOverdue': 'invoices_overdue',
};

/**
 * budgetRefusal answers a call its project cannot pay for: 402 with the refusal's figures in OpenAI's shape
 * (`insufficient_quota`), a company budget's code named after it; a tenant not active is 403.
 */
function budgetRefusal(error: AppError, headers: Headers): Response {
  const message = translate('en', error.key, error.params);
  if (error.code === 'FORBIDDEN') return openAiError(403, message, 'permission_error', 'tenant_not_active', null, headers);
  if (error.code === 'NOT_FOUND') return openAiError(404, message, 'invalid_request_error', 'model_not_found', 'model', headers);
  if (error.code !== 'PRECONDITION_FAILED' && error.code !== 'BAD_REQUEST') throw error;
  const code = REFUSAL_CODES[error.key] ?? error.key.replace(/^.*\./, '').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return openAiError(402, message, 'insufficient_quota', code, null, headers);
}

/** recordCall counts one forwarded call in the metrics and logs it (never the prompt or the answer). */
function recordCall(c: { requestId: string; model: string; replica: Replica; status: number; tapped: TapResult & { aborted: boolean }; started: number; ended: number }): void {
  const labels = { model: c.model, site: c.replica.siteId };
  const m = metrics();
  m.gatewayRequests.inc({ ...labels, status: String(c.status) });
  if (c.tapped.promptTokens !== null) m.gatewayTokens.inc({ ...labels, direction: 'prompt' }, c.tapped.promptTokens);
  // Cut short: what was streamed (one piece a token, as the model servers send them).
  const completion = c.tapped.completionTokens ?? c.tapped.streamedPieces;
  if (completion > 0) m.gatewayTokens.inc({ ...labels, direction: 'completion' }, completion);
  if (c.tapped.firstTokenAt !== null) {
    m.gatewayFirstToken.observe(labels, (c.tapped.firstTokenAt - c.started) / 1000);
    const seconds = (c.ended - c.tapped.firstTokenAt) / 1000;
    if (completion > 1 && seconds > 0) m.gatewayTokensPerSecond.observe(labels, completion / seconds);
  }
  if (c.status >= 500) m.gatewayErrors.inc({ ...labels, kind: 'server_error' });
  if (c.tapped.aborted) m.gatewayErrors.inc({ ...labels, kind: 'aborted' });
  logger().info(
    {
      component: 'gateway',
      requestId: c.requestId,
      model: c.model,
      jobId: c.replica.jobId,
      site: c.replica.siteId,
      status: c.status,
      promptTokens: c.tapped.promptTokens,
      completionTokens: completion,
      aborted: c.tapped.aborted,
      firstTokenMs: c.tapped.firstTokenAt === null ? null : Math.round(c.tapped.firstTokenAt - c.started),
      ms: Math.round(c.ended - c.started),
    },
    'a model call was forwarded',
  );
}

interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** modelList is the models of the running services, each once (its first service's start as `created`). */
function modelList(services: readonly { model: string; startedAt: Date | null; shared?: boolean }[]): ModelObject[] {
  const seen = new Map<string, ModelObject>();
  for (const s of services) if (!seen.has(s.model)) seen.set(s.model, { id: s.model, object: 'model', created: Math.floor((s.startedAt?.getTime() ?? 0) / 1000), owned_by: s.shared ? 'centre' : 'organization-owner' });
  return [...seen.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** siteAllowed tells whether a replica at a catalogue site may serve a project with this residency (an unknown site: no). */
function siteAllowed(residency: CallerResidency, siteId: string): boolean {
  const site = configuredCatalogue().sites.find((s) => s.id === siteId);
  return site !== undefined && residencyAllows(residency, site);
}

const RESIDENCY_WORDS: Record<Residency, string> = { DE: 'in Germany (residency DE)', EU: 'in the EU (residency EU)', any: 'anywhere' };

/** residencyRefusal: the model runs, but at no site the caller's project allows. */
function residencyRefusal(model: string, residency: Residency, headers: Headers): Response {
  return openAiError(
    403,
    `The model ${model} has no replica ${RESIDENCY_WORDS[residency]}, where this token’s project keeps its data; it is not served elsewhere. Start the model at a site there, or call it with a token of a project without that rule.`,
    'permission_error',
    'residency_unavailable',
    'model',
    headers,
  );
}

function modelNotFound(model: string, headers: Headers): Response {
  return openAiError(404, `The model ${model} does not exist or you do not have access to it: GET /models lists the models this token may call.`, 'invalid_request_error', 'model_not_found', 'model', headers);
}

function json(value: unknown, headers: Headers): Response {
  const all = new Headers(headers);
  all.set('content-type', 'application/json; charset=utf-8');
  return new Response(JSON.stringify(value), { status: 200, headers: all });
}
