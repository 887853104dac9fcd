// The price list shows the figures a job's estimate uses: the tenant's tariff, the energy of a
// GPU-hour at the assumed utilisation, and what that draws at the meter and emits at the site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { signUp } from '~/server/services/accounts';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';

describe.each(dbTargets())('price list on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  it('prices a GPU-hour as the estimate does, with its energy at the meter and CO2e at the site', async () => {
    const tenant = await createTenant(handle.db, { name: 'Price List Institute' });
    const staff = await createStaff(handle.db, 'admin');
    const today = new Date().toISOString().slice(0, 10);
    const allocation = await activeAllocation(handle.db, tenant, staff, { gpuHours: 10, today });
    const caller = callerFor(handle.db, { userId: tenant.userId });
    const prices = await caller.catalogue.priceList();
    const h100 = prices.find((p) => p.resourceClassId === 'h100')!;
    const estimate = await caller.job.estimate({ allocationId: allocation.allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60 });
    expect(h100.centsPerGpuHour).toBe(estimate.centsPerGpuHour);
    expect(h100.itWhPerGpuHour).toBe(estimate.maxEnergyWh);
    expect(h100.assumedGpuUtilPercent).toBe(estimate.assumedGpuUtilPercent);
    // Facility = IT × PUE, CO2e = facility kWh × grid intensity, each rounded half up once.
    expect(h100.facilityWhPerGpuHour).toBe(Math.floor((2 * h100.itWhPerGpuHour * h100.pueMilli + 1000) / 2000));
    expect(h100.co2eGramsPerGpuHour).toBe(Math.floor((2 * h100.facilityWhPerGpuHour * h100.gridGco2PerKwh + 1000) / 2000));
    expect(prices.every((p) => p.allowed)).toBe(true);
  });

  it('charges each kind of tenant its own tariff and marks the sites a residency rule excludes', async () => {
    const company = await signUp(handle.db, { name: 'Eva', email: 'eva@prices.example', password: TEST_PASSWORD, organisation: { name: 'Prices EU GmbH', kind: 'company', country: 'DE', residency: 'EU' } });
    const academic = await createTenant(handle.db, { name: 'Prices Academic' });
    const companyPrices = await callerFor(handle.db, { userId: company.userId }).catalogue.priceList();
    const academicPrices = await callerFor(handle.db, { userId: academic.userId }).catalogue.priceList();
    expect(companyPrices.map((p) => p.resourceClassId)).toEqual(academicPrices.map((p) => p.resourceClassId));
    for (const row of companyPrices) {
      const theirs = academicPrices.find((p) => p.resourceClassId === row.resourceClassId)!;
      expect(row.centsPerGpuHour).toBeGreaterThan(theirs.centsPerGpuHour);
      expect(row.allowed).toBe(row.inEu);
    }
    expect(companyPrices.some((p) => !p.allowed)).toBe(true);
  });
});
