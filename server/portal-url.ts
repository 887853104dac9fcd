// Where links to the portal point. PORTAL_URL when set (production requires it: server/env.js); in
// demo mode without it, the address the request came to (server/core/request-base.ts), so a demo
// reached as http://demo-host:3150 does not mail links to localhost; else this machine on PORT (the
// worker's mails, which have no request).
import { requestAddressOf, requestBaseUrl } from '~/server/core/request-base';
import { env, portalBaseUrl } from '~/server/env.js';
import { requestScope } from '~/server/request-scope';

/** requestLinkBase is the base of links for a request without PORTAL_URL: its own address, or undefined (PORTAL_URL set, or a host that is not a plain host name). */
export function requestLinkBase(headers: { get(name: string): string | null }, protocol: string): string | undefined {
  const config = env();
  if (config.PORTAL_URL) return undefined;
  return requestBaseUrl(requestAddressOf(headers, protocol), config.PORTAL_TRUST_PROXY) ?? undefined;
}

/** linkBase is the base of links written now: PORTAL_URL, else the current request's address, else localhost:PORT. */
export function linkBase(): string {
  return env().PORTAL_URL ? portalBaseUrl() : (requestScope()?.baseUrl ?? portalBaseUrl());
}
