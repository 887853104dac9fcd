// Budgets inside a company (issue #24), through the tRPC caller on PGlite and real Postgres: owners and
// managers set a project's budgets and a person's limit (members may not), a job past a budget is warned in
// its estimate and refused on the walltime with nothing written, alerts go out once per threshold and
// period, and many submissions at once never pass a project's budget, a person's limit or the tenant's cap.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { and, eq, inArray, isNull, like, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { auditEvents, jobs, ledgerEntries, mailOutbox, notifications } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { invoiceContent } from '~/server/documents/invoice-content';
import { AppError } from '~/server/errors';
import { translate, type MessageKey, type MessageParams } from '~/server/i18n';
import { issueInvoice } from './invoices';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { summariseArray } from '~/server/core/scheduler/array-status';
import { reconcileOnce } from '~/server/services/jobs/reconciler';

/** The refusals a submission may get when a budget, the cap or a limit is reached; anything else is a defect. */
const EXPECTED_REFUSALS = new Set(['ledger.insufficientCents', 'ledger.monthlyCap', 'budget.refused.projectMonthly', 'budget.refused.projectTotal', 'budget.refused.personMonthly', 'job.gpusAtOnce', 'job.queuedJobs']);

function refusalOf(error: unknown): { key: string; field?: string } {
  const cause = error instanceof TRPCError ? error.cause : error;
  return cause instanceof AppError ? { key: cause.key, field: cause.field } : { key: `unexpected: ${error instanceof Error ? `${error.name} ${error.message}` : String(error)}` };
}

