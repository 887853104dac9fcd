// The demo centre's seeded history, as a visitor first sees it: no day of any partition above 100 %
// utilisation, never more GPUs at once than the partition has, rollups that a rebuild reproduces row
// for row, and applications and audit rows at the times they happened, not all at seeding time.
import { asc, eq, isNotNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { applications, auditEvents, centreDays, centreMonths, centreTenantDays, centreTenantMonths, decisions, jobs, resourceClasses, reviewAssignments, usageRollups } from '~/db/schema';
import { missingReports, owedByPisOf } from '~/server/services/ledger/reports';
import { dbTargets, openTestDb } from '~/server/testing/harness';
import { addDays } from '~/server/core/working-days';
import { centreDashboard } from '~/server/services/usage/centre';
import { listAllInvoices } from '~/server/services/billing/invoices';
import { sendInvoiceReminders } from '~/server/services/billing/payments';
import { seedDemoCentre } from './demo-seed';
import { seedDemoHistory } from './demo-history';
import { rebuildRollups } from '~/server/services/usage/usage';
import { bucketValue, waitBucket } from '~/server/core/usage/wait-buckets';

const NOW = new Date('2026-12-01T09:30:00Z');
const TODAY = NOW.toISOString().slice(0, 10);

describe.each(dbTargets())('the demo centre history on %s', (target) => {
  let handle: DbHandle;
  let seededAt: Date;

  beforeAll(async () => {
    handle = await openTestDb(target);
    seededAt = new Date();
    await seedDemoCentre(handle.db, NOW);
    await seedDemoHistory(handle.db, NOW);
  }, 600_000);
  afterAll(async () => handle?.close());

  it('never starts a job before it was submitted, nor ends it before it started (the usage CSV shows both)', async () => {
    const [wrong] = await handle.db
      .select({ n: sql<number>`count(*)::int`, started: sql<number>`count(${jobs.startedAt})::int` })
      .from(jobs)
      .where(sql`${jobs.startedAt} < ${jobs.submittedAt} or ${jobs.endedAt} < coalesce(${jobs.startedAt}, ${jobs.submittedAt})`);
    expect(wrong).toEqual({ n: 0, started: 0 });
    const [ran] = await handle.db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(isNotNull(jobs.startedAt));
    expect(ran!.n).toBeGreaterThan(100);
  });

  it('never runs more GPUs at once on a partition than it has', async () => {
    const capacity = new Map((await handle.db.select({ id: resourceClasses.id, gpus: sql<number>`${resourceClasses.nodes} * ${resourceClasses.gpusPerNode}`.mapWith(Number) }).from(resourceClasses)).map((r) => [r.id, r.gpus]));
    const ran = await handle.db
      .select({ rc: jobs.resourceClassId, gpus: jobs.gpus, startedAt: jobs.startedAt, endedAt: jobs.endedAt })
      .from(jobs)
      .where(isNotNull(jobs.startedAt))
      .orderBy(asc(jobs.startedAt));
    expect(ran.length).toBeGreaterThan(200);
    const peak = new Map<string, number>();
    for (const rc of capacity.keys()) {
      // Sweep the starts and ends in time order; an end at the same instant frees GPUs before a start takes them.
      const events = ran.filter((j) => j.rc === rc).flatMap((j) => [{ at: j.startedAt!.getTime(), d: j.gpus }, { at: j.endedAt!.getTime(), d: -j.gpus }]);
      events.sort((a, b) => a.at - b.at || a.d - b.d);
      let running = 0;
      let max = 0;
      for (const e of events) max = Math.max(max, (running += e.d));
      peak.set(rc, max);
    }
    for (const [rc, gpus] of capacity) expect(peak.get(rc), rc).toBeLessThanOrEqual(gpus);
    expect(peak.get('h100')).toBeGreaterThan(0);
  });

  it('lets Lugano’s power cap bind at times: a job there waited with GPUs free', async () => {
    const lugano = await handle.db
      .select({ gpus: jobs.gpus, submittedAt: jobs.submittedAt, startedAt: jobs.startedAt, endedAt: jobs.endedAt })
      .from(jobs)
      .where(sql`${jobs.resourceClassId} = 'h100-ch' and ${jobs.startedAt} is not null`);
    expect(lugano.length).toBeGreaterThan(20);
    // 8 nodes × 4 GPUs; jobs take whole nodes. Ten minutes after its submission a job still waits although
    // its GPUs are free: nothing but the site's 24 kW cap (about 16 GPUs at full power) holds it.
    const runningAt = (t: number) => lugano.filter((j) => j.startedAt!.getTime() <= t && t < j.endedAt!.getTime()).reduce((sum, j) => sum + j.gpus, 0);
    const heldByCap = lugano.filter((j) => {
      const t = j.submittedAt.getTime() + 600_000;
      return j.startedAt!.getTime() > t && runningAt(t) + j.gpus <= 32;
    });
    expect(heldByCap.length).toBeGreaterThan(0);
  });

  it('shows no day of any partition above 100 % on the centre dashboard', async () => {
    const dashboard = await centreDashboard(handle.db, { from: addDays(TODAY, -150), to: TODAY });
    const days = dashboard.partitions.flatMap((p) => p.days.map((d) => ({ partition: p.id, ...d })));
    const busiest = days.reduce((a, b) => (b.utilisation > a.utilisation ? b : a));
    expect(busiest.utilisation).toBeGreaterThan(0.3); // the history is busy enough for the check to mean something
    expect(days.filter((d) => d.utilisation > 1)).toEqual([]);
    // Every GPU-second the jobs ran is on the dashboard: apportioning moves usage between days, it never loses any.
    const [ranTotal] = await handle.db.select({ gpuSeconds: sql<number>`coalesce(sum(${jobs.gpuSeconds}), 0)`.mapWith(Number) }).from(jobs).where(isNotNull(jobs.settledAt));
    expect(dashboard.utilisation.usedGpuSeconds).toBe(ranTotal!.gpuSeconds);
  });

  it('gives on the centre dashboard, read from its month and day rollups, the figures the jobs themselves give', async () => {
    // 150 days: whole months read from the month rows, the days before and after them from the day rows.
    const range = { from: addDays(TODAY, -150), to: TODAY };
    const dashboard = await centreDashboard(handle.db, range);
    const [waits] = await handle.db
      .select({
        n: sql<number>`count(*)::int`,
        mean: sql<number>`round(avg(${jobs.waitSeconds}))`.mapWith(Number),
        p50: sql<number>`percentile_disc(0.5) within group (order by ${jobs.waitSeconds})`.mapWith(Number),
        p90: sql<number>`percentile_disc(0.9) within group (order by ${jobs.waitSeconds})`.mapWith(Number),
      })
      .from(jobs)
      .where(sql`${jobs.settledAt} is not null and ${jobs.startedAt} >= ${`${range.from}T00:00:00Z`}::timestamptz and ${jobs.startedAt} < ${`${addDays(range.to, 1)}T00:00:00Z`}::timestamptz`);
    const open = await handle.db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(sql`${jobs.settledAt} is null and ${jobs.startedAt} is not null`);
    expect(open[0]!.n).toBe(0); // every started job of the history is settled: the jobs' own percentiles are the reference
    expect(waits!.n).toBeGreaterThan(100);
    // A percentile over buckets is the exact one's bucket (buckets are ordered as the waits).
    expect(dashboard.wait).toEqual({ startedJobs: waits!.n, meanSeconds: waits!.mean, p50Seconds: bucketValue(waitBucket(waits!.p50)), p90Seconds: bucketValue(waitBucket(waits!.p90)) });
    const tenants = await handle.db
      .select({ orgId: usageRollups.orgId, gpuSeconds: sql<number>`sum(${usageRollups.gpuSeconds})`.mapWith(Number), jobs: sql<number>`sum(${usageRollups.jobs})::int` })
      .from(usageRollups)
      .where(sql`${usageRollups.day} between ${range.from} and ${range.to}`)
      .groupBy(usageRollups.orgId);
    const top = [...tenants].sort((a, b) => b.gpuSeconds - a.gpuSeconds).slice(0, dashboard.topByGpuHours.length);
    expect(dashboard.topByGpuHours.map((t) => [t.orgId, t.gpuSeconds, t.jobs])).toEqual(top.map((t) => [t.orgId, t.gpuSeconds, t.jobs]));
    expect(dashboard.totals.jobs).toBe(tenants.reduce((n, t) => n + t.jobs, 0));
  });

  it('rebuilds the rollups from the jobs row for row as settlement wrote them', async () => {
    const all = () => handle.db.select().from(usageRollups).orderBy(asc(usageRollups.orgId), asc(usageRollups.day), asc(usageRollups.projectId), asc(usageRollups.userId), asc(usageRollups.resourceClassId), asc(usageRollups.kind));
    const incremental = await all();
    const spanning = await handle.db.select({ n: sql<number>`count(*)::int` }).from(jobs).where(sql`(${jobs.startedAt} at time zone 'UTC')::date <> (${jobs.endedAt} at time zone 'UTC')::date`);
    expect(spanning[0]!.n).toBeGreaterThan(20); // plenty of jobs ran across midnight
    // The centre's own rollups too (issue #30): written in the same settling transactions, rebuilt from the same jobs.
    const centre = () => handle.db.select().from(centreDays).orderBy(asc(centreDays.day), asc(centreDays.resourceClassId), asc(centreDays.orgKind));
    const centreTenants = () => handle.db.select().from(centreTenantDays).orderBy(asc(centreTenantDays.day), asc(centreTenantDays.resourceClassId), asc(centreTenantDays.orgId));
    const months = () => handle.db.select().from(centreMonths).orderBy(asc(centreMonths.month), asc(centreMonths.resourceClassId), asc(centreMonths.orgKind));
    const tenantMonths = () => handle.db.select().from(centreTenantMonths).orderBy(asc(centreTenantMonths.month), asc(centreTenantMonths.resourceClassId), asc(centreTenantMonths.orgId));
    const [centreBefore, tenantsBefore, monthsBefore, tenantMonthsBefore] = [await centre(), await centreTenants(), await months(), await tenantMonths()];
    expect(centreBefore.reduce((n, r) => n + r.startedJobs, 0)).toBeGreaterThan(100);
    await rebuildRollups(handle.db);
    expect(await all()).toEqual(incremental);
    expect(await centreTenants()).toEqual(tenantsBefore);
    // Bucket counts are compared as numbers (jsonb keeps neither key order nor the number's spelling).
    const counts = (rows: { waitCounts: Record<string, number> }[]) => rows.map((r) => ({ ...r, waitCounts: Object.fromEntries(Object.entries(r.waitCounts).map(([k, v]) => [k, Number(v)])) }));
    expect(counts(await centre())).toEqual(counts(centreBefore));
    expect(await tenantMonths()).toEqual(tenantMonthsBefore);
    expect(counts(await months())).toEqual(counts(monthsBefore));
  });

  it('dates applications, decisions and audit rows when they happened, before the seeding', async () => {
    const apps = await handle.db.select({ createdAt: applications.createdAt, submittedAt: applications.submittedAt }).from(applications);
    const decided = await handle.db.select({ at: decisions.decidedAt }).from(decisions);
    const audit = await handle.db.select({ at: auditEvents.at, action: auditEvents.action }).from(auditEvents);
    expect(apps.length).toBeGreaterThan(4);
    expect(decided.length).toBeGreaterThan(3);
    const instants = [...apps.flatMap((a) => [a.createdAt, a.submittedAt]), ...decided.map((d) => d.at), ...audit.map((a) => a.at)].filter((d): d is Date => d !== null);
    // Nothing is stamped at the moment of seeding or after the demo's "now".
    expect(instants.filter((d) => d.getTime() > NOW.getTime())).toEqual([]);
    expect(instants.filter((d) => d.getTime() >= seededAt.getTime())).toEqual([]);
    // Spread over the history's months: the earliest application is about 140 days old.
    const earliest = Math.min(...apps.map((a) => a.createdAt.getTime()));
    expect(NOW.getTime() - earliest).toBeGreaterThan(130 * 86_400_000);
    expect(new Set(audit.map((a) => a.at.toISOString().slice(0, 10))).size).toBeGreaterThan(10);
  });

  it('gives reviewers a scored round of the Large Scale call and the PI an end-of-allocation report due, flagged on their waiting request', async () => {
    const scored = await handle.db.select({ status: reviewAssignments.status, scoredAt: reviewAssignments.scoredAt }).from(reviewAssignments);
    expect(scored).toHaveLength(6);
    expect(scored.every((r) => r.status === 'scored' && r.scoredAt!.getTime() < NOW.getTime())).toBe(true);
    const missing = await missingReports(handle.db, TODAY);
    expect(missing.map((m) => m.projectTitle)).toEqual(['Protein structure prediction with diffusion models']);
    const [waiting] = await handle.db.select({ id: applications.id, projectId: applications.projectId }).from(applications).where(eq(applications.status, 'submitted'));
    expect((await owedByPisOf(handle.db, [waiting!], TODAY)).get(waiting!.id)).toEqual([{ applicationId: missing[0]!.applicationId, projectTitle: missing[0]!.projectTitle, periodEnd: missing[0]!.periodEnd }]);
  });

  it('gives the demo company invoices paid, overdue after a part payment, and just issued — and the overdue one its reminder', async () => {
    const rows = (await listAllInvoices(handle.db, {}, TODAY)).filter((i) => i.orgName === 'Example Robotics GmbH').reverse();
    // Issued on 1 September, 1 October, 1 November and 1 December (the months August to November).
    expect(rows.map((r) => r.periodMonth)).toEqual(['2026-08-01', '2026-09-01', '2026-10-01', '2026-11-01']);
    expect(rows.map((r) => r.status)).toEqual(['paid', 'paid', 'overdue', 'issued']);
    const overdue = rows[2]!;
    expect(overdue).toMatchObject({ dueDate: '2026-11-15', daysOverdue: 16, paidCents: Math.floor(overdue.grossCents / 2), openCents: overdue.grossCents - Math.floor(overdue.grossCents / 2) });
    const run = await sendInvoiceReminders(handle.db, NOW, [7, 21]);
    expect(run.sent).toEqual([{ invoiceId: overdue.id, number: overdue.number, level: 1 }]);
  });
});
