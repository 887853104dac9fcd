// The job form's low-carbon suggestion: the start in the window with the least CO2e under the site's
// hourly grid profile (server/core/carbon), for the job as the form describes it.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { jobs } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { co2eSavedForJob } from '~/server/services/jobs/co2e-saved';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

describe.each(dbTargets())('job.lowCarbonStart on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  // 18:00 in Jena and 19:00 in Kajaani, a January evening.
  const now = () => new Date('2026-01-14T17:00:00Z');
  const today = '2026-01-14';

  it("moves a German job at 18:00 to the night's minimum at 02:00, with what it saves in CO2e and energy cost", async () => {
    const tenant = await createTenant(handle.db);
    const staff = await createStaff(handle.db, 'admin');
    const { allocationId } = await activeAllocation(handle.db, tenant, staff, { gpuHours: 100, today });
    const caller = callerFor(handle.db, { userId: tenant.userId, orgId: tenant.orgId, now });
    const job = { allocationId, resourceClassId: 'h100', gpus: 8, nodes: 1, walltimeMinutes: 120 };

    const start = await caller.job.lowCarbonStart({ ...job, windowHours: 12 });
    // 8 H100: 6,596 W IT × PUE 1.08 = 7,124 W; January 18:00 + 19:00 527 + 536 g/kWh, 02:00 + 03:00 416 + 411.
    expect(start).toMatchObject({
      begin: new Date('2026-01-15T01:00:00Z'),
      startsNow: false,
      timeZone: 'Europe/Berlin',
      facilityPowerW: 7124,
      runtimeSeconds: 7200,
      co2eNowGrams: 7573,
      co2eAtBeginGrams: 5892,
      savedGrams: 1681,
      savedPercent: 22,
    });
    expect(start.energyCostAtBeginCents!).toBeLessThan(start.energyCostNowCents!);
    // 14.25 kWh at a mean of €190/MWh is about €2.71: the evening is dearer, the night cheaper.
    expect(start.energyCostNowCents!).toBeGreaterThan(271);
    expect(start.energyCostAtBeginCents!).toBeLessThan(271);
    expect([start.energyCostNowCents, start.energyCostAtBeginCents]).toEqual([291, 256]);

    // A runtime estimate shorter than the walltime is what the run is weighed over; no window: now.
    expect((await caller.job.lowCarbonStart({ ...job, runtimeSeconds: 3600, windowHours: 12 })).runtimeSeconds).toBe(3600);
    expect(await caller.job.lowCarbonStart({ ...job, windowHours: 0 })).toMatchObject({ begin: now(), startsNow: true, savedGrams: 0, savedPercent: 0 });
  });

  it("saves little on Finland's low, flat grid", async () => {
    const tenant = await createTenant(handle.db);
    const staff = await createStaff(handle.db, 'admin');
    const { allocationId } = await activeAllocation(handle.db, tenant, staff, { gpuHours: 100, today, resourceClassId: 'b200' });
    const caller = callerFor(handle.db, { userId: tenant.userId, orgId: tenant.orgId, now });
    const start = await caller.job.lowCarbonStart({ allocationId, resourceClassId: 'b200', gpus: 8, nodes: 1, walltimeMinutes: 120, windowHours: 12 });
    expect(start.timeZone).toBe('Europe/Helsinki');
    expect(start.savedPercent).toBeLessThanOrEqual(10);
    expect(start.savedGrams).toBeLessThan(200);
  });

  it("refuses another tenant's allocation as the estimate does", async () => {
    const owner = await createTenant(handle.db);
    const other = await createTenant(handle.db);
    const staff = await createStaff(handle.db, 'admin');
    const { allocationId } = await activeAllocation(handle.db, owner, staff, { gpuHours: 10, today });
    const caller = callerFor(handle.db, { userId: other.userId, orgId: other.orgId, now });
    await expect(caller.job.lowCarbonStart({ allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60, windowHours: 12 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('the job page: a job that waited for its begin saved CO2e against starting at once, by the same profile', () => {
    const jena = { id: 'de-jena', country: 'DE', gridGco2PerKwh: 380 };
    // 7,124 W for 2 h = 14,248 Wh; from 18:00: 14,248 × 1,063 / 2,000 = 7,572.8 g; from 02:00 (its begin): 5,891.5 g.
    const waited = { begin: new Date('2026-01-15T01:00:00Z'), submittedAt: now(), startedAt: null, facilityEnergyWh: 14_248, runSeconds: 7200 };
    expect(co2eSavedForJob(jena, waited)).toEqual({ co2eAtOnceGrams: 7573, co2eAsRunGrams: 5892, savedGrams: 1681 });
    // Started later than its begin (the cluster was busy): from when it ran, 03:00 + 04:00 = 411 + 416.
    expect(co2eSavedForJob(jena, { ...waited, startedAt: new Date('2026-01-15T02:00:00Z') })?.co2eAsRunGrams).toBe(5892);
    expect(co2eSavedForJob(jena, { ...waited, begin: null })).toBeNull();
  });

  it('a job submitted with the suggested begin starts no earlier than it, and its page shows what waiting saved', async () => {
    const tenant = await createTenant(handle.db);
    const staff = await createStaff(handle.db, 'admin');
    let clock = now();
    const scheduler = createSimulatedScheduler({ db: handle.db, cluster: await clusterConfigFromCatalogue(handle.db), speed: 60, now: () => clock, clusterId: `low-carbon-${randomUUID().slice(0, 8)}` });
    const { allocationId } = await activeAllocation(handle.db, tenant, staff, { gpuHours: 100, today, scheduler });
    const caller = callerFor(handle.db, { userId: tenant.userId, orgId: tenant.orgId, now: () => clock, scheduler });
    const shape = { allocationId, resourceClassId: 'h100', gpus: 8, nodes: 1, walltimeMinutes: 120 };
    const { begin, startsNow } = await caller.job.lowCarbonStart({ ...shape, windowHours: 12 });
    expect(startsNow).toBe(false);
    const submitted = await caller.job.submit({ ...shape, name: 'overnight run', kind: 'training', image: 'python:3.12', command: 'python train.py', env: {}, idempotencyKey: randomUUID(), begin: begin.toISOString() });

    // The cluster is idle, yet the job waits for its begin.
    await reconcileOnce(handle.db, scheduler, clock);
    expect(await caller.job.get({ jobId: submitted.id })).toMatchObject({ state: 'PENDING', pendingReason: 'BeginTime', beginAt: begin });
    let row = (await handle.db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]!;
    for (let i = 0; i < 300 && !row.settledAt; i++) {
      clock = new Date(clock.getTime() + 5 * 60_000);
      await reconcileOnce(handle.db, scheduler, clock);
      row = (await handle.db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]!;
    }
    expect(row.settledAt, 'the job ran and was settled').not.toBeNull();
    expect(row.startedAt!.getTime()).toBeGreaterThanOrEqual(begin.getTime());
    const page = await caller.job.get({ jobId: submitted.id });
    expect(page.co2eSaved).not.toBeNull();
    expect(page.co2eSaved!.co2eAsRunGrams).toBeLessThan(page.co2eSaved!.co2eAtOnceGrams);
    expect(page.co2eSaved!.savedGrams).toBe(page.co2eSaved!.co2eAtOnceGrams - page.co2eSaved!.co2eAsRunGrams);
  });
});
