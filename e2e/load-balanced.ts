// What the tests of a load-balanced portal share (e2e/ha.spec.ts, e2e/failover.spec.ts): the stack of
// scripts/ha-stack.sh on a database of their own, and people with budgets and API tokens to submit with.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..');
export const METRICS_TOKEN = 'load-balanced-test-metrics-token-0123';

export interface StackPorts {
  balancer: number;
  web: [number, number];
  stats: number;
}

/** stackControl starts, stops and reports scripts/ha-stack.sh with the test's database and ports; a failed start shows the logs. */
export function stackControl(options: { databaseUrl: string; tenantUrl: string; haDir: string; ports: StackPorts }) {
  const env = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    DATABASE_TENANT_URL: options.tenantUrl,
    HA_DIR: options.haDir,
    HA_PORT: String(options.ports.balancer),
    HA_WEB_PORTS: options.ports.web.join(' '),
    HA_STATS_PORT: String(options.ports.stats),
    DEMO_SEED: 'off',
    PORTAL_URL: '',
    SMTP_URL: '',
    SIM_SPEED: '600',
    SIM_NODE_MTBF_HOURS: '0',
    METRICS_TOKEN,
    LOG_LEVEL: 'warn',
  };
  const run = (command: string) => execFileSync('scripts/ha-stack.sh', [command], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });
  const logs = () =>
    ['worker.log', `web-${options.ports.web[0]}.log`, `web-${options.ports.web[1]}.log`, 'haproxy.log']
      .map((f) => `--- ${f}\n${existsSync(path.join(options.haDir, 'log', f)) ? readFileSync(path.join(options.haDir, 'log', f), 'utf8').slice(-3000) : '(none)'}`)
      .join('\n');
  return {
    start: () => {
      try {
        return run('start').trim();
      } catch (error) {
        throw new Error(`the stack did not start: ${(error as { stderr?: string }).stderr ?? String(error)}\n${logs()}`, { cause: error });
      }
    },
    stop: () => {
      try {
        run('stop');
      } catch {
        /* stopped as far as it goes */
      }
    },
    /** The stack's processes and whether each still runs (`scripts/ha-stack.sh status`). */
    status: () => {
      const answer = spawnSync('scripts/ha-stack.sh', ['status'], { cwd: root, env, encoding: 'utf8' });
      return { running: answer.status === 0, text: answer.stdout.trim() };
    },
    logs,
  };
}

/** A person who submits: their API token (jobs:write) and the allocation they submit to. */
export interface Racer {
  token: string;
  allocationId: string;
}

/**
 * prepareRacers makes `tenants` tenants of four people each (the owner and three managers), one allocation
 * per tenant (the first with `tightGpuHours` when given, so it runs out) with room for a race in flight, and
 * a jobs:write token per person — through the services on the stack's database, as staff and an operator would.
 */
export async function prepareRacers(url: string, options: { tenants: number; tightGpuHours?: number }): Promise<Racer[]> {
  const { migrateDb, openDb } = await import('../db/client');
  const harness = await import('../server/testing/harness');
  const { loadActor } = await import('../server/services/identity/accounts');
  const { createApiToken } = await import('../server/services/identity/api-tokens');
  // Approvals here need no cluster: the stack's own processes run the simulated one.
  const { port: scheduler } = (await import('../server/testing/scripted-scheduler')).scriptedScheduler();
  const handle = await openDb({ driver: 'postgres', url, max: 4 });
  try {
    // The stack's processes migrate the new database and write the catalogue as they start: wait on their
    // lock until that is done (a web process may answer its health check before the worker has finished
    // on a busy machine), or do it first, as they would.
    const [{ configuredCatalogue }, { syncCatalogue }] = await Promise.all([import('../server/catalogue'), import('../server/services/catalogue')]);
    await migrateDb(handle, undefined, { thenUnderLock: () => syncCatalogue(handle.db, configuredCatalogue()) });
    const db = handle.db;
    const staff = await harness.createStaff(db, 'admin');
    const today = new Date().toISOString().slice(0, 10);
    const racers: Racer[] = [];
    for (let t = 0; t < options.tenants; t++) {
      const owner = await harness.createTenant(db, { name: `Racing tenant ${t} ${randomUUID().slice(0, 4)}` });
      const gpuHours = t === 0 && options.tightGpuHours ? options.tightGpuHours : 5000;
      const { allocationId } = await harness.activeAllocation(db, owner, staff, { gpuHours, today, scheduler });
      await harness.callerFor(db, { userId: staff.userId, scheduler }).staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 4000, maxWalltimeHours: 24, maxQueuedJobs: 2000, reason: 'A race of submissions' });
      for (const who of [owner, await harness.addMember(db, owner, 'manager'), await harness.addMember(db, owner, 'manager'), await harness.addMember(db, owner, 'manager')]) {
        const actor = (await loadActor(db, who.userId))!;
        const { token } = await createApiToken(db, actor, { name: 'race', orgId: owner.orgId, scopes: ['jobs:write'], expiresInDays: 1 }, new Date());
        racers.push({ token, allocationId });
      }
    }
    return racers;
  } finally {
    await handle.close();
  }
}

/** A job body to submit: small, on h100, ending after a simulated minute or a few. */
export function raceJob(racer: Racer, n: number): Record<string, unknown> {
  return { allocationId: racer.allocationId, resourceClassId: 'h100', name: `race-${n}`, kind: 'training', gpus: 1 + (n % 2), nodes: 1, walltimeMinutes: 30, image: 'nvcr.io/nvidia/pytorch:24.05-py3', command: 'torchrun train.py', estimate: { runtimeSeconds: 60 + (n % 7) * 30 } };
}

/** submitJob POSTs a job to /api/v1/jobs with its Idempotency-Key; answers the status, the job's id, the refusal and Retry-After. */
export async function submitJob(base: string, racer: Racer, key: string, body: Record<string, unknown>) {
  const response = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: { authorization: `Bearer ${racer.token}`, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
  const answer = (await response.json().catch(() => ({}))) as { id?: string; error?: { code?: string; message?: string } };
  return { status: response.status, id: answer.id, error: answer.error, retryAfter: Number(response.headers.get('retry-after') ?? 0), server: response.headers.get('x-portal-server') };
}
