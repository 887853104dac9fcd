// What the session proxy changes on its way through (sessions-http.ts), pure: the portal's own cookies stay
// out of the app's reach, the app's secret goes in as a header and never comes back out — not in a
// header, not in a redirect, not in a page (Jupyter Notebook writes its token into every page it
// serves) — and the app's own cookies stay inside its session's path.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { ORG_COOKIE } from './cookies';
import { LOCALE_COOKIE } from '~/server/i18n';

/** parseCookies reads a Cookie header into a map (the first value of a repeated name wins, as browsers send the most specific first). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // Not percent-encoded after all: kept as sent.
    }
    if (name && !cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/**
 * isPortalCookie tells the portal's own cookies: next-auth's (session, CSRF, callback, PKCE, state,
 * nonce; `__Secure-` and `__Host-` over https) and the chosen tenant and language. They are the
 * person's keys to the portal, and the app — whose code is whatever the session runs — must not see them.
 */
export function isPortalCookie(name: string): boolean {
  return /^(?:__Secure-|__Host-)?next-auth\./.test(name) || name === ORG_COOKIE || name === LOCALE_COOKIE;
}

/** appCookieHeader is the Cookie header the app gets: the request's, less the portal's own cookies; undefined when none is left. */
export function appCookieHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const kept = header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => {
      const eq = part.indexOf('=');
      return part.length > 0 && !isPortalCookie((eq < 0 ? part : part.slice(0, eq)).trim());
    });
  return kept.length ? kept.join('; ') : undefined;
}

/** withoutTokenParameter removes a `token` query parameter from a path (Jupyter reads its secret there too; only the header may carry it). */
export function withoutTokenParameter(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf('?');
  if (q < 0) return pathAndQuery;
  const kept = pathAndQuery
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      const name = pair.split('=')[0] ?? '';
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // A malformed name is not `token`.
      }
      return decoded !== 'token';
    });
  return kept.length ? `${pathAndQuery.slice(0, q)}?${kept.join('&')}` : pathAndQuery.slice(0, q);
}

/** What the proxy knows of the browser's connection, for the X-Forwarded-* headers. */
export interface ClientSide {
  remoteAddress: string | undefined;
  encrypted: boolean;
  /** Whether a reverse proxy in front of the portal is trusted to have set X-Forwarded-* (PORTAL_TRUST_PROXY). */
  trustProxy: boolean;
  /** The portal's public host (PORTAL_URL's), when configured: what the browser's Origin names. */
  publicHost?: string;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

/**
 * appRequestHeaders are the headers the app gets for a request: the browser's, with the Cookie header
 * less the portal's cookies, `Authorization: token <secret>` in place of any the browser sent, no
 * compression (the proxy looks for the secret in what comes back, which it cannot do in a gzip
 * stream), and X-Forwarded-For/-Proto/-Host as the portal saw the request (extending a trusted
 * proxy's, replacing anyone else's). Host is the portal's as the browser addressed it (PORTAL_URL's
 * host, else a trusted proxy's X-Forwarded-Host, else the request's): Jupyter checks a WebSocket's
 * Origin against it, and a reverse proxy in front may have put its own upstream name there. For an
 * upgrade the Connection and Upgrade headers stay.
 */
export function appRequestHeaders(headers: IncomingHttpHeaders, secret: string, client: ClientSide, options: { upgrade: boolean }): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (name === 'cookie' || name === 'authorization' || name === 'forwarded' || name === 'x-real-ip' || name.startsWith('x-forwarded-')) continue;
    if (HOP_BY_HOP.includes(name) && !(options.upgrade && (name === 'connection' || name === 'upgrade'))) continue;
    out[name] = value;
  }
  const cookie = appCookieHeader(headers.cookie);
  if (cookie) out.cookie = cookie;
  out.authorization = `token ${secret}`;
  if (!options.upgrade) out['accept-encoding'] = 'identity';
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined;
  const priorFor = client.trustProxy ? (Array.isArray(headers['x-forwarded-for']) ? headers['x-forwarded-for'].join(', ') : headers['x-forwarded-for']) : undefined;
  const forwardedFor = [priorFor, client.remoteAddress].filter(Boolean).join(', ');
  if (forwardedFor) out['x-forwarded-for'] = forwardedFor;
  const priorProto = client.trustProxy ? first(headers['x-forwarded-proto']) : undefined;
  out['x-forwarded-proto'] = priorProto === 'https' || priorProto === 'http' ? priorProto : client.encrypted ? 'https' : 'http';
  const host = client.publicHost ?? (client.trustProxy ? first(headers['x-forwarded-host']) : undefined) ?? headers.host;
  if (host) {
    out.host = host;
    out['x-forwarded-host'] = host;
  }
  return out;
}

