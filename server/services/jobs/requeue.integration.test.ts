// A job the scheduler requeues (a node failed under it; Slurm runs it again under the same id): while it
// waits again the page says "requeued", not Slurm's "begin time"; it is settled once, from its last
// attempt, and charged every attempt's GPU time, as Slurm counts its usage. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobEvents, jobs, ledgerEntries } from '~/db/schema';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { reconcileOnce } from './reconciler';

describe.each(dbTargets())('a requeued job on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  it('waits "requeued", is settled from its last attempt and charged every attempt', async () => {
    const t0 = Date.UTC(2026, 11, 3, 9);
    let clock = t0;
    const now = () => new Date(clock);
    const at = (seconds: number) => new Date(t0 + seconds * 1000);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Requeue Lab ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: now().toISOString().slice(0, 10) });
    const slurm = scriptedScheduler();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: slurm.port });
    const job = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'requeued', kind: 'training', gpus: 4, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!;

    clock = t0 + 10_000;
    slurm.set(job.id, { state: 'RUNNING', pendingReason: null, startedAt: at(1), nodeList: ['n1'], gpuSeconds: 36 });
    await reconcileOnce(db, slurm.port, now());
    expect(await row()).toMatchObject({ state: 'RUNNING', gpuSeconds: 36 });

    // n1 fails; Slurm requeues the job and holds it for its begin time.
    clock = t0 + 20_000;
    slurm.set(job.id, { state: 'PENDING', pendingReason: 'BeginTime', startedAt: null, nodeList: [], gpuSeconds: 0 });
    await reconcileOnce(db, slurm.port, now());
    expect(await row()).toMatchObject({ state: 'PENDING', pendingReason: 'Requeued' });
    clock = t0 + 30_000; // still waiting, a round later: still "requeued"
    await reconcileOnce(db, slurm.port, now());
    expect((await row()).pendingReason).toBe('Requeued');
    expect((await asOwner.job.get({ jobId: job.id })).events.map((e) => (e.data as { reason?: string } | null)?.reason)).toContain('Requeued');

    // It runs again and completes: 9 s on the first attempt, 240 s on the second.
    clock = t0 + 400_000;
    slurm.set(job.id, { state: 'COMPLETED', pendingReason: null, startedAt: at(140), endedAt: at(380), exitCode: 0, nodeList: ['n2'], gpuSeconds: 4 * 9 + 4 * 240, earlierAttempts: [{ state: 'NODE_FAIL', startedAt: at(1), endedAt: at(10), gpuSeconds: 36 }] });
    await reconcileOnce(db, slurm.port, now());
    const settled = await row();
    expect(settled).toMatchObject({ state: 'COMPLETED', gpuSeconds: 996, startedAt: at(140), endedAt: at(380), pendingReason: null });
    expect(settled.settledAt).not.toBeNull();
    const charges = await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, job.id), eq(ledgerEntries.kind, 'charge')));
    expect(charges).toHaveLength(1);
    expect(Math.abs(charges[0]!.amount)).toBe(996);
    const events = await db.select().from(jobEvents).where(eq(jobEvents.jobId, job.id));
    expect(events.filter((e) => e.message === 'job.event.requeued')).toMatchObject([{ state: 'NODE_FAIL', at: at(10), data: { gpuSeconds: 36 } }]);

    // A second round changes nothing.
    await reconcileOnce(db, slurm.port, now());
    expect(await db.select().from(ledgerEntries).where(and(eq(ledgerEntries.jobId, job.id), eq(ledgerEntries.kind, 'charge')))).toHaveLength(1);
  });

  it('keeps the start it saw when the final report has none (a service stopped within its first second on Slurm)', async () => {
    const t0 = Date.UTC(2026, 11, 3, 9);
    let clock = t0;
    const now = () => new Date(clock);
    const at = (seconds: number) => new Date(t0 + seconds * 1000);
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Quick Stop ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: now().toISOString().slice(0, 10) });
    const slurm = scriptedScheduler();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: slurm.port });
    const job = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'quick', kind: 'inference', gpus: 2, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'serve', env: {}, idempotencyKey: randomUUID() });
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!;
    clock = t0 + 5_000;
    slurm.set(job.id, { state: 'RUNNING', pendingReason: null, startedAt: at(2), nodeList: ['n1'], gpuSeconds: 0 });
    await reconcileOnce(db, slurm.port, now());
    expect((await row()).startedAt).toEqual(at(2));
    clock = t0 + 10_000;
    slurm.set(job.id, { state: 'COMPLETED', pendingReason: null, startedAt: null, endedAt: at(4), exitCode: 0, nodeList: ['n1'], gpuSeconds: 4 });
    await reconcileOnce(db, slurm.port, now());
    const settled = await row();
    expect(settled).toMatchObject({ state: 'COMPLETED', startedAt: at(2), endedAt: at(4), gpuSeconds: 4, chargedAmount: 4, waitSeconds: 2 });
    expect((await db.select().from(jobEvents).where(eq(jobEvents.jobId, job.id))).filter((e) => e.message === 'job.event.started')).toHaveLength(1);
  });
});
