// The restore drill (issue #31): a backup of `npm run backup` restored into a fresh database holds what the
// source held — every row count, the ledger's sums by kind, the audit log (count, last id, digest) — and every
// allocation's cached balance equals its ledger. On the demo centre, and after 1,000 submissions raced by
// many clients (some sharing idempotency keys) with settlements meanwhile. Real Postgres (pg_dump and
// pg_restore) when TEST_DATABASE_URL is set; the embedded PGlite folder always.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db, type DbHandle } from '~/db/client';
import { jobs, ledgerEntries } from '~/db/schema';
import { AppError } from '~/server/errors';
import { backupPglite, backupPostgres, compareFacts, factsOf, readManifest, restorePostgres, rowsOf } from '~/server/backup';
import { seedDemoCentreIfEmpty } from '~/server/services/demo/demo-seed';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, openTestDb, testDbUrl } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-backup-test-'));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

/** A new, empty Postgres database beside the test's, and a way to drop it. */
async function emptyPostgres(): Promise<{ url: string; handle: DbHandle; drop: () => Promise<void> }> {
  const { default: postgres } = await import('postgres');
  const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => undefined });
  const name = `portal_restore_${randomBytes(6).toString('hex')}`;
  await admin.unsafe(`create database ${name}`);
  const url = Object.assign(new URL(process.env.TEST_DATABASE_URL!), { pathname: `/${name}` }).toString();
  const handle = await openDb({ driver: 'postgres', url, max: 2 });
  return {
    url,
    handle,
    drop: async () => {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Backs up a Postgres test database, restores it into a fresh one and answers the restore's findings. */
async function drillOnPostgres(source: DbHandle) {
  const { file, manifest } = await backupPostgres(source.db, testDbUrl(source), path.join(folder, randomUUID()));
  expect(fs.existsSync(`${file}.manifest.json`)).toBe(true);
  const target = await emptyPostgres();
  try {
    const restored = await restorePostgres(target.handle.db, target.url, file);
    // The restored database is one the portal runs on: its migrations are all there, nothing to apply.
    const [applied] = await rowsOf<{ n: number }>(target.handle.db, sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
    return { manifest, restored, applied: applied!.n };
  } finally {
    await target.drop();
  }
}

/**
 * race submits `total` jobs through the API from the members of a few tenants, `inFlight` at a time; one in
 * ten reuses the key of an earlier submission with the same body (a client's retry). Then the scheduler ends
 * half of the jobs and the reconciler settles them. Answers what the callers saw.
 */
async function race(db: Db, total: number, inFlight: number) {
  const staff = await createStaff(db, 'admin');
  const { port, set } = scriptedScheduler();
  const today = new Date().toISOString().slice(0, 10);
  const people: { caller: ReturnType<typeof callerFor>; allocationId: string }[] = [];
  for (let t = 0; t < 4; t++) {
    const owner = await createTenant(db, { name: `Racing ${t} ${randomUUID().slice(0, 4)}` });
    // A tight budget for one tenant: some of its submissions must be refused, none may overspend.
    const { allocationId } = await activeAllocation(db, owner, staff, { gpuHours: t === 0 ? 20 : 2000, today, scheduler: port });
    // Room for the whole race in flight: the budget is what refuses, not the queue's limits.
    await callerFor(db, { userId: staff.userId, scheduler: port }).staff.setAllocationLimits({ allocationId, maxGpusAtOnce: 2000, maxWalltimeHours: 24, maxQueuedJobs: 1000, reason: 'A race of 1,000 submissions' });
    for (const who of [owner, await addMember(db, owner, 'manager'), await addMember(db, owner, 'manager')]) {
      people.push({ caller: callerFor(db, { userId: who.userId, orgId: owner.orgId, scheduler: port }), allocationId });
    }
  }
  const bodies: { n: number; key: string }[] = [];
  let next = 0;
  const outcomes = { accepted: 0, refused: 0, unexpected: [] as string[] };
  const ids = new Map<string, Set<string>>();
  const submitOne = async (n: number) => {
    const reused = n % 10 === 9 ? bodies[n - 5] : undefined;
    const body = reused ?? { n, key: randomUUID() };
    if (!reused) bodies[n] = body;
    const who = people[body.n % people.length]!;
    try {
      const job = await who.caller.job.submit({
        allocationId: who.allocationId,
        resourceClassId: 'h100',
        name: `race-${body.n}`,
        kind: 'training',
        gpus: 1 + (body.n % 2),
        nodes: 1,
        walltimeMinutes: 30,
        image: 'nvcr.io/nvidia/pytorch:24.05-py3',
        command: 'torchrun train.py',
        env: {},
        idempotencyKey: body.key,
      });
      outcomes.accepted++;
      ids.set(body.key, (ids.get(body.key) ?? new Set()).add(job.id));
    } catch (error) {
      const cause = error instanceof TRPCError ? error.cause : error;
      if (cause instanceof AppError && ['ledger.insufficientGpu', 'job.gpusAtOnce', 'job.queuedJobs'].includes(cause.key)) outcomes.refused++;
      else outcomes.unexpected.push(cause instanceof Error ? cause.message : String(cause));
    }
  };
  // Meanwhile the scheduler ends every other job it holds (10 minutes on its GPUs) and the reconciler settles them.
  const ended = new Set<string>();
  const settleSome = async () => {
    const open = await db.select({ id: jobs.id, gpus: jobs.gpus }).from(jobs).where(eq(jobs.state, 'PENDING'));
    for (const job of open.filter((j) => !ended.has(j.id) && j.id.charCodeAt(0) % 2 === 0)) {
      ended.add(job.id);
      set(job.id, { state: 'COMPLETED', startedAt: new Date(Date.now() - 600_000), endedAt: new Date(), exitCode: 0, gpuSeconds: job.gpus * 600, energyWh: job.gpus * 100 });
    }
    return reconcileOnce(db, port, new Date());
  };
  let racing = true;
  const settler = (async () => {
    while (racing) {
      await settleSome();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await submitOne(next++);
    }),
  );
  racing = false;
  await settler;
  for (let round = 0; round < 20; round++) if ((await settleSome()).settled === 0) break;
  return { outcomes, ids };
}

describe('the restore drill on PGlite (the embedded folder)', () => {
  it('restores the demo centre into a new folder with every count, sum, the audit log and every balance as backed up', async () => {
    const dataDir = path.join(folder, 'pglite-source');
    const source = await openDb({ driver: 'pglite', dataDir, command: 'backup test' });
    let file: string;
    try {
      const { migrateDb } = await import('~/db/client');
      await migrateDb(source);
      const { syncCatalogue } = await import('~/server/services/catalogue');
      const { DEFAULT_CATALOGUE } = await import('~/server/catalogue');
      await syncCatalogue(source.db, DEFAULT_CATALOGUE);
      expect(await seedDemoCentreIfEmpty(source.db)).toBe(true);
      ({ file } = await backupPglite(source.db, dataDir, path.join(folder, 'pglite-backups')));
    } finally {
      await source.close();
    }
    const manifest = await readManifest(file);
    expect(manifest.facts.tables.ledger_entries).toBeGreaterThan(1000);
    expect(manifest.facts.drifted).toBe(0);
    const restored = await openDb({ driver: 'pglite', dataDir: path.join(folder, 'pglite-restored'), command: 'restore test', loadDataDir: new Blob([fs.readFileSync(file)]) });
    try {
      const facts = await factsOf(restored.db);
      expect(compareFacts(manifest.facts, facts)).toEqual([]);
      expect(facts).toEqual(manifest.facts);
    } finally {
      await restored.close();
    }
  }, 180_000);

  it('refuses a backup whose file is not the one its manifest describes', async () => {
    const file = path.join(folder, 'damaged.dump');
    fs.writeFileSync(file, 'not a backup');
    fs.writeFileSync(`${file}.manifest.json`, JSON.stringify({ format: 'portal-backup/1', file: 'damaged.dump', bytes: 12, sha256: '0'.repeat(64) }));
    await expect(readManifest(file)).rejects.toThrow(/sha256 is [0-9a-f]{64}, its manifest says 0{64}: the file is damaged/);
    fs.writeFileSync(`${file}.manifest.json`, JSON.stringify({ format: 'portal-backup/1', file: 'damaged.dump', bytes: 99, sha256: '0'.repeat(64) }));
    await expect(readManifest(file)).rejects.toThrow(/has 12 bytes, its manifest says 99/);
    await expect(readManifest(path.join(folder, 'missing.dump'))).rejects.toThrow(/no manifest beside the backup/);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('the restore drill on Postgres (pg_dump, pg_restore)', () => {
  it('restores the demo centre into a fresh database with every count, sum, the audit log and every balance as backed up', async () => {
    const source = await openTestDb('postgres');
    try {
      expect(await seedDemoCentreIfEmpty(source.db)).toBe(true);
      const { manifest, restored, applied } = await drillOnPostgres(source);
      expect(manifest.facts.tables.jobs).toBeGreaterThan(100);
      expect(manifest.facts.audit.count).toBeGreaterThan(10);
      expect(restored.problems).toEqual([]);
      expect(restored.facts).toEqual(manifest.facts);
      expect(applied).toBe(manifest.facts.migrations);
      // A restore goes only into an empty database: never over the one it came from.
      await expect(restorePostgres(source.db, testDbUrl(source), restored.file)).rejects.toThrow(/already holds \d+ tables: restore into a new, empty one/);
    } finally {
      await source.close();
    }
  }, 240_000);

  it('restores after 1,000 raced submissions and their settlements: one job per key, no overspend, balances as the ledger', async () => {
    const source = await openTestDb('postgres');
    try {
      const { outcomes, ids } = await race(source.db, 1000, 40);
      expect(outcomes.unexpected).toEqual([]);
      expect(outcomes.accepted + outcomes.refused).toBe(1000);
      expect(outcomes.refused).toBeGreaterThan(0); // the tight budget was reached
      expect(outcomes.accepted).toBeGreaterThan(700);
      for (const [key, seen] of ids) expect(seen.size, key).toBe(1);
      const [overspent] = await rowsOf<{ n: number }>(source.db, sql`select count(*)::int as n from allocations where charged - overrun + reserved + expired > granted`);
      expect(overspent!.n).toBe(0);
      const [perKey] = await rowsOf<{ n: number }>(source.db, sql`select count(*)::int as n from (select idempotency_key from jobs group by org_id, idempotency_key having count(*) > 1) d`);
      expect(perKey!.n).toBe(0);
      const charged = await source.db.select({ n: sql<number>`count(*)::int` }).from(ledgerEntries).where(and(eq(ledgerEntries.kind, 'charge')));
      expect(charged[0]!.n).toBeGreaterThan(200);
      const { manifest, restored } = await drillOnPostgres(source);
      expect(manifest.facts.drifted).toBe(0);
      expect(manifest.facts.tables.jobs).toBe(ids.size);
      expect(restored.problems).toEqual([]);
      expect(restored.facts).toEqual(manifest.facts);
    } finally {
      await source.close();
    }
  }, 300_000);
});
