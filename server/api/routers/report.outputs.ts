// What the report router's procedures answer (`.output()`), and nothing else: zod drops any field a
// schema does not name. Shapes other routers share are in server/api/outputs.ts.
import { z } from 'zod';
import { jobKind } from '~/db/schema';
import { isoDateOut, jobStateOut } from '~/server/api/outputs';

/** A settled job of a period with its frozen figures: the columns of the usage CSV (docs/CSV.md). */
export const reportJobOut = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  projectTitle: z.string(),
  userName: z.string(),
  resourceClassId: z.string(),
  siteId: z.string(),
  kind: z.enum(jobKind.enumValues),
  state: jobStateOut,
  submittedAt: isoDateOut,
  startedAt: isoDateOut.nullable(),
  endedAt: isoDateOut.nullable(),
  waitSeconds: z.number().int().nullable(),
  gpus: z.number().int(),
  gpuSeconds: z.number().int().nullable(),
  costCents: z.number().int().nullable(),
  energyWh: z.number().int().nullable(),
  energyMeasured: z.boolean().nullable(),
  facilityEnergyWh: z.number().int().nullable(),
  heatReusedWh: z.number().int().nullable(),
  co2eGrams: z.number().int().nullable(),
});

/** The per-job CSV with the period it covers (for the download's name). */
export const reportCsvOut = z.object({ from: z.string(), to: z.string(), csv: z.string() });

/** The usage page's budgets: the tenant's cap and each project's and person's budget with this month's (and the total) spend. */
export const spendingOverviewOut = z.object({
  month: z.string(),
  cap: z.object({ capCents: z.number().int(), spentCents: z.number().int() }).nullable(),
  projects: z.array(z.object({ projectId: z.string(), title: z.string(), monthlyCents: z.number().int().nullable(), monthSpentCents: z.number().int(), totalCents: z.number().int().nullable(), totalSpentCents: z.number().int() })),
  people: z.array(z.object({ userId: z.string(), name: z.string(), monthlyCents: z.number().int(), monthSpentCents: z.number().int() })),
});

/** A tenant's storage in a period (issue #27): TB-months in thousandths per project and site, per site (the invoice's figure), and totals. */
const modelCallFigures = { calls: z.number().int(), inputTokens: z.number().int(), outputTokens: z.number().int(), charged: z.number().int(), energyUwh: z.number().int(), co2eUg: z.number().int() };

/** Model calls through the gateway (issue #29), per project and model, and per unit in total. */
export const modelCallReportOut = z.object({
  rows: z.array(z.object({ projectId: z.string(), projectTitle: z.string(), model: z.string(), unit: z.enum(['gpu_seconds', 'cents']), ...modelCallFigures })),
  totals: z.array(z.object({ unit: z.enum(['gpu_seconds', 'cents']), ...modelCallFigures })),
});

/** The centre's model calls (issue #29): per tenant, model and unit, and per unit in total. */
export const centreModelCallsOut = z.object({
  rows: z.array(z.object({ orgId: z.string(), name: z.string(), kind: z.enum(['academic', 'company']), model: z.string(), unit: z.enum(['gpu_seconds', 'cents']), ...modelCallFigures })),
  totals: z.array(z.object({ unit: z.enum(['gpu_seconds', 'cents']), ...modelCallFigures })),
});

export const storageReportOut = z.object({
  charged: z.boolean(),
  rows: z.array(z.object({ projectId: z.string(), projectTitle: z.string(), siteId: z.string(), siteName: z.string(), milliTbMonths: z.number().int(), costCents: z.number().int().nullable() })),
  sites: z.array(z.object({ siteId: z.string(), siteName: z.string(), centsPerTbMonth: z.number().int(), milliTbMonths: z.number().int(), costCents: z.number().int().nullable() })),
  totals: z.object({ milliTbMonths: z.number().int(), costCents: z.number().int().nullable() }),
});
