// What the catalogue router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { isoDateOut } from '~/server/api/outputs';
import { accessIntake, reviewPath } from '~/db/schema';

/** A row of the price list: one GPU-hour of a resource class for the caller's kind of tenant. */
export const priceListRowOut = z.object({
  resourceClassId: z.string(),
  name: z.string(),
  gpuModel: z.string(),
  siteName: z.string(),
  country: z.string(),
  inEu: z.boolean(),
  pueMilli: z.number().int(),
  gridGco2PerKwh: z.number().int(),
  allowed: z.boolean(),
  centsPerGpuHour: z.number().int(),
  itWhPerGpuHour: z.number().int(),
  facilityWhPerGpuHour: z.number().int(),
  co2eGramsPerGpuHour: z.number().int(),
  assumedGpuUtilPercent: z.number().int(),
});

/** A row of the storage price list (issue #27): a TB-month in a site's workspaces for the caller's kind of tenant (research: 0). */
export const storagePriceRowOut = z.object({
  siteId: z.string(),
  siteName: z.string(),
  country: z.string(),
  centsPerTbMonth: z.number().int(),
  allowed: z.boolean(),
});

export const accessModeOut = z.object({
  id: z.string(),
  name: z.string(),
  maxGpuSeconds: z.number().nullable(),
  /** The smallest new request or renewal (GPU-seconds); null: none. */
  minGpuSeconds: z.number().nullable(),
  /** first_come: decided as they come; rounds: gathered by a call's cut-offs (issue #32). */
  intake: z.enum(accessIntake.enumValues),
  /** A rounds mode: the cut-off of the round a submission now joins; null when no call has one open (or first come). */
  nextCutoffAt: isoDateOut.nullable(),
  durationDays: z.number(),
  reviewPath: z.enum(reviewPath.enumValues),
  targetDecisionWorkingDays: z.number(),
  /** Storage (GB) a line gets when it names none, and the most a line may ask (null: any). */
  defaultStorageGb: z.number().int(),
  maxStorageGb: z.number().int().nullable(),
  sortOrder: z.number(),
  active: z.boolean(),
});
