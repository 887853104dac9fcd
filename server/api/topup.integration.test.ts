// Top-ups add to an existing allocation and renewals open a new period; both go through the same review.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { allocations } from '~/db/schema';
import { ledgerSums, balanceOfRow } from '~/server/services/ledger/ledger';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

const TODAY = '2026-12-01';
const now = () => new Date(`${TODAY}T10:00:00Z`);

describe.each(dbTargets())('top-ups and renewals on %s', (target) => {
  let handle: DbHandle;
  let owner: Awaited<ReturnType<typeof createTenant>>;
  let reviewer: Awaited<ReturnType<typeof createStaff>>;
  let base: Awaited<ReturnType<typeof activeAllocation>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    owner = await createTenant(handle.db, { name: 'Top-up University' });
    reviewer = await createStaff(handle.db, 'reviewer');
    const admin = await createStaff(handle.db, 'admin');
    base = await activeAllocation(handle.db, owner, admin, { gpuHours: 300, today: TODAY, periodEnd: '2027-02-01' });
  });
  afterAll(async () => handle?.close());

  it('adds a reviewed top-up to the same allocation and its ledger', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now });
    const app = await pi.application.create({ projectId: base.projectId, accessModeId: 'development', kind: 'top_up', baseAllocationId: base.allocationId, periodStart: TODAY, periodEnd: '2027-02-01', justification: 'The ablations need another 200 GPU-hours.', lines: [{ resourceClassId: 'h100', gpuHours: 200 }] });
    expect(await pi.application.submit({ applicationId: app.id })).toEqual({ id: app.id, status: 'submitted' });
    const decided = await callerFor(handle.db, { userId: reviewer.userId, now }).staff.decide({ applicationId: app.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 150 }], comment: 'Granted 150 of 200 for now.' });
    expect(decided.allocationIds).toEqual([base.allocationId]);
    const [row] = await handle.db.select().from(allocations).where(eq(allocations.id, base.allocationId));
    expect(row!.granted).toBe(450 * 3600);
    expect(await ledgerSums(handle.db, base.allocationId)).toEqual(balanceOfRow(row!));
  });

  it('opens a new allocation for a renewal, keeping the old one', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now });
    const app = await pi.application.create({ projectId: base.projectId, accessModeId: 'development', kind: 'renewal', baseAllocationId: base.allocationId, periodStart: '2027-02-01', periodEnd: '2027-05-01', justification: 'The second phase of the project, three more months.', lines: [{ resourceClassId: 'h100', gpuHours: 400 }] });
    await pi.application.submit({ applicationId: app.id });
    const decided = await callerFor(handle.db, { userId: reviewer.userId, now }).staff.decide({ applicationId: app.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'h100', gpuHours: 400 }], comment: '' });
    expect(decided.allocationIds).toHaveLength(1);
    expect(decided.allocationIds[0]).not.toBe(base.allocationId);
    const [renewed] = await handle.db.select().from(allocations).where(eq(allocations.id, decided.allocationIds[0]!));
    expect(renewed).toMatchObject({ periodStart: '2027-02-01', periodEnd: '2027-05-01', granted: 400 * 3600, status: 'active' });
    const project = await pi.project.get({ projectId: base.projectId });
    expect(project.allocations.map((a) => a.id).sort()).toEqual([base.allocationId, renewed!.id].sort());
    // The project page names the allocations' class in the reader's language.
    expect(project.allocations.map((a) => a.resourceClassName)).toEqual(['H100 partition (Jena)', 'H100 partition (Jena)']);
    const inGerman = await callerFor(handle.db, { userId: owner.userId, now, locale: 'de' }).project.get({ projectId: base.projectId });
    expect(inGerman.allocations.map((a) => a.resourceClassName)).toEqual(['H100-Partition (Jena)', 'H100-Partition (Jena)']);
  });

  it('asks a top-up for no period: it adds to its allocation\'s, as the summary shows', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now });
    const app = await pi.application.create({ projectId: base.projectId, accessModeId: 'development', kind: 'top_up', baseAllocationId: base.allocationId, justification: 'Another 50 GPU-hours for the last ablation.', lines: [{ resourceClassId: 'h100', gpuHours: 50 }] });
    expect(app).toMatchObject({ periodStart: TODAY, periodEnd: '2027-02-01' });
    expect(await pi.application.get({ applicationId: app.id })).toMatchObject({ periodStart: TODAY, periodEnd: '2027-02-01' });
  });

  it('refuses a top-up for another period on the field, instead of ignoring it', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now });
    const refused = await pi.application
      .create({ projectId: base.projectId, accessModeId: 'development', kind: 'top_up', baseAllocationId: base.allocationId, periodStart: TODAY, periodEnd: '2027-03-01', justification: 'Another month and 50 GPU-hours, please.', lines: [{ resourceClassId: 'h100', gpuHours: 50 }] })
      .then(
        () => undefined,
        (error: unknown) => error as { code: string; cause?: { field?: string; messageKey?: string } },
      );
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', cause: { field: 'periodEnd' } });
  });

  it('refuses a new request without a period', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now });
    await expect(pi.application.create({ projectId: base.projectId, accessModeId: 'development', justification: 'A new request that forgot its period.', lines: [{ resourceClassId: 'h100', gpuHours: 10 }] })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('refuses a top-up on another resource class', async () => {
    const pi = callerFor(handle.db, { userId: owner.userId, now });
    await expect(
      pi.application.create({ projectId: base.projectId, accessModeId: 'development', kind: 'top_up', baseAllocationId: base.allocationId, periodStart: TODAY, periodEnd: '2027-02-01', justification: 'B200 hours added to an H100 budget.', lines: [{ resourceClassId: 'b200', gpuHours: 10 }] }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
