// Several processes behind a load balancer (issue #31): scripts/ha-stack.sh starts two web processes
// (without workers of their own) and one worker process on one fresh Postgres, behind Debian's haproxy.
// 1,000 submissions through the REST API race, alternating between the two web processes, 40 at a time,
// from 20 people of 5 tenants (one with a tight budget); one in ten repeats an earlier submission's
// Idempotency-Key and body on the other process. Meanwhile the worker settles what the simulated cluster
// ends. Then: no 5xx, every refusal a budget one, one job per key, every accepted job reserved once,
// nothing settled twice, no allocation past its grant, every cached balance equal to its ledger; haproxy
// hands requests to both processes, and the one worker process leads. Then the restore drill: npm run
// backup while the portal runs, npm run restore into a new database, checked against the manifest.
// Needs a real Postgres (TEST_DATABASE_URL) and haproxy (.ci/run installs it).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import postgres from 'postgres';
import { METRICS_TOKEN, prepareRacers, raceJob, root, stackControl, submitJob, type Racer } from './load-balanced';

const ADMIN_URL = process.env.TEST_DATABASE_URL;
const BASE = Number(process.env.E2E_PORT ?? 3100) + 60;
const PORTS = { balancer: BASE, web: [BASE + 1, BASE + 2] as [number, number], stats: BASE + 3 };
const haproxy = spawnSync('sh', ['-c', 'command -v haproxy || ls /usr/sbin/haproxy'], { encoding: 'utf8' }).stdout.trim();

