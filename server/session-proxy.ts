// The process's proxy to interactive sessions (issue #28), handed to the portal's HTTP server. That
// server (scripts/server.mjs) is plain JavaScript around Next.js and cannot import the portal's
// TypeScript, which Next bundles; so the portal's start (instrumentation.ts → startup.ts) puts the
// proxy on `globalThis.__portalSessions`, and the server, once Next's prepare() has run the start,
// hands it every request and upgrade whose path is a session's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Db } from '~/db/client';
import { authOptions } from './auth/options';
import type { SchedulerPort } from './core/scheduler/port';
import { env } from './env.js';
import { createSessionProxy } from './api/sessions-http';
import { configuredSiteRoots } from './services/files/roots';
import { createSessionActivity, SEEN_EVERY_MS, useSessionActivity } from './services/sessions/activity';
import { sessionAccess } from './services/sessions/proxy-access';

/**
 * The contract between scripts/server.mjs and the portal, on `globalThis.__portalSessions`: `version`
 * says which shape this is; `ownsPath(url)` tells a session's request (`/sessions/<job id>…`) from the
 * pages'; the two handlers take over the request or the upgraded socket entirely; `close()` ends the
 * open WebSockets and writes the sessions' last traffic (the server's shutdown).
 */
export interface PortalSessions {
  version: 1;
  ownsPath(url: string | undefined): boolean;
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

const holder = globalThis as { __portalSessions?: PortalSessions };

/** registerSessionProxy builds the proxy on the process's database and scheduler and offers it to the HTTP server. */
export function registerSessionProxy(db: Db, scheduler: SchedulerPort): PortalSessions {
  const config = env();
  // A second start in one process (the development server reloading) replaces the first.
  void holder.__portalSessions?.close();
  // Idle shutdown (services/sessions/idle.ts) measures a session's silence in the cluster's time: on the
  // simulated cluster, whose clock runs `clockSpeed` times faster than the wall's, 30 s of cluster time
  // pass in 30 s / clockSpeed, and the last traffic is written at that pace (at most once a second).
  const everyMs = Math.max(1000, Math.round(SEEN_EVERY_MS / (scheduler.clockSpeed ?? 1)));
  const activity = createSessionActivity({ db, everyMs, flushDelayMs: Math.min(1000, everyMs) });
  useSessionActivity(activity);
  const roots = configuredSiteRoots();
  const authSecret = authOptions().secret!;
  const proxy = createSessionProxy({
    access: (request) => sessionAccess({ db, authSecret, scheduler: () => Promise.resolve(scheduler), roots }, request),
    touch: (jobId) => activity.touch(jobId),
    portalUrl: config.PORTAL_URL,
    trustProxy: config.PORTAL_TRUST_PROXY,
  });
  const sessions: PortalSessions = {
    version: 1,
    ownsPath: (url) => proxy.ownsPath(url),
    handleRequest: (req, res) => proxy.handleRequest(req, res),
    handleUpgrade: (req, socket, head) => proxy.handleUpgrade(req, socket, head),
    async close() {
      await proxy.close();
      await activity.stop();
    },
  };
  holder.__portalSessions = sessions;
  return sessions;
}
