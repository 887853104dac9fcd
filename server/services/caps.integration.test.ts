// Caps and credit lines never move by themselves (issue #24): accepting the price list records the
// acceptance and opens a starter line only for a company that has none; a credit raise is one staff
// decision over the line and the monthly cap, told to the company with both; every change of a cap or
// a line leaves an audit row with who, from and to. Through the tRPC caller, on PGlite and Postgres.
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, auditEvents, mailOutbox, notifications, organisations, projects } from '~/db/schema';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

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
});
