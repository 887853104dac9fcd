// The resource catalogue: sites, resource classes, tariffs and access modes. Configuration, not code:
// the built-in default below describes the demo centre; PORTAL_CATALOGUE points at a JSON file of the
// same shape to describe a real one. Validated with zod and synced into the database on start.
import Holidays from 'date-holidays';
import fs from 'node:fs';
import { z } from 'zod';
import { isEuCountry } from './core/countries';
import { isValidIban, normaliseIban } from './core/billing/iban';
import { checkVatId } from './core/billing/vat-id';
import { env } from './env.js';
import { ACCESS_INTAKES, accessModeConfigProblem, defaultModeStorage } from './core/applications';
import { isTimeZone } from './core/carbon/local-time';
import { isHourlyProfile, profileSum } from './core/carbon/profiles';

const id = z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'lower-case letters, digits and dashes');
/** A name Slurm takes for a QoS, a GRES type or a reservation. */
const slurmName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, . _ or -');
const line = z.string().trim().min(1).max(200);

/** Who issues the invoices: printed on every invoice and credit note, snapshotted onto each when it is issued. */
export const issuerSchema = z
  .object({
    name: line,
    street: line,
    postcode: z.string().trim().min(1).max(20),
    city: line,
    country: z.string().regex(/^[A-Z]{2}$/),
    /** Checked with the same rule as a customer's (shape and check digit of the country's numbers). */
    vatId: z.string().trim().min(1).max(20),
    /** The national tax number (Steuernummer). */
    taxNumber: z.string().trim().min(1).max(40),
    /** Register court and entry, e.g. "Amtsgericht Jena, HRB 123456". */
    registerEntry: line,
    bankName: line,
    iban: z.string().trim().transform(normaliseIban).refine(isValidIban, 'not an IBAN (its check digits do not match)'),
    bic: z.string().trim().regex(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/, 'a BIC has 8 or 11 letters and digits'),
    paymentTermsDays: z.number().int().min(0).max(120),
    email: z.email().max(200),
    phone: z.string().trim().regex(/^\+?[0-9 ()/-]{6,30}$/, 'a phone number'),
  })
  .superRefine((issuer, ctx) => {
    if (!isEuCountry(issuer.country)) return;
    const vat = checkVatId(issuer.country, issuer.vatId);
    if (!vat.ok) ctx.addIssue({ code: 'custom', path: ['vatId'], message: `not a VAT ID of ${issuer.country} (${vat.reason})` });
  })
  .transform((issuer) => {
    const vat = isEuCountry(issuer.country) ? checkVatId(issuer.country, issuer.vatId) : undefined;
    return { ...issuer, vatId: vat?.ok ? vat.vatId : issuer.vatId };
  });

export type Issuer = z.infer<typeof issuerSchema>;

/** The demo centre's issuer: a fictitious operator with numbers that pass their checks (not a real company's). */
export const DEMO_ISSUER: Issuer = {
  name: 'AI Factory Demo Centre GmbH',
  street: 'Leutragraben 1',
  postcode: '07743',
  city: 'Jena',
  country: 'DE',
  vatId: 'DE812345673',
  taxNumber: '161/114/12345',
  registerEntry: 'Amtsgericht Jena, HRB 512345',
  bankName: 'Demo Bank',
  iban: 'DE89370400440532013000',
  bic: 'COBADEFFXXX',
  paymentTermsDays: 14,
  email: 'billing@ai-factory.example',
  phone: '+49 3641 000000',
};

/** The apps the session launcher (bin/portal-session) can start. */
export const SESSION_APP_IDS = ['jupyter'] as const;
export type SessionAppId = (typeof SESSION_APP_IDS)[number];

/** A price per million tokens in and out, whole cents (issue #29). */
const tokenPrice = z.object({ inputCentsPerMTokens: z.number().int().min(0).max(10_000_000), outputCentsPerMTokens: z.number().int().min(0).max(10_000_000) }).strict();
const tokenPrices = z.object({ academic: tokenPrice, company: tokenPrice }).strict();

