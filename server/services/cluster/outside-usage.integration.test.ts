// Jobs run around the portal (sbatch -A <project> from a shell) reach the project's ledger: charged once
// per cluster and job id, the portal's own jobs left alone, a job of a class without allocation recorded
// uncharged (the table is behind the tenant wall: server/api/rls.integration.test.ts). On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq, isNull, like } from 'drizzle-orm';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, jobs, ledgerEntries, notifications, outsideJobs, projects } from '~/db/schema';
import type { BudgetEnforcing, OutsideJob, SchedulerPort, UsageReporting } from '~/server/core/scheduler/port';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { posixNameOf } from '~/server/services/identity/posix';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { transactionRetries } from '~/server/services/transaction';
import { checkSchedulerUsage, importOutsideUsage } from './outside-usage';
import { syncSchedulerBudgets } from './scheduler-budgets';

describe.each(dbTargets())('usage around the portal on %s', (target) => {
  let handle: DbHandle;
  let db: Db;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  /**
   * projectWithPortalJob: an academic project with 10 GPU-hours, one job submitted through the portal (to a
   * scripted scheduler), and `record` making the scheduler's accounting record of a job in its account.
   */
  async function projectWithPortalJob(name: string) {
    const now = new Date('2026-12-03T12:00:00Z');
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `${name} ${randomUUID().slice(0, 6)}` });
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: now.toISOString().slice(0, 10) });
    const scripted = scriptedScheduler();
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now: () => now, scheduler: scripted.port });
    const portalJob = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'through the portal', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });
    const cluster = `ci-${randomUUID().slice(0, 6)}`;
    const ended = new Date('2026-12-03T10:01:40Z');
    const record = (id: string, jobName: string, changes: Partial<OutsideJob> = {}): OutsideJob => ({
      cluster, schedulerJobId: id, name: jobName, account: projectId, partition: 'h100', resourceClassId: 'h100', user: 'alice', state: 'COMPLETED', startedAt: new Date('2026-12-03T10:00:00Z'), endedAt: ended, gpuSeconds: 200, ...changes,
    });
    return { now, admin, owner, projectId, allocationId, scripted, portalJob, cluster, ended, record };
  }

  it('charges a job submitted outside the portal once, and nothing else', async () => {
    const { now, projectId, allocationId, scripted, portalJob, cluster, record } = await projectWithPortalJob('Outside Lab');
    const reported: OutsideJob[] = [
      record('101', 'train.sh'),
      // The portal's own job: settled through the reconciler, never here.
      record('102', portalJob.id, { gpuSeconds: 3600 }),
      // A class the project has no allocation for: recorded, not charged.
      record('103', 'b200-test', { partition: 'b200', resourceClassId: 'b200', gpuSeconds: 50 }),
      // An account that is not a project of this portal.
      record('104', 'other', { account: 'contract-account' }),
    ];
    const asked: { accounts: string[]; since: Date }[] = [];
    const port: SchedulerPort & UsageReporting = {
      ...scripted.port,
      outsideJobs: (accounts, since) => {
        asked.push({ accounts, since });
        return Promise.resolve(reported.filter((r) => accounts.includes(r.account) || r.account === 'contract-account'));
      },
    };
    const charges = () => db.select().from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, allocationId), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.jobId)));
    const [before] = await db.select().from(allocations).where(eq(allocations.id, allocationId));

    expect(await importOutsideUsage(db, port, now)).toEqual({ imported: 2, charged: 1 });
    expect(asked[0]!.accounts).toContain(projectId);
    expect(asked[0]!.since).toEqual(new Date(now.getTime() - 30 * 86_400_000));
    const rows = await db.select().from(outsideJobs).where(eq(outsideJobs.cluster, cluster));
    expect(rows.map((r) => [r.schedulerJobId, r.allocationId, r.chargedAmount, r.schedulerUser]).sort()).toEqual([
      ['101', allocationId, 200, 'alice'],
      ['103', null, 0, 'alice'],
    ]);
    const [charge] = await charges();
    expect(charge).toMatchObject({ amount: 200, overrun: 200 });
    expect(charge!.reason).toMatch(/Slurm job 101 .*train\.sh.*alice, submitted outside the portal/);
    const [after] = await db.select().from(allocations).where(eq(allocations.id, allocationId));
    expect(after!.charged - before!.charged).toBe(200);

    // A second run changes nothing, and reads from a day before the last job it imported.
    expect(await importOutsideUsage(db, port, now)).toEqual({ imported: 0, charged: 0 });
    expect(asked[1]!.since).toEqual(new Date(new Date('2026-12-03T10:01:40Z').getTime() - 86_400_000));
    expect(await charges()).toHaveLength(1);
    expect((await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!.charged).toBe(after!.charged);

  });

  it('puts the ledger beside the scheduler’s accounting per project and class; staff see the difference until the job settles', async () => {
    const { now, admin, owner, projectId, scripted, portalJob, ended, record } = await projectWithPortalJob('Usage Check');
    const reported = [
      record('201', 'sweep.sh'),
      record('202', portalJob.id, { gpuSeconds: 3600 }),
      record('203', 'b200-test', { partition: 'b200', resourceClassId: 'b200', gpuSeconds: 50 }),
      // Ended before the 30 days compared: on neither side.
      record('204', 'old.sh', { endedAt: new Date('2026-10-01T00:00:00Z'), gpuSeconds: 999 }),
    ];
    const asked: Date[] = [];
    const port: SchedulerPort & UsageReporting & BudgetEnforcing = {
      ...scripted.port,
      outsideJobs: (accounts, since) => {
        asked.push(since);
        return Promise.resolve(reported.filter((r) => accounts.includes(r.account)));
      },
      syncBudgets: (budgets) => Promise.resolve(budgets.map((b) => ({ ...b, usedGpuMinutes: null }))),
      budgetHolds: () => Promise.resolve([]),
    };
    await importOutsideUsage(db, port, now);
    const mine = (check: Awaited<ReturnType<typeof checkSchedulerUsage>>) => check!.rows.filter((r) => r.account === projectId);

    // The portal's own job ended at the scheduler but is not settled here yet: Slurm counts 3,600 GPU-s more.
    const first = await checkSchedulerUsage(db, port, now);
    expect(first!.since).toEqual(new Date(now.getTime() - 30 * 86_400_000));
    // Asked two days further back: the accounting finds jobs by when they became eligible.
    expect(asked.at(-1)).toEqual(new Date(now.getTime() - 32 * 86_400_000));
    expect(mine(first)).toEqual([
      { account: projectId, partition: 'h100', portalGpuSeconds: 200, schedulerGpuSeconds: 3800, differenceGpuSeconds: 3600 },
      { account: projectId, partition: 'b200', portalGpuSeconds: 50, schedulerGpuSeconds: 50, differenceGpuSeconds: 0 },
    ]);

    // Settled as the reconciler would: the two sides agree, and a second check changes nothing.
    await db.update(jobs).set({ schedulerJobId: '202', state: 'COMPLETED', endedAt: ended, gpuSeconds: 3600 }).where(eq(jobs.id, portalJob.id));
    const second = await checkSchedulerUsage(db, port, now);
    expect(mine(second).map((r) => [r.partition, r.portalGpuSeconds, r.schedulerGpuSeconds, r.differenceGpuSeconds])).toEqual([
      ['b200', 50, 50, 0],
      ['h100', 3800, 3800, 0],
    ]);

    // Staff see the first check (recorded with a full sync) on the cluster page, the project named.
    await syncSchedulerBudgets(db, port, { now, usage: first });
    const asStaff = callerFor(db, { userId: admin.userId, now: () => now, scheduler: port });
    const view = await asStaff.staff.schedulerBudgets();
    const row = view.usage!.rows.find((r) => r.account === projectId && r.partition === 'h100');
    const [project] = await db.select({ title: projects.title }).from(projects).where(eq(projects.id, projectId));
    expect(row).toMatchObject({ projectTitle: project!.title, orgName: owner.orgName, portalGpuSeconds: 200, schedulerGpuSeconds: 3800, differenceGpuSeconds: 3600 });
    expect(view.usage!.since).toEqual(first!.since);
    // A later sync of a few projects (after a change) keeps the last full sync's comparison on the page.
    await syncSchedulerBudgets(db, port, { now: new Date(now.getTime() + 1000), projectIds: [projectId] });
    expect((await asStaff.staff.schedulerBudgets()).usage!.rows.find((r) => r.account === projectId && r.partition === 'h100')?.differenceGpuSeconds).toBe(3600);
  });

  it('a charge to a company’s credit line counts towards the project’s budget: owners hear of the threshold it passes', async () => {
    const now = new Date('2026-12-03T12:00:00Z');
    const admin = await createStaff(db, 'admin');
    const company = await createTenant(db, { kind: 'company', name: `Outside Co ${randomUUID().slice(0, 6)}` });
    const asAdmin = callerFor(db, { userId: admin.userId, now: () => now });
    const asOwner = callerFor(db, { userId: company.userId, orgId: company.orgId, now: () => now });
    await asAdmin.staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Company checked' });
    const project = await asOwner.project.create({ title: `Sweeps ${randomUUID().slice(0, 6)}`, abstract: 'Parameter sweeps from a shell.', workloadKind: 'training', members: [] });
    await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 1_000, periodStart: '2026-01-01', periodEnd: '2027-12-31', reason: 'Credit line for tests' });
    await asOwner.project.setBudget({ projectId: project.id, monthlyEuros: 10, totalEuros: null, costCentre: null, purchaseOrder: null });
    // 2 GPU-hours on H100 at the company tariff (€2.90): €5.80 of the €10 monthly budget, 58 %.
    const port: SchedulerPort & UsageReporting = {
      ...scriptedScheduler().port,
      outsideJobs: () => Promise.resolve([{ cluster: 'jena', schedulerJobId: `${Date.now()}`, name: 'sweep.sh', account: project.id, partition: 'h100', resourceClassId: 'h100', user: 'mika', state: 'COMPLETED', startedAt: new Date('2026-12-03T09:00:00Z'), endedAt: new Date('2026-12-03T10:00:00Z'), gpuSeconds: 7200 }]),
    };
    expect(await importOutsideUsage(db, port, now)).toEqual({ imported: 1, charged: 1 });
    const alerts = await db.select({ key: notifications.messageKey, params: notifications.params }).from(notifications).where(and(eq(notifications.userId, company.userId), like(notifications.messageKey, 'notice.spendAlert.%')));
    expect(alerts.map(({ key, params }) => ({ key, percent: params?.percent, limit: params?.limit, spent: params?.spent }))).toEqual([{ key: 'notice.spendAlert.projectMonthly', percent: 50, limit: 10, spent: 5.8 }]);
  });

  it("a job from a member's shell is theirs: it counts towards their monthly limit, on the usage page as at submission; a stranger's user is nobody's", async () => {
    const now = new Date('2026-12-03T12:00:00Z');
    const admin = await createStaff(db, 'admin');
    const company = await createTenant(db, { kind: 'company', name: `Shell Co ${randomUUID().slice(0, 6)}` });
    const member = await addMember(db, company, 'member');
    const asAdmin = callerFor(db, { userId: admin.userId, now: () => now });
    const asOwner = callerFor(db, { userId: company.userId, orgId: company.orgId, now: () => now });
    await asAdmin.staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Company checked' });
    const project = await asOwner.project.create({ title: `Shell ${randomUUID().slice(0, 6)}`, abstract: 'Jobs from a shell, per person.', workloadKind: 'training', members: [] });
    await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 1_000, periodStart: '2026-01-01', periodEnd: '2027-12-31', reason: 'Credit line for tests' });
    await asOwner.organisation.setSpendLimit({ userId: member.userId, monthlyEuros: 10 });
    const posix = await posixNameOf(db, member.userId);
    // 2 GPU-hours at €2.90 = €5.80 by the member's Unix user, 1 GPU-hour by a user no one here has.
    const job = (id: string, user: string, gpuSeconds: number): OutsideJob => ({ cluster: 'jena', schedulerJobId: `${Date.now()}-${id}`, name: 'sweep.sh', account: project.id, partition: 'h100', resourceClassId: 'h100', user, state: 'COMPLETED', startedAt: new Date('2026-12-03T09:00:00Z'), endedAt: new Date('2026-12-03T10:00:00Z'), gpuSeconds });
    const port: SchedulerPort & UsageReporting = { ...scriptedScheduler().port, outsideJobs: () => Promise.resolve([job('m', posix, 7200), job('g', 'ghost-user', 3600)]) };
    expect(await importOutsideUsage(db, port, now)).toEqual({ imported: 2, charged: 2 });
    const rows = await db.select({ user: outsideJobs.schedulerUser, userId: outsideJobs.userId }).from(outsideJobs).where(eq(outsideJobs.projectId, project.id));
    expect(rows.sort((a, b) => a.user!.localeCompare(b.user!))).toEqual([
      { user: 'ghost-user', userId: null },
      { user: posix, userId: member.userId },
    ]);
    // The usage page's person figure counts it (€5.80 of €10), as the next submission's check does.
    const spending = await asOwner.report.spending();
    expect(spending.people.find((p) => p.userId === member.userId)).toMatchObject({ monthlyCents: 1000, monthSpentCents: 580 });
    const alerts = await db.select({ key: notifications.messageKey }).from(notifications).where(and(eq(notifications.userId, company.userId), like(notifications.messageKey, 'notice.spendAlert.person%')));
    expect(alerts.map((a) => a.key)).toEqual(['notice.spendAlert.personMonthly']);
  });

  it('submissions of one company race three imports of its outside jobs: each charged once, no budget passed by a submission, the ledger balanced', { timeout: 120_000 }, async () => {
    const now = new Date('2026-12-03T12:00:00Z');
    const admin = await createStaff(db, 'admin');
    const company = await createTenant(db, { kind: 'company', name: `Race Co ${randomUUID().slice(0, 6)}` });
    const asAdmin = callerFor(db, { userId: admin.userId, now: () => now });
    const scripted = scriptedScheduler();
    const asOwner = callerFor(db, { userId: company.userId, orgId: company.orgId, now: () => now, scheduler: scripted.port });
    await asAdmin.staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Company checked' });
    const project = await asOwner.project.create({ title: `Race ${randomUUID().slice(0, 6)}`, abstract: 'Submissions racing the import.', workloadKind: 'training', members: [] });
    const credit = await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 1_000, periodStart: '2026-01-01', periodEnd: '2027-12-31', reason: 'Credit line for tests' });
    // €60 a month for the project; each submission reserves an H100 hour (€2.90), each outside job was one (€2.90).
    await asOwner.project.setBudget({ projectId: project.id, monthlyEuros: 60, totalEuros: null, costCentre: null, purchaseOrder: null });
    const outside: OutsideJob[] = Array.from({ length: 5 }, (_, i) => ({
      cluster: 'jena', schedulerJobId: `race-${project.id.slice(0, 8)}-${i}`, name: `shell-${i}`, account: project.id, partition: 'h100', resourceClassId: 'h100', user: 'mika', state: 'COMPLETED', startedAt: new Date('2026-12-03T09:00:00Z'), endedAt: new Date('2026-12-03T10:00:00Z'), gpuSeconds: 3600,
    }));
    const port: SchedulerPort & UsageReporting = { ...scripted.port, outsideJobs: () => Promise.resolve(outside) };
    const deadlocksBefore = transactionRetries.deadlock;

    const submissions = Array.from({ length: 30 }, () =>
      asOwner.job.submit({ allocationId: credit.id, resourceClassId: 'h100', name: 'race', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() }).then(
        () => 'accepted' as const,
        (error: unknown) => {
          if (error instanceof TRPCError && error.code === 'PRECONDITION_FAILED') return 'refused' as const;
          throw error;
        },
      ),
    );
    const imports = Array.from({ length: 3 }, () => importOutsideUsage(db, port, now));
    const [outcomes, imported] = await Promise.all([Promise.all(submissions), Promise.all(imports)]);

    // Each outside job was charged once, whichever import won it.
    expect(imported.reduce((n, r) => n + (r?.charged ?? 0), 0)).toBe(5);
    const charges = await db.select({ amount: ledgerEntries.amount }).from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, credit.id), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.jobId)));
    expect(charges.map((c) => c.amount)).toEqual([290, 290, 290, 290, 290]);
    // No submission passed the budget: at most 20 hours fit €60, at least 15 with all five outside hours counted first.
    const accepted = outcomes.filter((o) => o === 'accepted').length;
    expect(accepted).toBeGreaterThanOrEqual(15);
    expect(accepted).toBeLessThanOrEqual(20);
    const [row] = await db.select().from(allocations).where(eq(allocations.id, credit.id));
    expect(row!.reserved).toBe(accepted * 290);
    expect(balanceOfRow(row!)).toEqual(await ledgerSums(db, credit.id));
    expect(transactionRetries.deadlock - deadlocksBefore).toBe(0);
  });

  it('a scheduler that reports no accounting (the simulated cluster) imports nothing', async () => {
    expect(await importOutsideUsage(db, scriptedScheduler().port, new Date())).toBeNull();
    expect(await checkSchedulerUsage(db, scriptedScheduler().port, new Date())).toBeNull();
  });
});
