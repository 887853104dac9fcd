// What a request carries into every layer below it without being passed along: its id (for the logs)
// and, for a call made with a personal API token, the token's id and name (for the audit log).
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestScope {
  /** The request's id: the caller's `X-Request-Id` when it is a sane one, else a new one. */
  requestId: string;
  /** The personal API token the request authenticated with, if any. */
  token?: { id: string; name: string };
  /** Demo mode without PORTAL_URL: the address this request reached the portal at, for links (server/portal-url.ts). */
  baseUrl?: string;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** inRequestScope runs fn with a request's scope; everything it awaits sees it. */
export function inRequestScope<T>(value: RequestScope, fn: () => T): T {
  return scope.run(value, fn);
}

/** requestScope is the current request's scope, or undefined outside a request (worker, scripts, tests). */
export function requestScope(): RequestScope | undefined {
  return scope.getStore();
}

/** requestIdFrom keeps a caller's request id when it is short and plain, else makes one. */
export function requestIdFrom(header: string | null | undefined): string {
  return header && /^[A-Za-z0-9._:-]{1,64}$/.test(header) ? header : randomUUID();
}