/**
 * How the OpenAI-compatible gateway meters calls (issue #29, server/services/inference/README.md). A tenant's
 * own service: its GPU time is charged as any job's, and each call through the gateway pays `ownModels` per
 * token on top. Energy: the IT energy a token takes per resource class, micro-watt-hours (a class not named
 * counts none), from which a call's facility energy and CO2e follow with its site's PUE and grid.
 */
/**
 * A model the centre serves to every tenant (issue #29): staff start its replicas (inference services of
 * the centre's own tenant, its GPU time charged there) on its classes; tenants call it through
 * the gateway by `id` and pay `prices` per token of their kind (a research allocation in GPU-seconds at
 * its class's tariff). `image` and `command` are what a real cluster runs (vLLM, llama.cpp's server, TGI:
 * the same protocol); the simulated cluster runs the portal's model server.
 */
export const sharedModelSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/:-]{0,99}$/, 'letters, digits and . _ / : -'),
    name: z.string().min(1).max(120),
    contextLength: z.number().int().min(256).max(10_000_000),
    /** The classes its replicas may run on (each at its site); the first is where staff start it by default. */
    resourceClassIds: z.array(id).min(1).max(50),
    gpus: z.number().int().min(1).max(64).default(1),
    image: z.string().min(1).max(300).default('vllm/vllm-openai:v0.6.3'),
    command: z.string().min(1).max(2000),
    prices: tokenPrices,
  })
  .strict();
export type SharedModel = z.infer<typeof sharedModelSchema>;

export const inferenceSchema = z
  .object({
    ownModels: tokenPrices,
    uwhPerToken: z.record(id, z.number().int().min(0).max(10_000_000)).default({}),
    sharedModels: z.array(sharedModelSchema).max(200).default([]),
  })
  .strict();

