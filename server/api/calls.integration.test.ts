// Calls and rounds (issue #32), through the API with a fake clock: admins open a call of Large Scale with
// its cut-offs; a request submitted at a cut-off joins that round, one second later the next; its decision
// is due ten working days after the cut-off; a round is decided only once the worker has closed it, which
// tells the reviewers how many wait.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle, Tx } from '~/db/client';
import { applications, auditEvents, callRounds, ledgerEntries, notifications } from '~/db/schema';
import { actAsTenant, inTransaction } from '~/server/services/transaction';
import { closeDueRounds } from '~/server/services/ledger/calls';
import { refusal } from '~/server/testing/refusal';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

const JUSTIFICATION = 'Pretraining a 30B model on public European text, in quarterly blocks, with ablations at smaller scale.';
const H = 3600;
/** Friday 15 January 2027, 16:00 in Jena, and a fortnight later: the call's cut-offs. */
const FIRST = new Date('2027-01-15T16:00:00+01:00');
const SECOND = new Date('2027-01-29T16:00:00+01:00');


describe.each(dbTargets())('calls and rounds on %s', (target) => {
  let handle: DbHandle;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let clock = new Date('2027-01-04T10:00:00+01:00');
  const as = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now: () => clock });

  beforeAll(async () => {
    handle = await openTestDb(target);
    reviewer = await createStaff(handle.db, 'reviewer');
    admin = await createStaff(handle.db, 'admin');
  });
  afterAll(async () => handle?.close());

  /** A Large Scale draft (more than 50,000 GPU-h) of a new tenant. */
  async function largeDraft(name: string) {
    const lab = await createTenant(handle.db, { name });
    const project = await as(lab).project.create({ title: `${name}: pretraining`, abstract: 'A foundation model.', fieldOfScience: 'Computer science', members: [] });
    const draft = await as(lab).application.create({ projectId: project.id, accessModeId: 'large-scale', periodStart: '2027-03-01', periodEnd: '2028-02-28', justification: JUSTIFICATION, lines: [{ resourceClassId: 'h100', gpuHours: 60_000 }] });
    return { lab, draft };
  }

  it('refuses a Large Scale submission while no call is open, keeping the draft', async () => {
    const { lab, draft } = await largeDraft('Early Lab');
    const refused = await refusal(as(lab).application.submit({ applicationId: draft.id }));
    expect(refused).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'accessModeId' });
    expect(refused.message).toMatch(/Large Scale takes requests in the rounds of a call/);
    expect((await as(lab).application.get({ applicationId: draft.id })).status).toBe('draft');
  });

  it('lets admins open a call and nobody else; a mode without rounds, a past or repeated cut-off are refused on their field', async () => {
    const call = { accessModeId: 'large-scale', title: 'Large Scale 2027', description: 'Two rounds in January.', gpuHoursPerRound: 150_000, cutoffs: [SECOND.toISOString(), FIRST.toISOString()] };
    expect((await refusal(as(reviewer).calls.open(call))).code).toBe('FORBIDDEN');
    const tenant = await createTenant(handle.db, { name: 'Curious Lab' });
    expect((await refusal(as(tenant).calls.open(call))).code).toBe('FORBIDDEN');
    expect(await refusal(as(admin).calls.open({ ...call, accessModeId: 'fast-lane' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'accessModeId' });
    expect(await refusal(as(admin).calls.open({ ...call, cutoffs: ['2027-01-01T12:00:00Z'] }))).toMatchObject({ code: 'BAD_REQUEST', field: 'cutoffs' });
    expect(await refusal(as(admin).calls.open({ ...call, cutoffs: [FIRST.toISOString(), FIRST.toISOString()] }))).toMatchObject({ code: 'BAD_REQUEST', field: 'cutoffs' });
    expect(await refusal(as(admin).calls.open({ ...call, cutoffs: ['next Friday'] }))).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await as(reviewer).calls.list()).toEqual([]);

    const opened = await as(admin).calls.open(call);
    expect(opened.rounds.map((r) => r.cutoffAt)).toEqual([FIRST, SECOND]);
    const [listed] = await as(reviewer).calls.list();
    expect(listed).toMatchObject({ title: 'Large Scale 2027', modeName: 'Large Scale', gpuSecondsPerRound: 150_000 * H });
    expect(listed!.rounds.map((r) => [r.cutoffAt, r.status, r.applications])).toEqual([[FIRST, 'open', 0], [SECOND, 'open', 0]]);
    const [audit] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'call.opened'), eq(auditEvents.targetId, opened.id)));
    expect(audit).toMatchObject({ actorUserId: admin.userId, isStaffAction: true });
  });

  it('puts a request submitted at a cut-off in that round and one a second later in the next; each is due ten working days after its cut-off', async () => {
    const atCutoff = await largeDraft('On Time Lab');
    const late = await largeDraft('Late Lab');
    clock = FIRST;
    expect(await as(atCutoff.lab).application.submit({ applicationId: atCutoff.draft.id })).toEqual({ id: atCutoff.draft.id, status: 'submitted' });
    clock = new Date(FIRST.getTime() + 1000);
    expect(await as(late.lab).application.submit({ applicationId: late.draft.id })).toEqual({ id: late.draft.id, status: 'submitted' });

    const first = await as(atCutoff.lab).application.get({ applicationId: atCutoff.draft.id });
    const second = await as(late.lab).application.get({ applicationId: late.draft.id });
    expect(first.roundCutoffAt).toEqual(FIRST);
    expect(second.roundCutoffAt).toEqual(SECOND);
    // Friday's last working hour and the nine working days after it (no holiday in Thuringia then): Friday 29 January, 16:00.
    expect(first.decisionDueAt).toEqual(new Date('2027-01-29T16:00:00+01:00'));
    expect(second.decisionDueAt).toEqual(new Date('2027-02-12T16:00:00+01:00'));
    const [listed] = await as(reviewer).calls.list();
    expect(listed!.rounds.map((r) => r.applications)).toEqual([1, 1]);
    const queue = await as(reviewer).staff.applicationQueue();
    expect(queue.find((q) => q.id === atCutoff.draft.id)).toMatchObject({ roundCutoffAt: FIRST, roundStatus: 'open', dueAt: first.decisionDueAt });
  });

  it('decides a round only after the worker has closed it at its cut-off, once, telling the reviewers', async () => {
    const [{ id: firstId } = { id: '' }] = await handle.db.select({ id: applications.id }).from(applications).where(and(eq(applications.status, 'submitted'))).orderBy(applications.submittedAt).limit(1);
    const grant = { applicationId: firstId, outcome: 'approved' as const, grantedLines: [{ resourceClassId: 'h100', gpuHours: 60_000 }], comment: 'Ranked first in the January round.' };
    expect(await refusal(as(admin).staff.decide(grant))).toMatchObject({ code: 'PRECONDITION_FAILED' });

    // At the cut-off itself the round still takes requests; a minute later the worker closes it, once.
    expect(await closeDueRounds(handle.db, FIRST)).toEqual([]);
    // Nor within its grace: a submission that joined at the cut-off commits before the close.
    expect(await closeDueRounds(handle.db, new Date(FIRST.getTime() + 9_000))).toEqual([]);
    const closing = new Date(FIRST.getTime() + 60_000);
    const closed = await closeDueRounds(handle.db, closing);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ applications: 1 });
    expect(await closeDueRounds(handle.db, closing)).toEqual([]);
    const told = await handle.db.select().from(notifications).where(and(eq(notifications.userId, reviewer.userId), eq(notifications.messageKey, 'notice.roundClosed')));
    expect(told).toHaveLength(1);
    expect(told[0]!.params).toMatchObject({ call: 'Large Scale 2027', count: 1 });

    clock = new Date('2027-01-20T11:00:00+01:00');
    const decided = await as(admin).staff.decide(grant);
    expect(decided.allocationIds).toHaveLength(1);
    const grants = await handle.db.select().from(ledgerEntries).where(and(eq(ledgerEntries.allocationId, decided.allocationIds[0]!), eq(ledgerEntries.kind, 'grant')));
    expect(grants.map((g) => g.amount)).toEqual([60_000 * H]);
    // The second round is still open: its request waits.
    const [waiting] = await handle.db.select({ id: applications.id }).from(applications).where(eq(applications.status, 'submitted'));
    expect(await refusal(as(admin).staff.decide({ ...grant, applicationId: waiting!.id }))).toMatchObject({ code: 'PRECONDITION_FAILED' });
    const [listed] = await as(reviewer).calls.list();
    expect(listed!.rounds.map((r) => [r.status, r.closedAt])).toEqual([['closed', closing], ['open', null]]);
  });

  it('keeps a tenant’s own statement from moving its request into a closed round, or another mode’s, in the database', async () => {
    const [waiting] = await handle.db.select({ id: applications.id, orgId: applications.orgId, roundId: applications.roundId }).from(applications).where(eq(applications.status, 'submitted'));
    const [closedRound] = await handle.db.select({ id: callRounds.id }).from(callRounds).where(eq(callRounds.status, 'closed'));
    const asTenant = (work: (tx: Tx) => Promise<unknown>) =>
      inTransaction(handle.db, async (tx) => {
        await actAsTenant(tx, waiting!.orgId, 'write');
        return work(tx);
      });
    await expect(asTenant((tx) => tx.update(applications).set({ roundId: closedRound!.id }).where(eq(applications.id, waiting!.id)))).rejects.toThrow();
    await expect(asTenant((tx) => tx.update(applications).set({ justification: 'Pretraining runs in quarterly blocks, as planned, with the ablations first.' }).where(eq(applications.id, waiting!.id)))).resolves.toBeDefined();
    await expect(asTenant((tx) => tx.update(applications).set({ reportRequestedAt: new Date() }).where(eq(applications.id, waiting!.id)))).rejects.toThrow();
    const [after] = await handle.db.select({ roundId: applications.roundId, reportRequestedAt: applications.reportRequestedAt }).from(applications).where(eq(applications.id, waiting!.id));
    expect(after).toEqual({ roundId: waiting!.roundId, reportRequestedAt: null });
    // The service's own connection (the worker) is not bound by it.
    await handle.db.update(applications).set({ reportRequestedAt: new Date() }).where(eq(applications.id, waiting!.id));
  });
});
