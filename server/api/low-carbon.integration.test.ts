// The job form's low-carbon suggestion: the start in the window with the least CO2e under the site's
// hourly grid profile (server/core/carbon), for the job as the form describes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
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
});