export const catalogueSchema = z.object({
  sites: z
    .array(
      z.object({
        id,
        name: z.string().min(1).max(120),
        /** The name in German: every site and class has one per language the portal speaks. */
        nameDe: z.string().min(1).max(120),
        country: z.string().regex(/^[A-Z]{2}$/),
        inEu: z.boolean(),
        pueMilli: z.number().int().min(1000).max(3000),
        gridGco2PerKwh: z.number().int().min(0).max(2000),
        heatReusePermille: z.number().int().min(0).max(1000),
        /**
         * What a company pays for a TB-month (10^12 bytes held for a month) in the site's workspaces, in cents;
         * research tenants are not charged and see their usage (docs/files.md). Unset: nothing is charged.
         */
        storageCentsPerTbMonth: z.number().int().min(0).max(1_000_000).default(0),
        /** Facility power cap at the meter in kW (IT × PUE); the simulated cluster holds jobs with PowerCap above it. Unset: no cap. */
        powerCapKw: z.number().positive().max(1_000_000).optional(),
        /**
         * Where the site's project workspaces lie, an absolute path on the filesystem the cluster's nodes
         * mount and the portal reads and writes directly (docs/files.md). Unset: SLURM_JOB_DIR on a real
         * Slurm, else a folder under the portal's data directory (PORTAL_FILES_DIR).
         */
        filesystemRoot: z.string().regex(/^\/[^\0\n]*$/, 'an absolute path such as /lustre/projects').refine((p) => !p.split('/').includes('..'), 'no .. in the path').optional(),
        // Cost of ownership (server/core/tco.ts). Optional: a catalogue without them shows the TCO page
        // as "not configured" for the site's classes. The energy price also prices the low-carbon start suggestion (server/core/carbon).
        /** Industrial electricity price at the meter, whole € per MWh (= 0.1 cent per kWh). */
        energyPriceEurPerMwh: z.number().int().min(0).max(10_000).optional(),
        /** What a MWh of reused heat is worth to the site (sold to district heating or displacing its own heating), whole €. */
        heatValueEurPerMwh: z.number().int().min(0).max(10_000).optional(),
        /** Floor space, building services and staff of the site per year, whole €; apportioned to its classes by GPU count. */
        overheadPerYearEur: z.number().int().min(0).max(1_000_000_000).optional(),
        /** IANA time zone of the grid profile's hours; default from the country (server/core/carbon/profiles.ts). */
        timeZone: z.string().refine(isTimeZone, 'not a time zone the runtime knows').optional(),
        /**
         * The site's hourly grid intensity, g CO2e/kWh, 12 months × 24 local hours; its mean must be
         * `gridGco2PerKwh` (±5 %). Without it: the country's demo profile scaled to that mean, or flat.
         */
        gridProfile: z.array(z.array(z.number().int().min(0).max(2000))).refine(isHourlyProfile, '12 rows of 24 integers').optional(),
      }),
    )
    .min(1),
  resourceClasses: z
    .array(
      z.object({
        id,
        name: z.string().min(1).max(120),
        nameDe: z.string().min(1).max(120),
        siteId: id,
        gpuModel: z.string().min(1).max(60),
        gpusPerNode: z.number().int().min(1).max(64),
        nodes: z.number().int().min(1).max(100_000),
        maxWalltimeSeconds: z.number().int().min(60).max(30 * 86_400),
        gpuIdlePowerW: z.number().int().min(0).max(5000),
        gpuMaxPowerW: z.number().int().min(1).max(5000),
        nodeBasePowerW: z.number().int().min(0).max(50_000),
        peakTflops: z.number().int().min(1).max(100_000),
        tariffs: z.object({ academic: z.number().int().min(0), company: z.number().int().min(0) }),
        // Cost of ownership (server/core/tco.ts), optional like the site's figures.
        /** Purchase price of one node, whole € (servers, GPUs, its share of network and storage). */
        capitalCostPerNodeEur: z.number().int().min(0).max(100_000_000).optional(),
        /** Years over which the capital is written off (straight line). */
        depreciationYears: z.number().int().min(1).max(20).optional(),
        /** Maintenance and support contracts per node and year, whole €. */
        maintenancePerNodePerYearEur: z.number().int().min(0).max(10_000_000).optional(),
        /**
         * How a real Slurm runs the class beyond its partition (SLURM_PARTITIONS): the QoS its jobs go
         * with, the GPU type they ask for (typed GRES `gpu:<type>:<n>`), a node feature constraint and a
         * reservation. The simulated cluster ignores it.
         */
        slurm: z
          .object({
            qos: slurmName.optional(),
            gpuType: slurmName.optional(),
            constraint: z.string().regex(/^[A-Za-z0-9_.&|[\]()*:,-]{1,200}$/, 'a Slurm constraint such as nvlink&ib').optional(),
            reservation: slurmName.optional(),
          })
          .strict()
          .optional(),
      }),
    )
    .min(1),
  accessModes: z
    .array(
      z.object({
        id,
        name: z.string().min(1).max(120),
        maxGpuHours: z.number().int().positive().nullable(),
        /** The smallest new request or renewal, in GPU-hours (Large Scale: more than 50,000); unset: none. */
        minGpuHours: z.number().int().positive().nullable().default(null),
        durationDays: z.number().int().min(1).max(3660),
        reviewPath: z.enum(['instant', 'single', 'full']),
        /** first_come: each request decided as it comes; rounds: gathered by a call's cut-offs and reviewed together (issue #32). */
        intake: z.enum(ACCESS_INTAKES).default('first_come'),
        /** Working days to a decision: from submission (first_come), or from the round's cut-off (rounds). */
        targetDecisionWorkingDays: z.number().int().min(0).max(365),
        /**
         * Storage (GB = 10^9 bytes) a request's line gets when it names none, and the most one line may ask
         * (null: any). Unset: the figures of the built-in modes with the same review path (core/applications.ts `defaultModeStorage`).
         */
        defaultStorageGb: z.number().int().min(0).max(100_000_000).optional(),
        maxStorageGb: z.number().int().min(0).max(100_000_000).nullable().optional(),
      })
      .transform((mode) => {
        const fallback = defaultModeStorage(mode.reviewPath);
        return { ...mode, defaultStorageGb: mode.defaultStorageGb ?? fallback.defaultStorageGb, maxStorageGb: mode.maxStorageGb === undefined ? fallback.maxStorageGb : mode.maxStorageGb };
      }),
    )
    .min(1),
  /**
   * What a verified company gets when its owner accepts the price list: a credit line on a project of its
   * own, with a storage line (GB) at every site, paid per TB-month used.
   */
  payAsYouGo: z
    .object({ startingCreditEuros: z.number().int().min(0).max(1_000_000), durationDays: z.number().int().min(1).max(3660), storageGb: z.number().int().min(0).max(100_000_000).default(1000) })
    .default({ startingCreditEuros: 1000, durationDays: 365, storageGb: 1000 }),
  issuer: issuerSchema.default(DEMO_ISSUER),
  /**
   * The interactive apps people can start as a session on a GPU node (issue #28). Each id is one the
   * session launcher on the nodes knows how to start (bin/portal-session; docs/sessions.md says how a centre
   * installs the apps); a centre lists the ones its nodes have.
   */
  interactiveApps: z
    .array(z.object({ id: z.enum(SESSION_APP_IDS), name: z.string().min(1).max(120), nameDe: z.string().min(1).max(120) }))
    .default([{ id: 'jupyter', name: 'Jupyter Notebook', nameDe: 'Jupyter Notebook' }]),
  inference: inferenceSchema.default(() => DEFAULT_INFERENCE),
  /**
   * The centre's working calendar (issue #32): a decision target of N working days runs N × its working
   * hours on Monday to Friday, less the public holidays of its country and state (date-holidays), in its time zone.
   */
  calendar: z
    .object({
      country: z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166 country code such as DE'),
      state: z.string().regex(/^[A-Z0-9]{1,3}$/, 'a state code such as TH (Thuringia)').optional(),
      timeZone: z.string().refine(isTimeZone, 'an IANA time zone such as Europe/Berlin'),
      workingHours: z
        .object({ start: z.number().int().min(0).max(23), end: z.number().int().min(1).max(24) })
        .refine((h) => h.end > h.start, 'end must be later than start (whole hours, such as 9 and 17)'),
    })
    .refine((c) => knownHolidayRegion(c.country, c.state), 'a country (and state) date-holidays knows, such as DE and TH')
    .default({ country: 'DE', state: 'TH', timeZone: 'Europe/Berlin', workingHours: { start: 9, end: 17 } }),
});

