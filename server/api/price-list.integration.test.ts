// The price list shows the figures a job's estimate uses: the tenant's tariff, the energy of a
// GPU-hour at the assumed utilisation, and what that draws at the meter and emits at the site.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { auditEvents, organisations } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { signUp } from '~/server/services/identity/accounts';
import { activeAllocation, addMember, callerFor, createStaff, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';

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
    const { rows: prices } = await caller.catalogue.priceList();
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
    const company = await signUp(handle.db, { name: 'Eva', email: 'eva@prices.example', password: TEST_PASSWORD, organisation: { name: 'Prices EU GmbH', kind: 'company', country: 'DE', residency: 'EU' } }, { verified: true });
    const academic = await createTenant(handle.db, { name: 'Prices Academic' });
    const { rows: companyPrices } = await callerFor(handle.db, { userId: company.userId }).catalogue.priceList();
    const { rows: academicPrices } = await callerFor(handle.db, { userId: academic.userId }).catalogue.priceList();
    expect(companyPrices.map((p) => p.resourceClassId)).toEqual(academicPrices.map((p) => p.resourceClassId));
    for (const row of companyPrices) {
      const theirs = academicPrices.find((p) => p.resourceClassId === row.resourceClassId)!;
      expect(row.centsPerGpuHour).toBeGreaterThan(theirs.centsPerGpuHour);
      expect(row.allowed).toBe(row.inEu);
    }
    expect(companyPrices.some((p) => !p.allowed)).toBe(true);
  });

  it('lets a verified company with a billing profile accept the price list and run a paid job without staff', async () => {
    const admin = await createStaff(handle.db, 'admin');
    const company = await signUp(handle.db, { name: 'Paula', email: 'paula@payg.example', password: TEST_PASSWORD, organisation: { name: 'PAYG Robotics GmbH', kind: 'company', country: 'DE', residency: 'DE' } }, { verified: true });
    const owner = callerFor(handle.db, { userId: company.userId });
    const refusal = (call: Promise<unknown>) => call.then(() => 'answered', (error: { code?: string; message: string }) => `${error.code}: ${error.message}`);
    expect(await refusal(owner.organisation.startPayAsYouGo())).toMatch(/^PRECONDITION_FAILED: .*not verified/);
    await callerFor(handle.db, { userId: admin.userId }).staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Register entry checked' });
    expect(await refusal(owner.organisation.startPayAsYouGo())).toMatch(/^PRECONDITION_FAILED: .*billing profile/);
    await owner.organisation.setBillingProfile({ legalName: 'PAYG Robotics GmbH', street: 'Am Markt 1', postcode: '07743', city: 'Jena', country: 'DE', vatId: 'DE136695976', billingEmail: 'billing@payg.example' });
    const manager = await addMember(handle.db, company, 'manager');
    expect(await refusal(callerFor(handle.db, { userId: manager.userId }).organisation.startPayAsYouGo())).toMatch(/^FORBIDDEN/);

    const started = await owner.organisation.startPayAsYouGo();
    expect(started.creditCents).toBe(100_000);
    expect(started.allocationId).not.toBeNull();
    const allocationId = started.allocationId!;
    expect(await refusal(owner.organisation.startPayAsYouGo())).toMatch(/^CONFLICT/);
    const overview = await owner.allocation.overview({ allocationId: allocationId });
    expect(overview).toMatchObject({ unit: 'cents', balance: { granted: 100_000, available: 100_000 } });
    const [org] = await handle.db.select().from(organisations).where(eq(organisations.id, company.orgId));
    expect(org).toMatchObject({ monthlyCapCents: 100_000, priceListAcceptedBy: company.userId });
    expect(org!.priceListAcceptedAt).not.toBeNull();
    const audit = await handle.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, company.orgId), eq(auditEvents.action, 'billing.price_list_accepted')));
    expect(audit).toHaveLength(1);

    // A paid job at once, on the credit line, at the company tariff.
    const scheduler = createSimulatedScheduler({ db: handle.db, cluster: await clusterConfigFromCatalogue(handle.db), speed: 60, now: () => new Date(), clusterId: `payg-${randomUUID().slice(0, 8)}` });
    const submitter = callerFor(handle.db, { userId: company.userId, scheduler });
    const estimate = await submitter.job.estimate({ allocationId: allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60 });
    expect(estimate).toMatchObject({ unit: 'cents', reservation: 290, centsPerGpuHour: 290 });
    const job = await submitter.job.submit({ allocationId: allocationId, resourceClassId: 'h100', name: 'first fine-tune', kind: 'fine_tuning', gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'pytorch:2', command: 'python tune.py', idempotencyKey: `payg-${randomUUID()}` });
    expect(job.state).toMatch(/^(PENDING|RUNNING)$/);
    expect((await owner.allocation.overview({ allocationId: allocationId })).balance).toMatchObject({ reserved: 290, available: 100_000 - 290 });
  });
});