test('1,000 submissions race through two web processes behind haproxy: no 5xx, one job per key, nothing doubled or overspent', async () => {
  test.skip(!ADMIN_URL, 'needs a real Postgres (TEST_DATABASE_URL): several processes share it');
  test.skip(!haproxy, 'needs haproxy (apt-get install haproxy; .ci/run installs it)');
  test.setTimeout(600_000);
  const name = `portal_e2e_ha_${randomUUID().slice(0, 8)}`;
  const admin = postgres(ADMIN_URL!, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  const url = Object.assign(new URL(ADMIN_URL!), { pathname: `/${name}` }).toString();
  const haDir = mkdtempSync(path.join(tmpdir(), 'portal-e2e-ha-'));
  const stack = stackControl({ databaseUrl: url, tenantUrl: Object.assign(new URL(url), { username: 'portal_authenticator' }).toString(), haDir, ports: PORTS });
  const db = postgres(url, { max: 4, onnotice: () => undefined });
  try {
    console.log(stack.start());
    const people = await prepareRacers(url, { tenants: 5, tightGpuHours: 20 });

    // haproxy hands requests round to both processes.
    const served = new Set<string>();
    for (let i = 0; i < 8; i++) served.add((await fetch(`http://127.0.0.1:${PORTS.balancer}/api/health`)).headers.get('x-portal-server') ?? '?');
    expect([...served].sort()).toEqual(['web1', 'web2']);

    // The race.
    const statuses = new Map<number, number>();
    const refusals = new Map<string, number>();
    const accepted = new Map<string, Set<string>>();
    const sent: { key: string; body: Record<string, unknown>; person: Racer }[] = [];
    let next = 0;
    const submitOne = async (n: number) => {
      const earlier = n % 10 === 9 ? sent[n - 5] : undefined;
      const person = earlier?.person ?? people[n % people.length]!;
      const key = earlier?.key ?? `ha-${randomUUID()}`;
      const body = earlier?.body ?? raceJob(person, n);
      if (!earlier) sent[n] = { key, body, person };
      const answer = await submitJob(`http://127.0.0.1:${PORTS.web[n % 2]!}`, person, key, body);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 200 && answer.id) accepted.set(key, (accepted.get(key) ?? new Set()).add(answer.id));
      else {
        const refusal = `${answer.status} ${answer.error?.code ?? '?'}: ${answer.error?.message?.replace(/[\d.,€]+/g, '#') ?? ''}`;
        refusals.set(refusal, (refusals.get(refusal) ?? 0) + 1);
      }
    };
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        while (next < 1000) await submitOne(next++);
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`[ha] 1,000 submissions in ${seconds.toFixed(1)} s: statuses ${JSON.stringify(Object.fromEntries(statuses))}, refusals ${JSON.stringify(Object.fromEntries(refusals))}`);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    // Every refusal is the tight tenant's budget running out (412, naming the GPU-hours it needs and has).
    expect([...refusals.keys()].filter((r) => !/^412 PRECONDITION_FAILED: Not enough budget/.test(r))).toEqual([]);
    expect(refusals.size).toBeGreaterThan(0); // the tight tenant's budget ran out
    for (const [key, ids] of accepted) expect(ids.size, key).toBe(1);

    // The worker settles what the cluster ends; wait for a good share of it.
    await expect.poll(async () => (await db<{ n: number }[]>`select count(*)::int as n from jobs where settled_at is not null`)[0]!.n, { timeout: 120_000, intervals: [1000] }).toBeGreaterThan(200);

    const [checks] = await db<{ doubledKeys: number; unreserved: number; doubleCharged: number; doubleReleased: number; overspent: number; jobs: number }[]>`
      select (select count(*)::int from (select 1 from jobs group by org_id, idempotency_key having count(*) > 1) d) as "doubledKeys",
             (select count(*)::int from jobs j where not exists (select 1 from ledger_entries l where l.job_id = j.id and l.kind = 'reserve')) as unreserved,
             (select count(*)::int from (select 1 from ledger_entries where kind = 'charge' and job_id is not null group by job_id, task_index having count(*) > 1) d) as "doubleCharged",
             (select count(*)::int from (select 1 from ledger_entries where kind = 'release' and job_id is not null group by job_id, task_index, extension having count(*) > 1) d) as "doubleReleased",
             (select count(*)::int from allocations where charged - overrun + reserved + expired > granted) as overspent,
             (select count(*)::int from jobs) as jobs`;
    expect(checks).toEqual({ doubledKeys: 0, unreserved: 0, doubleCharged: 0, doubleReleased: 0, overspent: 0, jobs: accepted.size });
    const [drift] = await db<{ n: number }[]>`
      select count(*)::int as n from allocations a
      left join (select allocation_id, sum(amount) filter (where kind in ('grant', 'adjust')) as g, coalesce(sum(amount) filter (where kind = 'reserve'), 0) - coalesce(sum(amount) filter (where kind = 'release'), 0) as r,
                        coalesce(sum(amount) filter (where kind = 'charge'), 0) - coalesce(sum(amount) filter (where kind = 'refund'), 0) as c
                 from ledger_entries group by allocation_id) s on s.allocation_id = a.id
      where (a.granted, a.reserved, a.charged) is distinct from (coalesce(s.g, 0), coalesce(s.r, 0), coalesce(s.c, 0))`;
    expect(drift!.n).toBe(0);

    // One worker leads, and it is the worker process: neither web process runs one.
    for (const port of PORTS.web) {
      const text = await (await fetch(`http://127.0.0.1:${port}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      expect(text).toMatch(/^portal_worker_leader 0$/m);
      expect(text).toMatch(new RegExp(`^portal_process_info\\{name="web${PORTS.web.indexOf(port) + 1}"\\} 1$`, 'm'));
    }

    // The restore drill after the race, as an operator runs it while the portal keeps running: npm run backup,
    // then npm run restore into a new, empty database, checked against the backup's manifest and the ledger.
    const backups = path.join(haDir, 'backups');
    const backedUp = execFileSync('npm', ['run', '-s', 'backup', '--', '--dir', backups], { cwd: root, env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8', timeout: 120_000 });
    expect(backedUp).toContain(`${accepted.size} jobs`);
    const file = path.join(backups, readdirSync(backups).find((f) => f.endsWith('.dump'))!);
    const restoredName = `${name}_restored`;
    await admin.unsafe(`create database ${restoredName}`);
    try {
      const restoredUrl = Object.assign(new URL(ADMIN_URL!), { pathname: `/${restoredName}` }).toString();
      const restored = execFileSync('npm', ['run', '-s', 'restore', '--', file, '--database-url', restoredUrl], { cwd: root, env: process.env, encoding: 'utf8', timeout: 120_000 });
      console.log(restored.trim());
      expect(restored).toContain('Checked: every count, the ledger’s sums and the audit log match the manifest; every allocation’s balance matches its ledger.');
    } finally {
      await admin.unsafe(`drop database if exists ${restoredName} with (force)`).catch(() => undefined);
    }
  } finally {
    stack.stop();
    await db.end();
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
    rmSync(haDir, { recursive: true, force: true });
  }
});
