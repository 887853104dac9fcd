// What the what-if router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { isoDateOut } from '~/server/api/outputs';

const int = z.number().int();

const whatIfChangeOut = z.union([
  z.object({ kind: z.literal('nodes'), classId: z.string(), delta: int }),
  z.object({ kind: z.literal('newClass'), id: z.string(), siteId: z.string(), templateClassId: z.string(), nodes: int, gpusPerNode: int, fromClassId: z.string(), sharePercent: int }),
  z.object({ kind: z.literal('powerCap'), siteId: z.string(), capKw: z.number().nullable() }),
  z.object({ kind: z.literal('pue'), siteId: z.string(), pueMilli: int }),
  z.object({ kind: z.literal('grid'), siteId: z.string(), gco2PerKwh: int }),
  z.object({ kind: z.literal('policy'), policy: z.enum(['fifo', 'easy', 'multifactor']) }),
]);

/** A what-if run in the list (server/services/planning/what-if.ts WhatIfRunSummary). */
export const whatIfRunSummaryOut = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: isoDateOut,
  createdByName: z.string(),
  fromDay: z.string(),
  toDay: z.string(),
  changes: z.array(whatIfChangeOut),
  status: z.enum(['queued', 'running', 'done', 'failed']),
  progressPermille: int,
  startedAt: isoDateOut.nullable(),
  finishedAt: isoDateOut.nullable(),
  error: z.string().nullable(),
});

/** One machine's replay (server/core/whatif/replay.ts WhatIfOutcome): energy in Wh, CO2e in g, money in cents, utilisation in bp. */
const whatIfOutcomeOut = z.object({
  jobs: int,
  jobsRun: int,
  jobsNeverRun: z.object({ partition: int, nodes: int, walltime: int, power: int }),
  gpus: int,
  utilisationBp: int,
  waitP50Seconds: int,
  waitP90Seconds: int,
  waitMeanSeconds: int,
  boundedSlowdownMilli: int,
  jobsDelayedByPowerCap: int,
  itEnergyWh: int,
  facilityEnergyWh: int,
  heatReusedWh: int,
  co2eGrams: int,
  revenueCents: int,
  classes: z.array(z.object({ id: z.string(), siteId: z.string(), gpus: int, jobs: int, waitP50Seconds: int, waitP90Seconds: int, utilisationBp: int })),
  sites: z.array(z.object({ id: z.string(), peakFacilityPowerW: int, powerCapW: int.nullable(), hourlyPeakW: z.array(int) })),
});

/** A what-if run with its result once done. */
export const whatIfRunOut = whatIfRunSummaryOut.extend({
  result: z
    .object({
      history: z.object({ submitted: int, replayed: int, neverStarted: int, unknownRuntime: int, recordedWaitP50Seconds: int, recordedWaitP90Seconds: int }),
      current: whatIfOutcomeOut,
      proposed: whatIfOutcomeOut,
      elapsedMs: int,
    })
    .nullable(),
});
