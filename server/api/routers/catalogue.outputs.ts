// What the catalogue router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { reviewPath } from '~/db/schema';

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

export const accessModeOut = z.object({
  id: z.string(),
  name: z.string(),
  maxGpuSeconds: z.number().nullable(),
  durationDays: z.number(),
  reviewPath: z.enum(reviewPath.enumValues),
  targetDecisionWorkingDays: z.number(),
  sortOrder: z.number(),
  active: z.boolean(),
});
