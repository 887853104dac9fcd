// Caps and credit lines never move by themselves (issue #24): accepting the price list records the
// acceptance and opens a starter line only for a company that has none; a credit raise is one staff
// decision over the line and the monthly cap, told to the company with both; every change of a cap or
// a line leaves an audit row with who, from and to. Staff who grant a line or adjust one outside a
// request decide the cap with it the same way, from the tenant's cap and spend shown beside the form.
// Through the tRPC caller, on PGlite and Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { addDays } from '~/server/core/working-days';
import { allocations, auditEvents, mailOutbox, notifications, organisations, projects } from '~/db/schema';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { reserveBudget } from '~/server/services/ledger/ledger';
import { actAsTenant } from '~/server/services/transaction';

const TODAY = new Date().toISOString().slice(0, 10);

describe.each(dbTargets())('caps and credit lines on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let admin: Awaited<ReturnType<typeof createStaff>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    admin = await createStaff(db, 'admin');
  });
  afterAll(async () => handle?.close());

  const as = (who: { userId: string; orgId?: string }) => callerFor(db, { userId: who.userId, orgId: who.orgId });
  const refusal = (call: Promise<unknown>) =>
    call.then(
      () => ({ code: 'answered', field: undefined }),
      (error: { code?: string; cause?: { field?: string } }) => ({ code: error.code, field: error.cause?.field }),
    );
  const capOf = async (orgId: string) => (await db.select({ cap: organisations.monthlyCapCents }).from(organisations).where(eq(organisations.id, orgId)))[0]!.cap;
  const linesOf = (orgId: string) => db.select({ id: allocations.id, granted: allocations.granted }).from(allocations).where(and(eq(allocations.orgId, orgId), eq(allocations.unit, 'cents'))).orderBy(allocations.createdAt);
  const projectsOf = async (orgId: string) => (await db.select({ title: projects.title }).from(projects).where(eq(projects.orgId, orgId))).map((p) => p.title).sort();
  const auditOf = (orgId: string, action: string) => db.select().from(auditEvents).where(and(eq(auditEvents.orgId, orgId), eq(auditEvents.action, action))).orderBy(auditEvents.id);

  /** A verified company with a billing profile, as a new one stands before accepting the price list. */
  async function readyCompany(name: string) {
    const company = await createTenant(db, { kind: 'company', name });
    await as(admin).staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Register entry checked' });
    await as(company).organisation.setBillingProfile({ legalName: name, street: 'Am Markt 1', postcode: '07743', city: 'Jena', country: 'DE', vatId: 'DE136695976', billingEmail: `billing@${company.orgId.slice(0, 8)}.example` });
    return company;
  }

  /** An established company as the demo's Example Robotics: a €20,000 line from staff and a €5,000 monthly cap. */
  async function establishedCompany(name: string) {
    const company = await readyCompany(name);
    const project = await as(company).project.create({ title: `${name} models`, abstract: 'Fine-tuning for a product.', workloadKind: 'fine_tuning', members: [] });
    const line = await as(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 20_000, periodStart: TODAY, periodEnd: '2030-01-01', reason: 'Framework contract' });
    await as(company).allocation.setMonthlyCap({ capEuros: 5_000, reason: 'Budget control' });
    return { ...company, allocationId: line.id };
  }

  it('lets an established company accept the price list and keep its line and cap, with no new project', async () => {
    const company = await establishedCompany('Established Robotics GmbH');
    const [linesBefore, projectsBefore] = [await linesOf(company.orgId), await projectsOf(company.orgId)];
    expect(await capOf(company.orgId)).toBe(5_000_00);
    expect((await as(company).organisation.current()).hasCreditLine).toBe(true);

    expect(await as(company).organisation.startPayAsYouGo()).toEqual({ projectId: null, allocationId: null, creditCents: 0 });

    expect(await capOf(company.orgId)).toBe(5_000_00);
    expect(await linesOf(company.orgId)).toEqual(linesBefore);
    expect(linesBefore).toEqual([{ id: company.allocationId, granted: 20_000_00 }]);
    expect(await projectsOf(company.orgId)).toEqual(projectsBefore);
    const org = await as(company).organisation.current();
    expect(org.priceListAcceptedAt).not.toBeNull();
    expect(org.monthlyCapCents).toBe(5_000_00);
    const [accepted, ...more] = await auditOf(company.orgId, 'billing.price_list_accepted');
    expect(more).toHaveLength(0);
    expect(accepted).toMatchObject({ actorUserId: company.userId, data: { starterLine: false, monthlyCapCents: 5_000_00 } });
    expect(await refusal(as(company).organisation.startPayAsYouGo())).toMatchObject({ code: 'CONFLICT' });
  });

  it('opens exactly one starter line with its cap for a new company, audited with from and to', async () => {
    const company = await readyCompany('Starter Robotics GmbH');
    expect((await as(company).organisation.current()).hasCreditLine).toBe(false);
    const results = await Promise.allSettled([as(company).organisation.startPayAsYouGo(), as(company).organisation.startPayAsYouGo()]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const started = results.find((r) => r.status === 'fulfilled')!.value;
    expect(started).toMatchObject({ creditCents: 1_000_00 });
    expect(await linesOf(company.orgId)).toEqual([{ id: started.allocationId, granted: 1_000_00 }]);
    expect(await capOf(company.orgId)).toBe(1_000_00);
    expect(await projectsOf(company.orgId)).toEqual(['Pay as you go']);
    const audit = await auditOf(company.orgId, 'billing.price_list_accepted');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorUserId: company.userId, data: { starterLine: true, grantedCents: { from: 0, to: 1_000_00 }, capCents: { from: null, to: 1_000_00 } } });
  });

  it('keeps a cap the owner set before accepting: the starter line comes without lowering or raising it', async () => {
    const company = await readyCompany('Careful Starter GmbH');
    await as(company).allocation.setMonthlyCap({ capEuros: 300, reason: 'Small steps' });
    const started = await as(company).organisation.startPayAsYouGo();
    expect(started.creditCents).toBe(1_000_00);
    expect(await capOf(company.orgId)).toBe(300_00);
    expect((await auditOf(company.orgId, 'billing.price_list_accepted'))[0]).toMatchObject({ data: { capCents: { from: 300_00, to: 300_00 } } });
  });

  it('raises a starter line with the cap staff chose in one decision, and tells the company the line and the cap', async () => {
    const company = await readyCompany('Growing Robotics GmbH');
    const manager = await addMember(db, company, 'manager');
    const started = await as(company).organisation.startPayAsYouGo();
    const asked = await as(company).organisation.requestCreditLine({ allocationId: started.allocationId!, amountEuros: 25_000, reason: 'A year of fine-tuning for our product.' });

    const [inQueue] = (await as(admin).staff.creditRequestQueue()).filter((r) => r.id === asked.id);
    expect(inQueue).toMatchObject({ orgName: 'Growing Robotics GmbH', orgKind: 'company', lineCents: 1_000_00, capCents: 1_000_00, suggestedCapCents: 25_000_00, spentThisMonthCents: 0 });
    expect(inQueue!.spentByMonth).toHaveLength(3);

    // Approving without saying the cap is refused on the cap's field; nothing is half-written.
    expect(await refusal(as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'approved', comment: '' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'capEuros' });
    expect(await as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'approved', capEuros: 4_000, comment: '' })).toEqual({ status: 'approved', raisedByCents: 24_000_00 });

    expect(await linesOf(company.orgId)).toEqual([{ id: started.allocationId, granted: 25_000_00 }]);
    expect(await capOf(company.orgId)).toBe(4_000_00);
    const [raised, ...more] = await auditOf(company.orgId, 'credit.raised');
    expect(more).toHaveLength(0);
    expect(raised).toMatchObject({ actorUserId: admin.userId, isStaffAction: true, data: { grantedCents: { from: 1_000_00, to: 25_000_00 }, capCents: { from: 1_000_00, to: 4_000_00 } } });

    // The owner (who asked) is told both figures on the bell and by mail; a manager is not an owner.
    const [notice] = await db.select().from(notifications).where(and(eq(notifications.userId, company.userId), eq(notifications.messageKey, 'notice.creditRaised')));
    expect(notice!.params).toMatchObject({ line: 25_000, cap: 4_000 });
    const [mail] = await db.select().from(mailOutbox).where(and(eq(mailOutbox.toUserId, company.userId), eq(mailOutbox.kind, 'application_decided')));
    expect(mail!.subject).toBe('Your credit line was raised');
    expect(mail!.textBody).toContain('Your credit line was raised to €25,000');
    expect(mail!.textBody).toContain('monthly cap is now €4,000');
    expect(await db.select().from(notifications).where(and(eq(notifications.userId, manager.userId), inArray(notifications.messageKey, ['notice.creditRaised', 'notice.creditRaisedNoCap'])))).toHaveLength(0);
  });

  it('grants another amount than asked only with a comment, never below the line, and may lift the cap', async () => {
    const company = await establishedCompany('Negotiating Robotics GmbH');
    const asked = await as(company).organisation.requestCreditLine({ allocationId: company.allocationId, amountEuros: 60_000, reason: 'A large training campaign.' });
    const decide = (input: { grantedEuros?: number; capEuros?: number | null; comment?: string }) => as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'approved', comment: '', ...input });

    expect(await refusal(decide({ grantedEuros: 40_000, capEuros: 10_000 }))).toMatchObject({ code: 'BAD_REQUEST', field: 'comment' });
    expect(await refusal(decide({ grantedEuros: 15_000, capEuros: 10_000, comment: 'Less, please.' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'grantedEuros' });
    expect(await linesOf(company.orgId)).toEqual([{ id: company.allocationId, granted: 20_000_00 }]);
    expect(await capOf(company.orgId)).toBe(5_000_00);

    expect(await decide({ grantedEuros: 40_000, capEuros: null, comment: 'Two thirds now, the rest after the first invoices.' })).toEqual({ status: 'approved', raisedByCents: 20_000_00 });
    expect(await linesOf(company.orgId)).toEqual([{ id: company.allocationId, granted: 40_000_00 }]);
    expect(await capOf(company.orgId)).toBeNull();
    expect((await auditOf(company.orgId, 'credit.raised'))[0]).toMatchObject({
      reason: 'Two thirds now, the rest after the first invoices.',
      data: { requestedCents: 60_000_00, grantedCents: { from: 20_000_00, to: 40_000_00 }, capCents: { from: 5_000_00, to: null } },
    });
    const [notice] = await db.select().from(notifications).where(and(eq(notifications.userId, company.userId), eq(notifications.messageKey, 'notice.creditRaisedNoCap')));
    expect(notice!.params).toMatchObject({ line: 40_000, comment: 'Two thirds now, the rest after the first invoices.' });
  });

  it('audits every other change of a cap or a line with who, from and to', async () => {
    const company = await readyCompany('Audited Caps GmbH');
    const project = await as(company).project.create({ title: 'Audited models', abstract: 'Fine-tuning for a product.', workloadKind: 'fine_tuning', members: [] });
    const line = await as(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: 2_000, periodStart: TODAY, periodEnd: '2030-01-01', reason: 'Signed contract' });
    await as(company).allocation.setMonthlyCap({ capEuros: 800, reason: 'Owner keeps it small' });
    await as(admin).staff.setMonthlyCap({ orgId: company.orgId, capEuros: 1_500, reason: 'Agreed on the phone' });
    await as(admin).staff.adjustAllocation({ allocationId: line.id, amount: 500, reason: 'Goodwill after an outage' });

    expect((await auditOf(company.orgId, 'allocation.credit_granted'))[0]).toMatchObject({ actorUserId: admin.userId, data: { grantedCents: { from: 0, to: 2_000_00 } } });
    const caps = await auditOf(company.orgId, 'tenant.cap_set');
    expect(caps.map((a) => [a.actorUserId, a.isStaffAction, a.data])).toEqual([
      [company.userId, false, { capCents: { from: null, to: 800_00 } }],
      [admin.userId, true, { capCents: { from: 800_00, to: 1_500_00 } }],
    ]);
    expect((await auditOf(company.orgId, 'allocation.adjusted'))[0]).toMatchObject({ actorUserId: admin.userId, data: { grantedCents: { from: 2_000_00, to: 2_500_00 } } });
  });
  // ---- Granting and adjusting a line outside a request: the cap is decided with it ----

  const noticesOf = (userId: string, keys: string[]) =>
    db.select({ key: notifications.messageKey, params: notifications.params }).from(notifications).where(and(eq(notifications.userId, userId), inArray(notifications.messageKey, keys)));
  const auditCount = async (orgId: string) => (await db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.orgId, orgId))).length;
  const grantInput = (projectId: string, amountEuros: number) => ({ projectId, amountEuros, periodStart: TODAY, periodEnd: '2030-01-01', reason: 'Second contract' });
  /** A refusal with its message, for what the person is told to fix. */
  const refusalWithMessage = (call: Promise<unknown>) =>
    call.then(
      () => ({ code: 'answered', field: undefined, message: '' }),
      (error: { code?: string; message?: string; cause?: { field?: string } }) => ({ code: error.code, field: error.cause?.field, message: error.message }),
    );
  /** Holds `cents` of the tenant's line for a job, as a submission does: in the tenant's own transaction. */
  const reserve = (company: { orgId: string; userId: string }, allocationId: string, cents: number) =>
    db.transaction(async (tx) => {
      await actAsTenant(tx, company.orgId, 'write');
      await reserveBudget(tx, { allocationId, orgId: company.orgId, jobId: randomUUID(), amount: cents, actorUserId: company.userId, today: TODAY });
    });

  it('grants a credit line with the cap staff chose beside the tenant’s cap and spend, audited with from and to, and tells the company both', async () => {
    const company = await establishedCompany('Granting Robotics GmbH');
    const bystander = await addMember(db, company, 'member');
    await reserve(company, company.allocationId, 1_234_00);
    const project = await as(company).project.create({ title: 'Granting vision', abstract: 'A second product line.', workloadKind: 'fine_tuning', members: [] });

    // The form's figures: the tenant, its cap, its lines together, this month's spend as the cap counts it, three months before.
    const offered = (await as(admin).staff.companyProjects()).find((p) => p.id === project.id)!;
    expect(offered.money).toMatchObject({ orgId: company.orgId, orgName: 'Granting Robotics GmbH', capCents: 5_000_00, linesCents: 20_000_00, spentThisMonthCents: 1_234_00 });
    expect(offered.money.spentByMonth.map((m) => m.cents)).toEqual([0, 0, 0]);

    const line = await as(admin).staff.grantCreditLine({ ...grantInput(project.id, 10_000), capEuros: 7_500 });

    expect(await capOf(company.orgId)).toBe(7_500_00);
    const granted = (await auditOf(company.orgId, 'allocation.credit_granted')).find((a) => a.targetId === line.id);
    expect(granted).toMatchObject({ actorUserId: admin.userId, isStaffAction: true, data: { grantedCents: { from: 0, to: 10_000_00 }, capCents: { from: 5_000_00, to: 7_500_00 } } });
    expect(await auditOf(company.orgId, 'tenant.cap_set')).toHaveLength(1); // the owner's own, before: the grant's cap is in the grant's row

    // The owner (the project's PI) is told the line and the cap, on the bell and by mail; a member outside the project is not.
    expect(await noticesOf(company.userId, ['notice.creditGranted'])).toEqual([{ key: 'notice.creditGranted', params: { project: 'Granting vision', line: 10_000, cap: 7_500 } }]);
    const mail = (await db.select().from(mailOutbox).where(and(eq(mailOutbox.toUserId, company.userId), eq(mailOutbox.subject, 'A credit line was granted')))).find((m) => m.textBody.includes('Granting vision'));
    expect(mail!.textBody).toContain('A credit line of €10,000 was granted to Granting vision');
    expect(mail!.textBody).toContain('monthly cap is now €7,500');
    expect(await noticesOf(bystander.userId, ['notice.creditGranted', 'notice.creditGrantedNoCap'])).toHaveLength(0);
  });

  it('writes no cap change when a grant leaves the cap as it is, whether it is not sent or sent unchanged', async () => {
    const company = await establishedCompany('Steady Robotics GmbH');
    const project = await as(company).project.create({ title: 'Steady models', abstract: 'More of the same.', workloadKind: 'fine_tuning', members: [] });

    const unsent = await as(admin).staff.grantCreditLine(grantInput(project.id, 1_000)); // an API client from before the cap was asked
    const same = await as(admin).staff.grantCreditLine({ ...grantInput(project.id, 2_000), capEuros: 5_000 });

    expect(await capOf(company.orgId)).toBe(5_000_00);
    for (const id of [unsent.id, same.id]) {
      const row = (await auditOf(company.orgId, 'allocation.credit_granted')).find((a) => a.targetId === id)!;
      expect(row.data).toHaveProperty('grantedCents');
      expect(row.data).not.toHaveProperty('capCents');
    }
    expect(await auditOf(company.orgId, 'tenant.cap_set')).toHaveLength(1);
    // The company is still told the cap that goes with its new lines.
    expect((await noticesOf(company.userId, ['notice.creditGranted'])).map((n) => n.params)).toEqual([
      { project: 'Steady models', line: 1_000, cap: 5_000 },
      { project: 'Steady models', line: 2_000, cap: 5_000 },
    ]);
  });

  it('keeps a tenant without a cap without one unless staff set one', async () => {
    const company = await readyCompany('Open Robotics GmbH');
    const project = await as(company).project.create({ title: 'Open models', abstract: 'Fine-tuning without a cap.', workloadKind: 'fine_tuning', members: [] });
    expect((await as(admin).staff.companyProjects()).find((p) => p.id === project.id)!.money).toMatchObject({ capCents: null, linesCents: 0, spentThisMonthCents: 0 });

    const first = await as(admin).staff.grantCreditLine({ ...grantInput(project.id, 3_000), capEuros: null });
    expect(await capOf(company.orgId)).toBeNull();
    expect((await auditOf(company.orgId, 'allocation.credit_granted')).find((a) => a.targetId === first.id)!.data).not.toHaveProperty('capCents');
    expect((await noticesOf(company.userId, ['notice.creditGrantedNoCap']))[0]!.params).toEqual({ project: 'Open models', line: 3_000, cap: 0 });

    const second = await as(admin).staff.grantCreditLine({ ...grantInput(project.id, 1_000), capEuros: 2_000 });
    expect(await capOf(company.orgId)).toBe(2_000_00);
    expect((await auditOf(company.orgId, 'allocation.credit_granted')).find((a) => a.targetId === second.id)!.data).toMatchObject({ capCents: { from: null, to: 2_000_00 } });
  });

  it('adjusts a credit line with a new cap in one decision; a cut keeps the cap unless staff change it', async () => {
    const company = await establishedCompany('Adjusted Robotics GmbH');
    await reserve(company, company.allocationId, 250_00);
    const shown = await as(admin).staff.allocation({ allocationId: company.allocationId });
    expect(shown.money).toMatchObject({ orgName: 'Adjusted Robotics GmbH', capCents: 5_000_00, linesCents: 20_000_00, spentThisMonthCents: 250_00 });
    expect(shown.money!.spentByMonth).toHaveLength(3);

    expect((await as(admin).staff.adjustAllocation({ allocationId: company.allocationId, amount: 10_000, reason: 'Second year of the contract', capEuros: 7_500 })).granted).toBe(30_000_00);
    expect(await capOf(company.orgId)).toBe(7_500_00);
    const [raised] = await auditOf(company.orgId, 'allocation.adjusted');
    expect(raised).toMatchObject({ actorUserId: admin.userId, isStaffAction: true, data: { grantedCents: { from: 20_000_00, to: 30_000_00 }, capCents: { from: 5_000_00, to: 7_500_00 } } });
    expect(await noticesOf(company.userId, ['notice.creditAdjusted'])).toEqual([{ key: 'notice.creditAdjusted', params: { project: 'Adjusted Robotics GmbH models', line: 30_000, cap: 7_500 } }]);
    const [mail] = await db.select().from(mailOutbox).where(and(eq(mailOutbox.toUserId, company.userId), eq(mailOutbox.subject, 'Your credit line was changed')));
    expect(mail!.textBody).toContain('is now €30,000');

    await as(admin).staff.adjustAllocation({ allocationId: company.allocationId, amount: -5_000, reason: 'Half of the second year' });
    expect(await capOf(company.orgId)).toBe(7_500_00);
    const [, cut] = await auditOf(company.orgId, 'allocation.adjusted');
    expect(cut!.data).toMatchObject({ grantedCents: { from: 30_000_00, to: 25_000_00 } });
    expect(cut!.data).not.toHaveProperty('capCents');

    await as(admin).staff.adjustAllocation({ allocationId: company.allocationId, amount: 1, reason: 'Rounding', capEuros: null });
    expect(await capOf(company.orgId)).toBeNull();
    expect((await auditOf(company.orgId, 'allocation.adjusted'))[2]!.data).toMatchObject({ capCents: { from: 7_500_00, to: null } });
    expect((await noticesOf(company.userId, ['notice.creditAdjustedNoCap']))[0]!.params).toMatchObject({ line: 25_001 });
  });

  /** A company project's GPU-hour allocation, applied for and approved as in the review queue. */
  async function gpuHourAllocation(company: { userId: string; orgId: string }, gpuHours: number) {
    const project = await as(company).project.create({ title: 'Hours models', abstract: 'Training on granted hours.', workloadKind: 'training', members: [] });
    const lines = [{ resourceClassId: 'h100', gpuHours }];
    const application = await as(company).application.create({ projectId: project.id, accessModeId: 'fast-lane', periodStart: TODAY, periodEnd: addDays(TODAY, 80), justification: 'We need GPU time to train our models.', lines });
    await as(company).application.submit({ applicationId: application.id });
    const decision = await as(admin).staff.decide({ applicationId: application.id, outcome: 'approved', grantedLines: lines });
    return { allocationId: decision.allocationIds[0]! };
  }

  it('adjusts GPU-hours without touching any cap, and refuses a cap sent with them', async () => {
    const company = await readyCompany('Hours Robotics GmbH');
    await as(company).allocation.setMonthlyCap({ capEuros: 900, reason: 'Owner keeps it small' });
    const hours = await gpuHourAllocation(company, 100);
    expect((await as(admin).staff.allocation({ allocationId: hours.allocationId })).money).toBeNull();
    const before = await auditCount(company.orgId);

    expect(await refusal(as(admin).staff.adjustAllocation({ allocationId: hours.allocationId, amount: 10, reason: 'More hours', capEuros: 2_000 }))).toMatchObject({ code: 'BAD_REQUEST', field: 'capEuros' });
    expect(await auditCount(company.orgId)).toBe(before);

    await as(admin).staff.adjustAllocation({ allocationId: hours.allocationId, amount: 10, reason: 'More hours' });
    expect(await capOf(company.orgId)).toBe(900_00);
    const [adjusted] = await auditOf(company.orgId, 'allocation.adjusted');
    expect(adjusted!.data).toMatchObject({ unit: 'gpu_seconds', amount: 10 * 3600 });
    expect(adjusted!.data).not.toHaveProperty('capCents');
    expect(adjusted!.data).not.toHaveProperty('grantedCents');
    expect(await noticesOf(company.userId, ['notice.creditAdjusted', 'notice.creditAdjustedNoCap'])).toHaveLength(0);
  });

  it('refuses a cap that is not whole euros from €0 on its field, with nothing written', async () => {
    const company = await establishedCompany('Careless Robotics GmbH');
    const project = await as(company).project.create({ title: 'Careless models', abstract: 'Typing errors.', workloadKind: 'fine_tuning', members: [] });
    const before = { lines: await linesOf(company.orgId), audit: await auditCount(company.orgId), notices: (await noticesOf(company.userId, ['notice.creditGranted', 'notice.creditAdjusted'])).length };

    for (const capEuros of [-1, 12.5, 0.1, 100_000_001]) {
      const grant = await refusalWithMessage(as(admin).staff.grantCreditLine({ ...grantInput(project.id, 1_000), capEuros }));
      expect(grant, `grant with a cap of ${capEuros}`).toMatchObject({ code: 'BAD_REQUEST', field: 'capEuros' });
      expect(grant.message).toContain('whole euros');
      const adjust = await refusalWithMessage(as(admin).staff.adjustAllocation({ allocationId: company.allocationId, amount: 1_000, reason: 'Typo', capEuros }));
      expect(adjust, `adjustment with a cap of ${capEuros}`).toMatchObject({ code: 'BAD_REQUEST', field: 'capEuros' });
    }
    // In German too, saying what to type.
    const inGerman = await refusalWithMessage(callerFor(db, { userId: admin.userId, locale: 'de' }).staff.grantCreditLine({ ...grantInput(project.id, 1_000), capEuros: -5 }));
    expect(inGerman.message).toContain('ganzen Euro');

    expect(await linesOf(company.orgId)).toEqual(before.lines);
    expect(await capOf(company.orgId)).toBe(5_000_00);
    expect(await auditCount(company.orgId)).toBe(before.audit);
    expect(await noticesOf(company.userId, ['notice.creditGranted', 'notice.creditAdjusted'])).toHaveLength(before.notices);

    // €0 is a cap: nothing more may be spent this month.
    await as(admin).staff.grantCreditLine({ ...grantInput(project.id, 1_000), capEuros: 0 });
    expect(await capOf(company.orgId)).toBe(0);
  });
});
