// Contention on real Postgres, as several portal processes meet it: the worker's leadership is
// re-checked every round (a process whose lock connection dropped steps down and another leads), and
// a transaction stuck behind a lock held too long ends with a clear "busy" refusal after bounded
// retries, not a 500 and not an endless wait. Real Postgres only: PGlite has one connection and no
// lock waits.
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type DbHandle } from '~/db/client';
import { allocations } from '~/db/schema';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { AppError } from '~/server/errors';
import { activeAllocation, callerFor, createStaff, createTenant, openTestDb, testDbUrl } from '~/server/testing/harness';
import { startWorker, WORKER_LOCK_KEY } from '~/server/worker';
import { adjustAllocation } from '~/server/services/ledger/ledger';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** A scheduler that only counts the rounds that asked it anything. */
function countingScheduler() {
  let calls = 0;
  const port: SchedulerPort = {
    submit: () => Promise.reject(new Error('not used')),
    cancel: () => Promise.resolve(),
    jobs: () => Promise.resolve([]),
    describeCluster: () => {
      calls++;
      return Promise.resolve({ at: new Date(), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 });
    },
  };
  return { port, calls: () => calls };
}

describe.runIf(onPostgres)('contention on postgres', () => {
  let handle: DbHandle;
  let other: DbHandle;

  beforeAll(async () => {
    handle = await openTestDb('postgres');
    // A second process's pool on the same database, with a short lock timeout.
    other = await openDb({ driver: 'postgres', url: testDbUrl(handle), max: 4, lockTimeoutMs: 200 });
  });
  afterAll(async () => {
    await other?.close();
    await handle?.close();
  });

  it('a leader whose lock connection dropped steps down, and the other process leads', async () => {
    const lines: string[] = [];
    const scheduler = countingScheduler();
    // Each round samples the cluster once a minute; a clock a minute ahead per round makes every round sample.
    let minute = 0;
    const worker = startWorker(handle, scheduler.port, { reconcileMs: 3_600_000, log: (l) => lines.push(l), now: () => new Date(Date.UTC(2026, 11, 1, 10, minute++)) });
    try {
      await worker.tick();
      expect(lines).toContain('[worker] this process runs the reconciler');
      expect(await other.tryAdvisoryLock(WORKER_LOCK_KEY)).toBeNull();
      const acting = scheduler.calls();
      expect(acting).toBeGreaterThan(0);

      // The leader's lock connection dies (a network cut, a restarted pooler); the other process takes over.
      await other.db.execute(sql`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and objid = ${WORKER_LOCK_KEY}`);
      const lease = await (async () => {
        for (let i = 0; i < 50; i++) {
          const taken = await other.tryAdvisoryLock(WORKER_LOCK_KEY);
          if (taken) return taken;
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error('the other process never got the worker lock');
      })();

      await worker.tick();
      expect(lines).toContain('[worker] lost the worker lock (connection dropped?): this process stops acting');
      // It did not act in that round: only the new leader does.
      expect(scheduler.calls()).toBe(acting);
      expect(await lease.stillHeld()).toBe(true);

      // The other process lets go; the first leads again at its next round.
      await lease.release();
      await worker.tick();
      expect(lines.filter((l) => l === '[worker] this process runs the reconciler')).toHaveLength(2);
      expect(scheduler.calls()).toBeGreaterThan(acting);
    } finally {
      worker.stop();
    }
  });

  it('a change stuck behind a lock held too long is refused as busy after bounded retries, and writes nothing', async () => {
    const admin = await createStaff(handle.db, 'admin');
    const owner = await createTenant(handle.db, { name: `Contention University ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(handle.db, owner, admin, { gpuHours: 100, today: new Date().toISOString().slice(0, 10) });
    const [before] = await handle.db.select().from(allocations).where(eq(allocations.id, allocationId));
    let releaseHolder: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (releaseHolder = resolve));
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Someone holds the allocation's row lock (a stuck transaction).
    const holder = handle.db.transaction(async (tx) => {
      await tx.select().from(allocations).where(eq(allocations.id, allocationId)).for('update');
      locked();
      await held;
    });
    await isLocked;
    const started = Date.now();
    const error = await adjustAllocation(other.db, { userId: admin.userId, name: 'Staff', email: admin.email, staffRoles: ['admin'] } as never, { allocationId, amount: 3600, reason: 'Raise during an outage' }).catch((e: unknown) => e);
    const waitedMs = Date.now() - started;
    releaseHolder();
    await holder;
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('SERVICE_UNAVAILABLE');
    expect((error as AppError).key).toBe('error.busy');
    // Bounded: five attempts of 200 ms plus back-off, not an endless queue.
    expect(waitedMs).toBeLessThan(10_000);
    const [after] = await handle.db.select().from(allocations).where(eq(allocations.id, allocationId));
    expect(after!.granted).toBe(before!.granted);

    // Through the API the same refusal reaches the user as a message, with the tRPC code.
    const again = new Promise<void>((resolve) => (releaseHolder = resolve));
    const holder2 = handle.db.transaction(async (tx) => {
      await tx.select().from(allocations).where(eq(allocations.id, allocationId)).for('update');
      locked();
      await again;
    });
    await new Promise((r) => setTimeout(r, 100));
    const viaApi = await callerFor(other.db, { userId: admin.userId })
      .staff.adjustAllocation({ allocationId, amount: 1, reason: 'Raise during an outage' })
      .catch((e: unknown) => e as { code?: string; message?: string });
    releaseHolder();
    await holder2;
    expect(viaApi).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((viaApi as { message: string }).message).toMatch(/very busy/);
  });
});
