// The portal's REST API (/api/v1) over Node's fetch: bearer token, JSON in and out, the API's one
// error shape {error:{code,message,fields,requestId}} turned into ApiError, and retries that are
// safe because every request the CLI sends is a read, a pure computation (estimate), naturally
// idempotent (cancel) or carries an Idempotency-Key (submit). The workspace's changes are not quite:
// a deletion, a new folder or a move retried after a lost answer is told 404 or 409 — `files rm`
// takes its 404 as done; `mkdir` and `mv` report it. Downloads stream (`open`); uploads speak tus
// (files.mjs).
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as delay } from 'node:timers/promises';

export const USER_AGENT = 'portal-cli/0.1';

/** ApiError is an answer of the portal's API with status ≥ 400, in its error shape. */
export class ApiError extends Error {
  name = 'ApiError';
  constructor(status, { code, message, fields, requestId }, url, retryAfterSeconds) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code ?? `HTTP_${status}`;
    /** @type {Record<string, string> | undefined} */
    this.fields = fields ?? undefined;
    this.requestId = requestId ?? undefined;
    this.url = url;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** NetworkError: no answer at all (refused, DNS, timeout); it names the URL tried. */
export class NetworkError extends Error {
  name = 'NetworkError';
  constructor(url, cause) {
    const reason = cause?.name === 'TimeoutError' ? 'timed out' : (cause?.cause?.code ?? cause?.code ?? cause?.cause?.message ?? cause?.message ?? String(cause));
    super(`cannot reach ${url}: ${reason}`);
    this.url = url;
  }
}

/** NotTheApiError: something answered, but not the portal's API (an HTML page, a proxy's error): usually a wrong --url. */
export class NotTheApiError extends Error {
  name = 'NotTheApiError';
  constructor(url, status, contentType) {
    super(`${url} answered HTTP ${status} (${contentType || 'no content type'}), not the portal's API: is the portal's address right? (set it with \`portal-cli login --url …\` or PORTAL_URL)`);
    this.url = url;
    this.status = status;
  }
}

/** apiBase turns the portal's address (as a user writes it) into the API's base URL, or null if it is not an http(s) URL. */
export function apiBase(portalUrl) {
  let url;
  try {
    url = new URL(portalUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${url.origin}${path}/api/v1`;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);

/**
 * createClient makes the API client. `fetch` and `sleep` come in as values so the tests run without
 * a network or a clock; `attempts` counts tries for transient failures (network, 502-504, 429 with
 * a short Retry-After).
 */
export function createClient({ url, token, fetch = globalThis.fetch, sleep = (ms) => delay(ms), attempts = 3, timeoutMs = 30_000 }) {
  const base = apiBase(url);
  if (!base) throw new TypeError(`not an http(s) URL: ${url}`);

  /** The headers every request carries: who calls, and as what. */
  const identity = () => ({ 'user-agent': USER_AGENT, ...(token ? { authorization: `Bearer ${token}` } : {}) });

  /** failure turns an answer with status ≥ 400 into the error it means (the body is read). */
  async function failure(response, target) {
    const contentType = response.headers.get('content-type') ?? '';
    const retryAfterHeader = response.headers.get('retry-after');
    const retryAfter = retryAfterHeader !== null && Number.isFinite(Number(retryAfterHeader)) ? Number(retryAfterHeader) : undefined;
    const payload = /\bjson\b/i.test(contentType) ? await response.json().catch(() => null) : null;
    const error = payload?.error ?? (payload && typeof payload.message === 'string' ? payload : null);
    if (!error) {
      if (response.status >= 500 || response.status === 429) return new ApiError(response.status, { message: `the portal answered HTTP ${response.status} ${response.statusText}` }, target, retryAfter);
      return new NotTheApiError(target, response.status, contentType);
    }
    return new ApiError(response.status, error, target, retryAfter);
  }

  async function once(method, target, { body, headers, accept, signal }) {
    let response;
    try {
      const timeout = globalThis.AbortSignal.timeout(timeoutMs);
      response = await fetch(target, {
        method,
        headers: {
          accept: accept === 'json' ? 'application/json' : `${accept === 'csv' ? 'text/csv' : '*/*'}, application/json;q=0.5`,
          ...identity(),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: signal ? globalThis.AbortSignal.any([timeout, signal]) : timeout,
      });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      throw new NetworkError(target, cause);
    }
    const contentType = response.headers.get('content-type') ?? '';
    const isJson = /\bjson\b/i.test(contentType);
    if (response.status >= 400) throw await failure(response, target);
    if (accept === 'json') {
      if (!isJson) throw new NotTheApiError(target, response.status, contentType);
      // A call that answers nothing (making a folder, a move) comes as JSON without a body: null.
      const text = await response.text();
      return text.trim() === '' ? null : JSON.parse(text);
    }
    // CSV and other files: the bytes as they came, so a file written from them equals the download.
    return Buffer.from(await response.arrayBuffer());
  }

  const urlOf = (path, query) => {
    const target = new URL(base + path);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null) target.searchParams.set(key, String(value));
    return target.href;
  };

  /** withRetries runs one try after another while the failure is transient (network, 502-504, a short 429). */
  async function withRetries(attemptOnce, signal) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await attemptOnce();
      } catch (error) {
        const last = attempt >= attempts || signal?.aborted;
        const transient = error instanceof NetworkError || (error instanceof ApiError && RETRYABLE_STATUS.has(error.status));
        const throttled = error instanceof ApiError && error.status === 429 && (error.retryAfterSeconds ?? Infinity) <= 30;
        if (last || !(transient || throttled)) throw error;
        await sleep(throttled ? error.retryAfterSeconds * 1000 : 1000 * 2 ** (attempt - 1));
      }
    }
  }

  /**
   * request sends one API call. `path` is under /api/v1; `query` values that are undefined are left out;
   * `accept` is 'json' (parsed) or 'csv' / 'bytes' (a Buffer); `signal` stops it (Ctrl-C).
   */
  function request(method, path, { query, body, headers, accept = 'json', signal } = {}) {
    const target = urlOf(path, query);
    return withRetries(() => once(method, target, { body, headers, accept, signal }), signal);
  }

  /**
   * open sends a GET (or HEAD) and hands back the answer unread, to stream its body (a download): the
   * same errors and retries as `request` up to the answer's headers, which must come within the
   * timeout; the body then takes as long as it takes — `abort()` stops it (the caller's stall timer).
   * A status in `allow` (416 for a download's range) is handed back rather than thrown.
   */
  function open(method, path, { query, headers, signal, allow = [] } = {}) {
    const target = urlOf(path, query);
    return withRetries(async () => {
      const controller = new globalThis.AbortController();
      const timer = setTimeout(() => controller.abort(new NetworkError(target, { name: 'TimeoutError' })), timeoutMs);
      let response;
      try {
        response = await fetch(target, {
          method,
          headers: { accept: '*/*, application/json;q=0.5', ...identity(), ...headers },
          signal: signal ? globalThis.AbortSignal.any([controller.signal, signal]) : controller.signal,
        });
      } catch (cause) {
        if (signal?.aborted) throw signal.reason;
        throw new NetworkError(target, cause);
      } finally {
        clearTimeout(timer);
      }
      if (response.status >= 400 && !allow.includes(response.status)) throw await failure(response, target);
      return { response, url: target, abort: (reason) => controller.abort(reason) };
    }, signal);
  }

  return { base, request, open, headers: identity };
}
