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
// Still to come (issue #29, next steps, docs in server/services/inference/README.md): the centre's shared
// models; residency among replicas at several sites; metering of tokens into the ledger (reserve the
// worst case, settle `usage`, 402 on an exhausted budget); x-ratelimit-* per tokens; Prometheus figures.
import { rootsOf, schedulerOf, type Context } from '~/server/api/trpc';
import { logger } from '~/server/observability/log';
import { replicaOf, runningServices, type Replica } from '~/server/services/inference/replicas';
import { readBody } from './http-guard';

/** The paths below `/openai/v1` the gateway forwards (POST) — the ones the model servers answer. */
const FORWARDED = new Set(['/chat/completions', '/completions', '/embeddings']);

/** The largest request body the gateway takes (a long context or a batch of embedding inputs). */
export const MAX_GATEWAY_BODY_BYTES = 8 * 1024 * 1024;

/** How long a model server may take to answer with its headers before the next replica is tried. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Requests in flight per replica (job id), this process: the least busy replica gets the next one. */
const inFlight: Map<string, number> = ((globalThis as { __portalGatewayInFlight?: Map<string, number> }).__portalGatewayInFlight ??= new Map<string, number>());

type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'api_error';

/** openAiError is a refusal in OpenAI's shape. */
export function openAiError(status: number, message: string, type: ErrorType, code: string | null, param: string | null = null, headers?: Headers): Response {
  const all = new Headers(headers);
  all.set('content-type', 'application/json; charset=utf-8');
  return new Response(JSON.stringify({ error: { message, type, param, code } }), { status, headers: all });
}

/** gatewayResponse answers one request below `/openai/v1` (`path` is what follows it, e.g. `/chat/completions`). */
export async function gatewayResponse(ctx: Context, req: Request, path: string, headers: Headers): Promise<Response> {
  const token = ctx.token;
  const orgId = token?.orgId;
  if (!token || !orgId) return openAiError(403, 'This API token acts for no tenant: make a token of the tenant whose models it calls.', 'permission_error', 'no_tenant', null, headers);
  if (!token.scopes.includes('inference')) {
    return openAiError(403, 'This API token lacks the scope “inference”: make one with it (Account → API tokens) to call models.', 'permission_error', 'insufficient_scope', null, headers);
  }

  if (path === '/models' || path.startsWith('/models/')) {
    if (req.method !== 'GET') return openAiError(405, `${req.method} is not allowed here: use GET.`, 'invalid_request_error', 'method_not_allowed', null, headers);
    const services = await runningServices(ctx.db, orgId);
    const models = modelList(services);
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
  const model = typeof parsed === 'object' && parsed !== null ? (parsed as { model?: unknown }).model : undefined;
  if (typeof model !== 'string' || model === '') return openAiError(400, 'Give the model to call as "model" (GET /models lists yours).', 'invalid_request_error', 'missing_required_parameter', 'model', headers);

  const services = await runningServices(ctx.db, orgId, model);
  if (services.length === 0) return modelNotFound(model, headers);
  const deps = { roots: rootsOf(ctx), scheduler: await schedulerOf(ctx) };
  const replicas = (await Promise.all(services.map((s) => replicaOf(s, deps)))).filter((r): r is Replica => r !== null);
  if (replicas.length === 0) {
    headers.set('retry-after', '10');
    return openAiError(503, `The model ${model} is starting: its server does not answer yet. Try again in a few seconds.`, 'api_error', 'model_starting', null, headers);
  }
  // Least busy first (ties: the order the services started in).
  replicas.sort((a, b) => (inFlight.get(a.jobId) ?? 0) - (inFlight.get(b.jobId) ?? 0));
  const requestId = headers.get('x-request-id') ?? '';
  const started = performance.now();
  for (const replica of replicas) {
    const upstream = await forward(replica, path, body, requestId, req.signal);
    if (upstream === null) continue; // not reached before it answered: the next replica
    const answer = new Headers(headers);
    for (const name of ['content-type', 'cache-control']) {
      const value = upstream.response.headers.get(name);
      if (value) answer.set(name, value);
    }
    logger().info({ component: 'gateway', requestId, model, jobId: replica.jobId, site: replica.siteId, status: upstream.response.status, ms: Math.round(performance.now() - started) }, 'a model call was forwarded');
    return new Response(upstream.body, { status: upstream.response.status, headers: answer });
  }
  headers.set('retry-after', '5');
  return openAiError(503, `No server of the model ${model} answered. Try again in a few seconds.`, 'api_error', 'model_unavailable', null, headers);
}

/** forward sends the request to one replica; null when it could not be reached or failed before its headers. */
async function forward(replica: Replica, path: string, body: Uint8Array<ArrayBuffer>, requestId: string, signal: AbortSignal): Promise<{ response: Response; body: ReadableStream<Uint8Array> | null } | null> {
  const url = `http://${replica.address.includes(':') ? `[${replica.address}]` : replica.address}:${replica.port}/v1${path}`;
  inFlight.set(replica.jobId, (inFlight.get(replica.jobId) ?? 0) + 1);
  let counted = true;
  const done = () => {
    if (!counted) return;
    counted = false;
    const left = (inFlight.get(replica.jobId) ?? 1) - 1;
    if (left <= 0) inFlight.delete(replica.jobId);
    else inFlight.set(replica.jobId, left);
  };
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${replica.secret}`, 'content-type': 'application/json', ...(requestId ? { 'x-request-id': requestId } : {}) },
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]),
      redirect: 'manual',
    });
  } catch (error) {
    done();
    if (signal.aborted) throw error;
    logger().warn({ component: 'gateway', requestId, jobId: replica.jobId, site: replica.siteId, err: error }, 'a model server could not be reached; the next replica is tried');
    return null;
  }
  if (!response.body) {
    done();
    return { response, body: null };
  }
  // The body passes through as it comes (a stream's events at once); the replica counts as busy until it ended.
  const reader = response.body.getReader();
  const body2 = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: end, value } = await reader.read();
        if (end) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
  return { response, body: body2 };
}

interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** modelList is the models of the running services, each once (its first service's start as `created`). */
function modelList(services: readonly { model: string; startedAt: Date | null }[]): ModelObject[] {
  const seen = new Map<string, ModelObject>();
  for (const s of services) if (!seen.has(s.model)) seen.set(s.model, { id: s.model, object: 'model', created: Math.floor((s.startedAt?.getTime() ?? 0) / 1000), owned_by: 'organization-owner' });
  return [...seen.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function modelNotFound(model: string, headers: Headers): Response {
  return openAiError(404, `The model ${model} does not exist or you do not have access to it: GET /models lists the models this token may call.`, 'invalid_request_error', 'model_not_found', 'model', headers);
}

function json(value: unknown, headers: Headers): Response {
  const all = new Headers(headers);
  all.set('content-type', 'application/json; charset=utf-8');
  return new Response(JSON.stringify(value), { status: 200, headers: all });
}
