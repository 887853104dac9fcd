// Concurrency through the whole job path, as a research group or a company uses it: 64 submissions at
// once from four members of one tenant into one allocation and 16 into a second allocation of the
// same tenant, through the tRPC caller, mixed with cancels, two reconcilers settling at the same
// time, a staff budget adjustment and (for the company) a monthly-cap change. Nothing may fail except
// the budget and limit refusals a user should see; no limit is passed by a race; every allocation's
// cached balance equals its ledger; every job is reserved once, settled once and handed over once
// (again only after a hand-over that failed, by the reconciler's retry).
// On PGlite and on real Postgres.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, ledgerEntries } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import type { SchedulerJobSpec, SchedulerPort } from '~/server/core/scheduler/port';
import type { ClusterConfig } from '~/server/core/sim';
import { AppError } from '~/server/errors';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { balanceOfRow, ledgerSums } from './ledger';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { transactionRetries } from '~/server/services/transaction';

const H = 3600;
// 600 simulated seconds per second: the partition filler runs for minutes, the short jobs end at once.
const SPEED = 600;
/** The refusals a user may get when the budget or a limit is reached; anything else is a defect. */
const EXPECTED_REFUSALS = new Set(['ledger.insufficientGpu', 'ledger.insufficientCents', 'ledger.monthlyCap', 'job.gpusAtOnce', 'job.queuedJobs']);

type Caller = ReturnType<typeof callerFor>;

/**
 * A scheduler that records each hand-over of each job (the simulated cluster would hide a duplicate): its
 * attempt, when it ran and whether it threw. A job is handed over again only after a hand-over failed
 * (e.g. the cluster's own transaction gave up under load): then the reconciler retries with the next
 * attempt, and the port's idempotency keeps it one job at the scheduler.
 */
function counting(inner: SchedulerPort) {
  const submits = new Map<string, { attempt: number; start: number; end: number; failed: boolean }[]>();
  const port: SchedulerPort = {
    submit: async (spec: SchedulerJobSpec) => {
      const call = { attempt: spec.attempt ?? 1, start: performance.now(), end: Infinity, failed: false };
      submits.set(spec.portalJobId, [...(submits.get(spec.portalJobId) ?? []), call]);
      try {
        return await inner.submit(spec);
      } catch (error) {
        call.failed = true;
        throw error;
      } finally {
        call.end = performance.now();
      }
    },
    cancel: (id) => inner.cancel(id),
    jobs: (ids) => inner.jobs(ids),
    describeCluster: () => inner.describeCluster(),
  };
  /** The hand-overs of one job that broke the rule: two at once, the same attempt twice, or one after a hand-over that succeeded. */
  const broken = (id: string) => {
    const calls = submits.get(id) ?? [];
    return calls.filter((c, i) => i > 0 && (c.start < calls[i - 1]!.end || c.attempt <= calls[i - 1]!.attempt || !calls[i - 1]!.failed));
  };
  return { port, submits, broken };
}

function refusalKey(error: unknown): string {
  const cause = error instanceof TRPCError ? error.cause : error;
  return cause instanceof AppError ? cause.key : `unexpected: ${error instanceof Error ? `${error.name} ${error.message}` : String(error)}`;
}

