// The TCO page's procedure on hand-made rollups: staff get each class's cost per delivered GPU-hour at
// the utilisation the centre dashboard measures for the same period (the very figure), the what-if
// utilisation and the tariffs' break-even; a tenant is refused; a class whose figures are not
// configured is listed with what is missing.
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { projects, usageRollups } from '~/db/schema';
import { rebuildCentreRollups } from '~/server/services/usage/usage';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import { breakEvenBp, tcoAt } from '~/server/core/tco';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { tcoReport } from './tco';

const DAY = 86_400;
const NOW = new Date('2026-03-30T12:00:00Z');

describe.each(dbTargets())('TCO per GPU-hour on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let staff: Awaited<ReturnType<typeof createStaff>>;
  let tenant: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    staff = await createStaff(db, 'reviewer');
    tenant = await createTenant(db, { kind: 'academic', name: 'Alpha University' });
    const [project] = await db.insert(projects).values({ orgId: tenant.orgId, title: 'Alpha project', abstract: 'Test project.', fieldOfScience: 'Computer science', createdBy: tenant.userId }).returning({ id: projects.id });
    const rollup = (day: string, rc: string, gpuSeconds: number) =>
      db.insert(usageRollups).values({ day, orgId: tenant.orgId, projectId: project!.id, userId: tenant.userId, resourceClassId: rc, kind: 'training', jobs: 1, gpuSeconds, waitSeconds: 0, startedJobs: 1, costCents: 0, energyWh: 0, facilityEnergyWh: 0, heatReusedWh: 0, co2eGrams: 0 });
    // h100 (128 GPUs): a full day and half a day in the last 30 days = 1.5 ÷ 30 = 5 %.
    await rollup('2026-03-10', 'h100', 128 * DAY);
    await rollup('2026-03-11', 'h100', 64 * DAY);
    // b200 (64 GPUs): 9 full days in January, inside the last 90 days but not the last 30 = 10 % of 90 days.
    await rollup('2026-01-15', 'b200', 9 * 64 * DAY);
    await rebuildCentreRollups(db);
  });

  afterAll(async () => {
    await handle?.close();
  });

  const asStaff = () => callerFor(db, { userId: staff.userId, now: () => NOW });

  it('measures the same utilisation as the centre dashboard for the same period', async () => {
    for (const [period, range] of [
      ['last30Days', { from: '2026-03-01', to: '2026-03-30' }],
      ['last90Days', { from: '2025-12-31', to: '2026-03-30' }],
    ] as const) {
      const [tco, dashboard] = await Promise.all([asStaff().staff.tco({ period }), asStaff().centre.dashboard(range)]);
      expect(tco.range).toEqual({ ...range, days: period === 'last30Days' ? 30 : 90 });
      for (const rc of tco.classes) {
        const partition = dashboard.partitions.find((p) => p.id === rc.id)!;
        expect(rc.measured).toEqual({ usedGpuSeconds: partition.usedGpuSeconds, capacityGpuSeconds: partition.capacityGpuSeconds, utilisation: partition.utilisation, utilisationBp: Math.round(partition.utilisation * 10_000) });
      }
    }
    const last30 = await asStaff().staff.tco({ period: 'last30Days' });
    expect(last30.classes.map((c) => [c.id, c.measured.utilisationBp])).toEqual([
      ['h100', 500],
      ['b200', 0],
      ['h100-ch', 0],
    ]);
    const last90 = await asStaff().staff.tco({ period: 'last90Days' });
    expect(last90.classes.find((c) => c.id === 'b200')!.measured.utilisationBp).toBe(1000);
  });

  it('gives staff the cost per delivered GPU-hour at the measured and the what-if utilisation, with the break-even per tariff', async () => {
    const report = await asStaff().staff.tco({ period: 'last30Days', whatIfPercent: 70 });
    expect(report.whatIfBp).toBe(7000);
    const h100 = report.classes.find((c) => c.id === 'h100')!;
    expect(h100.missing).toEqual([]);
    const costs = h100.costs!;
    // 16 nodes × €300,000 ÷ 5 years; 16 × €24,000; Jena's whole €600,000 overhead (its only class).
    expect(costs.atMeasured.yearly.capitalCents).toBe(96_000_000);
    expect(costs.atMeasured.yearly.maintenanceCents).toBe(38_400_000);
    expect(costs.atMeasured.yearly.overheadCents).toBe(60_000_000);
    // 128 GPUs × 8,760 h × 5 % = 56,064 GPU-h delivered.
    expect(costs.atMeasured.deliveredGpuSeconds).toBe(56_064 * 3600);
    const rc = DEFAULT_CATALOGUE.resourceClasses.find((c) => c.id === 'h100')!;
    const site = DEFAULT_CATALOGUE.sites.find((s) => s.id === 'de-jena')!;
    const inputs = { ...rc, capitalCostPerNodeEur: 300_000, depreciationYears: 5, maintenancePerNodePerYearEur: 24_000 };
    const siteInputs = { ...site, energyPriceEurPerMwh: 190, heatValueEurPerMwh: 40, overheadPerYearEur: 600_000 };
    expect(costs.atMeasured).toEqual(tcoAt(inputs, siteInputs, 60_000_000, 500));
    expect(costs.atWhatIf).toEqual(tcoAt(inputs, siteInputs, 60_000_000, 7000));
    // At 5 % the fixed costs dwarf the tariffs; at 70 % the cost is far lower.
    expect(costs.atMeasured.perGpuHour!.totalCents).toBeGreaterThan(3000);
    expect(costs.atWhatIf!.perGpuHour!.totalCents).toBeLessThan(costs.atMeasured.perGpuHour!.totalCents);
    expect(costs.tariffs).toEqual([
      { kind: 'academic', centsPerGpuHour: 180, breakEvenBp: breakEvenBp(inputs, siteInputs, 60_000_000, 180) },
      { kind: 'company', centsPerGpuHour: 290, breakEvenBp: breakEvenBp(inputs, siteInputs, 60_000_000, 290) },
    ]);
    expect(costs.tariffs[1]!.breakEvenBp).not.toBeNull();
    expect(costs.curve).toHaveLength(19);
  });

  it('refuses a tenant, and an out-of-range what-if', async () => {
    const asTenant = callerFor(db, { userId: tenant.userId, orgId: tenant.orgId, now: () => NOW });
    await expect(asTenant.staff.tco({ period: 'last30Days' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asStaff().staff.tco({ period: 'last30Days', whatIfPercent: 0 })).rejects.toBeInstanceOf(TRPCError);
    await expect(asStaff().staff.tco({ period: 'last30Days', whatIfPercent: 101 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('lists a class whose figures are not configured with what is missing', async () => {
    const catalogue = {
      ...DEFAULT_CATALOGUE,
      sites: DEFAULT_CATALOGUE.sites.map((s) => (s.id === 'fi-kajaani' ? { ...s, energyPriceEurPerMwh: undefined } : s)),
      resourceClasses: DEFAULT_CATALOGUE.resourceClasses.map((c) => (c.id === 'h100-ch' ? { ...c, depreciationYears: undefined } : c)),
    };
    const report = await tcoReport(db, catalogue, { period: 'last30Days', today: '2026-03-30' });
    expect(report.classes.map((c) => [c.id, c.missing, c.costs === null])).toEqual([
      ['h100', [], false],
      ['b200', ['energyPriceEurPerMwh'], true],
      ['h100-ch', ['depreciationYears'], true],
    ]);
  });
});
