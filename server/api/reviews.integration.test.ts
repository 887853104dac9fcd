// Panels, scores and conflicts of interest (issue #32), through the API with a fake clock: a Large Scale
// call with GPU-hours for three of five applications; the round's panel is assigned them when the worker
// closes it; reviewers score on the rubric; the ranking draws its cut line; one bulk action approves the
// top three, each with its allocation and ledger grant; the applicants read the scores and comments, never
// who wrote them nor the internal notes. A reviewer of an applicant's organisation is excluded (404
// everywhere), one may declare a conflict, an admin may override it with an audited reason.
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import type { Tx } from '~/db/client';
import { allocations, applications, auditEvents, ledgerEntries, memberships, notifications, reviewAssignments, reviewConflicts } from '~/db/schema';
import { closeDueRounds } from '~/server/services/ledger/calls';
import { actAsTenant, inTransaction } from '~/server/services/transaction';
import { refusal } from '~/server/testing/refusal';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

const JUSTIFICATION = 'Pretraining a 30B model on public European text, in quarterly blocks, with ablations at smaller scale.';
const H = 3600;
const CUTOFF = new Date('2027-01-15T16:00:00+01:00');


describe.each(dbTargets())('review panels, scores and conflicts of interest on %s', (target) => {
  let handle: DbHandle;
  let admin: Awaited<ReturnType<typeof createStaff>>;
  let otherAdmin: Awaited<ReturnType<typeof createStaff>>;
  let first: Awaited<ReturnType<typeof createStaff>>;
  let second: Awaited<ReturnType<typeof createStaff>>;
  /** A reviewer who is also a member of the fifth lab. */
  let insider: Awaited<ReturnType<typeof createStaff>>;
  let roundId = '';
  const labs: { name: string; lab: { userId: string; orgId: string }; applicationId: string; projectId: string }[] = [];
  let clock = new Date('2027-01-04T10:00:00+01:00');
  const as = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now: () => clock });
  const byName = (name: string) => labs.find((l) => l.name === name)!;

  beforeAll(async () => {
    handle = await openTestDb(target);
    [admin, otherAdmin, first, second, insider] = await Promise.all([createStaff(handle.db, 'admin'), createStaff(handle.db, 'admin'), createStaff(handle.db, 'reviewer'), createStaff(handle.db, 'reviewer'), createStaff(handle.db, 'reviewer')]);
    const opened = await as(admin).calls.open({ accessModeId: 'large-scale', title: 'Large Scale 2027', gpuHoursPerRound: 180_000, cutoffs: [CUTOFF.toISOString()] });
    roundId = opened.rounds[0]!.id;
    for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']) {
      const lab = await createTenant(handle.db, { name: `${name} Lab` });
      const project = await as(lab).project.create({ title: `${name}: pretraining`, abstract: 'A foundation model.', fieldOfScience: 'Computer science', members: [] });
      const draft = await as(lab).application.create({ projectId: project.id, accessModeId: 'large-scale', periodStart: '2027-03-01', periodEnd: '2028-02-28', justification: JUSTIFICATION, lines: [{ resourceClassId: 'h100', gpuHours: 60_000 }] });
      await as(lab).application.submit({ applicationId: draft.id });
      labs.push({ name, lab, applicationId: draft.id, projectId: project.id });
    }
    await handle.db.insert(memberships).values({ orgId: byName('Echo').lab.orgId, userId: insider.userId, role: 'member' });
  });
  afterAll(async () => handle?.close());

  it('lets admins alone put reviewers on a round panel, which is assigned the applications when the round closes', async () => {
    expect((await refusal(as(first).reviews.assignPanel({ roundId, reviewerUserId: first.userId }))).code).toBe('FORBIDDEN');
    expect((await refusal(as(byName('Alpha').lab).reviews.assignPanel({ roundId, reviewerUserId: first.userId }))).code).toBe('FORBIDDEN');
    expect(await refusal(as(admin).reviews.assignPanel({ roundId, reviewerUserId: byName('Alpha').lab.userId }))).toMatchObject({ code: 'BAD_REQUEST', field: 'reviewerUserId' });
    for (const reviewer of [first, second, insider]) expect(await as(admin).reviews.assignPanel({ roundId, reviewerUserId: reviewer.userId })).toEqual({ assigned: 0, skippedForConflict: 0 });
    expect(await handle.db.select().from(reviewAssignments)).toHaveLength(0);

    clock = new Date(CUTOFF.getTime() + 60_000);
    await closeDueRounds(handle.db, clock);
    const assigned = await handle.db.select({ reviewer: reviewAssignments.reviewerUserId, applicationId: reviewAssignments.applicationId }).from(reviewAssignments);
    expect(assigned.filter((a) => a.reviewer === first.userId)).toHaveLength(5);
    expect(assigned.filter((a) => a.reviewer === second.userId)).toHaveLength(5);
    // The insider is a member of Echo's lab: assigned the other four, never Echo's.
    expect(assigned.filter((a) => a.reviewer === insider.userId).map((a) => a.applicationId).sort()).toEqual(labs.filter((l) => l.name !== 'Echo').map((l) => l.applicationId).sort());
    const told = await handle.db.select().from(notifications).where(and(eq(notifications.userId, first.userId), eq(notifications.messageKey, 'notice.reviewAssigned')));
    expect(told).toHaveLength(5);
  });

  it('hides an application from a reviewer of its organisation: 404 on it, its panel and its score, absent from the queue, withheld in the ranking', async () => {
    const echo = byName('Echo');
    expect((await refusal(as(insider).staff.application({ applicationId: echo.applicationId }))).code).toBe('NOT_FOUND');
    expect((await refusal(as(insider).reviews.ofApplication({ applicationId: echo.applicationId }))).code).toBe('NOT_FOUND');
    expect((await refusal(as(insider).reviews.submit({ applicationId: echo.applicationId, scores: { excellence: 5, feasibility: 5, impact: 5 }, commentToApplicant: 'Excellent.' }))).code).toBe('NOT_FOUND');
    expect((await refusal(as(insider).reviews.declareConflict({ applicationId: echo.applicationId, reason: 'I work there.' }))).code).toBe('NOT_FOUND');
    expect((await refusal(as(insider).staff.decide({ applicationId: echo.applicationId, outcome: 'rejected', comment: 'No.' }))).code).toBe('NOT_FOUND');
    const queue = await as(insider).staff.applicationQueue();
    expect(queue.map((q) => q.id)).not.toContain(echo.applicationId);
    expect(queue).toHaveLength(4);
    const ranking = await as(insider).reviews.ranking({ roundId });
    const withheld = ranking.rows.filter((r) => r.excluded);
    expect(withheld).toHaveLength(1);
    expect(withheld[0]).toMatchObject({ applicationId: null, projectTitle: null, orgName: null, scoreHundredths: null, gpuSeconds: 60_000 * H });
    // Nobody else is hindered, and an admin cannot assign the insider to it.
    expect((await as(first).staff.application({ applicationId: echo.applicationId })).id).toBe(echo.applicationId);
    expect(await refusal(as(admin).reviews.assign({ applicationId: echo.applicationId, reviewerUserId: insider.userId }))).toMatchObject({ code: 'PRECONDITION_FAILED', field: 'reviewerUserId' });
    const panel = await as(admin).reviews.ofApplication({ applicationId: echo.applicationId });
    expect(panel.staff.find((s) => s.userId === insider.userId)).toMatchObject({ excluded: true, conflict: 'organisation', assigned: false });
  });

  it('refuses scores that miss a criterion, leave the range or come without a comment, each on its field, and a reviewer not assigned', async () => {
    const alpha = byName('Alpha');
    expect(await refusal(as(first).reviews.submit({ applicationId: alpha.applicationId, scores: { excellence: 5, feasibility: 4 }, commentToApplicant: 'Good.' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'scores' });
    expect(await refusal(as(first).reviews.submit({ applicationId: alpha.applicationId, scores: { excellence: 6, feasibility: 4, impact: 4 }, commentToApplicant: 'Good.' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'scores' });
    expect(await refusal(as(first).reviews.submit({ applicationId: alpha.applicationId, scores: { excellence: 5, feasibility: 4, impact: 4, novelty: 3 }, commentToApplicant: 'Good.' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'scores' });
    expect(await refusal(as(first).reviews.submit({ applicationId: alpha.applicationId, scores: { excellence: 5, feasibility: 4, impact: 4 }, commentToApplicant: ' ' }))).toMatchObject({ code: 'BAD_REQUEST', field: 'commentToApplicant' });
    expect((await refusal(as(admin).reviews.submit({ applicationId: alpha.applicationId, scores: { excellence: 5, feasibility: 4, impact: 4 }, commentToApplicant: 'Good.' }))).code).toBe('PRECONDITION_FAILED');
    const [row] = await handle.db.select().from(reviewAssignments).where(and(eq(reviewAssignments.applicationId, alpha.applicationId), eq(reviewAssignments.reviewerUserId, first.userId)));
    expect(row).toMatchObject({ status: 'assigned', scores: null });
  });

  it('ranks five scored applications by mean and approves the three above the cut line in one bulk action, each with its allocation and ledger grant', async () => {
    const scoreOf: Record<string, [number, number, number][]> = {
      Alpha: [[5, 5, 4], [5, 4, 5]],
      Bravo: [[2, 2, 3], [2, 3, 2]],
      Charlie: [[4, 4, 4], [4, 5, 4]],
      Delta: [[3, 4, 3], [4, 3, 3]],
      Echo: [[1, 2, 2], [2, 1, 2]],
    };
    for (const lab of labs) {
      for (const [i, reviewer] of [first, second].entries()) {
        const [excellence, feasibility, impact] = scoreOf[lab.name]![i]!;
        await as(reviewer).reviews.submit({ applicationId: lab.applicationId, scores: { excellence, feasibility, impact }, commentToApplicant: `${lab.name}: review ${i + 1} to the applicant.`, internalNote: `${lab.name}: internal note ${i + 1}.` });
      }
    }
    // A review may be revised until the decision.
    await as(first).reviews.submit({ applicationId: byName('Delta').applicationId, scores: { excellence: 3, feasibility: 3, impact: 3 }, commentToApplicant: 'Delta: review 1 to the applicant.', internalNote: 'Delta: revised.' });

    const ranking = await as(admin).reviews.ranking({ roundId });
    expect(ranking.rows.map((r) => [r.projectTitle, r.rank, r.scoreHundredths, r.scoredReviews, r.aboveLine])).toEqual([
      ['Alpha: pretraining', 1, 467, 2, true],
      ['Charlie: pretraining', 2, 417, 2, true],
      ['Delta: pretraining', 3, 317, 2, true],
      ['Bravo: pretraining', 4, 233, 2, false],
      ['Echo: pretraining', 5, 167, 2, false],
    ]);
    expect(ranking.round).toMatchObject({ status: 'closed', gpuSecondsPerRound: 180_000 * H });

    const top = ranking.rows.filter((r) => r.aboveLine).map((r) => r.applicationId!);
    const results = await as(admin).reviews.decideBulk({ roundId, applicationIds: top, outcome: 'approved', comment: 'Approved in the January round.' });
    expect(results.map((r) => [r.applicationId, r.status, r.error])).toEqual(top.map((id) => [id, 'approved', null]));
    for (const id of top) {
      const [app] = await handle.db.select({ status: applications.status }).from(applications).where(eq(applications.id, id));
      expect(app!.status).toBe('approved');
      const granted = await handle.db.select({ id: allocations.id, resourceClassId: allocations.resourceClassId }).from(allocations).where(eq(allocations.applicationId, id));
      expect(granted).toHaveLength(1);
      const entries = await handle.db.select({ amount: ledgerEntries.amount, kind: ledgerEntries.kind }).from(ledgerEntries).where(eq(ledgerEntries.allocationId, granted[0]!.id));
      expect(entries).toEqual([{ amount: 60_000 * H, kind: 'grant' }]);
      const [audit] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'application.approved'), eq(auditEvents.targetId, id)));
      expect(audit).toMatchObject({ actorUserId: admin.userId, isStaffAction: true, reason: 'Approved in the January round.' });
    }
    const below = ranking.rows.filter((r) => !r.aboveLine).map((r) => r.applicationId!);
    expect((await handle.db.select({ status: applications.status }).from(applications).where(inArray(applications.id, below))).map((a) => a.status)).toEqual(['submitted', 'submitted']);
    // Deciding them again answers each one's reason, and decides nothing twice.
    const again = await as(admin).reviews.decideBulk({ roundId, applicationIds: [top[0]!, below[0]!], outcome: 'rejected', comment: 'Over the line.' });
    expect(again[0]).toMatchObject({ status: null });
    expect(again[0]!.error).toMatch(/approved/);
    expect(again[1]).toMatchObject({ status: 'rejected', error: null });

    const after = await as(admin).reviews.ranking({ roundId });
    expect(after.rows.filter((r) => r.aboveLine).map((r) => r.status)).toEqual(['approved', 'approved', 'approved']);
  });

  it('shows the applicant the scores and comments once decided, never the reviewer or the internal note, and closes the reviews', async () => {
    const alpha = byName('Alpha');
    const seen = await as(alpha.lab).application.get({ applicationId: alpha.applicationId });
    expect(seen.reviews.rubric.map((c) => c.id)).toEqual(['excellence', 'feasibility', 'impact']);
    expect(seen.reviews.items.map((r) => [r.scores, r.commentToApplicant] as const).sort((a, b) => a[1].localeCompare(b[1]))).toEqual([
      [{ excellence: 5, feasibility: 5, impact: 4 }, 'Alpha: review 1 to the applicant.'],
      [{ excellence: 5, feasibility: 4, impact: 5 }, 'Alpha: review 2 to the applicant.'],
    ]);
    expect(JSON.stringify(seen)).not.toMatch(/internal note|Staff reviewer/);
    // Still waiting: nothing of its reviews reaches the applicant.
    const echo = byName('Echo');
    expect((await as(echo.lab).application.get({ applicationId: echo.applicationId })).reviews.items).toEqual([]);
    expect((await refusal(as(first).reviews.submit({ applicationId: alpha.applicationId, scores: { excellence: 1, feasibility: 1, impact: 1 }, commentToApplicant: 'Changed my mind.' }))).code).toBe('PRECONDITION_FAILED');
  });

  it('keeps the wall in the database: a tenant reads only its own decided reviews, never the reviewer nor the internal note', async () => {
    const alpha = byName('Alpha');
    const echo = byName('Echo');
    const asTenant = <T>(orgId: string, work: (tx: Tx) => Promise<T>) =>
      inTransaction(handle.db, async (tx) => {
        await actAsTenant(tx, orgId, 'read');
        return work(tx);
      });
    const own = await asTenant(alpha.lab.orgId, (tx) => tx.select({ applicationId: reviewAssignments.applicationId, comment: reviewAssignments.commentToApplicant }).from(reviewAssignments));
    expect(own.map((r) => r.applicationId)).toEqual([alpha.applicationId, alpha.applicationId]);
    // Echo's application waits: its tenant reads none of its reviews yet.
    expect(await asTenant(echo.lab.orgId, (tx) => tx.select({ id: reviewAssignments.id }).from(reviewAssignments))).toEqual([]);
    for (const column of [reviewAssignments.internalNote, reviewAssignments.reviewerUserId]) {
      await expect(asTenant(alpha.lab.orgId, (tx) => tx.select({ secret: column }).from(reviewAssignments))).rejects.toThrow();
    }
    await expect(asTenant(alpha.lab.orgId, (tx) => tx.select({ reason: reviewConflicts.reason }).from(reviewConflicts))).rejects.toThrow();
  });

  it('lets a reviewer declare a conflict (then 404), and an admin override one with an audited reason, never their own', async () => {
    const echo = byName('Echo');
    expect((await refusal(as(otherAdmin).reviews.overrideConflict({ applicationId: echo.applicationId, reviewerUserId: first.userId, reason: 'There is none.' }))).code).toBe('PRECONDITION_FAILED');
    await as(otherAdmin).reviews.overrideConflict({ applicationId: echo.applicationId, reviewerUserId: insider.userId, reason: 'A different department, no shared funding.' });
    expect((await as(insider).staff.application({ applicationId: echo.applicationId })).id).toBe(echo.applicationId);
    const [audit] = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'review.conflict_overridden'), eq(auditEvents.targetId, echo.applicationId)));
    expect(audit).toMatchObject({ actorUserId: otherAdmin.userId, reason: 'A different department, no shared funding.', isStaffAction: true });
    expect(audit!.data).toMatchObject({ reviewerUserId: insider.userId, conflict: 'organisation' });

    await handle.db.insert(memberships).values({ orgId: echo.lab.orgId, userId: admin.userId, role: 'member' });
    expect((await refusal(as(admin).reviews.overrideConflict({ applicationId: echo.applicationId, reviewerUserId: admin.userId, reason: 'I am fine.' }))).code).toBe('FORBIDDEN');
    await handle.db.delete(memberships).where(and(eq(memberships.orgId, echo.lab.orgId), eq(memberships.userId, admin.userId)));

    await as(second).reviews.declareConflict({ applicationId: echo.applicationId, reason: 'I co-authored with the PI last year.' });
    expect((await refusal(as(second).staff.application({ applicationId: echo.applicationId }))).code).toBe('NOT_FOUND');
    const [withdrawn] = await handle.db.select().from(reviewAssignments).where(and(eq(reviewAssignments.applicationId, echo.applicationId), eq(reviewAssignments.reviewerUserId, second.userId)));
    expect(withdrawn).toMatchObject({ status: 'declined', scores: null });
    const ranking = await as(admin).reviews.ranking({ roundId });
    expect(ranking.rows.find((r) => r.applicationId === echo.applicationId)).toMatchObject({ scoredReviews: 1 });

    // An admin who finds the declared conflict does not hold gives the review back to score.
    await as(admin).reviews.overrideConflict({ applicationId: echo.applicationId, reviewerUserId: second.userId, reason: 'A consortium paper of 200 authors: no shared work.' });
    const [restored] = await handle.db.select().from(reviewAssignments).where(and(eq(reviewAssignments.applicationId, echo.applicationId), eq(reviewAssignments.reviewerUserId, second.userId)));
    expect(restored).toMatchObject({ status: 'assigned', scores: null, declineReason: null });
    await as(second).reviews.submit({ applicationId: echo.applicationId, scores: { excellence: 2, feasibility: 2, impact: 1 }, commentToApplicant: 'The plan lacks a data pipeline.' });
    expect((await as(admin).reviews.ranking({ roundId })).rows.find((r) => r.applicationId === echo.applicationId)).toMatchObject({ scoredReviews: 2 });
  });
});