export type Catalogue = z.infer<typeof catalogueSchema>;

/** knownHolidayRegion: date-holidays has public holidays for the country (and the state, when given). */
function knownHolidayRegion(country: string, state: string | undefined): boolean {
  const holidays = new Holidays();
  if (!holidays.getCountries()[country]) return false;
  return state === undefined || Boolean(holidays.getStates(country)?.[state]);
}

/**
 * The gateway's figures of the demo centre. Own models: a company pays €0.10 per million tokens in and €0.40
 * out on top of its service's GPU-hours (what the gateway, its metering and its network cost); research
 * projects pay their service's GPU-hours only. Energy per token: an 8-billion-parameter model served with
 * continuous batching makes ~2,500 tokens/s on an H100 at ~700 W, ~0.08 Wh per thousand tokens (80 µWh a
 * token); a B200 about twice as many for ~1,000 W (~55 µWh).
 */
export const DEFAULT_INFERENCE: z.infer<typeof inferenceSchema> = {
  ownModels: { academic: { inputCentsPerMTokens: 0, outputCentsPerMTokens: 0 }, company: { inputCentsPerMTokens: 10, outputCentsPerMTokens: 40 } },
  uwhPerToken: { h100: 80, b200: 55, 'h100-ch': 80 },
  // Prices about what European inference providers ask for models of this size (per million tokens in / out).
  sharedModels: [
    {
      id: 'centre/llama-3.1-8b-instruct',
      name: 'Llama 3.1 8B Instruct',
      contextLength: 131_072,
      resourceClassIds: ['h100', 'b200'],
      gpus: 1,
      image: 'vllm/vllm-openai:v0.6.3',
      command: 'vllm serve meta-llama/Llama-3.1-8B-Instruct --served-model-name centre/llama-3.1-8b-instruct --max-model-len 131072',
      prices: { academic: { inputCentsPerMTokens: 5, outputCentsPerMTokens: 15 }, company: { inputCentsPerMTokens: 15, outputCentsPerMTokens: 45 } },
    },
    {
      id: 'centre/mistral-small-24b-instruct',
      name: 'Mistral Small 24B Instruct',
      contextLength: 32_768,
      resourceClassIds: ['b200', 'h100-ch'],
      gpus: 1,
      image: 'vllm/vllm-openai:v0.6.3',
      command: 'vllm serve mistralai/Mistral-Small-24B-Instruct-2501 --served-model-name centre/mistral-small-24b-instruct --max-model-len 32768',
      prices: { academic: { inputCentsPerMTokens: 10, outputCentsPerMTokens: 30 }, company: { inputCentsPerMTokens: 30, outputCentsPerMTokens: 90 } },
    },
  ],
};

