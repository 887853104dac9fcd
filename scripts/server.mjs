#!/usr/bin/env node
// The portal's HTTP server: Next.js with the proxy to interactive sessions in front of it (issue #28).
//
//   node scripts/server.mjs [-p PORT] [-H HOSTNAME] [--processes N|auto] [--dev]
//
// It serves as `next start` did (`npm start` and the browser tests run it): the port from -p, else
// PORT, else 3000; every interface unless -H names one; SIGINT and SIGTERM stop it gracefully with the
// exit codes next start uses (130, 143). A request or WebSocket upgrade whose path is a session's
// (`/sessions/<job id>/…`) goes to the session proxy; a browser's upload PATCH or download to the file
// transfers (server/transfers.ts: the bytes straight between socket and file); everything else to Next.js.
//
// The proxy is TypeScript that Next bundles with the rest of the portal, which this plain script cannot
// import. The portal's start (instrumentation.ts → server/startup.ts) puts it on
// `globalThis.__portalSessions` (server/session-proxy.ts `PortalSessions`: version, ownsPath,
// handleRequest, handleUpgrade, close); this script looks it up for each request. Next 16 runs
// instrumentation in prepare() only in development; in production it runs with the first request Next
// handles (so it did under `next start` too). This script therefore sends itself that first request
// (GET /api/health) as soon as it listens, and holds every other request until it has been answered:
// by then the portal has started and the proxy is registered, whatever the first person asks for.
//
// Several web processes (--processes N, else PORTAL_WEB_PROCESSES; `auto` = one per core): one Node
// process runs on one core, so on a machine with more the portal starts N processes of this script
// (node:cluster) that share the port — the kernel's connections handed round by the first process,
// which serves nothing itself, restarts a process that dies and stops them all on SIGINT/SIGTERM. They
// share everything through Postgres (docs/deploy.md "Several processes"), so a real one is needed
// (DATABASE_URL): PGlite is one process's. Each process starts the portal on a private loopback port of
// its own before it takes the shared one, so no connection reaches a process that has not started.
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');

let options;
try {
  options = parseArgs({
    options: { port: { type: 'string', short: 'p' }, hostname: { type: 'string', short: 'H' }, processes: { type: 'string' }, dev: { type: 'boolean', default: false } },
    strict: true,
  }).values;
} catch (error) {
  console.error(`[portal] ${error.message}\nusage: node scripts/server.mjs [-p PORT] [-H HOSTNAME] [--processes N|auto] [--dev]`);
  process.exit(1);
}
const portText = options.port ?? process.env.PORT ?? '3000';
const port = Number(portText);
if (!/^\d{1,5}$/.test(portText) || port > 65535) {
  console.error(`[portal] the port (-p or PORT) must be a whole number from 0 to 65535, not ${JSON.stringify(portText)}`);
  process.exit(1);
}
const dev = options.dev;
const processesText = (options.processes ?? process.env.PORTAL_WEB_PROCESSES ?? '1').trim();
const processes = processesText === 'auto' ? os.availableParallelism() : Number(processesText);
if (!(processesText === 'auto' || /^\d{1,2}$/.test(processesText)) || processes < 1 || processes > 64) {
  console.error(`[portal] the number of web processes (--processes or PORTAL_WEB_PROCESSES) must be a whole number from 1 to 64 or "auto" (one per core), not ${JSON.stringify(processesText)}`);
  process.exit(1);
}
if (processes > 1 && cluster.isPrimary) {
  if (dev) {
    console.error('[portal] the development server is one process: leave out --processes / PORTAL_WEB_PROCESSES with --dev');
    process.exit(1);
  }
  if (!process.env.DATABASE_URL) {
    console.error(`[portal] ${processes} web processes need a real Postgres: set DATABASE_URL (the embedded PGlite in .data/ is one process's), or run one (PORTAL_WEB_PROCESSES=1)`);
    process.exit(1);
  }
  await superviseWebProcesses(processes);
  // The first process only supervises: it never loads Next.
  await new Promise(() => {});
}
// As `next start` and `next dev` do: the mode's NODE_ENV unless one is set; PORT for the portal's own links.
process.env.NODE_ENV ||= dev ? 'development' : 'production';
process.env.PORT = String(port);
process.env.NEXT_TELEMETRY_DISABLED ??= '1';