describe.each(dbTargets())('concurrent job path on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let cluster: ClusterConfig;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  const today = new Date().toISOString().slice(0, 10);
  const halfYear = new Date(Date.now() + 180 * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    cluster = await clusterConfigFromCatalogue(db);
    admin = await createStaff(db, 'admin');
  });
  afterAll(async () => handle?.close());

  /** Fills the whole h100 partition with long jobs of another tenant, so every h100 job of the burst queues. */
  async function fillH100(scheduler: SchedulerPort) {
    const other = await createTenant(db, { name: `Filler Institute ${randomUUID().slice(0, 6)}` });
    const fill = await activeAllocation(db, other, admin, { gpuHours: 50_000, today, periodEnd: halfYear });
    await callerFor(db, { userId: admin.userId }).staff.setAllocationLimits({ allocationId: fill.allocationId, maxGpusAtOnce: 128, maxWalltimeHours: 48, maxQueuedJobs: 50, reason: 'Fills the partition in the test' });
    const asOther = callerFor(db, { userId: other.userId, orgId: other.orgId, scheduler });
    for (let i = 0; i < 16; i++) {
      await asOther.job.submit({ ...jobFields(fill.allocationId, 'h100', 8, 48 * 60), estimate: { runtimeSeconds: 48 * H } });
    }
  }

  function jobFields(allocationId: string, resourceClassId: string, gpus: number, walltimeMinutes: number) {
    return {
      allocationId,
      resourceClassId,
      name: `burst-${gpus}`,
      kind: 'training' as const,
      gpus,
      nodes: 1,
      walltimeMinutes,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3',
      command: 'torchrun train.py',
      env: {},
      idempotencyKey: randomUUID(),
    };
  }

  /** The tenant: an owner and three members, all in project 1 (allocation 1) and project 2 (allocation 2). */
  async function tenantWithTwoAllocations(kind: 'academic' | 'company') {
    const owner = await createTenant(db, { kind, name: `${kind === 'company' ? 'Burst Robotics GmbH' : 'Burst University'} ${randomUUID().slice(0, 6)}` });
    const asAdmin = callerFor(db, { userId: admin.userId });
    if (kind === 'company') await asAdmin.staff.changeTenantStatus({ orgId: owner.orgId, action: 'verify', reason: 'Commercial register checked' });
    const members = [await addMember(db, owner), await addMember(db, owner), await addMember(db, owner)];
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId });
    let first: { projectId: string; allocationId: string };
    let second: { projectId: string; allocationId: string };
    if (kind === 'academic') {
      first = await activeAllocation(db, owner, admin, { gpuHours: 300, resourceClassId: 'h100', today, periodEnd: halfYear });
      second = await activeAllocation(db, owner, admin, { gpuHours: 1000, resourceClassId: 'b200', today, periodEnd: halfYear });
    } else {
      const projects = [];
      for (const title of ['Vision model', 'Speech model']) {
        projects.push(await asOwner.project.create({ title: `${title} ${randomUUID().slice(0, 4)}`, abstract: 'Fine-tuning for a product.', workloadKind: 'fine_tuning', members: [] }));
      }
      // €900 for the h100 burst (about €22 a job) and €500 for the short b200 jobs.
      const credit1 = await asAdmin.staff.grantCreditLine({ projectId: projects[0]!.id, amountEuros: 900, periodStart: today, periodEnd: halfYear, reason: 'Signed contract' });
      const credit2 = await asAdmin.staff.grantCreditLine({ projectId: projects[1]!.id, amountEuros: 500, periodStart: today, periodEnd: halfYear, reason: 'Signed contract' });
      first = { projectId: projects[0]!.id, allocationId: credit1.id };
      second = { projectId: projects[1]!.id, allocationId: credit2.id };
    }
    for (const p of [first, second]) {
      for (const m of members) await asOwner.project.setMember({ projectId: p.projectId, userId: m.userId, role: 'member' });
    }
    await asAdmin.staff.setAllocationLimits({ allocationId: first.allocationId, maxGpusAtOnce: 160, maxWalltimeHours: 48, maxQueuedJobs: 40, reason: 'Limits the burst must respect' });
    await asAdmin.staff.setAllocationLimits({ allocationId: second.allocationId, maxGpusAtOnce: 64, maxWalltimeHours: 48, maxQueuedJobs: 40, reason: 'Room for the short jobs' });
    return { owner, members, people: [owner, ...members], first, second };
  }

  async function expectBalanced(allocationId: string) {
    const [row] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
    const balance = balanceOfRow(row!);
    expect(balance).toEqual(await ledgerSums(db, allocationId));
    expect(balance.charged - balance.overrun + balance.reserved + balance.expired).toBeLessThanOrEqual(balance.granted);
    const open = await db.select({ amount: jobs.reservedAmount }).from(jobs).where(and(eq(jobs.allocationId, allocationId), isNull(jobs.settledAt)));
    expect(balance.reserved).toBe(open.reduce((s, j) => s + j.amount, 0));
    return balance;
  }

  it.each(['academic', 'company'] as const)('a %s tenant: 64 + 16 submissions at once, with cancels, settlements and staff changes', { timeout: 180_000 }, async (kind) => {
    const sim = createSimulatedScheduler({ db, cluster, speed: SPEED, now: () => new Date(), clusterId: `burst-${kind}-${randomUUID().slice(0, 8)}` });
    const { port: scheduler, submits, broken } = counting(sim);
    const deadlocksBefore = transactionRetries.deadlock;
    await fillH100(scheduler);
    const t = await tenantWithTwoAllocations(kind);
    const capBeforeCents = 1_500_00;
    const capAfterCents = 1_100_00;
    if (kind === 'company') await callerFor(db, { userId: t.owner.userId, orgId: t.owner.orgId }).allocation.setMonthlyCap({ capEuros: capBeforeCents / 100, reason: 'Budget control' });

    // Two reconcilers (a worker and one taking over) follow and settle jobs the whole time, a round every
    // 100 ms each (the worker's is every second). Faster rounds race no more, they only queue on the
    // embedded database's one connection: on a loaded CI machine a 20 ms pace kept the requests'
    // hand-overs waiting for minutes.
    let stop = false;
    const loopErrors: unknown[] = [];
    const reconciler = async () => {
      while (!stop) {
        await reconcileOnce(db, scheduler, new Date()).catch((error: unknown) => loopErrors.push(error));
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const loops = [reconciler(), reconciler()];

    const as = (who: { userId: string; orgId: string }): Caller => callerFor(db, { userId: who.userId, orgId: who.orgId, scheduler });
    const refusals: string[] = [];
    const cancelled: { id: string; gpus: number }[] = [];
    const accepted1: { id: string; gpus: number }[] = [];
    const accepted2: string[] = [];
    const gpuChoices = [1, 2, 4, 8];

    const burst1 = Array.from({ length: 64 }, async (_, i) => {
      const who = t.people[i % 4]!;
      const gpus = gpuChoices[i % 4]!;
      try {
        const job = await as(who).job.submit(jobFields(t.first.allocationId, 'h100', gpus, 120));
        accepted1.push({ id: job.id, gpus });
        if (i % 4 === 1) {
          await as(who).job.cancel({ jobId: job.id });
          cancelled.push({ id: job.id, gpus });
        }
      } catch (error) {
        refusals.push(refusalKey(error));
      }
    });
    const burst2 = Array.from({ length: 16 }, async (_, i) => {
      const who = t.people[i % 4]!;
      try {
        const job = await as(who).job.submit({ ...jobFields(t.second.allocationId, 'b200', 2, 60), estimate: { runtimeSeconds: 300 } });
        accepted2.push(job.id);
      } catch (error) {
        refusals.push(refusalKey(error));
      }
    });
    const staff = (async () => {
      await new Promise((r) => setTimeout(r, 30));
      const asAdmin = callerFor(db, { userId: admin.userId });
      await asAdmin.staff.adjustAllocation({ allocationId: t.first.allocationId, amount: kind === 'company' ? 100 : 40, reason: 'More budget during the burst' });
      if (kind === 'company') await as(t.owner).allocation.setMonthlyCap({ capEuros: capAfterCents / 100, reason: 'Lower cap during the burst' });
    })();
    await Promise.all([...burst1, ...burst2, staff]);

    // Let the reconcilers finish: the short jobs end and the cancelled ones are settled.
    const mustSettle = [...accepted2, ...cancelled.map((c) => c.id)];
    const deadline = Date.now() + 90_000;
    for (;;) {
      const open = mustSettle.length ? await db.select({ id: jobs.id }).from(jobs).where(and(inArray(jobs.id, mustSettle), isNull(jobs.settledAt))) : [];
      if (open.length === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    stop = true;
    await Promise.all(loops);

    // Nothing failed but the refusals a user should see, and both kinds of outcome happened.
    expect(loopErrors).toEqual([]);
    // The lock order holds: not one deadlock had to be retried.
    expect(transactionRetries.deadlock).toBe(deadlocksBefore);
    expect(refusals.filter((k) => !EXPECTED_REFUSALS.has(k))).toEqual([]);
    expect(accepted1.length + accepted2.length + refusals.length).toBe(80);
    expect(accepted1.length).toBeGreaterThan(0);
    expect(refusals.length).toBeGreaterThan(0);
    expect(accepted2.length).toBe(16);

    // Limits held under the race: the h100 jobs cannot start (the partition is full), so only a
    // cancellation frees a queue slot or GPUs for another submission.
    const [first] = await db.select().from(allocations).where(eq(allocations.id, t.first.allocationId));
    expect(accepted1.length).toBeLessThanOrEqual(first!.maxQueuedJobs! + cancelled.length);
    const sum = (list: { gpus: number }[]) => list.reduce((s, j) => s + j.gpus, 0);
    expect(sum(accepted1)).toBeLessThanOrEqual(first!.maxGpusAtOnce! + sum(cancelled));
    const stillQueued = await db.select({ gpus: jobs.gpus }).from(jobs).where(and(eq(jobs.allocationId, t.first.allocationId), inArray(jobs.state, ['SUBMITTING', 'PENDING', 'RUNNING'])));
    expect(stillQueued.length).toBeLessThanOrEqual(first!.maxQueuedJobs!);
    expect(sum(stillQueued)).toBeLessThanOrEqual(first!.maxGpusAtOnce!);

    // Never over budget, and every cached balance equals its ledger.
    const b1 = await expectBalanced(t.first.allocationId);
    const b2 = await expectBalanced(t.second.allocationId);
    expect(b2.charged).toBeGreaterThan(0);
    if (kind === 'company') {
      // Every reservation was within the cap in force when it was made (the lowered cap refuses later ones).
      expect(b1.charged + b1.reserved + b2.charged + b2.reserved).toBeLessThanOrEqual(capBeforeCents);
    }

    // Each job: reserved once, settled at most once, handed to the scheduler exactly once.
    const all = [...accepted1.map((j) => j.id), ...accepted2];
    const rows = await db.select({ jobId: ledgerEntries.jobId, kind: ledgerEntries.kind }).from(ledgerEntries).where(inArray(ledgerEntries.jobId, all));
    for (const id of all) {
      const mine = rows.filter((r) => r.jobId === id);
      expect(mine.filter((r) => r.kind === 'reserve')).toHaveLength(1);
      expect(mine.filter((r) => r.kind === 'release').length).toBeLessThanOrEqual(1);
      expect(mine.filter((r) => r.kind === 'charge').length).toBeLessThanOrEqual(1);
      expect(broken(id)).toEqual([]);
      expect((submits.get(id) ?? []).filter((c) => !c.failed).length).toBeLessThanOrEqual(1);
    }
    const settled = await db.select({ id: jobs.id, state: jobs.state }).from(jobs).where(inArray(jobs.id, mustSettle));
    expect(settled.filter((j) => accepted2.includes(j.id)).every((j) => j.state === 'COMPLETED')).toBe(true);
    expect(settled.filter((j) => cancelled.some((c) => c.id === j.id)).every((j) => j.state === 'CANCELLED')).toBe(true);
    for (const id of accepted2) expect((submits.get(id) ?? []).filter((c) => !c.failed)).toHaveLength(1);
  });
});
