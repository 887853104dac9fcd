// What the centre router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { orgKind } from '~/db/schema';

export const centrePartitionOut = z.object({ id: z.string(), name: z.string(), active: z.boolean() });

/** The usage figures of a tenant's line and of the totals. */
const centreFigures = {
  jobs: z.number().int(),
  gpuSeconds: z.number().int(),
  energyWh: z.number().int(),
  facilityEnergyWh: z.number().int(),
  heatReusedWh: z.number().int(),
  co2eGrams: z.number().int(),
  costCents: z.number().int(),
};

/** Usage of one tenant in the range (top lists). */
const centreTenantOut = z.object({
  orgId: z.string(),
  name: z.string(),
  kind: z.enum(orgKind.enumValues),
  ...centreFigures,
});

/** Allocated against capacity; utilisation and over-subscription are fractions (may exceed 1). */
const centreAllocationTotalOut = z.object({
  allocations: z.number().int(),
  grantedGpuSeconds: z.number().int(),
  chargedGpuSeconds: z.number().int(),
  grantedInRangeGpuSeconds: z.number().int(),
  capacityGpuSeconds: z.number().int(),
  oversubscription: z.number(),
});

/** Every figure of the centre dashboard (server/services/usage/centre.ts CentreDashboard): aggregates only, no rows. */
export const centreDashboardOut = z.object({
  range: z.object({ from: z.string(), to: z.string(), days: z.number().int() }),
  filters: z.object({ partition: z.string().nullable(), tenantKind: z.enum(orgKind.enumValues).nullable() }),
  partitions: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      siteId: z.string(),
      capacityGpus: z.number().int(),
      usedGpuSeconds: z.number().int(),
      capacityGpuSeconds: z.number().int(),
      utilisation: z.number(),
      days: z.array(z.object({ day: z.string(), usedGpuSeconds: z.number().int(), capacityGpuSeconds: z.number().int(), utilisation: z.number() })),
    }),
  ),
  utilisation: z.object({ usedGpuSeconds: z.number().int(), capacityGpuSeconds: z.number().int(), utilisation: z.number() }),
  wait: z.object({ startedJobs: z.number().int(), p50Seconds: z.number().int().nullable(), p90Seconds: z.number().int().nullable(), meanSeconds: z.number().int().nullable() }),
  allocations: z.object({ rows: z.array(centreAllocationTotalOut.extend({ partition: z.string(), name: z.string() })), total: centreAllocationTotalOut }),
  topByGpuHours: z.array(centreTenantOut),
  topByFacilityEnergy: z.array(centreTenantOut),
  totals: z.object({
    ...centreFigures,
    itKwhPerGpuHour: z.number().nullable(),
    facilityKwhPerGpuHour: z.number().nullable(),
    pue: z.number().nullable(),
  }),
  sites: z.array(z.object({ id: z.string(), name: z.string(), energyWh: z.number().int(), facilityEnergyWh: z.number().int(), pue: z.number().nullable() })),
  byKind: z.array(z.object({ kind: z.enum(orgKind.enumValues), meaning: z.enum(['revenue', 'grantValue']), costCents: z.number().int(), gpuSeconds: z.number().int(), jobs: z.number().int() })),
});

/** A dashboard table as CSV text with its download name. */
export const centreCsvOut = z.object({ filename: z.string(), body: z.string() });

/** The centre's storage (issue #27): per tenant what it holds now, what is granted and TB-months (thousandths) in the range; the centre's totals. */
export const centreStorageOut = z.object({
  tenants: z.array(z.object({ orgId: z.string(), name: z.string(), kind: z.enum(orgKind.enumValues), usedBytes: z.number().int(), grantedGb: z.number().int(), milliTbMonths: z.number().int() })),
  totals: z.object({ usedBytes: z.number().int(), grantedGb: z.number().int(), milliTbMonths: z.number().int() }),
});

/** Decision times against targets per access mode (issue #32): decided in the range, and waiting now. */
export const centreDecisionTimesOut = z.array(
  z.object({
    accessModeId: z.string(),
    name: z.string(),
    targetDays: z.number().int(),
    decided: z.number().int(),
    medianWorkingDays: z.number().nullable(),
    withinTarget: z.number().int(),
    waiting: z.number().int(),
    overdue: z.number().int(),
  }),
);
