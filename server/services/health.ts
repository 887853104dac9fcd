// Liveness of the portal's dependencies: the database and the scheduler.
import { sql } from 'drizzle-orm';
import { env } from '~/server/env.js';
import { startAppDb } from '~/server/db';

export interface Health {
  status: 'ok' | 'degraded';
  database: { ok: boolean; driver: 'pglite' | 'postgres'; latencyMs?: number; error?: string };
  scheduler: { ok: boolean; adapter: 'simulated' | 'slurm'; detail: string };
  time: string;
}

/** checkHealth probes the database with a query and reports the configured scheduler. */
export async function checkHealth(): Promise<Health> {
  const config = env();
  const driver = config.DATABASE_URL ? 'postgres' : 'pglite';
  let database: Health['database'];
  const started = performance.now();
  try {
    const handle = await startAppDb();
    await handle.db.execute(sql`select 1`);
    database = { ok: true, driver, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    database = { ok: false, driver, error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
  // The scheduler adapter arrives with the jobs issue; until then no job can be submitted, so report that plainly.
  const scheduler: Health['scheduler'] = {
    ok: true,
    adapter: config.SCHEDULER,
    detail: 'no scheduler adapter is wired yet: job submission is not available in this version',
  };
  return { status: database.ok && scheduler.ok ? 'ok' : 'degraded', database, scheduler, time: new Date().toISOString() };
}
