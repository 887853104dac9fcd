// Access modes keep their meaning (issue #10): Playground approves instantly once per tenant and
// period, a second request goes to a reviewer with the reason on it; company projects say what they
// run; a company asks for a larger credit line and staff decide it — on PGlite and real Postgres.
import { TRPCError } from '@trpc/server';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { allocations, applications, auditEvents, creditLineRequests, notifications } from '~/db/schema';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

const TODAY = '2026-12-01';
const now = () => new Date(`${TODAY}T10:00:00Z`);
const JUSTIFICATION = 'Trying the B200 partition with a small fine-tuning run before a real proposal.';

async function refusal(promise: Promise<unknown>): Promise<{ code: string; field?: string }> {
  try {
    await promise;
    return { code: 'OK' };
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    const cause = error.cause as { field?: string } | undefined;
    return { code: error.code, field: cause?.field };
  }
}

describe.each(dbTargets())('access modes and credit-line requests on %s', (target) => {
  let handle: DbHandle;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  beforeAll(async () => {
    handle = await openTestDb(target);
    reviewer = await createStaff(handle.db, 'reviewer');
    admin = await createStaff(handle.db, 'admin');
  });
  afterAll(async () => handle?.close());

  const as = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now });

  describe('decision clocks in the centre’s working time (issue #32)', () => {
    it('makes a request filed at 16:00 on the Thursday before Easter due after Easter at the same working hour, and tells staff when it is due today and overdue', async () => {
      // Thursday 25 March 2027, 16:00 in Jena (CET); Good Friday and Easter Monday are public holidays in Thuringia.
      const filed = new Date('2027-03-25T16:00:00+01:00');
      let clock = filed;
      const at = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now: () => clock });
      const lab = await createTenant(handle.db, { name: 'Easter Lab' });
      const project = await at(lab).project.create({ title: 'Before the holidays', abstract: 'A request filed just before Easter.', fieldOfScience: 'Computer science', members: [] });
      const draft = await at(lab).application.create({ projectId: project.id, accessModeId: 'development', periodStart: '2027-04-01', periodEnd: '2027-06-30', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 500 }] });
      expect(await at(lab).application.submit({ applicationId: draft.id })).toEqual({ id: draft.id, status: 'submitted' });
      // Five working days of 09:00–17:00: Thursday's last hour, Tuesday to Friday after Easter, and Monday until 16:00.
      const due = new Date('2027-04-05T16:00:00+02:00');
      expect((await at(lab).application.get({ applicationId: draft.id })).decisionDueAt).toEqual(due);
      const queued = async () => (await at(reviewer).staff.applicationQueue()).find((q) => q.id === draft.id)!;
      expect(await queued()).toMatchObject({ targetDays: 5, dueAt: due, due: 'onTime', overdue: false });
      clock = new Date('2027-04-05T10:00:00+02:00');
      expect(await queued()).toMatchObject({ due: 'dueToday', overdue: false });
      clock = new Date('2027-04-05T16:00:01+02:00');
      expect(await queued()).toMatchObject({ due: 'overdue', overdue: true });
      // Decided, the clock stops: the application shows no due time any more.
      await at(reviewer).staff.decide({ applicationId: draft.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'b200', gpuHours: 500 }], comment: '' });
      expect((await at(lab).application.get({ applicationId: draft.id })).decisionDueAt).toBeNull();
    });
  });

  describe('decision times against targets on the centre dashboard (issue #32)', () => {
    it('counts the working days from submission to decision per mode, how many kept their target, and what waits past it now', async () => {
      let clock = new Date('2027-11-08T10:00:00+01:00'); // a Monday, no holiday for weeks
      const at = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now: () => clock });
      const range = { from: '2027-11-08', to: '2027-11-16' };
      const development = async () => (await at(admin).centre.decisionTimes(range)).find((m) => m.accessModeId === 'development')!;
      const before = await development();
      const lab = await createTenant(handle.db, { name: 'Clockwork Lab' });
      const project = await at(lab).project.create({ title: 'Timed requests', abstract: 'Requests decided early and late.', fieldOfScience: 'Computer science', members: [] });
      const file = async () => {
        const draft = await at(lab).application.create({ projectId: project.id, accessModeId: 'development', periodStart: '2027-11-15', periodEnd: '2028-01-31', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 100 }] });
        await at(lab).application.submit({ applicationId: draft.id });
        return draft.id;
      };
      const [early, late, waiting] = [await file(), await file(), await file()];
      const approve = (applicationId: string) => at(reviewer).staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'b200', gpuHours: 100 }], comment: '' });
      // Two working days: Wednesday at 10:00. Due Monday the 15th at 10:00 (five working days); the second comes Tuesday at 12:00.
      clock = new Date('2027-11-10T10:00:00+01:00');
      await approve(early);
      clock = new Date('2027-11-16T12:00:00+01:00');
      await approve(late);
      const after = await development();
      expect(after).toMatchObject({ name: 'Development', targetDays: 5, decided: before.decided + 2, withinTarget: before.withinTarget + 1, waiting: before.waiting + 1, overdue: before.overdue + 1 });
      // 2 and 6.25 working days (7 h on the Monday, 4 × 8, 8 on the next Monday, 3 on the Tuesday), the range’s only decisions of the mode: median 4.1.
      expect(before.decided).toBe(0);
      expect(after.medianWorkingDays).toBe(4.1);
      expect((await at(lab).application.get({ applicationId: waiting })).decisionDueAt).toEqual(new Date('2027-11-15T10:00:00+01:00'));
      // Staff only.
      expect((await refusal(at(lab).centre.decisionTimes(range))).code).toBe('FORBIDDEN');
    });
  });

  describe('the AI Factory modes (issue #32)', () => {
    it('lists Playground, Fast Lane, Development and Large Scale with their sizes, intake and targets; Large Scale takes more than 50,000 GPU-h only', async () => {
      const lab = await createTenant(handle.db, { name: 'Mode Lab' });
      const modes = await as(lab).catalogue.accessModes();
      const H = 3600;
      expect(modes.map((m) => [m.id, m.name, m.minGpuSeconds, m.maxGpuSeconds, m.reviewPath, m.intake, m.targetDecisionWorkingDays])).toEqual([
        ['playground', 'Playground', null, 100 * H, 'instant', 'first_come', 2],
        ['fast-lane', 'Fast Lane', null, 50_000 * H, 'single', 'first_come', 4],
        ['development', 'Development', null, 2000 * H, 'single', 'first_come', 5],
        ['large-scale', 'Large Scale', 50_001 * H, null, 'full', 'rounds', 10],
      ]);
      const project = await as(lab).project.create({ title: 'A big model', abstract: 'Pretraining a language model.', fieldOfScience: 'Computer science', members: [] });
      const request = { projectId: project.id, periodStart: TODAY, periodEnd: '2027-05-31', justification: JUSTIFICATION };
      // 50,000 GPU-h over two lines is Fast Lane's, not Large Scale's: refused on the lines, nothing written.
      const lines = [{ resourceClassId: 'h100', gpuHours: 30_000 }, { resourceClassId: 'b200', gpuHours: 20_000 }];
      const tooSmall = await as(lab).application.create({ ...request, accessModeId: 'large-scale', lines }).catch((e: unknown) => e);
      expect(tooSmall).toBeInstanceOf(TRPCError);
      expect((tooSmall as TRPCError).code).toBe('BAD_REQUEST');
      expect((tooSmall as TRPCError).message).toBe('This access mode is for requests of at least 50,001 GPU-h in total; the request has 50,000 GPU-h. Ask for more or choose a mode for smaller requests.');
      expect(((tooSmall as TRPCError).cause as { field?: string }).field).toBe('lines');
      expect(await handle.db.select().from(applications).where(eq(applications.projectId, project.id))).toEqual([]);
      // In Fast Lane it goes to one reviewer with a target of 4 working days; one more GPU-hour would be Large Scale's.
      const fast = await as(lab).application.create({ ...request, accessModeId: 'fast-lane', lines });
      expect(await as(lab).application.submit({ applicationId: fast.id })).toEqual({ id: fast.id, status: 'submitted' });
      expect(await as(lab).application.get({ applicationId: fast.id })).toMatchObject({ reviewPath: 'single', targetDays: 4 });
      expect((await refusal(as(lab).application.create({ ...request, accessModeId: 'fast-lane', lines: [...lines.slice(0, 1), { resourceClassId: 'b200', gpuHours: 20_001 }] }))).field).toBe('lines');
      const large = await as(lab).application.create({ ...request, accessModeId: 'large-scale', lines: [...lines.slice(0, 1), { resourceClassId: 'b200', gpuHours: 20_001 }] });
      // Large Scale takes requests in the rounds of a call: none is open yet, so the draft stays one.
      expect(await refusal(as(lab).application.submit({ applicationId: large.id }))).toEqual({ code: 'PRECONDITION_FAILED', field: 'accessModeId' });
      const cutoff = new Date('2026-12-15T16:00:00+01:00');
      await as(admin).calls.open({ accessModeId: 'large-scale', title: 'Large Scale, winter', gpuHoursPerRound: 200_000, cutoffs: [cutoff.toISOString()] });
      expect(await as(lab).application.submit({ applicationId: large.id })).toEqual({ id: large.id, status: 'submitted' });
      expect(await as(lab).application.get({ applicationId: large.id })).toMatchObject({ reviewPath: 'full', targetDays: 10, roundCutoffAt: cutoff });
    });
  });

  describe('Playground', () => {
    it('approves the first request at once and sends a second one in the same period to a reviewer, with the reason', async () => {
      const lab = await createTenant(handle.db, { name: 'Playground Lab' });
      const pi = as(lab);
      const project = await pi.project.create({ title: 'Trying things', abstract: 'Small experiments on the new partition.', fieldOfScience: 'Computer science', members: [] });
      const request = { projectId: project.id, accessModeId: 'playground', periodStart: TODAY, periodEnd: '2026-12-31', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 50 }] };
      const first = await pi.application.create(request);
      expect(await pi.application.submit({ applicationId: first.id })).toEqual({ id: first.id, status: 'approved' });
      expect((await pi.application.get({ applicationId: first.id })).reviewNote).toBeNull();

      const second = await pi.application.create({ ...request, lines: [{ resourceClassId: 'b200', gpuHours: 40 }] });
      expect(await pi.application.submit({ applicationId: second.id })).toEqual({ id: second.id, status: 'submitted' });
      const seen = await pi.application.get({ applicationId: second.id });
      expect(seen).toMatchObject({ status: 'submitted', reviewPath: 'single', reviewNote: { reason: 'instantOnceActive', activeUntil: '2026-12-31' }, targetDays: 5 });
      expect(seen.allocations).toEqual([]);

      // The reviewer sees why it is in the queue, and (single review) may decide it.
      const queued = (await as(reviewer).staff.applicationQueue()).find((q) => q.id === second.id);
      expect(queued).toMatchObject({ reviewPath: 'single', reviewReason: 'instantOnceActive', targetDays: 5, overdue: false });
      expect((await as(reviewer).staff.application({ applicationId: second.id })).reviewNote).toEqual({ reason: 'instantOnceActive', activeUntil: '2026-12-31' });
      const decided = await as(reviewer).staff.decide({ applicationId: second.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'b200', gpuHours: 40 }], comment: '' });
      expect(decided.allocationIds).toHaveLength(1);
    });

    it('approves only one of several Playground requests submitted at the same moment', async () => {
      const lab = await createTenant(handle.db, { name: 'Racing Playground Lab' });
      const pi = as(lab);
      const drafts = [];
      for (const title of ['First tab', 'Second tab', 'Third tab']) {
        const project = await pi.project.create({ title, abstract: 'Small experiments on the new partition.', fieldOfScience: 'Computer science', members: [] });
        drafts.push(await pi.application.create({ projectId: project.id, accessModeId: 'playground', periodStart: TODAY, periodEnd: '2026-12-31', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 50 }] }));
      }
      const results = await Promise.all(drafts.map((d) => pi.application.submit({ applicationId: d.id })));
      expect(results.map((r) => r.status).sort()).toEqual(['approved', 'submitted', 'submitted']);
      const granted = await handle.db.select().from(allocations).where(eq(allocations.orgId, lab.orgId));
      expect(granted).toHaveLength(1);
    });

    it('approves a Playground request of another tenant at once (the rule is per tenant)', async () => {
      const other = await createTenant(handle.db, { name: 'Other Playground Lab' });
      const project = await as(other).project.create({ title: 'Other trials', abstract: 'Small experiments elsewhere.', fieldOfScience: 'Physics', members: [] });
      const app = await as(other).application.create({ projectId: project.id, accessModeId: 'playground', periodStart: TODAY, periodEnd: '2026-12-31', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 50 }] });
      expect(await as(other).application.submit({ applicationId: app.id })).toEqual({ id: app.id, status: 'approved' });
    });
  });

  describe('company projects', () => {
    it('asks a company for its workload and residency, not for a field of science', async () => {
      const company = await createTenant(handle.db, { kind: 'company', name: 'Workload GmbH' });
      expect(await refusal(as(company).project.create({ title: 'Vision model', abstract: 'Fine-tuning a vision model.', fieldOfScience: 'Robotics', members: [] }))).toMatchObject({ code: 'BAD_REQUEST' });
      const project = await as(company).project.create({ title: 'Vision model', abstract: 'Fine-tuning a vision model.', workloadKind: 'fine_tuning', dataResidency: 'EU', members: [] });
      expect(project).toMatchObject({ fieldOfScience: null, workloadKind: 'fine_tuning', dataResidency: 'EU' });
      expect((await as(company).project.get({ projectId: project.id })).project).toMatchObject({ workloadKind: 'fine_tuning', dataResidency: 'EU', fieldOfScience: null });
    });

    it('keeps the research form for academic tenants', async () => {
      const lab = await createTenant(handle.db, { name: 'Research Form University' });
      expect(await refusal(as(lab).project.create({ title: 'No field', abstract: 'A project without its field.', workloadKind: 'training', members: [] }))).toMatchObject({ code: 'BAD_REQUEST' });
      const project = await as(lab).project.create({ title: 'With field', abstract: 'A project with its field.', fieldOfScience: 'Physics', workloadKind: 'training', members: [] });
      expect(project).toMatchObject({ fieldOfScience: 'Physics', workloadKind: null, dataResidency: null });
    });
  });

  describe('a larger credit line', () => {
    async function companyWithLine(name: string, euros: number) {
      const company = await createTenant(handle.db, { kind: 'company', name });
      await as(admin).staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Register entry checked' });
      const project = await as(company).project.create({ title: `${name} models`, abstract: 'Fine-tuning for a product.', workloadKind: 'fine_tuning', members: [] });
      const line = await as(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: euros, periodStart: TODAY, periodEnd: '2027-12-01', reason: 'Starting credit' });
      return { ...company, allocationId: line.id };
    }
    const granted = async (allocationId: string) => (await handle.db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!;

    it('raises the credit line when staff approve, through the ledger, audited, and tells the requester', async () => {
      const company = await companyWithLine('Larger Line GmbH', 1000);
      const asked = await as(company).organisation.requestCreditLine({ allocationId: company.allocationId, amountEuros: 5000, reason: 'Our fine-tuning runs need more than €1,000 a year.' });
      const mine = await as(company).organisation.creditLines();
      expect(mine.lines).toMatchObject([{ allocationId: company.allocationId, grantedCents: 1000_00 }]);
      expect(mine.requests).toMatchObject([{ id: asked.id, status: 'submitted', currentCents: 1000_00, requestedCents: 5000_00 }]);
      expect(await refusal(as(company).organisation.requestCreditLine({ allocationId: company.allocationId, amountEuros: 6000, reason: 'And once more, please.' }))).toMatchObject({ code: 'CONFLICT' });

      const queue = await as(reviewer).staff.creditRequestQueue();
      expect(queue.find((q) => q.id === asked.id)).toMatchObject({ orgName: 'Larger Line GmbH', requestedCents: 5000_00 });
      expect(await refusal(as(reviewer).staff.decideCreditRequest({ requestId: asked.id, outcome: 'approved', comment: '' }))).toMatchObject({ code: 'FORBIDDEN' });
      expect(await as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'approved', capEuros: null, comment: 'Fine.' })).toEqual({ status: 'approved', raisedByCents: 4000_00 });

      const row = await granted(company.allocationId);
      expect(row.granted).toBe(5000_00);
      expect(await ledgerSums(handle.db, company.allocationId)).toEqual(balanceOfRow(row));
      const audit = await handle.db.select().from(auditEvents).where(eq(auditEvents.targetId, company.allocationId));
      expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['credit.requested', 'credit.raised']));
      const told = await handle.db.select().from(notifications).where(eq(notifications.userId, company.userId));
      expect(told.map((n) => n.messageKey)).toContain('notice.creditRaisedNoCap');
      expect((await as(company).organisation.creditLines()).requests[0]).toMatchObject({ status: 'approved', decisionComment: 'Fine.' });
      expect(await refusal(as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'rejected', comment: 'Twice?' }))).toMatchObject({ code: 'PRECONDITION_FAILED' });
    });

    it('leaves the credit line as it was when staff reject, with a comment the requester reads', async () => {
      const company = await companyWithLine('Rejected Line GmbH', 1000);
      const asked = await as(company).organisation.requestCreditLine({ allocationId: company.allocationId, amountEuros: 50_000, reason: 'A very large campaign next year.' });
      expect(await refusal(as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'rejected', comment: '' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'comment' });
      await as(admin).staff.decideCreditRequest({ requestId: asked.id, outcome: 'rejected', comment: 'Please send a purchase order first.' });
      expect((await granted(company.allocationId)).granted).toBe(1000_00);
      expect((await as(company).organisation.creditLines()).requests[0]).toMatchObject({ status: 'rejected', decisionComment: 'Please send a purchase order first.' });
      const told = await handle.db.select().from(notifications).where(eq(notifications.userId, company.userId));
      expect(told.map((n) => n.messageKey)).toContain('notice.creditRejected');
    });

    it('keeps one open request per line when two are sent at the same moment', async () => {
      const company = await companyWithLine('Racing Requests GmbH', 1000);
      const results = await Promise.allSettled(
        [4000, 5000, 6000].map((amountEuros) => as(company).organisation.requestCreditLine({ allocationId: company.allocationId, amountEuros, reason: 'Sent from two tabs at once.' })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results.filter((r) => r.status === 'rejected')) expect(r.reason).toMatchObject({ code: 'CONFLICT' });
      const open = await handle.db.select().from(creditLineRequests).where(and(eq(creditLineRequests.allocationId, company.allocationId), eq(creditLineRequests.status, 'submitted')));
      expect(open).toHaveLength(1);
    });

    it('refuses a line no larger than today, and keeps each company to its own requests', async () => {
      const a = await companyWithLine('Isolated A GmbH', 1000);
      const b = await companyWithLine('Isolated B GmbH', 2000);
      expect(await refusal(as(a).organisation.requestCreditLine({ allocationId: a.allocationId, amountEuros: 1000, reason: 'The same again.' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'amountEuros' });
      await as(a).organisation.requestCreditLine({ allocationId: a.allocationId, amountEuros: 3000, reason: 'Growing steadily.' });
      // B cannot ask on A's line, nor see A's request.
      expect(await refusal(as(b).organisation.requestCreditLine({ allocationId: a.allocationId, amountEuros: 9000, reason: 'On someone else’s line.' }))).toMatchObject({ code: 'NOT_FOUND' });
      const seenByB = await as(b).organisation.creditLines();
      expect(seenByB.lines.map((l) => l.allocationId)).toEqual([b.allocationId]);
      expect(seenByB.requests).toEqual([]);
      const stored = await handle.db.select().from(creditLineRequests).where(eq(creditLineRequests.orgId, b.orgId));
      expect(stored).toEqual([]);
    });
  });
});
