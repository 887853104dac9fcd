// What the job router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { budgetUnit, residency } from '~/db/schema';
import { isoDateOut, resourceClassOut } from '~/server/api/outputs';
import { EXIT_KINDS } from '~/server/core/jobs/exit-status';

/** What a job would reserve, cost and consume. */
const reservationShortfallOut = z.discriminatedUnion('limit', [
  z.object({ limit: z.literal('gpusAtOnce'), limitGpus: z.number().int(), inUseGpus: z.number().int(), requestedGpus: z.number().int(), maxGpus: z.number().int() }),
  z.object({ limit: z.enum(['budget', 'monthlyCap', 'projectMonthly', 'projectTotal', 'personMonthly']), unit: z.enum(budgetUnit.enumValues), needed: z.number().int(), left: z.number().int(), gpus: z.number().int(), maxWalltimeSeconds: z.number().int() }),
]);

/** A job's estimate before submitting, with what is left now and every limit its reservation would break. */
export const jobEstimateOut = z.object({
  room: z.object({
    unit: z.enum(budgetUnit.enumValues),
    available: z.number().int(),
    monthCapLeftCents: z.number().int().nullable(),
    gpusAtOnce: z.object({ limit: z.number().int(), inUse: z.number().int() }).nullable(),
    /** Credit lines of a company: what the project's monthly and total budget and the caller's monthly limit leave, in cents (only those set). */
    budgetsLeftCents: z.array(z.object({ limit: z.enum(['projectMonthly', 'projectTotal', 'personMonthly']), leftCents: z.number().int() })).optional(),
  }),
  shortfalls: z.array(reservationShortfallOut),
  /** Set when the job could never start under its site's facility power cap (admission refuses it): the cap, the GPUs asked for and the most that fit. */
  powerCap: z.object({ capKw: z.number(), requestedGpus: z.number().int(), maxGpus: z.number().int() }).nullable(),
  overdueInvoices: z.array(z.string()),
  unit: z.enum(budgetUnit.enumValues),
  /** A job array's tasks (1: one job); every figure below is for all of them. */
  tasks: z.number().int(),
  reservation: z.number().int(),
  reservedGpuSeconds: z.number().int(),
  maxCostCents: z.number().int(),
  expectedCostCents: z.number().int(),
  centsPerGpuHour: z.number().int(),
  maxEnergyWh: z.number().int(),
  expectedEnergyWh: z.number().int(),
  assumedGpuUtilPercent: z.number().int(),
});

/** `job.lowCarbonStart`: the start in the window with the least CO2e at the job's site, and what it saves against now. */
export const lowCarbonStartOut = z.object({
  begin: isoDateOut,
  startsNow: z.boolean(),
  /** The site's time zone, the one its grid profile's hours are in. */
  timeZone: z.string(),
  co2eNowGrams: z.number().int(),
  co2eAtBeginGrams: z.number().int(),
  savedGrams: z.number().int(),
  savedPercent: z.number().int(),
  /** Null when the site has no energy price in the catalogue. */
  energyCostNowCents: z.number().int().nullable(),
  energyCostAtBeginCents: z.number().int().nullable(),
  facilityPowerW: z.number().int(),
  runtimeSeconds: z.number().int(),
  assumedGpuUtilPercent: z.number().int(),
});

/** The fine-tuning template's estimate. Products of the caller's decimals, so no integer checks: FLOPs exceed 2^53. */
export const fineTuneEstimateOut = z.object({
  totalFlops: z.number(),
  gpuSeconds: z.number(),
  runtimeSeconds: z.number(),
  walltimeSeconds: z.number(),
  peakTflops: z.number(),
  gpuModel: z.string(),
  utilisationPercent: z.number(),
});

/** Where the caller may run jobs: allocations with what is left, and the catalogue their tenant may use (no power model). */
export const jobTargetsOut = z.object({
  allocations: z.array(
    z.object({ id: z.string(), projectId: z.string(), projectTitle: z.string(), projectResidency: z.enum(residency.enumValues).nullable(), unit: z.enum(budgetUnit.enumValues), resourceClassId: z.string().nullable(), available: z.number().int() }),
  ),
  resourceClasses: z.array(resourceClassOut),
});

/** How a job ended as Slurm reports it (server/core/jobs/exit-status.ts): `slurm` is sacct's ExitCode, e.g. "0:15". */
export const exitStatusOut = z.object({
  kind: z.enum(EXIT_KINDS),
  exitCode: z.number().int(),
  signal: z.number().int().nullable(),
  signalName: z.string().nullable(),
  slurm: z.string(),
});