/**
 * The demo centre. Figures: H100 SXM ~700 W, B200 ~1,000 W at full load (vendor data sheets);
 * dense BF16 peak 989 and 2,250 TFLOP/s; PUE and grid intensity typical of warm-water cooled
 * sites in Germany (~380 g/kWh grid) and Finland (largely hydro and wind).
 *
 * Cost of ownership (plausible round figures, not quotes): an 8-GPU H100 SXM server (HGX/DGX H100
 * class) ~€300,000 and an 8-GPU B200 (DGX B200 class) ~€450,000 including its share of InfiniBand
 * and storage, a 4-GPU H100 node ~€160,000; written off over 5 years; support contracts ~8 % of the
 * price per year. Electricity: industrial prices incl. non-recoverable levies (Eurostat
 * nrg_pc_205, non-household band ID, 2024: Germany ~€190/MWh, Finland ~€90/MWh; Switzerland ElCom
 * 2024 tariffs ~€160/MWh). Reused heat: roughly what a district-heating network pays for
 * low-temperature waste heat (€30–40/MWh); Lugano reuses none. Overhead: a few staff (~€110,000 a
 * year each) and floor space per site. Lugano's facility power is capped at 24 kW (idle it draws
 * 11.3 kW; at full load about 16 of its 32 GPUs fit), so the cap binds when its partition is busy
 * and staff see the cap line on the cluster page.
 *
 * Storage (issue #27): a TB-month of parallel-filesystem project space costs companies €20 at Jena, €15 at
 * Kajaani (cheaper power and floor space) and €25 at Lugano — about what public clouds charge for standard
 * object storage (~€20–25 per TB-month) and well below their block storage, for disks bought with the
 * cluster. Each access mode's storage line follows core/applications.ts `defaultModeStorage`; a
 * pay-as-you-go company gets 1 TB at each site.
 */
