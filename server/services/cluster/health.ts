// Liveness of the portal's dependencies: the database and the scheduler (asked to describe its cluster).
import { sql } from 'drizzle-orm';
import { env } from '~/server/env.js';
import { startAppDb } from '~/server/db';
import { getScheduler } from '~/server/scheduler';

export interface Health {
  status: 'ok' | 'degraded';
  database: { ok: boolean; driver: 'pglite' | 'postgres'; latencyMs?: number; error?: string };
  scheduler: { ok: boolean; adapter: 'simulated' | 'slurm'; detail: string; nodes?: number; nodesDown?: number; pendingJobs?: number; runningJobs?: number };
  time: string;
}

/**
 * checkHealth probes the database with a query and reports the configured scheduler. `readiness` (a load
 * balancer's question: can this process serve?) asks the database alone: a scheduler outage must not take
 * every web process out of the balancer, since the portal keeps working while jobs wait for it.
 */
export async function checkHealth(options: { readiness?: boolean } = {}): Promise<Health> {
  const config = env();
  const driver = config.DATABASE_URL ? 'postgres' : 'pglite';
  let database: Health['database'];
  let scheduler: Health['scheduler'];
  const started = performance.now();
  try {
    const handle = await startAppDb();
    await handle.db.execute(sql`select 1`);
    database = { ok: true, driver, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
    if (options.readiness) {
      scheduler = { ok: true, adapter: config.SCHEDULER, detail: 'not asked: a readiness check asks the database alone' };
      return { status: 'ok', database, scheduler, time: new Date().toISOString() };
    }
    try {
      const cluster = await (await getScheduler(handle.db)).describeCluster();
      scheduler = {
        ok: true,
        adapter: config.SCHEDULER,
        detail: config.SCHEDULER === 'simulated' ? `simulated cluster at ${config.SIM_SPEED}× wall-clock speed` : 'slurmrestd',
        nodes: cluster.nodes.length,
        nodesDown: cluster.nodes.filter((n) => n.state === 'down').length,
        pendingJobs: cluster.pendingJobs,
        runningJobs: cluster.runningJobs,
      };
    } catch (error) {
      scheduler = { ok: false, adapter: config.SCHEDULER, detail: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
    }
  } catch (error) {
    database = { ok: false, driver, error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
    scheduler = { ok: false, adapter: config.SCHEDULER, detail: 'not checked: the database is not available' };
  }
  return { status: database.ok && scheduler.ok ? 'ok' : 'degraded', database, scheduler, time: new Date().toISOString() };
}