const { default: next } = await import('next');

// Next attaches its own 'upgrade' listener to the server of the first request it handles, or to the
// `httpServer` it is given: this stand-in receives it, so that every upgrade goes through the one
// listener below — a session's to the proxy, the rest (the development server's hot reload) to Next.
const upgradesForNext = new EventEmitter();
const app = next({ dev, dir: root, hostname: options.hostname ?? 'localhost', port, httpServer: upgradesForNext });
await app.prepare();
const handleNext = app.getRequestHandler();
const upgradeNext = app.upgradeHandler ?? app.getUpgradeHandler();

/** The session proxy the portal's start registered, if it did (server/session-proxy.ts). */
function sessions() {
  const registered = globalThis.__portalSessions;
  return registered?.version === 1 ? registered : undefined;
}
/** The browser's upload PATCHes and downloads, if the portal's start registered them (server/transfers.ts). */
function transfers() {
  const registered = globalThis.__portalTransfers;
  return registered?.version === 1 ? registered : undefined;
}
// The first request, our own: it starts the portal (see above). Only it passes before the start is done.
const WARM_UP_HEADER = 'x-portal-start';
const warmUpToken = randomBytes(16).toString('hex');
let started = false;
let markStarted;
const starting = new Promise((resolve) => (markStarted = resolve)).then(() => {
  started = true;
  if (sessions()) console.log('[portal] ready: pages and the interactive sessions\' proxy');
  else console.warn('[portal] ready, but the session proxy is not registered: /sessions/<job id>/ answers "not found"');
});
const isWarmUp = (req) => req.headers[WARM_UP_HEADER] === warmUpToken;

const server = http.createServer(async (req, res) => {
  advertiseKeepAlive(res);
  if (!started && !isWarmUp(req)) await starting;
  const proxy = sessions();
  if (proxy?.ownsPath(req.url)) {
    proxy.handleRequest(req, res);
    return;
  }
  const files = transfers();
  if (files?.owns(req.method, req.url)) {
    files.handleRequest(req, res);
    return;
  }
  handleNext(req, res).catch((error) => {
    // As next start answers what its handler throws.
    console.error(`[portal] failed to handle ${req.method} ${req.url}:`, error);
    if (!res.headersSent) {
      res.statusCode = 500;
      res.end('Internal Server Error');
    } else res.destroy();
  });
});

// An idle keep-alive connection stays open longer than the clients and proxies in front of the portal keep
// theirs (nginx and most load balancers: 60 s). With Node's default of 5 s the portal closed connections a
// client was just reusing, and that request failed with ECONNRESET (CI saw it: a GET a few seconds after the
// one before on the same connection); a proxy turns that into a 502. Headers may take a little longer still.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
// A client that believes the `Keep-Alive: timeout=N` it is told (undici, Node's own agent) reuses an idle
// connection until about then; told 65 and closed at 65, one that reused it at the last moment lost its
// request (the files benchmark's first request after 65 s idle: "other side closed"). So the answer says
// 60 while the server holds the connection 65 — Node 24 does the same with keepAliveTimeoutBuffer; Node 20
// has no setting for it, only the response's own field that Node reads when it writes the header.
const ADVERTISED_KEEP_ALIVE_MS = 60_000;
function advertiseKeepAlive(res) {
  if (typeof res._keepAliveTimeout === 'number' && res._keepAliveTimeout > ADVERTISED_KEEP_ALIVE_MS) res._keepAliveTimeout = ADVERTISED_KEEP_ALIVE_MS;
}

server.on('upgrade', async (req, socket, head) => {
  if (!started) await starting;
  const proxy = sessions();
  if (proxy?.ownsPath(req.url)) {
    proxy.handleUpgrade(req, socket, head);
    return;
  }
  Promise.resolve(upgradeNext(req, socket, head)).catch((error) => {
    console.error(`[portal] failed to handle the upgrade of ${req.url}:`, error);
    socket.destroy();
  });
});

server.on('error', (error) => {
  console.error('[portal] the server cannot listen:', error.message);
  process.exit(1);
});

