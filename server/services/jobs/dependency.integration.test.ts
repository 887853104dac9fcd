// Jobs that start after others (Slurm's --dependency) through the API on the simulated cluster: afterok
// and afterany chains run in order; a dependency that can never be met ends the job CANCELLED with
// nothing charged and its reservation released; a job whose parent is not at the scheduler yet waits to
// be handed over after it; a dependency on another project's job, or on one that ended the wrong way,
// is refused on its field with nothing written — on PGlite and, with TEST_DATABASE_URL, real Postgres.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobEvents, jobs, ledgerEntries } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { SchedulerUnavailableError, type SchedulerPort } from '~/server/core/scheduler/port';
import { createRestHandler } from '~/server/api/rest';
import { apiTokens } from '~/server/testing/api-tokens';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { reconcileOnce } from './reconciler';

const SPEED = 60;
const TODAY = '2026-12-01';

describe.each(dbTargets())('job dependencies on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let now = new Date('2026-12-01T10:00:00Z');
  const clock = () => now;
  let scheduler: SchedulerPort;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let mine: Awaited<ReturnType<typeof activeAllocation>>;
  let other: Awaited<ReturnType<typeof activeAllocation>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: SPEED, now: clock, clusterId: `dep-${randomUUID().slice(0, 8)}` });
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db);
    mine = await activeAllocation(db, owner, admin, { gpuHours: 1000, today: TODAY });
    other = await activeAllocation(db, owner, admin, { gpuHours: 100, today: TODAY });
  });
  afterAll(async () => handle?.close());

  const api = (port = scheduler) => callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: clock, scheduler: port });
  const input = (name: string, extra: Record<string, unknown> = {}) => ({ allocationId: mine.allocationId, resourceClassId: 'h100', name, kind: 'training' as const, gpus: 8, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'true', env: {}, idempotencyKey: randomUUID(), ...extra });
  const row = async (id: string) => (await db.select().from(jobs).where(eq(jobs.id, id)))[0]!;
  const advance = (simSeconds: number) => (now = new Date(now.getTime() + (simSeconds * 1000) / SPEED));

  async function until(what: () => Promise<boolean>, port = scheduler) {
    for (let i = 0; i < 100; i++) {
      await reconcileOnce(db, port, now);
      if (await what()) return;
      advance(300);
    }
    throw new Error('never happened');
  }

  it('afterok and afterany chains run in order, each after the one before ended', async () => {
    const a = await api().job.submit(input('a'));
    const b = await api().job.submit(input('b', { dependency: { type: 'afterok', jobIds: [a.id] } }));
    const c = await api().job.submit(input('c', { dependency: { type: 'afterany', jobIds: [b.id, a.id] } }));
    await reconcileOnce(db, scheduler, now);
    expect(await row(b.id)).toMatchObject({ state: 'PENDING', pendingReason: 'Dependency', dependency: { type: 'afterok', jobIds: [a.id] } });
    await until(async () => (await row(c.id)).settledAt !== null);
    const [ra, rb, rc] = [await row(a.id), await row(b.id), await row(c.id)];
    expect([ra.state, rb.state, rc.state]).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect(rb.startedAt!.getTime()).toBeGreaterThanOrEqual(ra.endedAt!.getTime());
    expect(rc.startedAt!.getTime()).toBeGreaterThanOrEqual(rb.endedAt!.getTime());
    // The page says what it waits for.
    expect((await api().job.get({ jobId: c.id })).dependency).toEqual({ type: 'afterany', jobIds: [b.id, a.id] });
  });

  it('one person submitting 10 parents and 10 children at once: every child starts after its parent ended, the ledger balanced', { timeout: 120_000 }, async () => {
    const parents = await Promise.all(Array.from({ length: 10 }, (_, i) => api().job.submit(input(`burst-parent-${i}`, { gpus: 1 }))));
    const children = await Promise.all(parents.map((p, i) => api().job.submit(input(`burst-child-${i}`, { gpus: 1, dependency: { type: 'afterany', jobIds: [p.id] } }))));
    expect(children.every((c) => c.state === 'PENDING')).toBe(true);
    await until(async () => (await Promise.all(children.map((c) => row(c.id)))).every((r) => r.settledAt !== null));
    for (const [i, child] of children.entries()) {
      const [p, c] = [await row(parents[i]!.id), await row(child.id)];
      expect(c.state).toBe('COMPLETED');
      expect(c.startedAt!.getTime()).toBeGreaterThanOrEqual(p.endedAt!.getTime());
    }
    const [allocation] = await db.select().from(allocations).where(eq(allocations.id, mine.allocationId));
    expect(balanceOfRow(allocation!)).toEqual(await ledgerSums(db, mine.allocationId));
  });

  it('a dependency that can never be met cancels the job: nothing charged, the reservation released', async () => {
    const a = await api().job.submit(input('long', { walltimeMinutes: 600 }));
    const b = await api().job.submit(input('after-long', { dependency: { type: 'afterok', jobIds: [a.id] } }));
    await reconcileOnce(db, scheduler, now);
    const reserved = (await db.select().from(allocations).where(eq(allocations.id, mine.allocationId)))[0]!.reserved;
    await api().job.cancel({ jobId: a.id });
    await until(async () => (await row(b.id)).settledAt !== null);
    expect(await row(b.id)).toMatchObject({ state: 'CANCELLED', gpuSeconds: 0, chargedAmount: 0, startedAt: null });
    const events = await db.select({ message: jobEvents.message }).from(jobEvents).where(eq(jobEvents.jobId, b.id));
    expect(events.map((e) => e.message)).toContain('job.event.dependencyNeverSatisfied');
    const charges = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, b.id), eq(ledgerEntries.kind, 'charge')));
    expect(charges.reduce((sum, c) => sum + c.amount, 0)).toBe(0);
    // Both reservations are gone (a was cancelled while running and charged what it ran).
    const after = (await db.select().from(allocations).where(eq(allocations.id, mine.allocationId)))[0]!;
    expect(after.reserved).toBeLessThan(reserved);
    expect(after.reserved).toBe(0);
  });

  it('a job whose parent is not at the scheduler yet waits, and is handed over after it', async () => {
    let down = true;
    const flaky: SchedulerPort = { ...scheduler, submit: (spec) => (down ? Promise.reject(new SchedulerUnavailableError('scheduler down (test)', { transient: true })) : scheduler.submit(spec)) };
    const a = await api(flaky).job.submit(input('first'));
    expect(a.state).toBe('SUBMITTING');
    down = false;
    const b = await api(flaky).job.submit(input('second', { dependency: { type: 'afterok', jobIds: [a.id] } }));
    // Its parent is not at the scheduler: it is not handed over before it.
    expect(b.state).toBe('SUBMITTING');
    await reconcileOnce(db, flaky, now); // a goes over; b still waited for it in this round or goes now
    await reconcileOnce(db, flaky, now);
    expect((await row(a.id)).state).not.toBe('SUBMITTING');
    expect(await row(b.id)).toMatchObject({ state: 'PENDING', pendingReason: 'Dependency' });
    await until(async () => (await row(b.id)).settledAt !== null);
    expect((await row(b.id)).state).toBe('COMPLETED');
  });

  it('REST takes a dependency as the API does, and refuses a bad one with the field named', async () => {
    const tokens = apiTokens(db);
    const token = await tokens.mint(owner, ['read', 'jobs:write']);
    const rest = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 1000, scheduler, now: clock });
    const post = (body: unknown) => rest(new Request('http://portal.test/api/v1/jobs', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }));
    const { idempotencyKey: _k, ...parentBody } = input('rest-parent');
    const parent = (await (await post(parentBody)).json()) as { id: string };
    const { idempotencyKey: _c, ...childBody } = input('rest-child', { dependency: { type: 'afternotok', jobIds: [parent.id] } });
    const child = await post(childBody);
    expect(child.status).toBe(200);
    const created = (await child.json()) as { id: string };
    expect((await row(created.id)).dependency).toEqual({ type: 'afternotok', jobIds: [parent.id] });
    const bad = await post({ ...childBody, dependency: { type: 'afterwards', jobIds: [parent.id] } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('dependency.type');
  });

  it("refuses a dependency on another project's job, on an unknown job, or on one that already ended the wrong way, on its field", async () => {
    const elsewhere = await api().job.submit({ ...input('elsewhere'), allocationId: other.allocationId });
    const cancelled = await api().job.submit(input('cancelled'));
    await api().job.cancel({ jobId: cancelled.id });
    await until(async () => (await row(cancelled.id)).settledAt !== null);
    const before = (await db.select({ id: jobs.id }).from(jobs)).length;
    for (const [dependency, key] of [
      [{ type: 'afterok', jobIds: [elsewhere.id] }, 'job.dependencyUnknown'],
      [{ type: 'afterok', jobIds: [randomUUID()] }, 'job.dependencyUnknown'],
      [{ type: 'afterok', jobIds: [cancelled.id] }, 'job.dependencyNeverSatisfied'],
    ] as const) {
      const error = await api()
        .job.submit(input('refused', { dependency }))
        .then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(TRPCError);
      expect((error as TRPCError).code).toBe('BAD_REQUEST');
      expect(JSON.stringify((error as TRPCError).cause ?? error)).toContain('dependency.jobIds');
      expect((error as TRPCError).message, key).toMatch(key === 'job.dependencyUnknown' ? /only wait for jobs of its own project/ : /could never start after it/);
    }
    // afternotok on a cancelled job is fine; so is afterany.
    await expect(api().job.submit(input('ok-after-cancel', { dependency: { type: 'afternotok', jobIds: [cancelled.id] } }))).resolves.toMatchObject({ state: 'PENDING' });
    expect((await db.select({ id: jobs.id }).from(jobs)).length).toBe(before + 1);
    // Over 16 jobs is refused by the API's check.
    await expect(api().job.submit(input('many', { dependency: { type: 'afterany', jobIds: Array.from({ length: 17 }, () => randomUUID()) } }))).rejects.toThrow();
  });
});
