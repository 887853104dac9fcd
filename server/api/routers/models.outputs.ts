// What the models router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name.
import { z } from 'zod';
import { jobState } from '~/db/schema';

const priceOut = z.object({ inputCentsPerMTokens: z.number().int(), outputCentsPerMTokens: z.number().int() });

/** A replica of a shared model: staff see each (to stop it); a tenant sees where it is served. */
export const sharedReplicaOut = z.object({ jobId: z.string(), siteId: z.string(), siteName: z.string(), resourceClassId: z.string(), state: z.enum(jobState.enumValues), startedAt: z.date().nullable() });

export const sharedModelOut = z.object({
  id: z.string(),
  name: z.string(),
  contextLength: z.number().int(),
  classes: z.array(z.object({ id: z.string(), name: z.string(), siteId: z.string(), siteName: z.string() })),
  prices: z.object({ academic: priceOut, company: priceOut }),
  /** Sites where a replica answers now. */
  servedAt: z.array(z.object({ siteId: z.string(), siteName: z.string(), replicas: z.number().int() })),
  /** Staff only (empty for tenants): each replica not yet ended, and every tenant's calls of the last 24 hours. */
  replicas: z.array(sharedReplicaOut),
  calls24h: z.number().int().nullable(),
  tokens24h: z.number().int().nullable(),
});
