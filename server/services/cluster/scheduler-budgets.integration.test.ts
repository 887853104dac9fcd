// The budgets a scheduler enforces itself, through the API and the services on a fake BudgetEnforcing
// scheduler: what each change to allocations syncs, a failed sync healed by the worker, and the holds
// and drift staff see.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { schedulerBudgetSyncs, tariffs } from '~/db/schema';
import type { BudgetEnforcing, BudgetHold, ClusterDescription, SchedulerBudget, SchedulerPort } from '~/server/core/scheduler/port';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { startWorker } from '~/server/worker';
import { expireDueAllocations, settleJob } from '~/server/services/ledger/ledger';
import { budgetSyncDue, schedulerBudgets } from './scheduler-budgets';

const TODAY = '2026-12-01';
const now = () => new Date(`${TODAY}T10:00:00Z`);
const H = 3600;

/** A scheduler that takes jobs (and does nothing with them) and enforces budgets in memory, recording each sync. */
function budgetScheduler() {
  const held = new Map<string, SchedulerBudget>();
  const fake = {
    syncs: [] as SchedulerBudget[][],
    holds: [] as BudgetHold[],
    failNext: false,
    unreachable: false,
    /** Reads a budget back as something else (a limit the scheduler did not take). */
    misread: null as null | ((b: SchedulerBudget) => number | undefined),
    minutes(account: string, partition: string): number | undefined {
      return held.get(`${account}/${partition}`)?.gpuMinutes;
    },
  };
  let n = 0;
  const description: ClusterDescription = { at: new Date(0), partitions: [], nodes: [], pendingJobs: 0, runningJobs: 0, powerW: 0 };
  const port: SchedulerPort & BudgetEnforcing = {
    submit: () => Promise.resolve({ schedulerJobId: String(++n) }),
    cancel: () => Promise.resolve(),
    jobs: () => Promise.resolve([]),
    describeCluster: () => Promise.resolve({ ...description, at: now() }),
    syncBudgets(budgets) {
      fake.syncs.push(budgets);
      if (fake.failNext) {
        fake.failNext = false;
        return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6820'));
      }
      for (const b of budgets) held.set(`${b.account}/${b.partition}`, { ...b, gpuMinutes: fake.misread?.(b) ?? b.gpuMinutes });
      return Promise.resolve(budgets.map((b) => ({ ...held.get(`${b.account}/${b.partition}`)!, usedGpuMinutes: 0 })));
    },
    budgetHolds() {
      return fake.unreachable ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6820')) : Promise.resolve(fake.holds);
    },
  };
  return { port, fake };
}

