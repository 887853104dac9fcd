// Usage reports from settled jobs: exact to the cent, the watt-hour and the gram; rollups rebuilt from
// the jobs give identical totals; tenants never see each other's usage; bad periods are refused.
import { TRPCError } from '@trpc/server';
import { randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { jobs, organisations, projects, usageRollups } from '~/db/schema';
import { CSV_BOM, parseCsv } from '~/server/core/csv';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { reserveBudget } from '~/server/services/ledger/ledger';
import { settleFinishedJob } from '~/server/services/jobs/reconciler';
import { JOB_CSV_COLUMNS, usageCsv } from './reports';
import { rebuildRollups } from './usage';
import type { TenantActor } from '~/server/services/actor';
import { loadActor } from '~/server/services/identity/accounts';

const DAY = '2026-12-01';
const SITE = { h100: 'de-jena', b200: 'fi-kajaani' } as const;

/** settledJob records a job that ran `gpus × seconds` with a known IT energy, through the real settlement path. */
async function settledJob(db: Db, who: { userId: string; orgId: string }, allocationId: string, projectId: string, rc: 'h100' | 'b200', gpus: number, seconds: number, energyWh: number, endedAt: Date) {
  const [org] = await db.select({ kind: organisations.kind }).from(organisations).where(eq(organisations.id, who.orgId));
  const cents = { h100: { academic: 180, company: 290 }, b200: { academic: 300, company: 490 } }[rc][org!.kind];
  const id = randomUUID();
  const submittedAt = new Date(endedAt.getTime() - (seconds + 600) * 1000);
  const [job] = await db
    .insert(jobs)
    .values({ id, orgId: who.orgId, projectId, allocationId, userId: who.userId, idempotencyKey: id, name: `job-${rc}`, kind: 'training', resourceClassId: rc, siteId: SITE[rc], gpus, nodes: 1, walltimeSeconds: seconds * 2, image: 'img', command: 'run', env: {}, state: 'RUNNING', reservedAmount: gpus * seconds * 2, reservedUnit: 'gpu_seconds', centsPerGpuHour: cents, submittedAt })
    .returning();
  await db.transaction((tx) => reserveBudget(tx, { allocationId, orgId: who.orgId, jobId: id, amount: gpus * seconds * 2, actorUserId: who.userId, today: DAY, at: submittedAt }));
  await settleFinishedJob(
    db,
    job!,
    { portalJobId: id, schedulerJobId: 'x', state: 'COMPLETED', pendingReason: null, startedAt: new Date(endedAt.getTime() - seconds * 1000), endedAt, exitCode: 0, signal: null, nodeList: ['n1'], gpuSeconds: gpus * seconds, energyWh, energyMeasured: false, siteId: SITE[rc] },
    endedAt,
  );
  return id;
}

async function tenantActor(db: Db, who: { userId: string; orgId: string }, role: 'owner' | 'member'): Promise<TenantActor> {
  const [org] = await db.select().from(organisations).where(eq(organisations.id, who.orgId));
  return { ...(await loadActor(db, who.userId))!, org: { id: org!.id, name: org!.name, kind: org!.kind, status: org!.status }, role };
}

describe.each(dbTargets())('usage reports on %s', (target) => {
  let handle: DbHandle;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let aMember: Awaited<ReturnType<typeof addMember>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let aProject: string;
  let memberProject: string;
  const now = () => new Date(`${DAY}T12:00:00Z`);

  beforeAll(async () => {
    handle = await openTestDb(target);
    const db = handle.db;
    const staff = await createStaff(db, 'admin');
    a = await createTenant(db, { name: 'Report University' });
    aMember = await addMember(db, a, 'member');
    b = await createTenant(db, { name: 'Other Institute' });
    const h100 = await activeAllocation(db, a, staff, { gpuHours: 100, today: DAY });
    aProject = h100.projectId;
    // A second allocation on B200 for the same project.
    const b200 = await callerFor(db, { userId: a.userId, now }).application.create({ projectId: aProject, accessModeId: 'fast-lane', periodStart: DAY, periodEnd: '2027-02-01', justification: 'B200 runs for the comparison study.', lines: [{ resourceClassId: 'b200', gpuHours: 50 }] });
    await callerFor(db, { userId: a.userId, now }).application.submit({ applicationId: b200.id });
    const decided = await callerFor(db, { userId: staff.userId, now }).staff.decide({ applicationId: b200.id, outcome: 'approved', grantedLines: [{ resourceClassId: 'b200', gpuHours: 50 }] });
    // Job A: 4 GPUs × 2 h on H100 (Jena), 5,640 Wh IT. Job B: 2 GPUs × 30 min on B200 (Kajaani), 1,000 Wh IT.
    await settledJob(db, a, h100.allocationId, aProject, 'h100', 4, 7200, 5640, new Date(`${DAY}T10:00:00Z`));
    await settledJob(db, a, decided.allocationIds[0]!, aProject, 'b200', 2, 1800, 1000, new Date(`${DAY}T11:00:00Z`));
    // The member leads a project of their own with one small job.
    const mine = await activeAllocation(db, aMember, staff, { gpuHours: 10, today: DAY });
    memberProject = mine.projectId;
    await settledJob(db, aMember, mine.allocationId, memberProject, 'h100', 1, 3600, 700, new Date(`${DAY}T09:00:00Z`));
    // Tenant B's job, which A must never see.
    const bAlloc = await activeAllocation(db, b, staff, { gpuHours: 100, today: DAY });
    await settledJob(db, b, bAlloc.allocationId, bAlloc.projectId, 'h100', 8, 3600, 9999, new Date(`${DAY}T08:00:00Z`));
  });
  afterAll(async () => handle?.close());

  it('totals the settled jobs exactly: GPU-seconds, euros, kWh IT and facility, heat reused, CO2e', async () => {
    const owner = callerFor(handle.db, { userId: a.userId, now });
    const report = await owner.report.usage({ period: { month: '2026-12' }, groupBy: 'resourceClass' });
    // A: 28,800 GPU-s → 8 GPU-h × 180 ct = 1,440 ct; facility 5,640 × 1.08 = 6,091 Wh; heat × 0.7 = 4,264 Wh; CO2e 6.091 kWh × 380 = 2,315 g.
    // B: 3,600 GPU-s → 1 GPU-h × 300 ct = 300 ct; facility 1,000 × 1.04 = 1,040 Wh; heat × 0.5 = 520 Wh; CO2e 1.04 kWh × 60 = 62 g.
    // Member's: 3,600 GPU-s → 180 ct; facility 700 × 1.08 = 756 Wh; heat 529 Wh; CO2e 287 g.
    expect(report.totals).toEqual({ jobs: 3, gpuSeconds: 36_000, avgWaitSeconds: 600, costCents: 1920, energyWh: 7340, facilityEnergyWh: 7887, heatReusedWh: 5313, co2eGrams: 2664 });
    expect(report.groups.map((g) => [g.key, g.gpuSeconds, g.costCents, g.facilityEnergyWh, g.heatReusedWh, g.co2eGrams])).toEqual([
      ['h100', 32_400, 1620, 6847, 4793, 2602],
      ['b200', 3600, 300, 1040, 520, 62],
    ]);
    expect(report.series).toHaveLength(2); // one day, two projects
    // The groups are labelled in the reader's language (the catalogue names every class in English and German).
    expect(report.groups.map((g) => g.label)).toEqual(['H100 partition (Jena)', 'B200 partition (Kajaani)']);
    const reportDe = await callerFor(handle.db, { userId: a.userId, locale: 'de', now }).report.usage({ period: { month: '2026-12' }, groupBy: 'resourceClass' });
    expect(reportDe.groups.map((g) => g.label)).toEqual(['H100-Partition (Jena)', 'B200-Partition (Kajaani)']);
  });

  it('gives identical totals after rebuilding the rollups from the jobs', async () => {
    const owner = callerFor(handle.db, { userId: a.userId, now });
    const before = await owner.report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    await rebuildRollups(handle.db);
    const after = await owner.report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    expect(after).toEqual(before);
  });

  it("never shows tenant B's jobs to tenant A, and the reverse; a PI sees only their projects", async () => {
    const aReport = await callerFor(handle.db, { userId: a.userId, now }).report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    const bReport = await callerFor(handle.db, { userId: b.userId, now }).report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    expect(aReport.totals.jobs).toBe(3);
    expect(bReport.totals).toMatchObject({ jobs: 1, gpuSeconds: 28_800, energyWh: 9999 });
    expect(aReport.groups.map((g) => g.key).sort()).toEqual([aProject, memberProject].sort());
    const aJobs = await callerFor(handle.db, { userId: a.userId, now }).report.jobs({ period: { month: '2026-12' } });
    const bJobs = await callerFor(handle.db, { userId: b.userId, now }).report.jobs({ period: { month: '2026-12' } });
    expect(aJobs.map((j) => j.id).some((id) => bJobs.map((x) => x.id).includes(id))).toBe(false);
    const asMember = await callerFor(handle.db, { userId: aMember.userId, now }).report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    expect(asMember.groups.map((g) => g.key)).toEqual([memberProject]);
    expect(asMember.totals).toMatchObject({ jobs: 1, costCents: 180 });
  });

  it('exports a CSV with the documented columns and the exact figures', async () => {
    const csv = await usageCsv(handle.db, await tenantActor(handle.db, a, 'owner'), { from: DAY, to: DAY });
    expect(csv.startsWith(CSV_BOM)).toBe(true);
    const [header, ...rows] = csv.slice(CSV_BOM.length).trimEnd().split('\r\n');
    expect(header).toBe(JOB_CSV_COLUMNS.join(','));
    expect(rows).toHaveLength(3);
    const h100 = rows.map((r) => r.split(',')).find((c) => c[4] === 'h100' && c[12] === '4')!;
    const col = (name: (typeof JOB_CSV_COLUMNS)[number]) => h100[JOB_CSV_COLUMNS.indexOf(name)];
    expect([col('gpu_seconds'), col('cost_cents'), col('it_energy_wh'), col('facility_energy_wh'), col('heat_reused_wh'), col('co2e_grams'), col('site')]).toEqual(['28800', '1440', '5640', '6091', '4264', '2315', 'de-jena']);
  });

  it('defuses job names and project titles a spreadsheet would run as formulas, and reads them back', async () => {
    const db = handle.db;
    const staff = await createStaff(db, 'admin');
    const c = await createTenant(db, { name: 'Formula Labs' });
    const alloc = await activeAllocation(db, c, staff, { gpuHours: 10, today: DAY });
    const jobId = await settledJob(db, c, alloc.allocationId, alloc.projectId, 'h100', 1, 600, 100, new Date(`${DAY}T07:00:00Z`));
    const name = '=HYPERLINK("http://evil.example","Zählung, Jörg")';
    const title = '+SUM(1,2) @Müller';
    await db.update(jobs).set({ name }).where(eq(jobs.id, jobId));
    await db.update(projects).set({ title }).where(eq(projects.id, alloc.projectId));
    const csv = await usageCsv(db, await tenantActor(db, c, 'owner'), { from: DAY, to: DAY });
    expect(csv).not.toMatch(/(^|,)[=+@]/m);
    const [header, row] = parseCsv(csv);
    expect(header).toEqual([...JOB_CSV_COLUMNS]);
    expect(row![JOB_CSV_COLUMNS.indexOf('job_name')]).toBe(`'${name}`);
    expect(row![JOB_CSV_COLUMNS.indexOf('project')]).toBe(`'${title}`);
    expect(row![JOB_CSV_COLUMNS.indexOf('gpu_seconds')]).toBe('600');
  });

  it('apportions a job that ran across midnight to both days, by the hours in each; the job counts on the day it ended', async () => {
    const db = handle.db;
    const staff = await createStaff(db, 'admin');
    const night = await createTenant(db, { name: 'Night Shift Institute' });
    const alloc = await activeAllocation(db, night, staff, { gpuHours: 100, today: DAY });
    // 8 GPUs × 6 h on H100 (Jena), 22:00 on 30 November to 04:00 on 1 December: 2 h before midnight, 4 h after.
    // 48 GPU-h × 180 ct = 8,640 ct; IT 9,001 Wh; facility × 1.08 = 9,721 Wh; heat × 0.7 = 6,805 Wh; CO2e 9.721 kWh × 380 = 3,694 g.
    await settledJob(db, night, alloc.allocationId, alloc.projectId, 'h100', 8, 6 * 3600, 9001, new Date(`${DAY}T04:00:00Z`));
    const owner = callerFor(db, { userId: night.userId, now });
    const november = await owner.report.usage({ period: { month: '2026-11' }, groupBy: 'project' });
    const december = await owner.report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    // A third and two thirds, each quantity split by largest remainder so the two days sum to the job exactly.
    expect(november.totals).toEqual({ jobs: 0, gpuSeconds: 57_600, avgWaitSeconds: null, costCents: 2880, energyWh: 3000, facilityEnergyWh: 3240, heatReusedWh: 2268, co2eGrams: 1231 });
    expect(december.totals).toEqual({ jobs: 1, gpuSeconds: 115_200, avgWaitSeconds: 600, costCents: 5760, energyWh: 6001, facilityEnergyWh: 6481, heatReusedWh: 4537, co2eGrams: 2463 });
    expect(november.series).toEqual([{ day: '2026-11-30', projectId: alloc.projectId, gpuSeconds: 57_600, costCents: 2880, energyWh: 3000 }]);
    // The job's own record keeps its whole footprint; the per-job table lists it in the month it ended.
    const listed = await owner.report.jobs({ period: { month: '2026-12' } });
    expect(listed.map((j) => [j.gpuSeconds, j.costCents, j.energyWh, j.facilityEnergyWh])).toEqual([[172_800, 8640, 9001, 9721]]);
    expect(await owner.report.jobs({ period: { month: '2026-11' } })).toEqual([]);
  });

  it('rebuilds every rollup row as settlement wrote it, the job across midnight too', async () => {
    const all = () => handle.db.select().from(usageRollups).orderBy(asc(usageRollups.orgId), asc(usageRollups.day), asc(usageRollups.projectId), asc(usageRollups.userId), asc(usageRollups.resourceClassId), asc(usageRollups.kind));
    const incremental = await all();
    expect(incremental.some((r) => r.day === '2026-11-30')).toBe(true);
    await rebuildRollups(handle.db);
    expect(await all()).toEqual(incremental);
  });

  it('shows staff the same figures of a tenant as its owner sees, and nobody else', async () => {
    const staff = await createStaff(handle.db, 'reviewer');
    const asStaff = await callerFor(handle.db, { userId: staff.userId, now }).staff.tenantUsage({ orgId: a.orgId, period: { month: '2026-12' } });
    const asOwner = await callerFor(handle.db, { userId: a.userId, now }).report.usage({ period: { month: '2026-12' }, groupBy: 'project' });
    expect(asStaff.report).toEqual(asOwner);
    const error = await callerFor(handle.db, { userId: b.userId, now })
      .staff.tenantUsage({ orgId: a.orgId, period: { month: '2026-12' } })
      .catch((e: unknown) => e);
    expect((error as TRPCError).code).toBe('FORBIDDEN');
  });

  it.each([
    [{ from: '2026-12-10', to: '2026-12-01' }, 'period.to', /before the start/],
    [{ from: '2000-01-01', to: '2050-01-01' }, 'period.to', /at most 731 days/],
    [{ month: '2026-13' }, 'period.month', /valid date, month/],
  ])('refuses the period %o on %s', async (period, field, message) => {
    const error = await callerFor(handle.db, { userId: a.userId, now })
      .report.usage({ period, groupBy: 'project' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe('BAD_REQUEST');
    expect((error as TRPCError).message).toMatch(message);
    expect(((error as TRPCError).cause as { field?: string }).field).toBe(field);
  });

  it('refuses an unknown grouping', async () => {
    const error = await callerFor(handle.db, { userId: a.userId, now })
      .report.usage({ period: { month: '2026-12' }, groupBy: 'colour' as never })
      .catch((e: unknown) => e);
    expect((error as TRPCError).code).toBe('BAD_REQUEST');
  });
});