/** What the browser may get of a response's headers, and what was taken out. */
export interface FilteredHeaders {
  headers: OutgoingHttpHeaders;
  /** Names of headers dropped because they carried the secret (logged, never their values). */
  droppedForSecret: string[];
}

/** scopeAppCookie keeps a cookie the app sets inside its session: no Domain, a Path under `basePath`; the portal's names refused (null). */
export function scopeAppCookie(setCookie: string, basePath: string): string | null {
  const [pair = '', ...attributes] = setCookie.split(';');
  const eq = pair.indexOf('=');
  const name = (eq < 0 ? pair : pair.slice(0, eq)).trim();
  // A cookie of the portal's name set for the portal's path would sign the person into someone else's account.
  if (!name || isPortalCookie(name)) return null;
  let hasPath = false;
  const kept: string[] = [];
  for (const attribute of attributes) {
    const [key = '', ...rest] = attribute.split('=');
    const lower = key.trim().toLowerCase();
    if (lower === 'domain') continue;
    if (lower === 'path') {
      hasPath = true;
      const value = rest.join('=').trim();
      kept.push(value.startsWith(basePath) ? ` Path=${value}` : ` Path=${basePath}`);
      continue;
    }
    kept.push(attribute);
  }
  if (!hasPath) kept.push(` Path=${basePath}`);
  return [pair.trim(), ...kept.map((a) => a.trimEnd())].join(';');
}

/**
 * appResponseHeaders are the headers the browser gets of the app's response: the app's own (its
 * content policy, its caching) less the hop-by-hop ones (a WebSocket's 101 keeps Connection and
 * Upgrade), its cookies kept inside its session (scopeAppCookie), a redirect's `token` parameter
 * removed, and any header that still carries the secret dropped whole.
 */
export function appResponseHeaders(headers: IncomingHttpHeaders, secret: string, basePath: string, options: { upgrade: boolean }): FilteredHeaders {
  const out: OutgoingHttpHeaders = {};
  const droppedForSecret: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (HOP_BY_HOP.includes(name) && !(options.upgrade && (name === 'connection' || name === 'upgrade'))) continue;
    if (name === 'set-cookie') {
      const cookies = (Array.isArray(value) ? value : [value]).filter((c) => !c.includes(secret)).map((c) => scopeAppCookie(c, basePath)).filter((c): c is string => c !== null);
      if (cookies.length) out[name] = cookies;
      continue;
    }
    const scrubbed = name === 'location' && typeof value === 'string' ? withoutTokenInUrl(value) : value;
    if ((Array.isArray(scrubbed) ? scrubbed.join('\n') : scrubbed).includes(secret)) {
      droppedForSecret.push(name);
      continue;
    }
    out[name] = scrubbed;
  }
  return { headers: out, droppedForSecret };
}

/** withoutTokenInUrl removes the `token` parameter from a redirect's target, absolute or not. */
function withoutTokenInUrl(location: string): string {
  const hash = location.indexOf('#');
  const [main, fragment] = hash < 0 ? [location, ''] : [location.slice(0, hash), location.slice(hash)];
  return `${withoutTokenParameter(main)}${fragment}`;
}

/**
 * SecretMask passes a body through with every occurrence of the secret replaced by as many `*`: the
 * length stays, so a Content-Length stays right. An occurrence split over two chunks is found too:
 * only the chunk's end that could begin the secret waits for the next chunk, so a streamed answer is
 * not held back.
 */
export class SecretMask extends Transform {
  private readonly secret: Buffer;
  private readonly mask: Buffer;
  private carry: Buffer = Buffer.alloc(0);

  constructor(secret: string) {
    super();
    this.secret = Buffer.from(secret, 'utf8');
    this.mask = Buffer.alloc(this.secret.length, '*');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let at = data.indexOf(this.secret);
    if (at >= 0) {
      // The chunk is the stream's: masked in a copy. A chunk without the secret passes as it is.
      if (data === chunk) data = Buffer.from(chunk);
      for (; at >= 0; at = data.indexOf(this.secret, at + this.secret.length)) this.mask.copy(data, at);
    }
    const keep = this.pendingPrefix(data);
    this.carry = keep ? Buffer.from(data.subarray(data.length - keep)) : Buffer.alloc(0);
    const out = keep ? data.subarray(0, data.length - keep) : data;
    done(null, out.length ? out : undefined);
  }

  override _flush(done: TransformCallback): void {
    done(null, this.carry.length ? this.carry : undefined);
  }

  /** How many bytes at the end of `data` begin the secret (0: none); they wait for the next chunk. */
  private pendingPrefix(data: Buffer): number {
    const longest = Math.min(this.secret.length - 1, data.length);
    for (let n = longest; n > 0; n--) {
      if (data[data.length - n] === this.secret[0] && data.subarray(data.length - n).equals(this.secret.subarray(0, n))) return n;
    }
    return 0;
  }
}