export const DEFAULT_CATALOGUE: Catalogue = {
  calendar: { country: 'DE', state: 'TH', timeZone: 'Europe/Berlin', workingHours: { start: 9, end: 17 } },
  sites: [
    { id: 'de-jena', name: 'Jena, Germany (warm-water cooled)', nameDe: 'Jena, Deutschland (Warmwasserkühlung)', country: 'DE', inEu: true, pueMilli: 1080, gridGco2PerKwh: 380, heatReusePermille: 700, storageCentsPerTbMonth: 2000, energyPriceEurPerMwh: 190, heatValueEurPerMwh: 40, overheadPerYearEur: 600_000 },
    { id: 'fi-kajaani', name: 'Kajaani, Finland (free cooling)', nameDe: 'Kajaani, Finnland (freie Kühlung)', country: 'FI', inEu: true, pueMilli: 1040, gridGco2PerKwh: 60, heatReusePermille: 500, storageCentsPerTbMonth: 1500, energyPriceEurPerMwh: 90, heatValueEurPerMwh: 30, overheadPerYearEur: 400_000 },
    { id: 'ch-lugano', name: 'Lugano, Switzerland (lake water cooled)', nameDe: 'Lugano, Schweiz (Seewasserkühlung)', country: 'CH', inEu: false, pueMilli: 1200, gridGco2PerKwh: 40, heatReusePermille: 0, storageCentsPerTbMonth: 2500, energyPriceEurPerMwh: 160, heatValueEurPerMwh: 0, overheadPerYearEur: 300_000, powerCapKw: 24 },
  ],
  resourceClasses: [
    { id: 'h100', name: 'H100 partition (Jena)', nameDe: 'H100-Partition (Jena)', siteId: 'de-jena', gpuModel: 'NVIDIA H100 SXM 80 GB', gpusPerNode: 8, nodes: 16, maxWalltimeSeconds: 48 * 3600, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 1500, peakTflops: 989, tariffs: { academic: 180, company: 290 }, capitalCostPerNodeEur: 300_000, depreciationYears: 5, maintenancePerNodePerYearEur: 24_000 },
    { id: 'b200', name: 'B200 partition (Kajaani)', nameDe: 'B200-Partition (Kajaani)', siteId: 'fi-kajaani', gpuModel: 'NVIDIA B200 180 GB', gpusPerNode: 8, nodes: 8, maxWalltimeSeconds: 48 * 3600, gpuIdlePowerW: 120, gpuMaxPowerW: 1000, nodeBasePowerW: 2000, peakTflops: 2250, tariffs: { academic: 300, company: 490 }, capitalCostPerNodeEur: 450_000, depreciationYears: 5, maintenancePerNodePerYearEur: 36_000 },
    { id: 'h100-ch', name: 'H100 partition (Lugano)', nameDe: 'H100-Partition (Lugano)', siteId: 'ch-lugano', gpuModel: 'NVIDIA H100 SXM 80 GB', gpusPerNode: 4, nodes: 8, maxWalltimeSeconds: 24 * 3600, gpuIdlePowerW: 70, gpuMaxPowerW: 700, nodeBasePowerW: 900, peakTflops: 989, tariffs: { academic: 170, company: 260 }, capitalCostPerNodeEur: 160_000, depreciationYears: 5, maintenancePerNodePerYearEur: 13_000 },
  ],
  accessModes: [
    // The EuroHPC AI Factories' access modes (issue #32): Playground (entry level, first come first served,
    // access within 2 working days), Fast Lane (up to 50,000 GPU-hours, first come first served, 4 working
    // days), Large Scale (more than 50,000 GPU-hours, peer review, decisions 10 working days after a
    // cut-off); and the centre's own Development access for porting and tests.
    { id: 'playground', name: 'Playground', maxGpuHours: 100, minGpuHours: null, durationDays: 30, reviewPath: 'instant', intake: 'first_come', targetDecisionWorkingDays: 2, defaultStorageGb: 50, maxStorageGb: 100 },
    { id: 'fast-lane', name: 'Fast Lane', maxGpuHours: 50_000, minGpuHours: null, durationDays: 182, reviewPath: 'single', intake: 'first_come', targetDecisionWorkingDays: 4, defaultStorageGb: 5000, maxStorageGb: 50_000 },
    { id: 'development', name: 'Development', maxGpuHours: 2000, minGpuHours: null, durationDays: 91, reviewPath: 'single', intake: 'first_come', targetDecisionWorkingDays: 5, defaultStorageGb: 1000, maxStorageGb: 5000 },
    { id: 'large-scale', name: 'Large Scale', maxGpuHours: null, minGpuHours: 50_001, durationDays: 365, reviewPath: 'full', intake: 'rounds', targetDecisionWorkingDays: 10, defaultStorageGb: 20_000, maxStorageGb: 200_000 },
  ],
  payAsYouGo: { startingCreditEuros: 1000, durationDays: 365, storageGb: 1000 },
  issuer: DEMO_ISSUER,
  interactiveApps: [{ id: 'jupyter', name: 'Jupyter Notebook', nameDe: 'Jupyter Notebook' }],
  inference: DEFAULT_INFERENCE,
};

