// The reverse proxy to interactive sessions (issue #28): `/sessions/<job id>/…`, HTTP and WebSocket, to
// the app the job started on its node. The portal's HTTP server (scripts/server.mjs) hands it these
// requests before Next.js sees them, so the portal's page policy is not laid over the app's own. Each
// request passes the wall first (services/sessions/proxy-access.ts: the job's own person, running, on
// one of its nodes); then http-proxy-3 carries it, with the app's secret added, the portal's cookies
// taken out, and the secret masked out of whatever comes back (sessions-headers.ts). Every request and
// every WebSocket frame counts as the session's traffic (services/sessions/activity.ts).
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { pipeline } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { ProxyServer } from 'http-proxy-3';
import { LOCALE_COOKIE, negotiateLocale, type Locale } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import type { SessionAccess } from '~/server/services/sessions/proxy-access';
import { sessionBasePath } from '~/server/services/sessions/connection';
import { ORG_COOKIE } from './cookies';
import { originAllowed } from './http-guard';
import { appRequestHeaders, appResponseHeaders, parseCookies, SecretMask, withoutTokenParameter } from './sessions-headers';
import { sendPage, statusLine, type SessionPage } from './sessions-pages';

/** A session's address: `/sessions/<a job id's 36 characters>`, then its app's path; the rest of `/sessions` is the portal's pages. */
const SESSION_PATH = /^\/sessions\/([0-9A-Fa-f-]{36})(\/[^?#]*)?(\?[^#]*)?$/;

/** ownsPath tells whether a request's path is a session's, for the proxy rather than Next.js. */
export function ownsPath(url: string | undefined): boolean {
  return url !== undefined && /^\/sessions\/[0-9A-Fa-f-]{36}(?:[/?#]|$)/.test(url);
}

/** The job id and the path of a session's request; `bare` when the path stops at the id (no slash after it). */
export function sessionRoute(url: string | undefined): { jobId: string; bare: boolean; query: string } | null {
  const match = url === undefined ? null : SESSION_PATH.exec(url.split('#')[0]!);
  if (!match) return null;
  return { jobId: match[1]!, bare: match[2] === undefined, query: match[3] ?? '' };
}

/** The wall's question, as the proxy asks it. */
export type SessionAccessCheck = (request: { jobId: string; cookies: ReadonlyMap<string, string>; preferredOrgId?: string }) => Promise<SessionAccess>;

export interface SessionProxyOptions {
  /** The wall (services/sessions/proxy-access.ts `sessionAccess` with the process's database). */
  access: SessionAccessCheck;
  /** Counts a session's traffic (services/sessions/activity.ts). */
  touch: (jobId: string) => void;
  /** PORTAL_URL: the portal's origin, for the cross-site check and https. */
  portalUrl?: string;
  /** PORTAL_TRUST_PROXY: X-Forwarded-* from the reverse proxy in front of the portal are believed. */
  trustProxy: boolean;
  /** How long an app may stay silent on a request before it counts as gone (ms). */
  idleTimeoutMs?: number;
}

/** The proxy as the portal's HTTP server uses it (scripts/server.mjs, through server/session-proxy.ts). */
export interface SessionProxy {
  ownsPath(url: string | undefined): boolean;
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** close ends every open WebSocket and the kept-alive connections to apps (the server's shutdown). */
  close(): Promise<void>;
}

/** What the proxy keeps of a request it forwards, for the answer. */
interface Forwarded {
  jobId: string;
  secret: string;
  basePath: string;
  locale: Locale;
  https: boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** createSessionProxy builds the proxy around one http-proxy-3 server and one kept-alive agent. */
export function createSessionProxy(options: SessionProxyOptions): SessionProxy {
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  const https = (options.portalUrl ?? '').startsWith('https://');
  // Connections to apps are kept open between requests (a notebook page loads dozens of files).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 8, timeout: 60_000 });
  const proxy = new ProxyServer({ xfwd: false, changeOrigin: false, ws: true });
  const forwarded = new WeakMap<IncomingMessage, Forwarded>();
  const upgrading = new WeakMap<Socket, Forwarded & { client: Duplex }>();
  const openSockets = new Set<Duplex>();

  // Every call passes its own error callback; this only keeps a stray error from ending the process.
  proxy.on('error', (error) => logger().warn({ component: 'sessions', err: error }, 'session proxy error'));

  // An HTTP answer from an app: its headers filtered, its body masked, then to the browser.
  proxy.on('proxyRes', (proxyRes, req, res) => {
    const context = forwarded.get(req);
    if (!context) {
      proxyRes.resume();
      res.destroy();
      return;
    }
    const { headers, droppedForSecret } = appResponseHeaders(proxyRes.headers, context.secret, context.basePath, { upgrade: false });
    if (droppedForSecret.length) logger().warn({ component: 'sessions', jobId: context.jobId, headers: droppedForSecret }, "a session's app sent its secret in a header: the header was dropped");
    try {
      res.writeHead(proxyRes.statusCode ?? 502, proxyRes.statusMessage, headers);
    } catch (error) {
      // A status line or header Node will not write (the app's, so its own doing): the answer is a 502.
      logger().warn({ component: 'sessions', jobId: context.jobId, err: error }, "a session's app answered with a header the proxy cannot relay");
      proxyRes.resume();
      res.removeHeader('content-length');
      sendPage(res, req.method, 'unreachable', context.locale, { https: context.https, jobId: context.jobId });
      return;
    }
    pipeline(proxyRes, new SecretMask(context.secret), res, (error) => {
      if (error) res.destroy();
    });
  });

  // A WebSocket handshake on its way to an app: its answer is filtered before http-proxy-3 relays it.
  proxy.on('proxyReqWs', (proxyReq, req, client) => {
    const context = forwarded.get(req);
    if (!context) return;
    // Registered before http-proxy-3's own listeners (it adds them after this event), so these run first.
    proxyReq.on('upgrade', (proxyRes, proxySocket: Socket) => {
      const { headers, droppedForSecret } = appResponseHeaders(proxyRes.headers, context.secret, context.basePath, { upgrade: true });
      if (droppedForSecret.length) logger().warn({ component: 'sessions', jobId: context.jobId, headers: droppedForSecret }, "a session's app sent its secret in a header: the header was dropped");
      proxyRes.headers = headers as IncomingHttpHeaders;
      upgrading.set(proxySocket, { ...context, client });
    });
    // An app that answers a handshake with a page instead of switching: the browser's WebSocket only
    // learns that it failed, and the page (which could carry the secret) is not relayed.
    proxyReq.on('response', (proxyRes) => {
      proxyRes.resume();
      client.destroy();
    });
  });

  // The WebSocket is through: every chunk either way is the session's traffic.
  proxy.on('open', (proxySocket) => {
    const context = upgrading.get(proxySocket);
    if (!context) return;
    upgrading.delete(proxySocket);
    const { client, jobId } = context;
    openSockets.add(client);
    client.once('close', () => openSockets.delete(client));
    const touch = () => options.touch(jobId);
    proxySocket.on('data', touch);
    client.on('data', touch);
  });

  /** The request's language for the proxy's own pages: the portal's language cookie, else the browser's. */
  const localeOf = (req: IncomingMessage, cookies: ReadonlyMap<string, string>) => negotiateLocale(cookies.get(LOCALE_COOKIE), req.headers['accept-language']);

  const publicHost = options.portalUrl ? new URL(options.portalUrl).host : undefined;
  const client = (req: IncomingMessage) => ({ remoteAddress: req.socket.remoteAddress, encrypted: (req.socket as TLSSocket).encrypted === true, trustProxy: options.trustProxy, publicHost });

  /** A request from another site's page (the tRPC endpoint's rule, http-guard.ts), refused before the wall. */
  const fromAnotherSite = (req: IncomingMessage): boolean => {
    const headers = new Headers();
    const names = ['origin', 'sec-fetch-site', 'host', ...(options.trustProxy ? ['x-forwarded-host', 'x-forwarded-proto'] : [])];
    for (const name of names) {
      const value = req.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    try {
      return !originAllowed(headers, `${client(req).encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}/`, options.portalUrl);
    } catch {
      return true; // a Host header that is no host
    }
  };

  const target = (access: Extract<SessionAccess, { kind: 'open' }>) => ({ protocol: 'http:', host: access.address, port: access.port });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cookies = parseCookies(req.headers.cookie);
    const locale = localeOf(req, cookies);
    const route = sessionRoute(req.url);
    const page = (name: SessionPage, extra: { jobId?: string; signInPath?: string } = {}) => sendPage(res, req.method, name, locale, { https, ...extra });
    if (!route) return page('notFound');
    if (!SAFE_METHODS.has(req.method ?? '') && fromAnotherSite(req)) return page('crossSite');
    const access = await options.access({ jobId: route.jobId, cookies, preferredOrgId: cookies.get(ORG_COOKIE) });
    const signInPath = `/sign-in?callbackUrl=${encodeURIComponent(withoutTokenParameter(req.url ?? '/'))}`;
    switch (access.kind) {
      case 'signIn':
        if (req.method === 'GET' || req.method === 'HEAD') {
          res.writeHead(302, { location: signInPath, 'cache-control': 'no-store', 'content-length': 0 });
          res.end();
          return;
        }
        return page('signIn', { signInPath });
      case 'notFound':
        return page('notFound');
      case 'starting':
        return page('starting', { jobId: access.jobId });
      case 'ended':
        return page('ended', { jobId: access.jobId });
      case 'refused':
        return page('unreachable', { jobId: access.jobId });
      case 'open':
        break;
    }
    options.touch(access.jobId);
    if (route.bare) {
      // The app serves under `/sessions/<id>/`: the address without its slash leads there.
      res.writeHead(302, { location: `${sessionBasePath(access.jobId)}${withoutTokenParameter(route.query)}`, 'cache-control': 'no-store', 'content-length': 0 });
      res.end();
      return;
    }
    req.headers = appRequestHeaders(req.headers, access.secret, client(req), { upgrade: false });
    req.url = withoutTokenParameter(req.url!);
    forwarded.set(req, { jobId: access.jobId, secret: access.secret, basePath: sessionBasePath(access.jobId), locale, https });
    proxy.web(req, res, { target: target(access), agent, selfHandleResponse: true, proxyTimeout: idleTimeoutMs }, (error) => {
      logger().info({ component: 'sessions', jobId: access.jobId, err: error }, "a session's app did not answer");
      if (!res.headersSent) page('unreachable', { jobId: access.jobId });
      else res.destroy();
    });
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refuse = (name: SessionPage): void => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(`${statusLine(name)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
    };
    const route = sessionRoute(req.url);
    if (!route || route.bare || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket' || req.method !== 'GET') return refuse('notFound');
    if (fromAnotherSite(req)) return refuse('crossSite');
    const cookies = parseCookies(req.headers.cookie);
    const access = await options.access({ jobId: route.jobId, cookies, preferredOrgId: cookies.get(ORG_COOKIE) });
    if (socket.destroyed) return;
    switch (access.kind) {
      case 'signIn':
        return refuse('signIn');
      case 'notFound':
        return refuse('notFound');
      case 'starting':
        return refuse('starting');
      case 'ended':
        return refuse('ended');
      case 'refused':
        return refuse('unreachable');
      case 'open':
        break;
    }
    options.touch(access.jobId);
    req.headers = appRequestHeaders(req.headers, access.secret, client(req), { upgrade: true });
    req.url = withoutTokenParameter(req.url!);
    forwarded.set(req, { jobId: access.jobId, secret: access.secret, basePath: sessionBasePath(access.jobId), locale: localeOf(req, cookies), https });
    proxy.ws(req, socket, head, { target: target(access), agent: false, proxyTimeout: idleTimeoutMs }, (error) => {
      logger().info({ component: 'sessions', jobId: access.jobId, err: error }, "a session's app did not take the WebSocket");
      refuse('unreachable');
    });
  }

  return {
    ownsPath,
    handleRequest(req, res) {
      serve(req, res).catch((error: unknown) => {
        logger().error({ component: 'sessions', err: error }, 'the session proxy failed on a request');
        if (!res.headersSent) sendPage(res, req.method, 'busy', negotiateLocale(undefined, req.headers['accept-language']), { https });
        else res.destroy();
      });
    },
    handleUpgrade(req, socket, head) {
      // A browser that goes away mid-check must not raise an unhandled error.
      socket.on('error', () => undefined);
      upgrade(req, socket, head).catch((error: unknown) => {
        logger().error({ component: 'sessions', err: error }, 'the session proxy failed on a WebSocket');
        socket.destroy();
      });
    },
    close() {
      for (const socket of openSockets) socket.destroy();
      openSockets.clear();
      agent.destroy();
      return Promise.resolve();
    },
  };
}