if (cluster.isWorker) {
  // A process of several: the portal starts through a private loopback port first (see the top), then
  // this process takes its share of the common one.
  const warmServer = http.createServer((req, res) => server.emit('request', req, res));
  warmServer.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
    const warmUp = http.get({ host: '127.0.0.1', port: warmServer.address().port, path: '/api/health', headers: { [WARM_UP_HEADER]: warmUpToken } }, (res) => {
      res.resume();
      res.on('end', () => {
        markStarted();
        warmServer.close();
        server.listen(port, options.hostname, () => process.send?.({ portal: 'listening' }));
      });
    });
    warmUp.on('error', (error) => {
      console.error('[portal] the first request (GET /api/health) failed:', error.message);
      process.exit(1);
    });
  });
} else server.listen(port, options.hostname, () => {
  const address = server.address();
  const listening = typeof address === 'object' && address ? address.port : port;
  console.log(`[portal] listening on http://${options.hostname ?? 'localhost'}:${listening}${dev ? ' (development)' : ''}`);
  // The warm-up goes to the address listened on (loopback when every interface is).
  const host = !options.hostname || options.hostname === '0.0.0.0' || options.hostname === '::' ? '127.0.0.1' : options.hostname;
  const warmUp = http.get({ host, port: listening, path: '/api/health', headers: { [WARM_UP_HEADER]: warmUpToken } }, (res) => {
    res.resume();
    res.on('end', () => markStarted());
  });
  warmUp.on('error', (error) => {
    console.error('[portal] the first request (GET /api/health) failed:', error.message);
    markStarted();
  });
});

/** How long a graceful stop may take before the process exits anyway. */
const STOP_GRACE_MS = 10_000;
let stopping = false;

async function stop(signal) {
  if (stopping) return; // a shell sends ctrl-c to the whole group, the wrapper forwards it too
  stopping = true;
  setTimeout(() => process.exit(signal === 'SIGINT' ? 130 : 143), STOP_GRACE_MS).unref();
  // First no new connections and the open sessions' WebSockets ended (they would hold the server open),
  // then what is in flight finishes, then Next closes.
  const closed = new Promise((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await sessions()?.close().catch((error) => console.error('[portal] closing the session proxy:', error));
  await closed;
  await app.close().catch((error) => console.error('[portal] closing Next.js:', error));
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stop(signal));
// A process of several whose first process is gone (killed, even with SIGKILL) stops too, rather than
// holding the port for nobody.
if (cluster.isWorker) process.on('disconnect', () => void stop('SIGTERM'));

/**
 * superviseWebProcesses runs `count` processes of this script that share the port, restarts one that
 * dies (after a second; if none ever started, the first failure ends all: a wrong setting would only
 * loop) and, on SIGINT or SIGTERM, stops them all and exits as one process would.
 */
async function superviseWebProcesses(count) {
  let stoppingAll = false;
  const fork = () => cluster.fork({ PORTAL_WEB_PROCESSES: String(count) });
  let listening = 0;
  cluster.on('message', (worker, message) => {
    if (message?.portal !== 'listening') return;
    // Said once, when all have started (a replaced process says it again: not repeated).
    if (++listening === count) console.log(`[portal] listening on http://${options.hostname ?? 'localhost'}:${port} with ${count} web processes`);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stoppingAll) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(stopCode);
      return;
    }
    if (listening === 0) {
      console.error(`[portal] a web process exited (${signal ?? `code ${code}`}) before any started: stopping`);
      stopAll('SIGTERM', 1);
      return;
    }
    console.error(`[portal] web process ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
    // Not unref'd: were every process gone at once, this timer is what keeps the first one alive to start them again.
    setTimeout(fork, 1000);
  });
  let stopCode = 143;
  const stopAll = (signal, code) => {
    if (stoppingAll) return;
    stoppingAll = true;
    stopCode = code;
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(code);
    for (const worker of workers) worker?.process.kill(signal);
    // Each stops within its own grace (10 s); after that the first process leaves anyway.
    setTimeout(() => process.exit(code), 12_000).unref();
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stopAll(signal, signal === 'SIGINT' ? 130 : 143));
  for (let i = 0; i < count; i++) fork();
}
