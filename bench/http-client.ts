// A browser-less HTTP client of the portal for the HTTP benchmark: a cookie jar, the next-auth
// credentials sign-in, page reads, and tRPC calls in the v11 batch format with superjson — what
// the browser's httpBatchLink sends (app/_components/providers.tsx), one call per batch.
import superjson from 'superjson';

/** The outcome of one request: status, wall time of the whole response, and for tRPC its error code. */
export interface Hit {
  status: number;
  ms: number;
  /** Characters of the body read (as the server sent it, decompressed). */
  chars?: number;
  /** tRPC error code and message (ids and numbers generalised), when the call failed. */
  error?: string;
}

export class HttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const general = (text: string) =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '…')
    .replace(/\d+/g, 'N')
    .slice(0, 120);

interface TrpcEnvelope {
  result?: { data: unknown };
  error?: { json?: { message?: string; data?: { code?: string; httpStatus?: number } } };
}

/** Session is one person's cookies against one portal. */
export class Session {
  private readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  /** cookieHeader is the Cookie header of the session (for requests sent without `fetch`, e.g. streamed ones). */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      if (eq > 0) this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }

  /** fetch sends a request with the session's cookies, keeps the cookies it sets and reads the whole body. */
  async fetch(path: string, init: RequestInit = {}): Promise<{ response: Response; body: string; ms: number }> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.cookieHeader());
    const t0 = performance.now();
    const response = await fetch(new URL(path, this.base), { ...init, headers, redirect: 'manual' });
    const body = await response.text();
    const ms = performance.now() - t0;
    this.keep(response);
    return { response, body, ms };
  }

  /** signIn signs in with e-mail and password as the sign-in form does (next-auth credentials, CSRF token first). */
  async signIn(email: string, password: string): Promise<void> {
    const csrf = await this.fetch('/api/auth/csrf');
    if (csrf.response.status !== 200) throw new HttpError(`GET /api/auth/csrf: HTTP ${csrf.response.status}`, csrf.response.status);
    const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
    const form = new URLSearchParams({ csrfToken, email, password, callbackUrl: `${this.base}/dashboard`, json: 'true' });
    const result = await this.fetch('/api/auth/callback/credentials', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const hasSession = [...this.cookies.keys()].some((k) => k.endsWith('next-auth.session-token'));
    if (!hasSession) throw new HttpError(`sign-in of ${email} failed: HTTP ${result.response.status} ${result.body.slice(0, 200)}`, result.response.status);
  }

  /** page reads a page as a signed-in browser would (the HTML document only). */
  async page(path: string): Promise<Hit> {
    const { response, body, ms } = await this.fetch(path, { headers: { accept: 'text/html' } });
    return { status: response.status, ms, chars: body.length };
  }

  private async trpc(path: string, type: 'query' | 'mutation', input: unknown): Promise<Hit & { data?: unknown }> {
    const batch = JSON.stringify({ 0: superjson.serialize(input) });
    const { response, body, ms } =
      type === 'query'
        ? await this.fetch(`/api/trpc/${path}?batch=1&input=${encodeURIComponent(batch)}`)
        : await this.fetch(`/api/trpc/${path}?batch=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: batch });
    let envelope: TrpcEnvelope | undefined;
    try {
      envelope = (JSON.parse(body) as TrpcEnvelope[])[0];
    } catch {
      return { status: response.status, ms, error: `not a tRPC reply: ${general(body)}` };
    }
    if (envelope?.error) {
      const e = envelope.error.json;
      return { status: response.status, ms, error: `${e?.data?.code ?? '?'}: ${general(e?.message ?? '')}` };
    }
    return { status: response.status, ms, chars: body.length, data: superjson.deserialize(envelope?.result?.data as Parameters<typeof superjson.deserialize>[0]) };
  }

  /** query calls a tRPC query (GET, as httpBatchLink sends it). */
  query(path: string, input?: unknown) {
    return this.trpc(path, 'query', input);
  }

  /** mutation calls a tRPC mutation (POST, as httpBatchLink sends it). */
  mutation(path: string, input: unknown) {
    return this.trpc(path, 'mutation', input);
  }

  /** call runs a mutation or query that must succeed (set-up steps) and returns its data. */
  async must<T>(path: string, input: unknown, type: 'query' | 'mutation' = 'mutation'): Promise<T> {
    const hit = type === 'query' ? await this.query(path, input) : await this.mutation(path, input);
    if (hit.error || hit.status !== 200) throw new HttpError(`${path}: HTTP ${hit.status} ${hit.error ?? ''}`, hit.status);
    return hit.data as T;
  }
}
