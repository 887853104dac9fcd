// The portal's address as a request reached it, for demo mode without PORTAL_URL (production
// requires PORTAL_URL: server/env.js). Only a plain host[:port] is taken — nothing that could smuggle
// a path, user info or a second address into a link — and X-Forwarded-Host/-Proto only from a proxy
// the configuration trusts (PORTAL_TRUST_PROXY). Pure.

export interface RequestAddress {
  host: string | null;
  forwardedHost: string | null;
  forwardedProto: string | null;
  /** The protocol the server itself was reached by ('http:' or 'https:'). */
  protocol: string;
}

const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/** requestBaseUrl is "proto://host[:port]" of the request, or null when its host is missing or not a plain host name. */
export function requestBaseUrl(address: RequestAddress, trustProxy: boolean): string | null {
  const first = (value: string | null) => value?.split(',')[0]?.trim().toLowerCase() || null;
  const host = (trustProxy ? first(address.forwardedHost) : null) ?? first(address.host);
  if (!host || host.length > 260 || !HOST.test(host)) return null;
  const forwardedProto = trustProxy ? first(address.forwardedProto) : null;
  const proto = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : address.protocol === 'https:' ? 'https' : 'http';
  return `${proto}://${host}`;
}

/** requestAddressOf reads the parts of a request's headers that name the portal's address. */
export function requestAddressOf(headers: { get(name: string): string | null }, protocol: string): RequestAddress {
  return { host: headers.get('host'), forwardedHost: headers.get('x-forwarded-host'), forwardedProto: headers.get('x-forwarded-proto'), protocol };
}
