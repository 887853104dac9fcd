// Server start-up (Node runtime only): validate configuration, open, migrate and (in demo mode)
// seed the database. A bad setting or a locked data folder stops the start with a clear message.
import { DataDirLockedError } from '~/db/lock';
import { startAppDb } from './db';
import { getScheduler } from './scheduler';
import { registerSessionProxy } from './session-proxy';
import { registerTransfers } from './transfers';
import { startWorker } from './worker';
import { ConfigError, env, portalBaseUrl } from './env.js';
import { logger } from './observability/log';

/** startPortal prepares the process's database and reports what it runs on. */
export async function startPortal(): Promise<void> {
  try {
    const config = env();
    const handle = await startAppDb({ command: 'portal server (npm start)' });
    const scheduler = await getScheduler(handle.db);
    // One worker acts at a time (an advisory lock); a deployment with a worker process of its own turns it off here.
    if (config.PORTAL_WORKER === 'on') startWorker(handle, scheduler);
    // The proxy to interactive sessions, for the portal's HTTP server (scripts/server.mjs).
    registerSessionProxy(handle.db, scheduler);
    // The browser's upload PATCHes and downloads, answered before Next (server/transfers.ts).
    registerTransfers(handle.db);
    logger().info(
      { component: 'portal', database: handle.driver, scheduler: config.SCHEDULER, mode: config.PORTAL_ENV },
      `database: ${handle.driver === 'pglite' ? `embedded PGlite in ${config.PORTAL_DATA_DIR}/` : 'Postgres (DATABASE_URL)'}; scheduler: ${config.SCHEDULER}; mode: ${config.PORTAL_ENV}`,
    );
    if (!config.PORTAL_URL) {
      // Demo mode (production refuses to start without it): say where the worker's own mails will point.
      logger().warn(
        { component: 'portal', portalUrl: portalBaseUrl() },
        `PORTAL_URL is not set: pages and the mails they send link to the address each request came to, but mails the worker sends on its own (reminders, job ends) link to ${portalBaseUrl()}. Set PORTAL_URL to the address people reach the portal at.`,
      );
    }
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DataDirLockedError) {
      console.error(`\n[portal] cannot start.\n${error.message}\n`);
    } else {
      console.error('[portal] cannot open the database:', error);
    }
    process.exit(1);
  }
}
