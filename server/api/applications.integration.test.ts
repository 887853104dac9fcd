// Applications from draft to allocation: the researcher's journey, instant playground grants, reviewers'
// decisions and their rules, bad input (refused on the right field, nothing half-written), tenancy,
// and staff adjustments of budgets — on PGlite and, when TEST_DATABASE_URL is set, on real Postgres.
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { allocations, applicationLines, applications, auditEvents, decisions, ledgerEntries, memberships } from '~/db/schema';
import { appRouter } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { reserveBudget, settleJob } from '~/server/services/ledger/ledger';
import { closeDueRounds } from '~/server/services/ledger/calls';
import { accountOf, activeAllocation, addMember, callerFor, confirmEmail, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';

const H = 3600;
/** The fixed "now" of the tests: Tuesday 1 December 2026. */
const NOW = '2026-12-01T10:00:00Z';
const TODAY = '2026-12-01';
/** 90 days after TODAY: within Development's 91 days. */
const IN_THREE_MONTHS = '2027-03-01';
const JUSTIFICATION = 'We train and evaluate protein language models; the runs need several H100 nodes.';

const at = (iso: string) => () => new Date(iso);

type Tenant = { userId: string; orgId: string };

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (error) {
    return error instanceof TRPCError ? error.code : `not a TRPCError: ${String(error)}`;
  }
}

/** fieldsOf renders a refused call's error the way the HTTP handler does: code, field messages and message. */
function fieldsOf(db: Db, error: unknown): { code: string; fields: Record<string, string>; message: string } {
  if (!(error instanceof TRPCError)) throw error;
  const shape = getErrorShape({
    config: appRouter._def._config,
    error,
    type: 'mutation',
    path: 'test',
    input: undefined,
    ctx: createContextInner({ db, locale: 'en' }),
  }) as { data: { fieldErrors?: Record<string, string> }; message: string };
  return { code: error.code, fields: shape.data.fieldErrors ?? { _: shape.message }, message: shape.message };
}