/** loadCatalogue reads the catalogue from a JSON file, or returns the built-in demo centre. */
export function loadCatalogue(file: string | undefined): Catalogue {
  if (!file) return DEFAULT_CATALOGUE;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`PORTAL_CATALOGUE: cannot read ${file} as JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  const parsed = catalogueSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`PORTAL_CATALOGUE: ${file}: ${issue.path.join('.')}: ${issue.message}`);
  }
  const catalogue = parsed.data;
  const siteIds = new Set(catalogue.sites.map((s) => s.id));
  for (const site of catalogue.sites) {
    // The profile shapes the day; the annual figure is what CO2e is settled with: they must agree.
    if (site.gridProfile && Math.abs(profileSum(site.gridProfile) / 288 - site.gridGco2PerKwh) > site.gridGco2PerKwh * 0.05 + 1) {
      throw new Error(`PORTAL_CATALOGUE: ${file}: site ${site.id}: the mean of gridProfile (${Math.round(profileSum(site.gridProfile) / 288)}) is not gridGco2PerKwh (${site.gridGco2PerKwh}) ±5 %`);
    }
  }
  for (const rc of catalogue.resourceClasses) {
    if (!siteIds.has(rc.siteId)) throw new Error(`PORTAL_CATALOGUE: resource class ${rc.id} names unknown site ${rc.siteId}`);
  }
  const classIds = new Set(catalogue.resourceClasses.map((rc) => rc.id));
  for (const id of Object.keys(catalogue.inference.uwhPerToken)) {
    if (!classIds.has(id)) throw new Error(`PORTAL_CATALOGUE: ${file}: inference.uwhPerToken names unknown resource class ${id}`);
  }
  const sharedIds = new Set<string>();
  for (const model of catalogue.inference.sharedModels) {
    if (sharedIds.has(model.id)) throw new Error(`PORTAL_CATALOGUE: ${file}: inference.sharedModels names ${model.id} twice`);
    sharedIds.add(model.id);
    for (const rc of model.resourceClassIds) if (!classIds.has(rc)) throw new Error(`PORTAL_CATALOGUE: ${file}: inference.sharedModels: ${model.id} names unknown resource class ${rc}`);
  }
  for (const mode of catalogue.accessModes) {
    const problem = accessModeConfigProblem(mode);
    if (problem) throw new Error(`PORTAL_CATALOGUE: ${file}: ${problem}`);
  }
  return catalogue;
}

/** localName picks a catalogue entry's name in the reader's language (the English name when a German one is missing, as on rows synced before names had two). */
export function localName(locale: 'en' | 'de', entry: { name: string; nameDe?: string | null }): string {
  return locale === 'de' && entry.nameDe ? entry.nameDe : entry.name;
}

/** sitePowerCapW is a site's facility power cap in whole W (the catalogue's kW), or null when it has none. */
export function sitePowerCapW(catalogue: Catalogue, siteId: string): number | null {
  const kw = catalogue.sites.find((s) => s.id === siteId)?.powerCapKw;
  return kw === undefined ? null : Math.round(kw * 1000);
}

let loaded: { file: string | undefined; catalogue: Catalogue } | undefined;

/** configuredCatalogue is the process's catalogue (PORTAL_CATALOGUE, else the demo centre), read once. */
export function configuredCatalogue(): Catalogue {
  const file = env().PORTAL_CATALOGUE;
  if (!loaded || loaded.file !== file) loaded = { file, catalogue: loadCatalogue(file) };
  return loaded.catalogue;
}