describe.each(dbTargets())('budgets inside a company on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let scheduler: SchedulerPort;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  const today = new Date().toISOString().slice(0, 10);
  const halfYear = new Date(Date.now() + 180 * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
    scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 1, now: () => new Date(), clusterId: `budgets-${randomUUID().slice(0, 8)}` });
  }, 120_000);
  afterAll(async () => handle?.close());

  /** A verified company with an owner, a manager, three members and a credit line on each of two projects. */
  async function company() {
    const owner = await createTenant(db, { kind: 'company', name: `Budget Robotics GmbH ${randomUUID().slice(0, 6)}` });
    const asAdmin = callerFor(db, { userId: admin.userId });
    await asAdmin.staff.changeTenantStatus({ orgId: owner.orgId, action: 'verify', reason: 'Commercial register checked' });
    const manager = await addMember(db, owner, 'manager');
    const members = [await addMember(db, owner), await addMember(db, owner), await addMember(db, owner)];
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId });
    const projects = [];
    for (const title of ['Vision model', 'Speech model']) {
      const project = await asOwner.project.create({ title: `${title} ${randomUUID().slice(0, 4)}`, abstract: 'Fine-tuning for a product.', workloadKind: 'fine_tuning', members: [] });
      const line = await asAdmin.staff.grantCreditLine({ projectId: project.id, amountEuros: 900, periodStart: today, periodEnd: halfYear, reason: 'Signed contract' });
      await asAdmin.staff.setAllocationLimits({ allocationId: line.id, maxGpusAtOnce: 200, maxWalltimeHours: 48, maxQueuedJobs: 100, reason: 'Room for the burst' });
      for (const m of members) await asOwner.project.setMember({ projectId: project.id, userId: m.userId, role: 'member' });
      projects.push({ projectId: project.id, allocationId: line.id });
    }
    return { owner, manager, members, projects: projects as [(typeof projects)[0], (typeof projects)[0]] };
  }

  const as = (person: { userId: string; orgId: string }) => callerFor(db, { userId: person.userId, orgId: person.orgId, scheduler });
  const submit = (person: { userId: string; orgId: string }, allocationId: string, walltimeMinutes: number) =>
    as(person).job.submit({ allocationId, resourceClassId: 'h100', name: 'budgeted fine-tune', kind: 'fine_tuning', gpus: 1, nodes: 1, walltimeMinutes, image: 'pytorch:2', command: 'python tune.py', idempotencyKey: randomUUID() });

  it('lets owners and managers set budgets and limits, audited with from and to; members may not', async () => {
    const c = await company();
    const [p] = c.projects;
    const member = c.members[0]!;
    await expect(as(member).project.setBudget({ projectId: p.projectId, monthlyEuros: 50, totalEuros: null, costCentre: null, purchaseOrder: null })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(as(member).organisation.setSpendLimit({ userId: member.userId, monthlyEuros: 1000 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    // A monthly budget above the total is refused on its field.
    const above = await as(c.manager).project.setBudget({ projectId: p.projectId, monthlyEuros: 90, totalEuros: 80, costCentre: null, purchaseOrder: null }).catch(refusalOf);
    expect(above).toMatchObject({ key: 'budget.monthlyAboveTotal', field: 'monthlyEuros' });

    await as(c.manager).project.setBudget({ projectId: p.projectId, monthlyEuros: 50, totalEuros: 80, costCentre: 'CC-4711', purchaseOrder: '' });
    expect(await as(member).project.budget({ projectId: p.projectId })).toEqual({ monthlyCents: 5_000, totalCents: 8_000, costCentre: 'CC-4711', purchaseOrder: null });
    await as(c.owner).project.setBudget({ projectId: p.projectId, monthlyEuros: 60, totalEuros: null, costCentre: 'CC-4711', purchaseOrder: 'PO-2026-17' });
    await as(c.manager).organisation.setSpendLimit({ userId: member.userId, monthlyEuros: 20 });
    await as(c.manager).organisation.setSpendLimit({ userId: member.userId, monthlyEuros: null });
    expect(await as(c.owner).organisation.spendLimits()).toEqual([]);

    const audit = await db.select({ action: auditEvents.action, actor: auditEvents.actorUserId, data: auditEvents.data }).from(auditEvents).where(and(eq(auditEvents.orgId, c.owner.orgId), inArray(auditEvents.action, ['project.budget_set', 'member.spend_limit_set']))).orderBy(auditEvents.at);
    expect(audit).toEqual([
      { action: 'project.budget_set', actor: c.manager.userId, data: { from: null, to: { monthlyCents: 5_000, totalCents: 8_000, costCentre: 'CC-4711', purchaseOrder: null } } },
      { action: 'project.budget_set', actor: c.owner.userId, data: { from: { monthlyCents: 5_000, totalCents: 8_000, costCentre: 'CC-4711', purchaseOrder: null }, to: { monthlyCents: 6_000, totalCents: null, costCentre: 'CC-4711', purchaseOrder: 'PO-2026-17' } } },
      { action: 'member.spend_limit_set', actor: c.manager.userId, data: { from: null, to: 2_000 } },
      { action: 'member.spend_limit_set', actor: c.manager.userId, data: { from: 2_000, to: null } },
    ]);
    // Another tenant's project is not found, not changed.
    const other = await company();
    await expect(as(other.manager).project.setBudget({ projectId: p.projectId, monthlyEuros: 1, totalEuros: null, costCentre: null, purchaseOrder: null })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  }, 120_000);

  it('warns in the estimate and refuses on the walltime past the project budget, writing nothing; alerts at 50 and 80 % once each', async () => {
    const c = await company();
    const [p] = c.projects;
    const member = c.members[0]!;
    await as(c.manager).project.setBudget({ projectId: p.projectId, monthlyEuros: 50, totalEuros: null, costCentre: null, purchaseOrder: null });
    // h100 at the company tariff: €2.90 per GPU-hour. 9 h = €26.10 (52 %), then 5 h = €14.50 (81 %).
    await submit(member, p.allocationId, 9 * 60);
    await submit(member, p.allocationId, 5 * 60);
    const estimate = await as(member).job.estimate({ allocationId: p.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 4 * 60 });
    expect(estimate.room.budgetsLeftCents).toEqual([{ limit: 'projectMonthly', leftCents: 940 }]);
    expect(estimate.shortfalls).toEqual([{ limit: 'projectMonthly', unit: 'cents', needed: 1_160, left: 940, gpus: 1, maxWalltimeSeconds: 3 * 3600 + 14 * 60 }]);

    const countRows = async () => {
      const [j] = await db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(eq(jobs.orgId, c.owner.orgId));
      const [l] = await db.select({ n: sql<number>`count(*)::int` }).from(ledgerEntries).where(eq(ledgerEntries.allocationId, p.allocationId));
      return { jobs: j!.n, ledger: l!.n };
    };
    const before = await countRows();
    const refusal = await submit(member, p.allocationId, 4 * 60).catch((e: unknown) => ({ ...refusalOf(e), message: (e as Error).message }));
    expect(refusal).toMatchObject({ key: 'budget.refused.projectMonthly', field: 'walltimeMinutes' });
    expect((refusal as { message: string }).message).toContain('9.4');
    expect(await countRows()).toEqual(before);

    // Another small job: 87 %, no new threshold.
    await submit(member, p.allocationId, 60);
    const alerts = await db.select({ userId: notifications.userId, key: notifications.messageKey, params: notifications.params }).from(notifications).where(and(like(notifications.messageKey, 'notice.spendAlert.%'), inArray(notifications.userId, [c.owner.userId, c.manager.userId, member.userId])));
    expect(alerts.filter((a) => a.userId === member.userId)).toEqual([]);
    for (const lead of [c.owner, c.manager]) {
      const theirs = alerts.filter((a) => a.userId === lead.userId);
      expect(theirs.map((a) => [a.key, (a.params as { percent: number }).percent]).sort()).toEqual([
        ['notice.spendAlert.projectMonthly', 50],
        ['notice.spendAlert.projectMonthly', 80],
      ]);
    }
    const mails = await db.select({ to: mailOutbox.toAddress, subject: mailOutbox.subject }).from(mailOutbox).where(and(eq(mailOutbox.kind, 'budget_threshold'), inArray(mailOutbox.toAddress, [c.owner.email, c.manager.email])));
    expect(mails).toHaveLength(4);
    expect(mails.map((m) => m.subject).sort()).toEqual([`${c.owner.orgName}: 50 % of a budget used`, `${c.owner.orgName}: 50 % of a budget used`, `${c.owner.orgName}: 80 % of a budget used`, `${c.owner.orgName}: 80 % of a budget used`]);

    // The usage page's figures are the submission's.
    const overview = await as(c.manager).report.spending();
    expect(overview.projects.map(({ title: _title, ...figures }) => figures)).toEqual([{ projectId: p.projectId, monthlyCents: 5_000, monthSpentCents: 2_610 + 1_450 + 290, totalCents: null, totalSpentCents: 0 }]);
  }, 120_000);

  it('refuses past a person’s monthly limit, across projects', async () => {
    const c = await company();
    const member = c.members[1]!;
    await as(c.owner).organisation.setSpendLimit({ userId: member.userId, monthlyEuros: 10 });
    await submit(member, c.projects[0].allocationId, 2 * 60); // €5.80
    const refusal = await submit(member, c.projects[1].allocationId, 2 * 60).catch(refusalOf);
    expect(refusal).toMatchObject({ key: 'budget.refused.personMonthly', field: 'walltimeMinutes' });
    await submit(c.members[2]!, c.projects[1].allocationId, 2 * 60); // someone else is not limited
  }, 120_000);

  it('40 submissions at once from four people into two projects never pass a project budget, a person’s limit or the tenant cap', async () => {
    const c = await company();
    const [p1, p2] = c.projects;
    const limited = c.members[0]!;
    await as(c.manager).project.setBudget({ projectId: p1.projectId, monthlyEuros: 60, totalEuros: null, costCentre: null, purchaseOrder: null });
    await as(c.manager).project.setBudget({ projectId: p2.projectId, monthlyEuros: null, totalEuros: 40, costCentre: null, purchaseOrder: null });
    await as(c.manager).organisation.setSpendLimit({ userId: limited.userId, monthlyEuros: 25 });
    await as(c.owner).allocation.setMonthlyCap({ capEuros: 90, reason: 'Budget control' });

    const people = [c.owner, ...c.members];
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => submit(people[Math.floor(i / 2) % people.length]!, (i % 2 === 0 ? p1 : p2).allocationId, 2 * 60)));
    const refusals = outcomes.filter((o) => o.status === 'rejected').map((o) => refusalOf(o.reason).key);
    expect(refusals.filter((k) => !EXPECTED_REFUSALS.has(k))).toEqual([]);
    const admitted = outcomes.filter((o) => o.status === 'fulfilled').length;
    expect(admitted).toBeGreaterThan(0);

    const sumOf = async (where: ReturnType<typeof and>) => {
      const [row] = await db.select({ n: sql<string>`coalesce(sum(${jobs.reservedAmount}), 0)` }).from(jobs).where(and(eq(jobs.orgId, c.owner.orgId), eq(jobs.reservedUnit, 'cents'), isNull(jobs.settledAt), where));
      return Number(row!.n);
    };
    // Nothing settled yet: every admitted job holds its reservation (€5.80 each).
    const project1 = await sumOf(eq(jobs.projectId, p1.projectId));
    const project2 = await sumOf(eq(jobs.projectId, p2.projectId));
    const person = await sumOf(eq(jobs.userId, limited.userId));
    const tenant = await sumOf(undefined);
    expect(tenant).toBe(admitted * 580);
    expect(project1).toBeLessThanOrEqual(6_000);
    expect(project2).toBeLessThanOrEqual(4_000);
    expect(person).toBeLessThanOrEqual(2_500);
    expect(tenant).toBeLessThanOrEqual(9_000);
    // The cap binds last (the projects' budgets alone would admit 16 jobs): it leaves less than one more job.
    expect(tenant).toBeGreaterThan(9_000 - 580);
  }, 240_000);

  it('puts each project’s cost centre and PO number on its invoice lines, page and PDF alike', async () => {
    const c = await company();
    const [p1, p2] = c.projects;
    await as(c.manager).project.setBudget({ projectId: p1.projectId, monthlyEuros: null, totalEuros: null, costCentre: 'CC-4711', purchaseOrder: null });
    await as(c.manager).project.setBudget({ projectId: p2.projectId, monthlyEuros: null, totalEuros: null, costCentre: 'CC-0815', purchaseOrder: 'PO-2026-17' });
    // Settled jobs of March 2026 as the reconciler leaves them: 2 h and 1 h on project 1, 3 h on project 2, at €2.90.
    const settled = (project: { projectId: string; allocationId: string }, hours: number) =>
      db.insert(jobs).values({
        orgId: c.owner.orgId, projectId: project.projectId, allocationId: project.allocationId, userId: c.owner.userId, idempotencyKey: randomUUID(), name: 'train', kind: 'training',
        resourceClassId: 'h100', siteId: 'de-jena', gpus: 1, nodes: 1, walltimeSeconds: 48 * 3600, image: 'pytorch:2', command: 'python train.py', env: {}, state: 'COMPLETED',
        reservedAmount: 10_000, reservedUnit: 'cents', centsPerGpuHour: 290, submittedAt: new Date('2026-03-05T08:00:00Z'), startedAt: new Date('2026-03-05T08:01:00Z'),
        endedAt: new Date('2026-03-05T12:00:00Z'), gpuSeconds: hours * 3600, costCents: hours * 290, chargedAmount: hours * 290, energyWh: 1000, settledAt: new Date('2026-03-05T12:00:02Z'),
      });
    await settled(p1, 2);
    await settled(p1, 1);
    await settled(p2, 3);
    const issued = await issueInvoice(db, { orgId: c.owner.orgId, month: '2026-03', now: new Date('2026-04-02T09:00:00Z') });
    expect(issued?.lines.map((l) => [l.jobs, l.netCents, l.costCentre, l.purchaseOrder])).toEqual([
      [1, 870, 'CC-0815', 'PO-2026-17'],
      [2, 870, 'CC-4711', null],
    ]);
    const view = await as(c.owner).invoice.get({ id: issued!.id });
    for (const locale of ['en', 'de'] as const) {
      const doc = invoiceContent(view, (key: MessageKey, params?: MessageParams) => translate(locale, key, params), locale);
      const descriptions = doc.rows.map((r) => r[1]);
      expect(descriptions[0]).toContain(locale === 'en' ? 'Cost centre CC-0815 · PO PO-2026-17' : 'Kostenstelle CC-0815 · Bestellnr. PO-2026-17');
      expect(descriptions[1]).toMatch(locale === 'en' ? /Cost centre CC-4711$/ : /Kostenstelle CC-4711$/);
    }
  }, 120_000);
  it("an established company's job array counts every task against the person's monthly limit, and each ended task frees its share", async () => {
    const c = await company();
    const [p] = c.projects;
    const member = c.members[1]!;
    await as(c.owner).organisation.setSpendLimit({ userId: member.userId, monthlyEuros: 20 });
    const slurm = scriptedScheduler();
    const asMember = callerFor(db, { userId: member.userId, orgId: member.orgId, scheduler: slurm.port });
    const sweep = (array: string) => asMember.job.submit({ allocationId: p.allocationId, resourceClassId: 'h100', name: 'sweep', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'pytorch:2', command: 'python tune.py', idempotencyKey: randomUUID(), array });
    // 10 tasks × 30 min × €2.90 per GPU-hour = €14.50 reserved; 4 more tasks (€5.80) would pass the €20 limit.
    const first = await sweep('0-9%5');
    expect((await db.select().from(jobs).where(eq(jobs.id, first.id)))[0]!.reservedAmount).toBe(1_450);
    expect(refusalOf(await sweep('0-3').catch((e: unknown) => e))).toMatchObject({ key: 'budget.refused.personMonthly' });
    // Five tasks end after 10 minutes each (48 cents): their shares (5 × 145) are free again, their cost counts.
    const task = (index: number) => ({ index, schedulerJobId: `9_${index}`, state: 'COMPLETED' as const, startedAt: new Date(), endedAt: new Date(), exitCode: 0, signal: null, nodeList: ['n1'], gpuSeconds: 600, energyWh: 1 });
    slurm.set(first.id, summariseArray({ portalJobId: first.id, schedulerJobId: '9', tasks: [0, 1, 2, 3, 4].map(task), waiting: 5, neverRan: 0, pendingReason: 'Priority', energyMeasured: false, siteId: 'de-jena' }));
    await reconcileOnce(db, slurm.port, new Date());
    const estimate = await asMember.job.estimate({ allocationId: p.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 30, array: '0-3' });
    expect(estimate.room.budgetsLeftCents).toEqual([{ limit: 'personMonthly', leftCents: 2_000 - 5 * 48 - 5 * 145 }]);
    expect(estimate).toMatchObject({ tasks: 4, reservation: 580, shortfalls: [] });
    await expect(sweep('0-3')).resolves.toMatchObject({ state: 'PENDING' });
  });
});
