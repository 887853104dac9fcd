// Bulk decisions under concurrency (issue #32), through the API on each database: three staff members
// decide the same closed round at once — two approve every application from the ranking, one rejects
// them — while the panel's reviewers still revise their scores. Each application is decided exactly once
// (one decision, one outcome), an approved one has one allocation with one grant of what it asked, the
// cached balances equal the ledger's sums, and every caller hears for each application whether it was its
// decision or why not.
import type { TRPCError } from '@trpc/server';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { allocations, applications, auditEvents, decisions, ledgerEntries } from '~/db/schema';
import { closeDueRounds } from '~/server/services/ledger/calls';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

const CUTOFF = new Date('2027-02-12T16:00:00+01:00');
const H = 3600;

describe.each(dbTargets())('bulk decisions racing on one round on %s', (target) => {
  let handle: DbHandle;
  let roundId = '';
  const ids: string[] = [];
  let staff: Awaited<ReturnType<typeof createStaff>>[] = [];
  const clock = { now: new Date('2027-02-01T10:00:00+01:00') };
  const as = (who: { userId: string; orgId?: string }) => callerFor(handle.db, { userId: who.userId, orgId: who.orgId, now: () => clock.now });

  beforeAll(async () => {
    handle = await openTestDb(target);
    staff = await Promise.all([createStaff(handle.db, 'admin'), createStaff(handle.db, 'admin'), createStaff(handle.db, 'admin'), createStaff(handle.db, 'reviewer')]);
    const [admin] = staff;
    const opened = await as(admin!).calls.open({ accessModeId: 'large-scale', title: 'Race round', gpuHoursPerRound: 600_000, cutoffs: [CUTOFF.toISOString()] });
    roundId = opened.rounds[0]!.id;
    for (const reviewer of [staff[0]!, staff[3]!]) await as(admin!).reviews.assignPanel({ roundId, reviewerUserId: reviewer.userId });
    for (let i = 0; i < 8; i++) {
      const lab = await createTenant(handle.db, { name: `Race Lab ${i}` });
      const project = await as(lab).project.create({ title: `Race ${i}`, abstract: 'A foundation model.', fieldOfScience: 'Computer science', members: [] });
      const draft = await as(lab).application.create({ projectId: project.id, accessModeId: 'large-scale', periodStart: '2027-04-01', periodEnd: '2028-03-31', justification: 'Pretraining runs planned in quarterly blocks with ablations at small scale.', lines: [{ resourceClassId: 'h100', gpuHours: 60_000 + i * 1000 }] });
      await as(lab).application.submit({ applicationId: draft.id });
      ids.push(draft.id);
    }
    clock.now = new Date(CUTOFF.getTime() + 60_000);
    await closeDueRounds(handle.db, clock.now);
    for (const [n, id] of ids.entries()) await as(staff[3]!).reviews.submit({ applicationId: id, scores: { excellence: 1 + (n % 5), feasibility: 4, impact: 3 }, commentToApplicant: 'First reading.' });
  }, 120_000);
  afterAll(async () => handle?.close());

  it('decides each application once, with one allocation and one grant for each approved, whoever races', async () => {
    const ranked = await as(staff[0]!).reviews.ranking({ roundId });
    const order = ranked.rows.map((r) => r.applicationId!);
    expect(new Set(order)).toEqual(new Set(ids));
    const [first, second, third] = staff;
    const answers = await Promise.all([
      as(first!).reviews.decideBulk({ roundId, applicationIds: order, outcome: 'approved', comment: 'Approved from the ranking.' }),
      as(second!).reviews.decideBulk({ roundId, applicationIds: [...order].reverse(), outcome: 'approved', comment: 'Approved from the ranking.' }),
      as(third!).reviews.decideBulk({ roundId, applicationIds: order, outcome: 'rejected', comment: 'Rejected from the ranking.' }),
      // Reviewers revise scores meanwhile: refused once decided, never a half-written review.
      ...ids.map((id) => as(staff[3]!).reviews.submit({ applicationId: id, scores: { excellence: 5, feasibility: 5, impact: 5 }, commentToApplicant: 'Revised.' }).catch((error: unknown) => error)),
    ]);
    const bulk = answers.slice(0, 3) as { applicationId: string; status: string | null; error: string | null }[][];
    for (const id of ids) {
      const mine = bulk.map((answer) => answer.find((r) => r.applicationId === id)!);
      // Exactly one caller decided it; the others were told why not.
      expect(mine.filter((r) => r.status !== null)).toHaveLength(1);
      for (const r of mine.filter((x) => x.status === null)) expect(r.error).toBeTruthy();
    }
    const rows = await handle.db.select({ id: applications.id, status: applications.status }).from(applications).where(inArray(applications.id, ids));
    const decided = await handle.db.select({ applicationId: decisions.applicationId, outcome: decisions.outcome }).from(decisions).where(inArray(decisions.applicationId, ids));
    expect(decided).toHaveLength(ids.length);
    for (const row of rows) expect(decided.find((d) => d.applicationId === row.id)!.outcome).toBe(row.status);
    const approved = rows.filter((r) => r.status === 'approved').map((r) => r.id);
    const held = approved.length ? await handle.db.select().from(allocations).where(inArray(allocations.applicationId, approved)) : [];
    expect(held).toHaveLength(approved.length);
    for (const allocation of held) {
      const [sum] = await handle.db.select({ granted: sql<number>`coalesce(sum(${ledgerEntries.amount}), 0)`.mapWith(Number), n: sql<number>`count(*)`.mapWith(Number) }).from(ledgerEntries).where(eq(ledgerEntries.allocationId, allocation.id));
      expect(sum).toEqual({ granted: allocation.granted, n: 1 });
      const i = ids.indexOf(allocation.applicationId!);
      expect(allocation.granted).toBe((60_000 + i * 1000) * H);
    }
    // A revision either landed before the decision or was refused as decided: none after it.
    for (const answer of answers.slice(3)) if (answer instanceof Error) expect((answer as TRPCError).code).toBe('PRECONDITION_FAILED');
    const audit = await handle.db.select({ id: auditEvents.id, action: auditEvents.action, targetId: auditEvents.targetId }).from(auditEvents).where(inArray(auditEvents.targetId, ids));
    for (const id of ids) {
      const decidedAt = audit.find((a) => a.targetId === id && (a.action === 'application.approved' || a.action === 'application.rejected'))!.id;
      expect(audit.filter((a) => a.targetId === id && a.action === 'review.scored' && a.id > decidedAt)).toEqual([]);
    }
    // Nothing of the rejected ones was granted.
    const rejected = rows.filter((r) => r.status === 'rejected').map((r) => r.id);
    if (rejected.length) expect(await handle.db.select().from(allocations).where(inArray(allocations.applicationId, rejected))).toEqual([]);
  });
});
