// A Postgres fail-over under load (issue #31): the portal (two web processes and a worker behind haproxy,
// scripts/ha-stack.sh) runs on a primary with a synchronous standby managed by Patroni and etcd (when
// installed, else promoted by the script: scripts/pg-failover-pair.sh), reached
// through a multi-host DATABASE_URL with target_session_attrs=primary. 16 clients submit jobs through haproxy,
// each retrying a 503 with the same Idempotency-Key after Retry-After (capped at a second here); the primary
// dies and the standby is promoted. Then: no 5xx but 503, every 503 within 30 s of the switch, submissions
// succeed afterwards, every 200 has its job and its reservation on the new primary (nothing committed was
// lost), one job per key (nothing doubled), the worker settles jobs again on the new primary, and no process died.
// Needs TEST_DATABASE_URL's machine to have PostgreSQL's server binaries and the OS user postgres (Debian's
// postgresql), and haproxy.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import postgres from 'postgres';
import { prepareRacers, raceJob, root, stackControl, submitJob, type Racer } from './load-balanced';

const OFFSET = Number(process.env.E2E_PORT ?? 3100) - 3100;
const BASE = 3170 + OFFSET;
const PORTS = { balancer: BASE, web: [BASE + 1, BASE + 2] as [number, number], stats: BASE + 3 };
const PG_PORTS = [5441 + OFFSET, 5442 + OFFSET] as const;
const haproxy = spawnSync('sh', ['-c', 'command -v haproxy || ls /usr/sbin/haproxy'], { encoding: 'utf8' }).stdout.trim();
const postgresServer = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`));
const CLIENTS = 16;

test('a Postgres fail-over under 16 submitting clients: only 503s with Retry-After around the switch, nothing lost or doubled', async () => {
  test.skip(!process.env.TEST_DATABASE_URL, 'the Postgres tier (TEST_DATABASE_URL) runs it');
  test.skip(!haproxy || !postgresServer, 'needs haproxy and PostgreSQL server binaries (Debian: haproxy, postgresql)');
  test.setTimeout(420_000);
  const pairDir = mkdtempSync(path.join(tmpdir(), 'portal-e2e-pg-pair-'));
  chmodSync(pairDir, 0o755); // the OS user postgres runs the servers in it
  const pairEnv = { ...process.env, PGPAIR_DIR: path.join(pairDir, 'pg'), PGPAIR_PORTS: PG_PORTS.join(' ') };
  const pair = (command: string) => execFileSync('scripts/pg-failover-pair.sh', [command], { cwd: root, env: pairEnv, encoding: 'utf8', timeout: 120_000 }).trim();
  const haDir = path.join(pairDir, 'ha');
  const hosts = `127.0.0.1:${PG_PORTS[0]},127.0.0.1:${PG_PORTS[1]}`;
  const databaseUrl = `postgres://portal@${hosts}/portal?target_session_attrs=primary`;
  const stack = stackControl({ databaseUrl, tenantUrl: `postgres://portal_authenticator@${hosts}/portal?target_session_attrs=primary`, haDir, ports: PORTS });
  try {
    console.log(pair('start'));
    console.log(stack.start());
    const racers = await prepareRacers(databaseUrl, { tenants: 4 });
    const balancer = `http://127.0.0.1:${PORTS.balancer}`;

    // Each client submits one job after another; a 503 is sent again with the same key and body after its Retry-After (at most a second here).
    const outcomes: { at: number; status: number; retryAfter: number }[] = [];
    const accepted = new Map<string, string>();
    let stopAt = Infinity;
    let n = 0;
    const client = async (racer: Racer) => {
      while (Date.now() < stopAt) {
        const i = n++;
        const key = `failover-${randomUUID()}`;
        const body = raceJob(racer, i);
        for (;;) {
          const answer = await submitJob(balancer, racer, key, body);
          outcomes.push({ at: Date.now(), status: answer.status, retryAfter: answer.retryAfter });
          if (answer.status === 200 && answer.id) {
            const before = accepted.get(key);
            expect(before === undefined || before === answer.id, `key ${key} answered ${before} and ${answer.id}`).toBe(true);
            accepted.set(key, answer.id);
            break;
          }
          if (answer.status !== 503) throw new Error(`a submission was answered ${answer.status}: ${JSON.stringify(answer.error)}`);
          await new Promise((resolve) => setTimeout(resolve, Math.min(answer.retryAfter || 1, 1) * 1000));
        }
      }
    };
    const clients = Promise.all(racers.slice(0, CLIENTS).map((racer) => client(racer)));

    await new Promise((resolve) => setTimeout(resolve, 8_000));
    const before = accepted.size;
    const switchStarted = Date.now();
    console.log(pair('failover'));
    const switched = Date.now();
    // Submissions go on until they have succeeded again for a while on the new primary.
    await expect.poll(() => outcomes.filter((o) => o.at > switched && o.status === 200).length, { timeout: 90_000, intervals: [500] }).toBeGreaterThan(50);
    stopAt = Date.now();
    await clients;

    const statuses = new Map<number, number>();
    for (const o of outcomes) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
    const unavailable = outcomes.filter((o) => o.status === 503);
    const lastUnavailable = unavailable.length ? Math.max(...unavailable.map((o) => o.at)) : switched;
    console.log(`[failover] ${accepted.size} jobs accepted (${before} before the switch), statuses ${JSON.stringify(Object.fromEntries(statuses))}; the switch took ${switched - switchStarted} ms, the last 503 came ${((lastUnavailable - switched) / 1000).toFixed(1)} s after it`);
    expect([...statuses.keys()].sort()).toEqual(unavailable.length ? [200, 503] : [200]);
    expect(unavailable.every((o) => o.at >= switchStarted - 1000 && o.at <= switched + 30_000)).toBe(true);
    expect(unavailable.every((o) => o.retryAfter > 0)).toBe(true);
    expect(before).toBeGreaterThan(20);

    // On the new primary: every accepted job, each reserved once, one job per key, and the worker settling again.
    const db = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
    try {
      const [server] = await db<{ port: number }[]>`select inet_server_port() as port`;
      expect(server?.port).toBe(PG_PORTS[1]);
      const rows = await db<{ id: string; key: string; reserves: number }[]>`
        select j.id, j.idempotency_key as key, (select count(*)::int from ledger_entries l where l.job_id = j.id and l.kind = 'reserve') as reserves from jobs j`;
      const byId = new Map(rows.map((r) => [r.id, r]));
      const lost = [...accepted.values()].filter((id) => byId.get(id)?.reserves !== 1);
      expect(lost).toEqual([]);
      // Every job in the database was answered 200 to its client (none made by an attempt that seemed to fail), and no key made two.
      expect(rows.length).toBe(accepted.size);
      expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
      await expect.poll(async () => (await db<{ n: number }[]>`select count(*)::int as n from jobs where settled_at > ${new Date(switched)}`)[0]!.n, { timeout: 60_000, intervals: [1000] }).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
    // No process died of the switch (postgres.js ended one whose transaction's server went away, until
    // patches/postgres+3.4.9.patch): the worker and both web processes are the ones started.
    const status = stack.status();
    expect(status.running, status.text).toBe(true);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${stack.logs()}`, { cause: error });
  } finally {
    stack.stop();
    try {
      pair('stop');
    } catch {
      /* stopped as far as it goes */
    }
    rmSync(pairDir, { recursive: true, force: true });
  }
});
