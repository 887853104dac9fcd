// End-of-allocation reports and reviewers' reminders (issue #32 parts 5-6), through the API with a fake
// clock: an approved Development request ends; the worker asks its PI for the report once; staff see it
// missing and the PI's next request is flagged to reviewers; a member who does not lead the project and
// another tenant are refused; the PI files it with publications by DOI and data sets, normalised, audited
// and filed again; the tenant's wall holds in the database. A reviewer whose review is due within a working
// day is reminded once that day.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle, Tx } from '~/db/client';
import { allocationReports, auditEvents, mailOutbox, memberships, notifications, reviewAssignments } from '~/db/schema';
import { requestDueReports } from '~/server/services/ledger/reports';
import { sendReviewReminders } from '~/server/services/mail/review-reminders';
import { actAsTenant, inTransaction } from '~/server/services/transaction';
import { addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { refusal } from '~/server/testing/refusal';

const JUSTIFICATION = 'Fine-tuning protein language models on our own assays, with ablations at smaller scale.';
const SUMMARY = 'We fine-tuned three protein language models; the best predicts stability 12 % better than the baseline.';


describe.each(dbTargets())('end-of-allocation reports and reviewer reminders on %s', (target) => {
  let handle: DbHandle;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;
  let lab: Awaited<ReturnType<typeof createTenant>>;
  let member: { userId: string; orgId: string };
  let other: Awaited<ReturnType<typeof createTenant>>;
  let endedId = '';
  let nextId = '';
  let clock = new Date('2027-01-04T10:00:00+01:00');
  const as = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now: () => clock });

  beforeAll(async () => {
    handle = await openTestDb(target);
    [admin, reviewer] = await Promise.all([createStaff(handle.db, 'admin'), createStaff(handle.db, 'reviewer')]);
    lab = await createTenant(handle.db, { name: 'Stability Lab' });
    other = await createTenant(handle.db, { name: 'Other Lab' });
    member = await addMember(handle.db, lab, 'member');
    const project = await as(lab).project.create({ title: 'Protein stability', abstract: 'Protein language models.', fieldOfScience: 'Biology', members: [{ userId: member.userId, role: 'member' }] });
    const draft = await as(lab).application.create({ projectId: project.id, accessModeId: 'development', periodStart: '2027-01-11', periodEnd: '2027-04-01', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 400 }] });
    await as(lab).application.submit({ applicationId: draft.id });
    await as(admin).staff.decide({ applicationId: draft.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'b200', gpuHours: 400 }], comment: '' });
    endedId = draft.id;
  });
  afterAll(async () => handle?.close());

  it('asks for nothing while the period runs, then asks the PI once when it has ended', async () => {
    const running = await as(lab).application.get({ applicationId: endedId });
    expect(running.report).toMatchObject({ owed: false, dueFrom: '2027-04-01', report: null, canFile: true, used: { granted: 400 * 3600, charged: 0 } });
    expect(await requestDueReports(handle.db, new Date('2027-03-31T23:00:00Z'))).toBe(0);
    clock = new Date('2027-04-01T08:00:00+02:00');
    expect(await requestDueReports(handle.db, clock)).toBe(1);
    expect(await requestDueReports(handle.db, clock)).toBe(0);
    const asked = await handle.db.select().from(notifications).where(and(eq(notifications.userId, lab.userId), eq(notifications.messageKey, 'notice.reportDue')));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.link).toBe(`/applications/${endedId}#report`);
    expect(await handle.db.select({ kind: mailOutbox.kind }).from(mailOutbox).where(and(eq(mailOutbox.toUserId, lab.userId), eq(mailOutbox.kind, 'report_due')))).toHaveLength(1);
    expect((await as(lab).application.get({ applicationId: endedId })).report).toMatchObject({ owed: true, report: null });
    // The member may read it but not file it.
    expect((await as(member).application.get({ applicationId: endedId })).report).toMatchObject({ owed: true, canFile: false });
  });

  it('shows staff the report missing and flags the PI’s next request to its reviewers', async () => {
    const overview = await as(reviewer).allocationReports.overview();
    expect(overview.missing).toHaveLength(1);
    expect(overview.missing[0]).toMatchObject({ applicationId: endedId, projectTitle: 'Protein stability', orgName: 'Stability Lab', periodEnd: '2027-04-01', pis: [{ userId: lab.userId }] });
    expect(overview.filed).toEqual([]);
    const project = await as(lab).project.create({ title: 'Protein design', abstract: 'Generative protein design.', fieldOfScience: 'Biology', members: [] });
    const draft = await as(lab).application.create({ projectId: project.id, accessModeId: 'development', periodStart: '2027-05-03', periodEnd: '2027-08-01', justification: JUSTIFICATION, lines: [{ resourceClassId: 'b200', gpuHours: 300 }] });
    await as(lab).application.submit({ applicationId: draft.id });
    nextId = draft.id;
    expect((await as(reviewer).staff.application({ applicationId: nextId })).missingReportsOfPi).toEqual([{ applicationId: endedId, projectTitle: 'Protein stability', periodEnd: '2027-04-01' }]);
    expect((await as(reviewer).staff.applicationQueue()).find((q) => q.id === nextId)!.missingReportsOfPi).toBe(1);
    // Applicants do not get the reviewers' flag.
    expect((await as(lab).application.get({ applicationId: nextId })).missingReportsOfPi).toEqual([]);
  });

  it('refuses a bad report on its field, a member who does not lead the project, another tenant and a request that is not approved', async () => {
    const base = { applicationId: endedId, summary: SUMMARY, publications: [] as string[], datasets: [] as string[] };
    expect(await refusal(as(lab).allocationReports.file({ ...base, summary: 'Too short.' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'summary' });
    expect(await refusal(as(lab).allocationReports.file({ ...base, publications: ['10.1234/ok', 'arXiv:2101.00001'] }))).toMatchObject({ code: 'BAD_REQUEST', field: 'publications' });
    expect(await refusal(as(lab).allocationReports.file({ ...base, datasets: ['http://plain.example.org/set'] }))).toMatchObject({ code: 'BAD_REQUEST', field: 'datasets' });
    expect((await refusal(as(member).allocationReports.file(base))).code).toBe('FORBIDDEN');
    expect(await refusal(as(other).allocationReports.file(base))).toMatchObject({ code: 'NOT_FOUND', field: 'applicationId' });
    expect(await refusal(as(lab).allocationReports.file({ ...base, applicationId: nextId }))).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'applicationId' });
    expect(await handle.db.select().from(allocationReports)).toEqual([]);
  });

  it('files the report with its DOIs and data sets normalised, lifts the flag, and files it again with both versions audited', async () => {
    clock = new Date('2027-04-06T11:00:00+02:00');
    const filed = await as(lab).allocationReports.file({
      applicationId: endedId,
      summary: SUMMARY,
      publications: ['https://doi.org/10.1101/2027.03.01.123456', 'doi:10.1101/2027.03.01.123456'],
      datasets: ['10.5281/zenodo.7654321', 'https://huggingface.co/datasets/stability-lab/assays'],
    });
    expect(filed).toMatchObject({ applicationId: endedId, publications: ['10.1101/2027.03.01.123456'], datasets: ['doi:10.5281/zenodo.7654321', 'https://huggingface.co/datasets/stability-lab/assays'] });
    const seen = await as(member).application.get({ applicationId: endedId });
    expect(seen.report).toMatchObject({ owed: false, report: { summary: SUMMARY, publications: ['10.1101/2027.03.01.123456'] } });
    expect(seen.report!.report!.filedByName).toContain('Stability Lab');
    const overview = await as(reviewer).allocationReports.overview();
    expect(overview.missing).toEqual([]);
    expect(overview.filed).toHaveLength(1);
    expect((await as(reviewer).staff.application({ applicationId: nextId })).missingReportsOfPi).toEqual([]);

    clock = new Date('2027-04-07T09:00:00+02:00');
    await as(lab).allocationReports.file({ applicationId: endedId, summary: `${SUMMARY} The paper was accepted.`, publications: ['10.1101/2027.03.01.123456', '10.1038/s41586-027-00001-x'], datasets: [] });
    expect(await handle.db.select().from(allocationReports)).toHaveLength(1);
    const audit = await handle.db.select({ data: auditEvents.data, actor: auditEvents.actorUserId }).from(auditEvents).where(eq(auditEvents.action, 'report.filed')).orderBy(auditEvents.id);
    expect(audit).toHaveLength(2);
    expect(audit[0]!.data).toMatchObject({ replaced: null, publications: ['10.1101/2027.03.01.123456'] });
    expect(audit[1]!.data).toMatchObject({ publications: ['10.1101/2027.03.01.123456', '10.1038/s41586-027-00001-x'], datasets: [], replaced: { publications: ['10.1101/2027.03.01.123456'], datasets: ['doi:10.5281/zenodo.7654321', 'https://huggingface.co/datasets/stability-lab/assays'] } });
  });

  it('files once per request when the PI files from many clients at once: one report, every filing audited', async () => {
    const before = (await handle.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.action, 'report.filed'))).length;
    const filings = await Promise.all(Array.from({ length: 24 }, (_, i) => as(lab).allocationReports.file({ applicationId: endedId, summary: `${SUMMARY} Filing ${i} of many clients.`, publications: ['10.1101/2027.03.01.123456'], datasets: [] })));
    expect(filings).toHaveLength(24);
    const rows = await handle.db.select().from(allocationReports).where(eq(allocationReports.applicationId, endedId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.summary).toMatch(/Filing \d+ of many clients\.$/);
    const after = (await handle.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.action, 'report.filed'))).length;
    expect(after - before).toBe(24);
  });

  it('keeps reports behind the tenant wall in the database', async () => {
    const asTenant = <T>(orgId: string, access: 'read' | 'write', work: (tx: Tx) => Promise<T>) =>
      inTransaction(handle.db, async (tx) => {
        await actAsTenant(tx, orgId, access);
        return work(tx);
      });
    expect(await asTenant(lab.orgId, 'read', (tx) => tx.select({ id: allocationReports.id }).from(allocationReports))).toHaveLength(1);
    expect(await asTenant(other.orgId, 'read', (tx) => tx.select({ id: allocationReports.id }).from(allocationReports))).toEqual([]);
    // Another tenant can neither change it nor file one on the lab's request under its own name.
    expect(await asTenant(other.orgId, 'write', (tx) => tx.update(allocationReports).set({ summary: 'Overwritten by another tenant.' }).where(eq(allocationReports.applicationId, endedId)).returning({ id: allocationReports.id }))).toEqual([]);
    const [project] = await asTenant(lab.orgId, 'read', (tx) => tx.select({ projectId: allocationReports.projectId }).from(allocationReports));
    await expect(
      asTenant(other.orgId, 'write', (tx) =>
        tx.insert(allocationReports).values({ applicationId: nextId, projectId: project!.projectId, orgId: other.orgId, summary: SUMMARY, publications: [], datasets: [], filedBy: other.userId, filedAt: clock, updatedAt: clock }),
      ),
    ).rejects.toThrow();
  });

  it('reminds a reviewer of a review due within a working day, once that day, not one that is far off nor one excluded since', async () => {
    await as(admin).reviews.assign({ applicationId: nextId, reviewerUserId: reviewer.userId });
    // A second reviewer joins the lab after being assigned: excluded now, so never reminded of it.
    const joiner = await createStaff(handle.db, 'reviewer');
    await as(admin).reviews.assign({ applicationId: nextId, reviewerUserId: joiner.userId });
    await handle.db.insert(memberships).values({ orgId: lab.orgId, userId: joiner.userId, role: 'member' });
    const dueAt = (await as(admin).staff.applicationQueue()).find((q) => q.id === nextId)!.dueAt;
    clock = new Date(dueAt.getTime() - 5 * 24 * 3600_000);
    expect(await sendReviewReminders(handle.db, clock)).toMatchObject({ ran: true, reviewers: 0 });
    clock = new Date(dueAt.getTime() - 3600_000);
    expect(await sendReviewReminders(handle.db, clock)).toMatchObject({ ran: true, reviewers: 1, reviews: 1 });
    expect(await sendReviewReminders(handle.db, new Date(clock.getTime() + 60_000))).toMatchObject({ ran: false });
    expect(await handle.db.select().from(notifications).where(and(eq(notifications.userId, joiner.userId), eq(notifications.messageKey, 'notice.reviewsDue')))).toEqual([]);
    const told = await handle.db.select().from(notifications).where(and(eq(notifications.userId, reviewer.userId), eq(notifications.messageKey, 'notice.reviewsDue')));
    expect(told).toHaveLength(1);
    expect(told[0]!.link).toBe(`/staff/applications/${nextId}`);
    expect(await handle.db.select().from(mailOutbox).where(and(eq(mailOutbox.toUserId, reviewer.userId), eq(mailOutbox.kind, 'review_reminder')))).toHaveLength(1);
    const rows = await handle.db.select({ reviewer: reviewAssignments.reviewerUserId, remindedAt: reviewAssignments.remindedAt }).from(reviewAssignments).where(eq(reviewAssignments.applicationId, nextId));
    expect(rows.find((r) => r.reviewer === reviewer.userId)!.remindedAt).toEqual(clock);
    expect(rows.find((r) => r.reviewer === joiner.userId)!.remindedAt).toBeNull();
  });
});