describe.each(dbTargets())('applications and allocations on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let aMember: Awaited<ReturnType<typeof addMember>>;
  let bMember: Awaited<ReturnType<typeof addMember>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;
  let admin: Awaited<ReturnType<typeof createStaff>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    a = await createTenant(db, { name: 'Jena University' });
    b = await createTenant(db, { name: 'Kajaani Institute' });
    aMember = await addMember(db, a, 'member');
    bMember = await addMember(db, b, 'member');
    reviewer = await createStaff(db, 'reviewer');
    admin = await createStaff(db, 'admin');
  });
  afterAll(async () => handle?.close());

  const as = (who: Tenant, now = NOW) => callerFor(db, { userId: who.userId, orgId: who.orgId, now: at(now) });
  const asStaff = (who: { userId: string }, now = NOW) => callerFor(db, { userId: who.userId, now: at(now) });

  async function refusal(promise: Promise<unknown>) {
    try {
      await promise;
    } catch (error) {
      return fieldsOf(db, error);
    }
    throw new Error('expected the call to be refused');
  }

  async function rowCounts() {
    const [[apps], [lines], [allocs], [entries], [decided], [audit]] = await Promise.all([
      db.select({ n: count() }).from(applications),
      db.select({ n: count() }).from(applicationLines),
      db.select({ n: count() }).from(allocations),
      db.select({ n: count() }).from(ledgerEntries),
      db.select({ n: count() }).from(decisions),
      db.select({ n: count() }).from(auditEvents),
    ]);
    return { applications: apps!.n, applicationLines: lines!.n, allocations: allocs!.n, ledgerEntries: entries!.n, decisions: decided!.n, audit: audit!.n };
  }

  async function newProject(owner: Tenant, title = `Project ${randomUUID().slice(0, 8)}`) {
    return as(owner).project.create({ title, abstract: 'Large protein language models on GPUs.', fieldOfScience: 'Biology', members: [] });
  }

  function developmentRequest(projectId: string, gpuHours: number, resourceClassId = 'h100') {
    return { projectId, accessModeId: 'development', periodStart: TODAY, periodEnd: IN_THREE_MONTHS, justification: JUSTIFICATION, lines: [{ resourceClassId, gpuHours }] };
  }

  /** A submitted Development application of tenant A's PI. */
  async function submitted(gpuHours: number, owner: Tenant = a) {
    const project = await newProject(owner);
    const app = await as(owner).application.create(developmentRequest(project.id, gpuHours));
    await as(owner).application.submit({ applicationId: app.id });
    return { projectId: project.id, applicationId: app.id, title: project.title };
  }

  it('takes a researcher from a Development application to a reviewed, granted and audited allocation', async () => {
    const pi = as(a);
    const project = await pi.project.create({ title: 'Protein folding at scale', abstract: 'Large protein language models on GPUs.', fieldOfScience: 'Biology', members: [] });
    const draft = await pi.application.create(developmentRequest(project.id, 500));
    expect(draft).toMatchObject({ status: 'draft', accessModeId: 'development', periodStart: TODAY, periodEnd: IN_THREE_MONTHS });
    expect((await pi.application.get({ applicationId: draft.id })).canEdit).toBe(true);
    expect(await pi.application.submit({ applicationId: draft.id })).toEqual({ id: draft.id, status: 'submitted' });

    // The reviewer's queue ages the application in working days (Mon–Fri) by the clock; the target is 5.
    const queueAt = async (now: string) => (await asStaff(reviewer, now).staff.applicationQueue()).find((q) => q.id === draft.id);
    const sameDay = await queueAt(NOW);
    expect(sameDay).toMatchObject({ projectTitle: 'Protein folding at scale', orgName: 'Jena University', modeName: 'Development', targetDays: 5, requestedGpuSeconds: 500 * H });
    expect.soft(sameDay, 'age on the day of submission (clock 2026-12-01)').toMatchObject({ ageWorkingDays: 0, overdue: false });
    expect.soft(await queueAt('2026-12-04T15:00:00Z'), 'Friday, 3 working days later').toMatchObject({ ageWorkingDays: 3, overdue: false });
    expect.soft(await queueAt('2026-12-07T09:00:00Z'), 'Monday: the weekend does not count').toMatchObject({ ageWorkingDays: 4, overdue: false });
    expect.soft(await queueAt('2026-12-08T09:00:00Z'), 'Tuesday: on target').toMatchObject({ ageWorkingDays: 5, overdue: false });
    expect.soft(await queueAt('2026-12-09T09:00:00Z'), 'Wednesday: past the target').toMatchObject({ ageWorkingDays: 6, overdue: true });

    const comment = 'Granted 400 GPU-h: the ablation runs can share checkpoints.';
    const decided = await asStaff(reviewer, '2026-12-09T11:00:00Z').staff.decide({ applicationId: draft.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 400 }], comment });
    expect(decided.status).toBe('approved');
    expect(decided.allocationIds).toHaveLength(1);
    expect((await asStaff(reviewer, '2026-12-09T11:00:00Z').staff.applicationQueue()).map((q) => q.id)).not.toContain(draft.id);

    // The PI sees the allocation on the project, and its balance.
    const piLater = as(a, '2026-12-09T12:00:00Z');
    const seen = await piLater.project.get({ projectId: project.id });
    expect(seen.allocations).toHaveLength(1);
    expect(seen.allocations[0]).toMatchObject({
      id: decided.allocationIds[0],
      status: 'active',
      unit: 'gpu_seconds',
      resourceClassId: 'h100',
      applicationId: draft.id,
      periodStart: TODAY,
      periodEnd: IN_THREE_MONTHS,
      granted: 400 * H,
      charged: 0,
      reserved: 0,
    });
    expect(seen.applications.map((x) => [x.id, x.status])).toEqual([[draft.id, 'approved']]);
    const overview = await piLater.allocation.overview({ allocationId: decided.allocationIds[0]! });
    expect(overview.balance).toMatchObject({ granted: 400 * H, available: 400 * H, charged: 0, reserved: 0 });
    expect(overview.days.map((d) => d.day)).toEqual(['2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05', '2026-12-06', '2026-12-07', '2026-12-08', '2026-12-09']);
    expect(overview.days.every((d) => d.amount === 0)).toBe(true);
    // Nothing used yet: no rate, and all of it would expire unused on the period's last day.
    const lastDay = new Date(Date.parse(IN_THREE_MONTHS) - 86_400_000).toISOString().slice(0, 10);
    expect(overview.projection).toEqual({ ratePerDay: 0, exhaustsOn: null, exhaustsBeforeEnd: false, unusedAtEnd: 400 * H, lastDay });
    expect(overview.entries.map((e) => [e.kind, e.amount, e.actorName])).toEqual([['grant', 400 * H, 'Staff reviewer']]);

    // The decision, with the reviewer's words and name, is on the application.
    const app = await piLater.application.get({ applicationId: draft.id });
    expect(app).toMatchObject({ status: 'approved', canEdit: false, allocations: [{ id: decided.allocationIds[0], resourceClassId: 'h100' }] });
    expect(app.decisions).toHaveLength(1);
    expect(app.decisions[0]).toMatchObject({ outcome: 'approved', comment, reviewerName: 'Staff reviewer', grantedLines: [{ resourceClassId: 'h100', gpuSeconds: 400 * H }] });

    // The PI is told, with the comment.
    const notices = await piLater.notification.list();
    expect(notices.some((n) => n.text.includes('Protein folding at scale') && n.text.includes(comment) && n.link === `/applications/${draft.id}`)).toBe(true);

    // The audit log names the reviewer and gives the comment as the reason.
    const audit = await asStaff(admin).staff.audit({ orgId: a.orgId, actorUserId: reviewer.userId, limit: 500 });
    const approved = audit.filter((e) => e.action === 'application.approved' && e.targetId === draft.id);
    expect(approved).toHaveLength(1);
    expect(approved[0]).toMatchObject({ reason: comment, actorUserId: reviewer.userId, orgId: a.orgId, isStaffAction: true, targetType: 'application' });
  });

  it('approves a 50 GPU-h playground application at once, with the portal as the actor', async () => {
    const project = await newProject(a, 'Quick playground test');
    const pi = as(a);
    const draft = await pi.application.create({ projectId: project.id, accessModeId: 'playground', periodStart: TODAY, periodEnd: '2026-12-31', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 50 }] });
    expect(await pi.application.submit({ applicationId: draft.id })).toEqual({ id: draft.id, status: 'approved' });

    const seen = await pi.project.get({ projectId: project.id });
    expect(seen.allocations).toHaveLength(1);
    expect(seen.allocations[0]).toMatchObject({ status: 'active', resourceClassId: 'b200', granted: 50 * H, periodStart: TODAY, periodEnd: '2026-12-31' });
    const app = await pi.application.get({ applicationId: draft.id });
    expect(app.status).toBe('approved');
    expect(app.decisions).toEqual([expect.objectContaining({ outcome: 'approved', reviewerName: null, grantedLines: [{ resourceClassId: 'b200', gpuSeconds: 50 * H, storageGb: 50 }] })]);
    expect((await asStaff(reviewer).staff.applicationQueue()).map((q) => q.id)).not.toContain(draft.id);

    const audit = (await asStaff(admin).staff.audit({ orgId: a.orgId, limit: 500 })).filter((e) => e.targetId === draft.id);
    expect(audit.map((e) => [e.action, e.actorUserId])).toEqual([
      ['application.approved', null],
      ['application.submitted', a.userId],
      ['application.drafted', a.userId],
    ]);
    expect(audit[0]).toMatchObject({ isStaffAction: false, reason: 'access mode approves instantly' });
  });

  it("sends an application back for changes and rejects it, telling the PI the reviewer's words each time", async () => {
    const { applicationId, projectId } = await submitted(300);
    const pi = as(a);
    const askFor = 'Please add a scaling plot from 8 to 64 GPUs before we decide.';
    expect(await asStaff(reviewer).staff.decide({ applicationId, outcome: 'changes_requested', comment: askFor })).toMatchObject({ status: 'changes_requested', allocationIds: [] });

    let app = await pi.application.get({ applicationId });
    expect(app).toMatchObject({ status: 'changes_requested', canEdit: true });
    expect(app.decisions.map((d) => [d.outcome, d.comment, d.reviewerName])).toEqual([['changes_requested', askFor, 'Staff reviewer']]);
    expect((await pi.notification.list()).some((n) => n.text.includes(askFor))).toBe(true);

    // The PI changes the request and submits again.
    await pi.application.update({ applicationId, accessModeId: 'development', periodStart: TODAY, periodEnd: '2027-02-28', justification: `${JUSTIFICATION} Scaling plot attached.`, lines: [{ resourceClassId: 'h100', gpuHours: 250 }] });
    app = await pi.application.get({ applicationId });
    expect(app).toMatchObject({ status: 'changes_requested', periodEnd: '2027-02-28', justification: `${JUSTIFICATION} Scaling plot attached.` });
    expect(app.lines.map((l) => [l.resourceClassId, l.gpuSeconds])).toEqual([['h100', 250 * H]]);
    expect(await pi.application.submit({ applicationId })).toEqual({ id: applicationId, status: 'submitted' });
    expect((await asStaff(reviewer).staff.applicationQueue()).find((q) => q.id === applicationId)?.requestedGpuSeconds).toBe(250 * H);

    const no = 'Rejected: the project duplicates an allocation held elsewhere.';
    expect(await asStaff(reviewer).staff.decide({ applicationId, outcome: 'rejected', comment: no })).toMatchObject({ status: 'rejected', allocationIds: [] });
    app = await pi.application.get({ applicationId });
    expect(app).toMatchObject({ status: 'rejected', canEdit: false, allocations: [] });
    expect(app.decisions.map((d) => [d.outcome, d.comment])).toEqual([
      ['rejected', no],
      ['changes_requested', askFor],
    ]);
    expect((await pi.notification.list()).some((n) => n.text.includes(no) && n.text.includes('rejected'))).toBe(true);

    // A rejected application is final: no edits, no resubmission, no second decision.
    const before = await rowCounts();
    const update = await refusal(pi.application.update({ applicationId, accessModeId: 'development', periodStart: TODAY, periodEnd: IN_THREE_MONTHS, justification: JUSTIFICATION, lines: [{ resourceClassId: 'h100', gpuHours: 100 }] }));
    expect(update.code).toBe('PRECONDITION_FAILED');
    expect(update.message).toMatch(/rejected/);
    expect(await codeOf(pi.application.submit({ applicationId }))).toBe('PRECONDITION_FAILED');
    expect(await codeOf(asStaff(reviewer).staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 250 }] }))).toBe('PRECONDITION_FAILED');
    expect(await codeOf(asStaff(admin).staff.decide({ applicationId, outcome: 'changes_requested', comment: 'Try again?' }))).toBe('PRECONDITION_FAILED');
    expect(await rowCounts()).toEqual(before);
    expect((await pi.application.get({ applicationId })).lines.map((l) => l.gpuSeconds)).toEqual([250 * H]);
    expect((await pi.project.get({ projectId })).allocations).toEqual([]);
  });

  it('requires a comment to reject or send back, and keeps grants within the request', async () => {
    const { applicationId } = await submitted(200);
    const staff = asStaff(reviewer).staff;
    const before = await rowCounts();

    const over = await refusal(staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 250 }], comment: 'Have more.' }));
    expect(over.code).toBe('BAD_REQUEST');
    expect(over.fields.grantedLines).toMatch(/at most what was requested on h100/);
    const less = await refusal(staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 150 }] }));
    expect(less.code).toBe('BAD_REQUEST');
    expect(less.fields.comment).toMatch(/comment/);
    const otherClass = await refusal(staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'b200', gpuHours: 100 }], comment: 'B200 instead.' }));
    expect(otherClass.code).toBe('BAD_REQUEST');
    expect(otherClass.fields.grantedLines).toMatch(/b200 was not requested/);
    const nothing = await refusal(staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 0 }], comment: 'Nothing for now.' }));
    expect(nothing.code).toBe('BAD_REQUEST');
    expect(nothing.fields.grantedLines).toMatch(/must grant some/);
    const bareReject = await refusal(staff.decide({ applicationId, outcome: 'rejected', comment: '   ' }));
    expect(bareReject.code).toBe('BAD_REQUEST');
    expect(bareReject.fields.comment).toMatch(/comment/);
    expect((await refusal(staff.decide({ applicationId, outcome: 'changes_requested' }))).fields.comment).toMatch(/comment/);

    expect(await rowCounts()).toEqual(before);
    expect((await as(a).application.get({ applicationId })).status).toBe('submitted');

    // A draft is not decided.
    const project = await newProject(a);
    const draft = await as(a).application.create(developmentRequest(project.id, 50));
    expect(await codeOf(staff.decide({ applicationId: draft.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 50 }] }))).toBe('PRECONDITION_FAILED');

    // Granting exactly what was asked needs no comment; two reviewers racing grant it once.
    const other = asStaff(admin).staff;
    const race = await Promise.allSettled([
      staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 200 }] }),
      other.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 200 }] }),
    ]);
    const won = race.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    const lost = race.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason instanceof TRPCError ? r.reason.code : String(r.reason)));
    expect(won).toHaveLength(1);
    expect(lost).toEqual(['PRECONDITION_FAILED']);
    expect(won[0]!.status).toBe('approved');
    const overview = await as(a).allocation.overview({ allocationId: won[0]!.allocationIds[0]! });
    expect(overview.balance.granted).toBe(200 * H);
    const app = await as(a).application.get({ applicationId });
    expect(app.decisions).toHaveLength(1);
    expect(app.allocations).toHaveLength(1);
  });

  it('leaves large-scale applications to admins', async () => {
    const project = await newProject(a, 'Foundation model pretraining');
    const pi = as(a);
    const draft = await pi.application.create({ projectId: project.id, accessModeId: 'large-scale', periodStart: TODAY, periodEnd: '2027-11-30', justification: JUSTIFICATION, lines: [{ resourceClassId: 'h100', gpuHours: 50_000 }, { resourceClassId: 'b200', gpuHours: 20_000 }] });
    // Large Scale takes requests in a call's rounds (issue #32): this one joins the round closing that afternoon.
    const cutoff = '2026-12-01T16:00:00Z';
    await asStaff(admin).calls.open({ accessModeId: 'large-scale', title: 'Large Scale, December', gpuHoursPerRound: 500_000, cutoffs: [cutoff] });
    expect(await pi.application.submit({ applicationId: draft.id })).toEqual({ id: draft.id, status: 'submitted' });
    const queued = (await asStaff(reviewer).staff.applicationQueue()).find((q) => q.id === draft.id);
    expect(queued).toMatchObject({ reviewPath: 'full', targetDays: 10, requestedGpuSeconds: 70_000 * H, roundCutoffAt: new Date(cutoff), roundStatus: 'open' });
    await closeDueRounds(db, new Date('2026-12-01T16:01:00Z'));

    const byReviewer = await refusal(asStaff(reviewer).staff.decide({ applicationId: draft.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 50_000 }, { resourceClassId: 'b200', gpuHours: 20_000 }] }));
    expect(byReviewer.code).toBe('FORBIDDEN');
    expect(byReviewer.message).toMatch(/centre admin/);
    expect((await pi.application.get({ applicationId: draft.id })).status).toBe('submitted');

    const byAdmin = await asStaff(admin).staff.decide({ applicationId: draft.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 40_000 }], comment: 'H100 only: the B200 partition is fully booked next year.' });
    expect(byAdmin.allocationIds).toHaveLength(1);
    const seen = await pi.project.get({ projectId: project.id });
    expect(seen.allocations.map((x) => [x.resourceClassId, x.granted])).toEqual([['h100', 40_000 * H]]);
  });

  describe('bad input is refused on the right field and writes nothing', () => {
    let projectId: string;
    let draftId: string;

    beforeAll(async () => {
      projectId = (await newProject(a, 'Input checks')).id;
      draftId = (await as(a).application.create(developmentRequest(projectId, 100))).id;
    });

    const base = { accessModeId: 'development', periodStart: TODAY, periodEnd: IN_THREE_MONTHS, justification: JUSTIFICATION, lines: [{ resourceClassId: 'h100', gpuHours: 100 }] };
    it.each([
      ['zero GPU-hours', { lines: [{ resourceClassId: 'h100', gpuHours: 0 }] }, 'lines.0.gpuHours', /at least 1/],
      ['negative GPU-hours', { lines: [{ resourceClassId: 'h100', gpuHours: -40 }] }, 'lines.0.gpuHours', /at least 1/],
      ['absurd GPU-hours (10^12)', { lines: [{ resourceClassId: 'h100', gpuHours: 1e12 }] }, 'lines.0.gpuHours', /at most/],
      ['fractional GPU-hours', { lines: [{ resourceClassId: 'h100', gpuHours: 10.5 }] }, 'lines.0.gpuHours', /./],
      ['no lines at all', { lines: [] }, 'lines', /./],
      ['the same class twice', { lines: [{ resourceClassId: 'h100', gpuHours: 10 }, { resourceClassId: 'h100', gpuHours: 20 }] }, 'lines', /only once/],
      ['a period ending before it starts', { periodStart: '2026-12-10', periodEnd: '2026-12-05' }, 'periodEnd', /end after it starts/],
      ['a period ending the day it starts', { periodStart: '2026-12-10', periodEnd: '2026-12-10' }, 'periodEnd', /end after it starts/],
      ['a period longer than the mode allows', { periodEnd: '2027-03-03' }, 'periodEnd', /at most 91 days; the period has 92/],
      ['a start in the past', { periodStart: '2026-11-30', periodEnd: '2027-01-31' }, 'periodStart', /before today \(2026-12-01\)/],
      ['an impossible date', { periodStart: '2026-02-30' }, 'periodStart', /./],
      ['an unknown resource class', { lines: [{ resourceClassId: 'tpu-v5', gpuHours: 10 }] }, 'lines', /tpu-v5 is not offered/],
      ['an unknown access mode', { accessModeId: 'unlimited' }, 'accessModeId', /access modes offered/],
      ['more than the Development cap (2001 GPU-h)', { lines: [{ resourceClassId: 'h100', gpuHours: 2001 }] }, 'lines', /at most 2,000 GPU-h in total; the request has 2,001 GPU-h/],
      ['more than the cap across classes', { lines: [{ resourceClassId: 'h100', gpuHours: 1500 }, { resourceClassId: 'b200', gpuHours: 501 }] }, 'lines', /at most 2,000 GPU-h/],
      ['a too-short justification', { justification: 'Need GPUs.' }, 'justification', /at least 20/],
    ])('%s', async (_label, override, field, message) => {
      const pi = as(a);
      const before = await rowCounts();
      const created = await refusal(pi.application.create({ projectId, ...base, ...override }));
      expect(created.code).toBe('BAD_REQUEST');
      expect(Object.keys(created.fields)).toContain(field);
      expect(created.fields[field]).toMatch(message);
      // The same request as an edit of a draft is refused alike and leaves the draft as it was.
      const updated = await refusal(pi.application.update({ applicationId: draftId, ...base, ...override }));
      expect(updated.code).toBe('BAD_REQUEST');
      expect(Object.keys(updated.fields)).toContain(field);
      expect(await rowCounts()).toEqual(before);
      const draft = await pi.application.get({ applicationId: draftId });
      expect(draft).toMatchObject({ status: 'draft', periodStart: TODAY, periodEnd: IN_THREE_MONTHS, accessModeId: 'development' });
      expect(draft.lines.map((l) => [l.resourceClassId, l.gpuSeconds])).toEqual([['h100', 100 * H]]);
    });

    it('refuses a resource class the tenant’s residency forbids (EU tenant asking for Lugano)', async () => {
      await callerFor(db).account.signUp({ name: 'Eva Europe', email: 'eva@eu-lab.example', password: TEST_PASSWORD, organisation: { name: 'EU Data Lab', kind: 'academic', country: 'DE', residency: 'EU' } });
      await confirmEmail(db, 'eva@eu-lab.example');
      const eu = await accountOf(db, 'eva@eu-lab.example');
      expect((await as(eu).catalogue.resourceClasses()).map((rc) => rc.id)).toEqual(['b200', 'h100']);
      const project = await newProject(eu, 'Sovereign data project');
      const before = await rowCounts();
      const refused = await refusal(as(eu).application.create(developmentRequest(project.id, 100, 'h100-ch')));
      expect(refused.code).toBe('BAD_REQUEST');
      expect(refused.fields.lines).toMatch(/h100-ch is not offered to your organisation/);
      expect(await rowCounts()).toEqual(before);
      // The EU classes are fine.
      expect((await as(eu).application.create(developmentRequest(project.id, 100, 'b200'))).status).toBe('draft');
    });

    it('re-checks the period on submission: a draft whose start has passed cannot be submitted', async () => {
      const draft = await as(a).application.create(developmentRequest(projectId, 100));
      const before = await rowCounts();
      const late = await refusal(as(a, '2026-12-03T09:00:00Z').application.submit({ applicationId: draft.id }));
      expect(late.code).toBe('BAD_REQUEST');
      expect(late.fields.periodStart).toMatch(/before today \(2026-12-03\)/);
      expect(await rowCounts()).toEqual(before);
      expect((await as(a).application.get({ applicationId: draft.id })).status).toBe('draft');
    });

    it('lets only project leads apply, and only staff decide', async () => {
      const pi = as(a);
      const member = as(aMember);
      const before = await rowCounts();
      // A tenant member who is not on the project does not see it.
      expect(await codeOf(member.application.create(developmentRequest(projectId, 100)))).toBe('NOT_FOUND');
      expect(await codeOf(member.application.submit({ applicationId: draftId }))).toBe('NOT_FOUND');
      expect(await codeOf(member.application.get({ applicationId: draftId }))).toBe('NOT_FOUND');
      expect(await codeOf(member.project.get({ projectId }))).toBe('NOT_FOUND');
      // On the project as a plain member they may read but not apply.
      await pi.project.setMember({ projectId, userId: aMember.userId, role: 'member' });
      expect((await member.application.get({ applicationId: draftId })).canEdit).toBe(false);
      const create = await refusal(member.application.create(developmentRequest(projectId, 100)));
      expect(create.code).toBe('FORBIDDEN');
      expect(create.message).toMatch(/PI and managers/);
      expect(await codeOf(member.application.submit({ applicationId: draftId }))).toBe('FORBIDDEN');
      expect(await codeOf(member.application.update({ applicationId: draftId, ...base, lines: [{ resourceClassId: 'h100', gpuHours: 1999 }] }))).toBe('FORBIDDEN');
      expect(await codeOf(member.project.setMember({ projectId, userId: aMember.userId, role: 'manager' }))).toBe('FORBIDDEN');
      // Tenant people are not staff, whatever their role.
      const { applicationId } = await submitted(100);
      const afterSubmit = await rowCounts();
      expect(await codeOf(member.staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 100 }] }))).toBe('FORBIDDEN');
      expect(await codeOf(pi.staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 100 }] }))).toBe('FORBIDDEN');
      expect(await codeOf(member.staff.applicationQueue())).toBe('FORBIDDEN');
      expect(await rowCounts()).toEqual(afterSubmit);
      expect(afterSubmit.applications).toBe(before.applications + 1);
      const draft = await pi.application.get({ applicationId: draftId });
      expect(draft.status).toBe('draft');
      expect(draft.lines.map((l) => l.gpuSeconds)).toEqual([100 * H]);
      expect((await pi.application.get({ applicationId })).status).toBe('submitted');
    });

    it('keeps a reviewer who belongs to the applying tenant from deciding its application', async () => {
      const { applicationId } = await submitted(120);
      const insider = await createStaff(db, 'reviewer');
      await db.insert(memberships).values({ orgId: a.orgId, userId: insider.userId, role: 'member' });
      const before = await rowCounts();
      const refused = await refusal(asStaff(insider).staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 120 }] }));
      // Excluded by the conflict of interest (issue #32): to them the application does not exist.
      expect(refused.code).toBe('NOT_FOUND');
      expect(await codeOf(asStaff(insider).staff.decide({ applicationId, outcome: 'rejected', comment: 'Not convincing.' }))).toBe('NOT_FOUND');
      expect(await codeOf(asStaff(insider).staff.application({ applicationId }))).toBe('NOT_FOUND');
      expect(await rowCounts()).toEqual(before);
      expect((await as(a).application.get({ applicationId })).status).toBe('submitted');
      // Another reviewer may.
      expect((await asStaff(reviewer).staff.decide({ applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 120 }] })).status).toBe('approved');
    });
  });

  it("keeps tenant B away from tenant A's projects, applications and allocations", async () => {
    const granted = await submitted(100);
    const approval = await asStaff(reviewer).staff.decide({ applicationId: granted.applicationId, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 100 }] });
    const allocationId = approval.allocationIds[0]!;
    const project = await newProject(a, 'Tenant A secret project');
    const draft = await as(a).application.create(developmentRequest(project.id, 100));
    const bProject = await newProject(b, 'Tenant B project');
    const before = await rowCounts();

    const edit = { applicationId: draft.id, accessModeId: 'development', periodStart: TODAY, periodEnd: IN_THREE_MONTHS, justification: JUSTIFICATION, lines: [{ resourceClassId: 'h100', gpuHours: 1 }] };
    for (const intruder of [b, bMember]) {
      const them = as(intruder);
      const label = intruder === b ? 'B owner' : 'B member';
      expect(`${label} project.get: ${await codeOf(them.project.get({ projectId: project.id }))}`).toBe(`${label} project.get: NOT_FOUND`);
      expect(`${label} project.get (granted): ${await codeOf(them.project.get({ projectId: granted.projectId }))}`).toBe(`${label} project.get (granted): NOT_FOUND`);
      expect(`${label} application.get: ${await codeOf(them.application.get({ applicationId: draft.id }))}`).toBe(`${label} application.get: NOT_FOUND`);
      expect(`${label} application.update: ${await codeOf(them.application.update(edit))}`).toBe(`${label} application.update: NOT_FOUND`);
      expect(`${label} application.submit: ${await codeOf(them.application.submit({ applicationId: draft.id }))}`).toBe(`${label} application.submit: NOT_FOUND`);
      expect(`${label} application.create: ${await codeOf(them.application.create(developmentRequest(project.id, 10)))}`).toBe(`${label} application.create: NOT_FOUND`);
      expect(`${label} allocation.overview: ${await codeOf(them.allocation.overview({ allocationId }))}`).toBe(`${label} allocation.overview: NOT_FOUND`);
      expect(`${label} project.setMember: ${await codeOf(them.project.setMember({ projectId: project.id, userId: intruder.userId, role: 'manager' }))}`).toBe(`${label} project.setMember: NOT_FOUND`);
      // Pointing the organisation switcher at A does not help.
      const switched = callerFor(db, { userId: intruder.userId, orgId: a.orgId, now: at(NOW) });
      expect(await codeOf(switched.application.get({ applicationId: draft.id }))).toBe('FORBIDDEN');
      expect(await codeOf(switched.allocation.overview({ allocationId }))).toBe('FORBIDDEN');
      expect(await codeOf(switched.application.submit({ applicationId: draft.id }))).toBe('FORBIDDEN');
    }
    // B cannot top up A's allocation from a project of its own.
    const topUp = await refusal(as(b).application.create({ ...developmentRequest(bProject.id, 10), kind: 'top_up', baseAllocationId: allocationId }));
    expect(topUp.code).toBe('BAD_REQUEST');
    expect(Object.keys(topUp.fields)).toEqual(['baseAllocationId']);
    // A's PI cannot pull B's people into A's project either.
    expect(await codeOf(as(a).project.setMember({ projectId: project.id, userId: bMember.userId, role: 'member' }))).toBe('BAD_REQUEST');

    expect(await rowCounts()).toEqual(before);
    const mine = await as(a).project.get({ projectId: project.id });
    expect(mine.members.map((m) => m.userId)).toEqual([a.userId]);
    const untouched = await as(a).application.get({ applicationId: draft.id });
    expect(untouched.status).toBe('draft');
    expect(untouched.lines.map((l) => l.gpuSeconds)).toEqual([100 * H]);
    expect((await as(b).project.list()).map((p) => p.title)).not.toContain('Tenant A secret project');
  });

  it('lets admins raise and lower a budget with a reason, never below what is used, audited by actor and tenant', async () => {
    const { allocationId } = await activeAllocation(db, a, admin, { gpuHours: 1000, today: TODAY });
    const bAllocation = await activeAllocation(db, b, admin, { gpuHours: 10, today: TODAY });
    const staff = asStaff(admin);

    expect((await staff.staff.adjustAllocation({ allocationId, amount: 100, reason: 'Extra time after the node outage' })).granted).toBe(1100 * H);
    expect((await staff.staff.adjustAllocation({ allocationId, amount: -50, reason: 'Correcting a double grant' })).granted).toBe(1050 * H);
    await staff.staff.adjustAllocation({ allocationId: bAllocation.allocationId, amount: 5, reason: 'Goodwill for tenant B' });
    let overview = await as(a).allocation.overview({ allocationId });
    expect(overview.balance).toMatchObject({ granted: 1050 * H, available: 1050 * H });
    expect(overview.entries.filter((e) => e.kind === 'adjust').map((e) => [e.amount, e.reason, e.actorName])).toEqual([
      [-50 * H, 'Correcting a double grant', 'Staff admin'],
      [100 * H, 'Extra time after the node outage', 'Staff admin'],
    ]);

    const adjusted = (await staff.staff.audit({ orgId: a.orgId, actorUserId: admin.userId, limit: 500 })).filter((e) => e.action === 'allocation.adjusted' && e.targetId === allocationId);
    expect(adjusted.map((e) => [e.reason, e.actorUserId, e.isStaffAction])).toEqual([
      ['Correcting a double grant', admin.userId, true],
      ['Extra time after the node outage', admin.userId, true],
    ]);
    expect(adjusted[0]!.data).toMatchObject({ amount: -50 * H, grantedBefore: 1100 * H, grantedAfter: 1050 * H });

    // Use 900 GPU-h (one job charged), then try to lower the budget below that.
    const jobId = randomUUID();
    await db.transaction((tx) => reserveBudget(tx, { allocationId, orgId: a.orgId, jobId, amount: 900 * H, actorUserId: a.userId, today: TODAY }));
    await settleJob(db, { jobId, actualAmount: 900 * H });
    const before = await rowCounts();
    const tooLow = await refusal(staff.staff.adjustAllocation({ allocationId, amount: -151, reason: 'Reclaiming unused time' }));
    expect(tooLow.code).toBe('PRECONDITION_FAILED');
    expect(tooLow.fields.amount).toMatch(/cannot go below what is already used or reserved \(900\)/);
    const zero = await refusal(staff.staff.adjustAllocation({ allocationId, amount: 0, reason: 'Nothing' }));
    expect(zero.code).toBe('BAD_REQUEST');
    expect(Object.keys(zero.fields)).toContain('amount');
    const noReason = await refusal(staff.staff.adjustAllocation({ allocationId, amount: 10, reason: ' ' }));
    expect(noReason.code).toBe('BAD_REQUEST');
    expect(Object.keys(noReason.fields)).toContain('reason');
    // Reviewers may decide applications but not touch budgets; tenants may not either.
    expect(await codeOf(asStaff(reviewer).staff.adjustAllocation({ allocationId, amount: 100, reason: 'Reviewer generosity' }))).toBe('FORBIDDEN');
    expect(await codeOf(as(a).staff.adjustAllocation({ allocationId, amount: 100, reason: 'Helping myself' }))).toBe('FORBIDDEN');
    expect(await codeOf(staff.staff.adjustAllocation({ allocationId: randomUUID(), amount: 100, reason: 'Ghost allocation' }))).toBe('NOT_FOUND');
    expect(await rowCounts()).toEqual(before);
    overview = await staff.staff.allocation({ allocationId });
    expect(overview.balance).toMatchObject({ granted: 1050 * H, charged: 900 * H, reserved: 0, available: 150 * H });
    // Exactly down to what is used is allowed.
    expect((await staff.staff.adjustAllocation({ allocationId, amount: -150, reason: 'Closing the remainder' })).granted).toBe(900 * H);

    // The audit filters return only the tenant's, or only the actor's, rows.
    const ofA = await staff.staff.audit({ orgId: a.orgId, limit: 500 });
    expect(ofA.length).toBeGreaterThan(0);
    expect(ofA.every((e) => e.orgId === a.orgId)).toBe(true);
    expect(ofA.some((e) => e.reason === 'Goodwill for tenant B')).toBe(false);
    const ofB = await staff.staff.audit({ orgId: b.orgId, limit: 500 });
    expect(ofB.every((e) => e.orgId === b.orgId)).toBe(true);
    expect(ofB.filter((e) => e.action === 'allocation.adjusted').map((e) => e.reason)).toEqual(['Goodwill for tenant B']);
    const byAdmin = await staff.staff.audit({ actorUserId: admin.userId, limit: 500 });
    expect(byAdmin.every((e) => e.actorUserId === admin.userId)).toBe(true);
    // Tenants A and B, and the Large Scale call the admin opened above (the centre's, no tenant's).
    expect(new Set(byAdmin.map((e) => e.orgId))).toEqual(new Set([a.orgId, b.orgId, null]));
    const byReviewer = await staff.staff.audit({ actorUserId: reviewer.userId, limit: 500 });
    expect(byReviewer.length).toBeGreaterThan(0);
    expect(byReviewer.every((e) => e.actorUserId === reviewer.userId)).toBe(true);
    expect(byReviewer.some((e) => e.action === 'allocation.adjusted')).toBe(false);
  });
});