describe.each(dbTargets())('scheduler budgets on %s', (target) => {
  let handle: DbHandle;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let base: Awaited<ReturnType<typeof activeAllocation>>;
  const { port, fake } = budgetScheduler();
  const asAdmin = () => callerFor(handle.db, { userId: admin.userId, now, scheduler: port });
  const lastSync = async () => (await handle.db.select().from(schedulerBudgetSyncs).orderBy(schedulerBudgetSyncs.id)).at(-1)!;

  beforeAll(async () => {
    handle = await openTestDb(target);
    admin = await createStaff(handle.db, 'admin');
    owner = await createTenant(handle.db, { name: 'Budget University' });
    base = await activeAllocation(handle.db, owner, admin, { gpuHours: 100, today: TODAY, periodEnd: '2027-01-01', scheduler: port });
  });
  afterAll(async () => handle?.close());

  it('hands a grant to the scheduler as GPU-minutes on the project and its class', async () => {
    // 100 GPU-hours = 6,000 GPU-minutes, on the project's account in partition h100; one sync, recorded.
    // No member has run a job yet, so none has a POSIX user to bind.
    // The project's account belongs under its tenant's.
    expect(fake.syncs.at(-1)).toEqual([{ account: base.projectId, partition: 'h100', gpuMinutes: 6_000, users: [], parent: owner.orgId }]);
    expect(await lastSync()).toMatchObject({ ok: true, budgets: 1, projectIds: [base.projectId], mismatches: [], error: null });
  });

  it('raises the budget on a top-up and on an adjustment', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now, scheduler: port });
    const app = await pi.application.create({ projectId: base.projectId, accessModeId: 'development', kind: 'top_up', baseAllocationId: base.allocationId, justification: 'Another 50 GPU-hours for the ablations.', lines: [{ resourceClassId: 'h100', gpuHours: 50 }] });
    await pi.application.submit({ applicationId: app.id });
    await asAdmin().staff.decide({ applicationId: app.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 50 }], comment: '' });
    expect(fake.minutes(base.projectId, 'h100')).toBe(9_000);
    await asAdmin().staff.adjustAllocation({ allocationId: base.allocationId, amount: -10, reason: 'Ten hours back to the pool' });
    expect(fake.minutes(base.projectId, 'h100')).toBe(8_400);
  });

  it('freezes a suspended tenant at what it used and holds reserved, and gives it back on reactivation', async () => {
    const job = await callerFor(handle.db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port }).job.submit({
      allocationId: base.allocationId,
      resourceClassId: 'h100',
      name: 'train',
      kind: 'training',
      gpus: 2,
      nodes: 1,
      walltimeMinutes: 90,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3',
      command: 'torchrun train.py',
      env: {},
      idempotencyKey: randomUUID(),
    });
    await settleJob(handle.db, { jobId: job.id, actualAmount: 2 * H }); // 2 GPU-hours used of the 3 reserved
    const second = await callerFor(handle.db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port }).job.submit({
      allocationId: base.allocationId,
      resourceClassId: 'h100',
      name: 'eval',
      kind: 'batch',
      gpus: 1,
      nodes: 1,
      walltimeMinutes: 30,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3',
      command: 'python eval.py',
      env: {},
      idempotencyKey: randomUUID(),
    });
    expect(second.state).toBe('PENDING');
    await asAdmin().staff.changeTenantStatus({ orgId: owner.orgId, action: 'suspend', reason: 'Unpaid invoices' });
    // 2 GPU-h charged (120 min) + 0.5 GPU-h reserved for the queued job (30 min): nothing new can start.
    expect(fake.minutes(base.projectId, 'h100')).toBe(150);
    await asAdmin().staff.changeTenantStatus({ orgId: owner.orgId, action: 'reactivate', reason: 'Paid' });
    expect(fake.minutes(base.projectId, 'h100')).toBe(8_400);
  });

  it('lowers the budget at expiry to what the allocation used and still holds', async () => {
    await expireDueAllocations(handle.db, '2027-01-01', { step: port, now: new Date('2027-01-01T00:05:00Z') });
    // The queued job's reservation is released at expiry; the 2 GPU-hours charged stay.
    expect(fake.minutes(base.projectId, 'h100')).toBe(120);
  });

  it('gives a credit line what it buys at the tenant tariff in every class', async () => {
    const company = await createTenant(handle.db, { kind: 'company', name: 'Budget GmbH' });
    await asAdmin().staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Verified register entry' });
    const project = await callerFor(handle.db, { userId: company.userId, orgId: company.orgId, now }).project.create({ title: 'Fine-tuning', abstract: 'A company project for budgets.', workloadKind: 'fine_tuning', dataResidency: 'any', members: [] });
    await asAdmin().staff.grantCreditLine({ projectId: project.id, amountEuros: 1_000, periodStart: TODAY, periodEnd: '2027-12-01', reason: 'Prepaid' });
    const prices = await handle.db.select().from(tariffs).where(eq(tariffs.tenantKind, 'company'));
    expect(prices.length).toBeGreaterThan(0);
    for (const p of prices) expect(fake.minutes(project.id, p.resourceClassId), p.resourceClassId).toBe(Math.floor((100_000 * 60) / p.centsPerGpuHour));
  });

  it('retries a failed sync in the worker’s full sync, while the change itself stands', async () => {
    fake.failNext = true;
    const balance = await asAdmin().staff.adjustAllocation({ allocationId: base.allocationId, amount: 5, reason: 'Five hours after expiry, for the final run' });
    // The failed sync does not undo the adjustment: it is logged and recorded.
    expect(balance).toMatchObject({ granted: 145 * H });
    expect(await lastSync()).toMatchObject({ ok: false, error: 'connect ECONNREFUSED 127.0.0.1:6820' });
    const at = new Date('2027-01-01T00:10:00Z');
    expect(await budgetSyncDue(handle.db, at, 300)).toBe(true);
    const worker = startWorker(handle, port, { now: () => at, reconcileMs: 3_600_000, budgetSyncSeconds: 300, log: () => undefined });
    try {
      await worker.tick();
    } finally {
      worker.stop();
    }
    const full = await lastSync();
    expect(full).toMatchObject({ ok: true, projectIds: null });
    expect(fake.syncs.at(-1)).toEqual(await schedulerBudgets(handle.db, { now: at }));
    expect(full.budgets).toBe(fake.syncs.at(-1)!.length);
    expect(await budgetSyncDue(handle.db, new Date(at.getTime() + 60_000), 300)).toBe(false);
    expect(await budgetSyncDue(handle.db, new Date(at.getTime() + 300_000), 300)).toBe(true);
  });

  it('shows staff the last sync with its drift and the holds, marking where the portal disagrees', async () => {
    const fresh = await activeAllocation(handle.db, owner, admin, { gpuHours: 10, today: TODAY, scheduler: port });
    const pending = await callerFor(handle.db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port }).job.submit({
      allocationId: fresh.allocationId,
      resourceClassId: 'h100',
      name: 'held',
      kind: 'training',
      gpus: 1,
      nodes: 1,
      walltimeMinutes: 60,
      image: 'nvcr.io/nvidia/pytorch:24.05-py3',
      command: 'torchrun train.py',
      env: {},
      idempotencyKey: randomUUID(),
    });
    fake.misread = (b) => (b.account === fresh.projectId ? b.gpuMinutes - 60 : undefined);
    await asAdmin().staff.adjustAllocation({ allocationId: fresh.allocationId, amount: 2, reason: 'Two more hours' });
    fake.misread = null;
    const hold = (over: Partial<BudgetHold>): BudgetHold => ({ schedulerJobId: '900', portalJobId: null, account: fresh.projectId, partition: 'h100', reason: 'AssocGrpGRESMinutes', gpus: 1, timeLimitSeconds: H, submittedAt: now(), ...over });
    fake.holds = [
      hold({ schedulerJobId: '901', portalJobId: pending.id }), // the portal holds its budget: a stale limit
      hold({ schedulerJobId: '902' }), // sbatch around the portal, 1 GPU-h: the portal has 11 GPU-h left
      hold({ schedulerJobId: '903', gpus: 8, timeLimitSeconds: 48 * H }), // 384 GPU-h: the portal would not run it either
      hold({ schedulerJobId: '904', account: 'physics-old', partition: 'b200' }),
    ];
    const view = await asAdmin().staff.schedulerBudgets();
    expect(view.enforcing).toBe(true);
    expect(view.unreachable).toBe(false);
    // 12 GPU-hours asked (720 min), 660 read back.
    expect(view.lastSync).toMatchObject({ ok: true, budgets: 1, projects: 1, mismatches: [{ account: fresh.projectId, partition: 'h100', asked: 720, read: 660 }] });
    expect(view.lastSync!.mismatches[0]!.projectTitle).toMatch(/^Project /);
    expect(view.holds!.map((h) => [h.schedulerJobId, h.portalHasBudget, h.drift, h.projectTitle !== null])).toEqual([
      ['901', true, 'staleLimit', true],
      ['902', true, 'staleLimit', true],
      ['903', false, 'aroundPortal', true],
      ['904', false, 'aroundPortal', false],
    ]);
    expect(view.holds![0]).toMatchObject({ orgName: 'Budget University', gpus: 1, reason: 'AssocGrpGRESMinutes' });
  });

  it('says when the scheduler is unreachable and still answers the last sync', async () => {
    fake.unreachable = true;
    try {
      const view = await asAdmin().staff.schedulerBudgets();
      expect(view).toMatchObject({ enforcing: true, unreachable: true, holds: null });
      expect(view.lastSync).not.toBeNull();
    } finally {
      fake.unreachable = false;
    }
  });

  it('is for staff only, and empty for a scheduler that does not enforce budgets', async () => {
    await expect(callerFor(handle.db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port }).staff.schedulerBudgets()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const plain: SchedulerPort = { submit: (spec) => port.submit(spec), cancel: (id) => port.cancel(id), jobs: (ids) => port.jobs(ids), describeCluster: () => port.describeCluster() };
    expect(await callerFor(handle.db, { userId: admin.userId, now, scheduler: plain }).staff.schedulerBudgets()).toEqual({ enforcing: false, usage: null, lastSync: null, holds: null, unreachable: false });
  });

  it('keeps the sync records out of the tenant role’s reach', async () => {
    const refused = await handle.db
      .transaction(async (tx) => {
        await tx.execute(`select set_config('app.tenant_id', '${owner.orgId}', true), set_config('role', 'portal_tenant', true)` as never);
        await tx.select().from(schedulerBudgetSyncs).where(and(eq(schedulerBudgetSyncs.ok, true)));
      })
      .then(
        () => null,
        (error: unknown) => String((error as { cause?: unknown }).cause ?? error),
      );
    expect(refused).toMatch(/permission denied for table scheduler_budget_syncs/);
  });
});
