// `npm run bench:data`: fill a REAL Postgres database with a year of a realistic centre for the report
// benchmarks (`bench/reports.ts`): ~300 tenants (70 % academic, 30 % company), their users, projects
// and allocations, and 1,000,000 settled jobs on the demo catalogue's 224 GPUs (with --jobs N, the
// partitions have N ÷ 1 M times the nodes) with heavy-tailed sizes and runtimes, then the usage
// rollups (`rebuildRollups`), then VACUUM ANALYZE.
//
//   npx tsx scripts/bench-data.ts --fresh [--database-url URL] [--jobs N] [--tenants N] [--seed N]
//                                 [--end-day YYYY-MM-DD] [--batch N] [--dry-run]
//
// Database: --database-url, else BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/portal_bench.
// A missing database is created; an existing one holding data is dropped and recreated only with
// --fresh (the confirmation). --dry-run generates everything without a database and prints the figures.
//
// What is NOT realistic, on purpose: the history bypasses the ledger (no ledger entries, no job
// events, no applications); each allocation's cached balance is set to match the sums charged to it
// (granted ≥ charged, the unused rest of an ended allocation written off as `expired`, nothing reserved).
// Every figure on a job is computed with the portal's own rules: `chargeFor` and `jobReservation`
// (server/core/jobs/estimates.ts), `jobEnergyEstimateWh` for IT energy and `jobFootprint`
// (server/core/usage/footprint.ts) with the site's figures from the catalogue.
//
// Speed: jobs are inserted in multi-row INSERT … SELECT FROM unnest(…) batches (10,000 rows, one array
// parameter per column), generated in day order (as a live centre would insert them) while the previous
// batch is written; the secondary indexes of `jobs` are dropped for the load and rebuilt from their own
// definitions afterwards. The load time is stored as the database's comment for bench/reports.ts.
import postgres from 'postgres';
import { migrateDb, openDb, type Db } from '~/db/client';
import { allocations, memberships, organisations, projectMembers, projects, staffRoles, users, type OrgKind, type Residency } from '~/db/schema';
import { hashPassword } from '~/server/auth/password';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import { chargeFor, jobEnergyEstimateWh, jobReservation, type JobKind } from '~/server/core/jobs/estimates';
import { createRng, nextFloat, nextUint32, type RngState } from '~/server/core/sim/random';
import { jobFootprint } from '~/server/core/usage/footprint';
import { residencyAllows, syncCatalogue } from '~/server/services/catalogue';
import { rebuildRollups } from '~/server/services/usage/usage';
import { flag, intFlag, UsageError } from '~/bench/args';

export const DEFAULT_BENCH_URL = 'postgres://postgres@127.0.0.1:5432/portal_bench';
export const BENCH_PASSWORD = 'bench-password';

const DAY_MS = 86_400_000;
const DAYS = 365;

// ---- arguments ---------------------------------------------------------------------------------

interface Options {
  url: string;
  fresh: boolean;
  dryRun: boolean;
  jobs: number;
  tenants: number;
  seed: number;
  batch: number;
  /** Last day of the history (UTC, inclusive); the year is the 365 days ending on it. */
  endDay: string;
}

function options(): Options {
  const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
  const endDay = flag('--end-day') ?? yesterday;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(endDay) || Number.isNaN(Date.parse(`${endDay}T00:00:00Z`))) throw new UsageError(`--end-day must be YYYY-MM-DD, got ${endDay}`);
  return {
    url: flag('--database-url') ?? process.env.BENCH_DATABASE_URL ?? DEFAULT_BENCH_URL,
    fresh: process.argv.includes('--fresh'),
    dryRun: process.argv.includes('--dry-run'),
    jobs: intFlag('--jobs', 1_000_000),
    tenants: intFlag('--tenants', 300),
    seed: intFlag('--seed', 20_261_130),
    batch: intFlag('--batch', 10_000),
    endDay,
  };
}

// ---- random helpers ----------------------------------------------------------------------------

class Random {
  private readonly rng: RngState;
  constructor(seed: number) {
    this.rng = createRng(seed);
  }
  next(): number {
    return nextFloat(this.rng);
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }
  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }
  /** uuid draws a version-4 UUID from the seeded generator (reproducible data). */
  uuid(): string {
    const hex = [nextUint32(this.rng), nextUint32(this.rng), nextUint32(this.rng), nextUint32(this.rng)].map((n) => n.toString(16).padStart(8, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[nextUint32(this.rng) & 3]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

/** Weighted picks by binary search over cumulative weights. */
class Weighted<T> {
  private readonly cumulative: number[] = [];
  constructor(
    readonly items: readonly T[],
    weights: readonly number[],
  ) {
    let sum = 0;
    for (const w of weights) this.cumulative.push((sum += w));
    if (!(sum > 0)) throw new Error('weights must not all be zero');
  }
  /** pick chooses among the first `prefix` items (all by default). */
  pick(random: Random, prefix = this.items.length): T {
    const target = random.next() * this.cumulative[prefix - 1]!;
    let lo = 0;
    let hi = prefix - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! > target) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo]!;
  }
}

function weighted<T>(pairs: readonly (readonly [T, number])[]): Weighted<T> {
  return new Weighted(
    pairs.map((p) => p[0]),
    pairs.map((p) => p[1]),
  );
}

// ---- the centre --------------------------------------------------------------------------------

const EU = new Set(['AT', 'BE', 'DE', 'DK', 'ES', 'FI', 'FR', 'IE', 'IT', 'NL', 'PL', 'PT', 'SE', 'CZ']);
const ACADEMIC_COUNTRIES = weighted([['DE', 40], ['FR', 7], ['NL', 6], ['IT', 6], ['ES', 5], ['AT', 5], ['FI', 5], ['SE', 4], ['PL', 4], ['BE', 3], ['DK', 3], ['CZ', 2], ['CH', 5], ['GB', 4], ['NO', 2]] as const);
const COMPANY_COUNTRIES = weighted([['DE', 35], ['FR', 8], ['NL', 7], ['IE', 3], ['FI', 4], ['SE', 4], ['IT', 4], ['ES', 3], ['CH', 8], ['GB', 8], ['US', 12], ['CA', 2], ['IL', 2], ['JP', 3]] as const);
const CITIES: Record<string, string[]> = {
  DE: ['Jena', 'Heidelberg', 'Aachen', 'Dresden', 'Munich', 'Berlin', 'Hamburg', 'Stuttgart', 'Karlsruhe', 'Bonn', 'Leipzig', 'Freiburg', 'Tübingen', 'Göttingen', 'Darmstadt'],
  FR: ['Paris', 'Lyon', 'Grenoble', 'Toulouse', 'Saclay'],
  NL: ['Delft', 'Amsterdam', 'Eindhoven', 'Leiden'],
  IT: ['Bologna', 'Milan', 'Pisa', 'Trento'],
  ES: ['Barcelona', 'Madrid', 'Valencia'],
  AT: ['Vienna', 'Graz', 'Innsbruck'],
  FI: ['Helsinki', 'Espoo', 'Oulu'],
  SE: ['Stockholm', 'Uppsala', 'Lund'],
  PL: ['Warsaw', 'Kraków', 'Poznań'],
  BE: ['Leuven', 'Ghent'],
  DK: ['Copenhagen', 'Aarhus'],
  CZ: ['Prague', 'Brno'],
  IE: ['Dublin', 'Cork'],
  CH: ['Zurich', 'Lausanne', 'Basel', 'Lugano'],
  GB: ['Cambridge', 'Oxford', 'Edinburgh', 'London'],
  NO: ['Oslo', 'Trondheim'],
  US: ['Boston', 'Austin', 'Seattle', 'San Jose'],
  CA: ['Toronto', 'Montreal'],
  IL: ['Tel Aviv', 'Haifa'],
  JP: ['Tokyo', 'Osaka'],
};
const ACADEMIC_FORMS = ['University of', 'Technical University of', 'Institute for Advanced Study', 'Research Centre', 'Max Planck Institute', 'Leibniz Institute', 'Medical School', 'Observatory'];
const COMPANY_WORDS = ['Nimbus', 'Vector', 'Helix', 'Quanta', 'Aurora', 'Lattice', 'Tensor', 'Sigma', 'Nordic', 'Atlas', 'Cobalt', 'Photon', 'Meridian', 'Kepler', 'Orbit', 'Cascade'];
const COMPANY_TRADES = ['AI', 'Robotics', 'Analytics', 'Bio', 'Labs', 'Vision', 'Systems', 'Language', 'Health', 'Energy'];
const COMPANY_FORM: Record<string, string> = { DE: 'GmbH', FR: 'SAS', NL: 'B.V.', IE: 'Ltd', FI: 'Oy', SE: 'AB', IT: 'S.r.l.', ES: 'S.L.', CH: 'AG', GB: 'Ltd', US: 'Inc.', CA: 'Inc.', IL: 'Ltd', JP: 'K.K.' };
const FIRST = ['Anna', 'Ben', 'Clara', 'David', 'Elena', 'Felix', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Katrin', 'Lukas', 'Maria', 'Nils', 'Olga', 'Paul', 'Rosa', 'Simon', 'Tara', 'Umar', 'Vera', 'Wei', 'Yara', 'Zoe', 'Amir', 'Chiara', 'Mateo', 'Sofia', 'Priya', 'Kenji'];
const LAST = ['Müller', 'Schmidt', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Rossi', 'Dubois', 'Jansen', 'Nowak', 'García', 'Virtanen', 'Lindqvist', 'Novák', 'Murphy', 'Smith', 'Cohen', 'Tanaka', 'Silva', 'Hofmann', 'Keller', 'Brandt', 'Lehmann'];
const TOPICS = [
  ['Protein structure prediction', 'Life sciences'],
  ['Regional climate downscaling', 'Climate science'],
  ['Language model pre-training', 'Computer science'],
  ['Speech recognition for low-resource languages', 'Linguistics'],
  ['Generative materials discovery', 'Materials science'],
  ['Medical image segmentation', 'Medicine'],
  ['Code generation models', 'Computer science'],
  ['Robot policy learning', 'Engineering'],
  ['Jet tagging with graph networks', 'Physics'],
  ['Molecular docking at scale', 'Chemistry'],
  ['Neural machine translation', 'Linguistics'],
  ['Data-driven weather forecasting', 'Climate science'],
  ['Retrieval-augmented question answering', 'Computer science'],
  ['Vision transformers for remote sensing', 'Engineering'],
  ['Neural operators for fluid dynamics', 'Mathematics'],
] as const;
/** The batch kinds the history is made of (interactive sessions are not in it). */
type BatchKind = Exclude<JobKind, 'interactive'>;
const KINDS: readonly BatchKind[] = ['training', 'fine_tuning', 'inference', 'batch'];
const KIND_MIX = new Weighted(KINDS, [35, 20, 15, 30]);
const GPU_SIZES = [1, 2, 4, 8, 16, 32, 64, 128] as const;
/** Most jobs take 1–8 GPUs; training has the long tail to whole partitions. */
const GPUS_BY_KIND: Record<BatchKind, Weighted<number>> = {
  training: new Weighted(GPU_SIZES, [22, 12, 18, 27, 10, 6, 3.5, 1.5]),
  fine_tuning: new Weighted(GPU_SIZES, [25, 20, 25, 24, 4, 1.5, 0.5, 0]),
  inference: new Weighted(GPU_SIZES, [48, 24, 16, 12, 0, 0, 0, 0]),
  batch: new Weighted(GPU_SIZES, [55, 18, 15, 10, 2, 0, 0, 0]),
};
/** Run time: log-normal, median and spread per kind (minutes to the 48 h walltime limit). */
const RUNTIME_BY_KIND: Record<BatchKind, { medianSeconds: number; sigma: number; util: number }> = {
  training: { medianSeconds: 7 * 60, sigma: 1.7, util: 92 },
  fine_tuning: { medianSeconds: 12 * 60, sigma: 1.2, util: 88 },
  inference: { medianSeconds: 6 * 60, sigma: 1.4, util: 45 },
  batch: { medianSeconds: 3 * 60, sigma: 1.5, util: 80 },
};
const WALLTIME_STEPS = [900, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 12 * 3600, 24 * 3600, 48 * 3600];
const IMAGES: Record<BatchKind, string[]> = {
  training: ['nvcr.io/nvidia/pytorch:24.05-py3', 'nvcr.io/nvidia/nemo:24.07', 'ghcr.io/centre/megatron:0.8'],
  fine_tuning: ['nvcr.io/nvidia/pytorch:24.05-py3', 'ghcr.io/centre/axolotl:0.5', 'huggingface/transformers-pytorch-gpu:4.44'],
  inference: ['vllm/vllm-openai:v0.6.1', 'nvcr.io/nvidia/tritonserver:24.08-py3'],
  batch: ['nvcr.io/nvidia/pytorch:24.05-py3', 'ghcr.io/centre/jax:0.4.31', 'continuumio/miniconda3:24.7'],
};
const COMMANDS: Record<BatchKind, string[]> = {
  training: ['torchrun train.py --config config.yaml', 'python -m megatron.train --config pretrain.yaml'],
  fine_tuning: ['python finetune.py --config lora.yaml', 'accelerate launch sft.py --epochs 3'],
  inference: ['vllm serve /models/llama-3-8b --port 8000', 'tritonserver --model-repository=/models'],
  batch: ['python embed.py --shard ${SHARD}', 'python evaluate.py --suite full', 'bash run_sweep.sh'],
};
/** Primary-class preference among the classes a tenant's residency allows (roughly by capacity). */
const CLASS_PREFERENCE: Record<string, number> = { h100: 55, b200: 22, 'h100-ch': 23 };

interface ClassInfo {
  id: string;
  siteId: string;
  gpusPerNode: number;
  nodes: number;
  capacityGpus: number;
  maxWalltimeSeconds: number;
  power: { gpusPerNode: number; gpuIdlePowerW: number; gpuMaxPowerW: number; nodeBasePowerW: number };
  site: { pueMilli: number; heatReusePermille: number; gridGco2PerKwh: number; country: string; inEu: boolean };
  tariff: Record<OrgKind, number>;
}

/**
 * The demo catalogue with every partition's nodes times `scale`: a centre with ten times the jobs has ten
 * times the GPUs (1 M jobs a year keep the demo's 224 GPUs about 85 % busy; 10 M, 2,240 GPUs).
 */
function scaledCatalogue(scale: number): typeof DEFAULT_CATALOGUE {
  return { ...DEFAULT_CATALOGUE, resourceClasses: DEFAULT_CATALOGUE.resourceClasses.map((rc) => ({ ...rc, nodes: rc.nodes * scale })) };
}

function catalogueClasses(catalogue: typeof DEFAULT_CATALOGUE): Map<string, ClassInfo> {
  const sites = new Map(catalogue.sites.map((s) => [s.id, s]));
  return new Map(
    catalogue.resourceClasses.map((rc) => {
      const site = sites.get(rc.siteId)!;
      return [
        rc.id,
        {
          id: rc.id,
          siteId: rc.siteId,
          gpusPerNode: rc.gpusPerNode,
          nodes: rc.nodes,
          capacityGpus: rc.nodes * rc.gpusPerNode,
          maxWalltimeSeconds: rc.maxWalltimeSeconds,
          power: { gpusPerNode: rc.gpusPerNode, gpuIdlePowerW: rc.gpuIdlePowerW, gpuMaxPowerW: rc.gpuMaxPowerW, nodeBasePowerW: rc.nodeBasePowerW },
          site: { pueMilli: site.pueMilli, heatReusePermille: site.heatReusePermille, gridGco2PerKwh: site.gridGco2PerKwh, country: site.country, inEu: site.inEu },
          tariff: rc.tariffs,
        },
      ];
    }),
  );
}

interface Allocation {
  id: string;
  orgId: string;
  projectId: string;
  /** Null for a company credit line. */
  resourceClassId: string | null;
  unit: 'gpu_seconds' | 'cents';
  /** Day indices relative to the first day of the history; end exclusive. */
  startDay: number;
  endDay: number;
  /** Headroom of the grant over what was charged (≥ 1). */
  headroom: number;
  charged: number;
}

interface Project {
  id: string;
  title: string;
  field: string;
  piIndex: number;
  /** Classes used; academic projects hold one allocation per class, companies one credit line. */
  classes: Weighted<string>;
  allocations: Map<string, Allocation[]>;
}

interface User {
  id: string;
  name: string;
  email: string;
  projects: Project[];
  preferredProject: Project;
  preferredKind: BatchKind;
}

interface Tenant {
  id: string;
  index: number;
  name: string;
  kind: OrgKind;
  country: string;
  residency: Residency;
  status: 'active' | 'suspended';
  activeFromDay: number;
  weight: number;
  users: User[];
  userPick: Weighted<User>;
  projects: Project[];
  monthlyCostCents: Map<string, number>;
}

function uniqueName(base: string, used: Set<string>): string {
  let name = base;
  for (let n = 2; used.has(name.toLowerCase()); n++) name = `${base} ${n}`;
  used.add(name.toLowerCase());
  return name;
}

function residencyFor(random: Random, kind: OrgKind, country: string): Residency {
  const inEu = EU.has(country);
  const r = random.next();
  if (country === 'DE') return r < (kind === 'company' ? 0.3 : 0.15) ? 'DE' : r < (kind === 'company' ? 0.6 : 0.45) ? 'EU' : 'any';
  if (inEu) return r < (kind === 'company' ? 0.4 : 0.3) ? 'EU' : 'any';
  return r < 0.1 ? 'EU' : 'any';
}

/** buildCentre draws the tenants with their users, projects and allocations. */
function buildCentre(random: Random, tenantCount: number, classes: Map<string, ClassInfo>): Tenant[] {
  const usedNames = new Set<string>();
  const tenants: Tenant[] = [];
  for (let i = 0; i < tenantCount; i++) {
    const kind: OrgKind = random.next() < 0.7 ? 'academic' : 'company';
    const country = (kind === 'academic' ? ACADEMIC_COUNTRIES : COMPANY_COUNTRIES).pick(random);
    const city = random.pick(CITIES[country] ?? ['Centre']);
    const base = kind === 'academic' ? `${random.pick(ACADEMIC_FORMS)} ${city}` : `${random.pick(COMPANY_WORDS)} ${random.pick(COMPANY_TRADES)} ${COMPANY_FORM[country] ?? 'Ltd'}`;
    const residency = residencyFor(random, kind, country);
    const allowed = [...classes.values()].filter((c) => residencyAllows(residency, c.site)).map((c) => c.id);
    const id = random.uuid();
    // Most tenants were there all year; a third joined during it.
    const activeFromDay = random.next() < 0.7 ? 0 : random.int(1, 300);
    const tenantProjects: Project[] = [];
    const projectCount = new Weighted([1, 2, 3, 4, 5], [30, 30, 20, 12, 8]).pick(random);
    const userCount = random.int(2, 10);
    for (let p = 0; p < projectCount; p++) {
      const [topic, field] = random.pick(TOPICS);
      const primary = new Weighted(allowed, allowed.map((c) => CLASS_PREFERENCE[c] ?? 10)).pick(random);
      const others = allowed.filter((c) => c !== primary);
      const used = kind === 'company' ? allowed : others.length > 0 && random.next() < 0.4 ? [primary, random.pick(others)] : [primary];
      const project: Project = {
        id: random.uuid(),
        title: projectCount > 1 && random.next() < 0.3 ? `${topic} (phase ${p + 1})` : topic,
        field,
        piIndex: p % userCount,
        classes: new Weighted(used, used.map((c) => (c === primary ? 75 : 25 / Math.max(1, used.length - 1)))),
        allocations: new Map(),
      };
      // Allocations: one per class (academic) or one credit line (company); a third were renewed mid-year.
      for (const key of kind === 'company' ? ['credit'] : used) {
        const start = activeFromDay - random.int(0, 60);
        const end = DAYS + random.int(30, 200);
        const unit = kind === 'company' ? 'cents' : 'gpu_seconds';
        const resourceClassId = kind === 'company' ? null : key;
        const spans: [number, number][] = [];
        const split = activeFromDay + random.int(60, 200);
        if (random.next() < 0.35 && split < 320) spans.push([start, split], [split, end]);
        else spans.push([start, end]);
        project.allocations.set(
          key,
          spans.map(([s, e]) => ({ id: random.uuid(), orgId: id, projectId: project.id, resourceClassId, unit, startDay: s, endDay: e, headroom: random.next() < 0.15 ? random.between(1, 1.08) : random.between(1.1, 2), charged: 0 })),
        );
      }
      tenantProjects.push(project);
    }
    const tenantUsers: User[] = [];
    const weights: number[] = [];
    for (let u = 0; u < userCount; u++) {
      const first = random.pick(FIRST);
      const last = random.pick(LAST);
      const mine = tenantProjects.filter((p) => p.piIndex === u);
      const home = tenantProjects[u % projectCount]!;
      if (!mine.includes(home)) mine.push(home);
      if (projectCount > 1 && random.next() < 0.3) {
        const extra = random.pick(tenantProjects);
        if (!mine.includes(extra)) mine.push(extra);
      }
      tenantUsers.push({
        id: random.uuid(),
        name: `${first} ${last}`,
        email: `${first}.${last}.${u + 1}@t${i + 1}.bench.example`.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, ''),
        projects: mine,
        preferredProject: random.pick(mine),
        preferredKind: KIND_MIX.pick(random),
      });
      weights.push(random.between(0.5, 1.5) / (u + 1) ** 0.8);
    }
    tenants.push({
      id,
      index: i,
      name: uniqueName(base, usedNames),
      kind,
      country,
      residency,
      status: random.next() < 0.02 ? 'suspended' : 'active',
      activeFromDay,
      // Heavy-tailed activity: a few tenants submit most of the work.
      weight: random.logNormal(1, 1.2) * (kind === 'company' ? 1.3 : 1),
      users: tenantUsers,
      userPick: new Weighted(tenantUsers, weights),
      projects: tenantProjects,
      monthlyCostCents: new Map(),
    });
  }
  return tenants;
}

// ---- jobs ----------------------------------------------------------------------------------------

/** Columns of the `jobs` insert, with their Postgres array types. */
const JOB_COLUMNS = [
  ['id', 'uuid'],
  ['org_id', 'uuid'],
  ['project_id', 'uuid'],
  ['allocation_id', 'uuid'],
  ['user_id', 'uuid'],
  ['idempotency_key', 'text'],
  ['name', 'text'],
  ['kind', 'job_kind'],
  ['resource_class_id', 'text'],
  ['site_id', 'text'],
  ['gpus', 'int4'],
  ['nodes', 'int4'],
  ['walltime_seconds', 'int4'],
  ['image', 'text'],
  ['command', 'text'],
  ['env', 'jsonb'],
  ['simulation', 'jsonb'],
  ['state', 'job_state'],
  ['scheduler_job_id', 'text'],
  ['reserved_amount', 'int8'],
  ['reserved_unit', 'budget_unit'],
  ['cents_per_gpu_hour', 'int4'],
  ['submitted_at', 'timestamptz'],
  ['started_at', 'timestamptz'],
  ['ended_at', 'timestamptz'],
  ['exit_code', 'int4'],
  ['node_list', 'jsonb'],
  ['gpu_seconds', 'int8'],
  ['energy_wh', 'int8'],
  ['energy_measured', 'bool'],
  ['cost_cents', 'int8'],
  ['charged_amount', 'int8'],
  ['facility_energy_wh', 'int8'],
  ['heat_reused_wh', 'int8'],
  ['co2e_grams', 'int8'],
  ['wait_seconds', 'int4'],
  ['settled_at', 'timestamptz'],
  ['cancel_requested_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
  ['served_model', 'text'],
] as const;

type Cell = string | number | boolean | null;
type JobRow = Cell[];

const INSERT_JOBS_SQL = `insert into jobs (${JOB_COLUMNS.map(([c]) => c).join(', ')}) select * from unnest(${JOB_COLUMNS.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')})`;

/** arrayLiteral writes one column of a batch as a Postgres array literal (every element quoted). */
function arrayLiteral(rows: JobRow[], column: number): string {
  const parts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i]![column]!;
    parts[i] = v === null ? 'NULL' : typeof v === 'string' ? `"${v.replace(/[\\"]/g, '\\$&')}"` : String(v);
  }
  return `{${parts.join(',')}}`;
}

interface Stats {
  jobs: number;
  gpuSecondsByClass: Map<string, number>;
  big: number;
  states: Map<string, number>;
  runtimes: number[];
  jobsByTenant: Map<string, number>;
}

/** dayWeight shapes submissions over the year: quieter weekends, summer and the turn of the year, growth. */
function dayWeight(dayMs: number, index: number): number {
  const d = new Date(dayMs);
  const weekday = d.getUTCDay();
  const month = d.getUTCMonth();
  const date = d.getUTCDate();
  let w = weekday === 0 ? 0.35 : weekday === 6 ? 0.45 : 1;
  if (month === 7) w *= 0.8;
  if ((month === 11 && date >= 23) || (month === 0 && date <= 2)) w *= 0.4;
  return w * (0.85 + (0.3 * index) / DAYS);
}

class JobFactory {
  private seq = 0;
  constructor(
    private readonly random: Random,
    private readonly classes: Map<string, ClassInfo>,
    private readonly historyEndMs: number,
    readonly stats: Stats,
  ) {}

  /** make draws one settled job submitted on day `day` (index) by `tenant`, or null if it would end after the history. */
  make(tenant: Tenant, day: number, dayStartMs: number, load: number): { submittedMs: number; row: JobRow } | null {
    const r = this.random;
    const user = tenant.userPick.pick(r);
    const project = r.next() < 0.8 ? user.preferredProject : r.pick(user.projects);
    const classId = project.classes.pick(r);
    const rc = this.classes.get(classId)!;
    const kind = r.next() < 0.7 ? user.preferredKind : KIND_MIX.pick(r);
    let gpus = GPUS_BY_KIND[kind].pick(r);
    while (gpus > rc.capacityGpus) gpus /= 2;
    const nodes = Math.ceil(gpus / rc.gpusPerNode);
    const shape = RUNTIME_BY_KIND[kind];
    // Jobs wider than a node are mostly short scaling and test runs; the long ones are rare.
    const sizeFactor = gpus <= 8 ? 1 : (8 / gpus) ** 0.6;
    let runtime = Math.max(20, Math.round(r.logNormal(shape.medianSeconds * sizeFactor, shape.sigma)));
    const maxWall = rc.maxWalltimeSeconds;
    const wanted = runtime * r.between(1.1, 2.5);
    const walltime = Math.min(maxWall, WALLTIME_STEPS.find((s) => s >= wanted) ?? maxWall);
    let state: 'COMPLETED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED' | 'NODE_FAIL' = 'COMPLETED';
    let started = true;
    const x = r.next();
    if (runtime >= walltime) {
      runtime = walltime;
      state = 'TIMEOUT';
    } else if (kind === 'inference') {
      // A service runs until it is stopped or its walltime ends.
      if (x < 0.4) {
        runtime = walltime;
        state = 'TIMEOUT';
      } else state = 'CANCELLED';
    } else if (x < 0.025) {
      state = 'CANCELLED';
      started = false;
    } else if (x < 0.05) {
      state = 'CANCELLED';
      runtime = Math.max(10, Math.round(runtime * r.between(0.05, 1)));
    } else if (x < 0.11) {
      state = 'FAILED';
      runtime = Math.max(5, Math.round(runtime * r.between(0.01, 1)));
    } else if (x < 0.14) {
      state = 'TIMEOUT';
      runtime = walltime;
    } else if (x < 0.145) {
      state = 'NODE_FAIL';
      runtime = Math.max(30, Math.round(runtime * r.between(0.1, 1)));
    }
    // Time of day: mostly working hours.
    const secondOfDay = r.next() < 0.7 ? Math.floor(r.between(8, 20) * 3600) : Math.floor(r.next() * 86_400);
    const submittedMs = dayStartMs + secondOfDay * 1000;
    // Queue wait: grows with size and with the season's load; one in ten waits behind a busy queue.
    const meanWait = 60 * gpus ** 0.85 * load * (rc.capacityGpus <= 32 ? 1.5 : 1) * (r.next() < 0.1 ? 10 : 1);
    const wait = Math.round(r.exponential(meanWait));
    const startedMs = submittedMs + wait * 1000;
    const endedMs = started ? startedMs + runtime * 1000 : submittedMs + Math.max(30, Math.round(wait * r.next())) * 1000;
    if (endedMs >= this.historyEndMs) return null;

    const alloc = project.allocations.get(tenant.kind === 'company' ? 'credit' : classId)!.find((a) => day >= a.startDay && day < a.endDay)!;
    const cents = rc.tariff[tenant.kind];
    const gpuSeconds = started ? gpus * runtime : 0;
    const util = Math.min(100, Math.max(5, Math.round(shape.util + r.between(-8, 8))));
    const energyWh = started ? jobEnergyEstimateWh(rc.power, gpus, runtime, util) : 0;
    const footprint = jobFootprint(energyWh, rc.site);
    const costCents = chargeFor({ unit: 'cents', gpuSeconds, centsPerGpuHour: cents });
    const charged = chargeFor({ unit: alloc.unit, gpuSeconds, centsPerGpuHour: cents });
    const reserved = jobReservation({ unit: alloc.unit, gpus, walltimeSeconds: walltime, centsPerGpuHour: cents });
    alloc.charged += charged;
    const month = new Date(endedMs).toISOString().slice(0, 7);
    tenant.monthlyCostCents.set(month, (tenant.monthlyCostCents.get(month) ?? 0) + costCents);

    const id = r.uuid();
    const seq = ++this.seq;
    const exitCode = state === 'COMPLETED' ? 0 : state === 'FAILED' ? r.pick([1, 1, 1, 2, 137, 139]) : null;
    let nodeList: string | null = null;
    if (started) {
      const width = Math.max(3, String(rc.nodes).length);
      const first = r.int(0, rc.nodes - nodes);
      nodeList = JSON.stringify(Array.from({ length: nodes }, (_, k) => `${rc.id}-${String(first + k + 1).padStart(width, '0')}`));
    }
    const settledMs = endedMs + r.int(1, 30) * 1000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const row: JobRow = [
      id,
      tenant.id,
      project.id,
      alloc.id,
      user.id,
      `bench-${seq}`,
      `${kind.replace('_', '-')}-${id.slice(0, 6)}`,
      kind,
      rc.id,
      rc.siteId,
      gpus,
      nodes,
      walltime,
      r.pick(IMAGES[kind]),
      r.pick(COMMANDS[kind]),
      '{}',
      JSON.stringify({ runtimeSeconds: runtime, gpuUtilPercent: util, exitCode: exitCode ?? 0 }),
      state,
      String(1_000_000 + seq),
      reserved,
      alloc.unit,
      cents,
      iso(submittedMs),
      started ? iso(startedMs) : null,
      iso(endedMs),
      exitCode,
      nodeList,
      gpuSeconds,
      energyWh,
      false,
      costCents,
      charged,
      footprint.facilityEnergyWh,
      footprint.heatReusedWh,
      footprint.co2eGrams,
      started ? wait : null,
      iso(settledMs),
      state === 'CANCELLED' ? iso(endedMs - 2000) : null,
      iso(settledMs),
      // An inference service serves a model under a name (the gateway's model id, drizzle 0055).
      kind === 'inference' ? `bench/model-${project.id.slice(0, 8)}` : null,
    ];
    const s = this.stats;
    s.jobs++;
    s.gpuSecondsByClass.set(rc.id, (s.gpuSecondsByClass.get(rc.id) ?? 0) + gpuSeconds);
    if (gpus >= 64) s.big++;
    s.states.set(state, (s.states.get(state) ?? 0) + 1);
    if (started && (seq & 63) === 0) s.runtimes.push(runtime);
    s.jobsByTenant.set(tenant.id, (s.jobsByTenant.get(tenant.id) ?? 0) + 1);
    return { submittedMs, row };
  }
}

/** generateJobs yields the jobs in day order, in batches of `batch` rows. */
function* generateJobs(random: Random, tenants: Tenant[], classes: Map<string, ClassInfo>, opts: Options, historyStartMs: number, stats: Stats): Generator<JobRow[]> {
  const historyEndMs = historyStartMs + DAYS * DAY_MS;
  const factory = new JobFactory(random, classes, historyEndMs, stats);
  const byStart = [...tenants].sort((a, b) => a.activeFromDay - b.activeFromDay);
  const tenantPick = new Weighted(
    byStart,
    byStart.map((t) => t.weight),
  );
  const weights = Array.from({ length: DAYS }, (_, d) => dayWeight(historyStartMs + d * DAY_MS, d));
  const totalWeight = weights.reduce((s, w) => s + w, 0);
  const maxWeight = Math.max(...weights);
  let cumulative = 0;
  let emitted = 0;
  let batch: JobRow[] = [];
  for (let d = 0; d < DAYS; d++) {
    const dayStartMs = historyStartMs + d * DAY_MS;
    cumulative += weights[d]!;
    const target = Math.round((opts.jobs * cumulative) / totalWeight);
    const count = target - emitted;
    let active = 0;
    while (active < byStart.length && byStart[active]!.activeFromDay <= d) active++;
    // Busy days queue longer; a slow wave over the year on top.
    const load = (0.6 + 0.6 * (weights[d]! / maxWeight)) * (1 + 0.3 * Math.sin((2 * Math.PI * d) / 91));
    const day: { submittedMs: number; row: JobRow }[] = [];
    for (let j = 0; j < count; j++) {
      const tenant = tenantPick.pick(random, active);
      let job = null;
      for (let attempt = 0; attempt < 50 && !job; attempt++) job = factory.make(tenant, d, dayStartMs, load);
      // Near the end of the history, fall back to an earlier day rather than lose the job.
      for (let back = 1; !job; back++) job = factory.make(tenant, Math.max(tenant.activeFromDay, d - back), historyStartMs + Math.max(tenant.activeFromDay, d - back) * DAY_MS, load);
      day.push(job);
    }
    emitted += count;
    day.sort((a, b) => a.submittedMs - b.submittedMs);
    for (const job of day) {
      batch.push(job.row);
      if (batch.length >= opts.batch) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

// ---- database ----------------------------------------------------------------------------------

type Sql = ReturnType<typeof postgres>;

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new UsageError(`the database URL names no database: ${url}`);
  return name;
}

/** prepareDatabase creates the bench database, or drops and recreates it with --fresh; refuses to fill one that holds data. */
async function prepareDatabase(url: string, fresh: boolean, log: (line: string) => void): Promise<void> {
  const name = databaseName(url);
  const maintenance = new URL(url);
  maintenance.pathname = name === 'postgres' ? '/template1' : '/postgres';
  const admin = postgres(maintenance.toString(), { max: 1, onnotice: () => undefined });
  try {
    const [exists] = await admin<{ ok: number }[]>`select 1 as ok from pg_database where datname = ${name}`;
    if (exists && fresh) {
      if (name === 'postgres' || name.startsWith('template')) throw new UsageError(`refusing to drop the ${name} database; give the benchmark a database of its own`);
      log(`Dropping database ${name} (--fresh)…`);
      await admin`drop database ${admin(name)} with (force)`;
    }
    if (!exists || fresh) {
      await admin`create database ${admin(name)}`;
      log(`Created database ${name}.`);
      return;
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
  const target = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    const [table] = await target<{ t: string | null }[]>`select to_regclass('public.organisations')::text as t`;
    if (table?.t) {
      const [row] = await target<{ n: number }[]>`select count(*)::int as n from organisations`;
      if ((row?.n ?? 0) > 0) throw new UsageError(`database ${name} already holds data; run again with --fresh to drop and recreate it`);
    }
  } finally {
    await target.end({ timeout: 5 });
  }
}

async function insertChunked<T>(rows: T[], size: number, insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += size) await insert(rows.slice(i, i + size));
}

const dayOf = (historyStartMs: number, day: number) => new Date(historyStartMs + day * DAY_MS).toISOString().slice(0, 10);

async function insertCentre(db: Db, tenants: Tenant[], historyStartMs: number, todayIndex: number, passwordHash: string): Promise<void> {
  const createdOf = (tenant: Tenant, daysBefore: number) => new Date(historyStartMs + (tenant.activeFromDay - daysBefore) * DAY_MS);
  await insertChunked(tenants, 1000, (chunk) =>
    db.insert(organisations).values(
      chunk.map((t) => ({
        id: t.id,
        name: t.name,
        kind: t.kind,
        country: t.country,
        residency: t.residency,
        status: t.status,
        statusReason: t.status === 'suspended' ? 'Suspended pending review (benchmark data)' : 'Verified (benchmark data)',
        createdAt: createdOf(t, 30 + (t.index % 300)),
      })),
    ),
  );
  const userRows = tenants.flatMap((t) => t.users.map((u, i) => ({ id: u.id, email: u.email, name: u.name, passwordHash, locale: i % 3 === 0 ? 'de' : 'en', emailVerifiedAt: createdOf(t, 20), createdAt: createdOf(t, 20) })));
  await insertChunked(userRows, 2000, (chunk) => db.insert(users).values(chunk));
  const memberRows = tenants.flatMap((t) => t.users.map((u, i) => ({ orgId: t.id, userId: u.id, role: i === 0 ? ('owner' as const) : i === 1 && t.users.length > 2 ? ('manager' as const) : ('member' as const), createdAt: createdOf(t, 20) })));
  await insertChunked(memberRows, 3000, (chunk) => db.insert(memberships).values(chunk));
  const [admin] = await db
    .insert(users)
    .values({ email: 'bench-admin@centre.example', name: 'Bench Admin', passwordHash, emailVerifiedAt: new Date() })
    .returning({ id: users.id });
  await db.insert(staffRoles).values({ userId: admin!.id, role: 'admin' });
  const projectRows = tenants.flatMap((t) =>
    t.projects.map((p) => ({
      id: p.id,
      orgId: t.id,
      title: p.title,
      abstract: `${p.title}: GPU work of ${t.name} (benchmark data).`,
      fieldOfScience: p.field,
      createdBy: t.users[p.piIndex]!.id,
      createdAt: createdOf(t, 10),
    })),
  );
  await insertChunked(projectRows, 2000, (chunk) => db.insert(projects).values(chunk));
  const projectMemberRows = tenants.flatMap((t) =>
    t.projects.flatMap((p) =>
      t.users
        .map((u, i) => ({ u, i }))
        .filter(({ u }) => u.projects.includes(p))
        .map(({ u, i }) => ({ projectId: p.id, userId: u.id, role: i === p.piIndex ? ('pi' as const) : ('member' as const), createdAt: createdOf(t, 10) })),
    ),
  );
  await insertChunked(projectMemberRows, 3000, (chunk) => db.insert(projectMembers).values(chunk));
  const allocationRows = tenants.flatMap((t) =>
    t.projects.flatMap((p) =>
      [...p.allocations.values()].flat().map((a) => ({
        id: a.id,
        projectId: a.projectId,
        orgId: a.orgId,
        resourceClassId: a.resourceClassId,
        unit: a.unit,
        periodStart: dayOf(historyStartMs, a.startDay),
        periodEnd: dayOf(historyStartMs, a.endDay),
        status: a.endDay <= todayIndex ? ('expired' as const) : ('active' as const),
        createdAt: new Date(historyStartMs + (a.startDay - 7) * DAY_MS),
      })),
    ),
  );
  await insertChunked(allocationRows, 1000, (chunk) => db.insert(allocations).values(chunk));
}

/** settleBalances sets each allocation's cached balance to match what its jobs were charged (the ledger is bypassed). */
async function settleBalances(bulk: Sql, tenants: Tenant[], todayIndex: number): Promise<void> {
  const all = tenants.flatMap((t) => t.projects.flatMap((p) => [...p.allocations.values()].flat()));
  const ids: string[] = [];
  const granted: number[] = [];
  const charged: number[] = [];
  const expired: number[] = [];
  const noticed: number[] = [];
  for (const a of all) {
    // Grants are whole GPU-hours or whole hundreds of euros; an unused allocation still had one.
    const step = a.unit === 'gpu_seconds' ? 3600 : 10_000;
    const floor = a.unit === 'gpu_seconds' ? 100 * 3600 : 1_000_000;
    const g = Math.max(floor, Math.ceil((a.charged * a.headroom) / step) * step);
    ids.push(a.id);
    granted.push(g);
    charged.push(a.charged);
    expired.push(a.endDay <= todayIndex ? g - a.charged : 0);
    noticed.push(a.charged >= g ? 1000 : a.charged >= 0.8 * g ? 800 : 0);
  }
  await bulk.unsafe(
    `update allocations a set granted = v.granted, charged = v.charged, expired = v.expired, noticed_permille = v.noticed
       from unnest($1::uuid[], $2::int8[], $3::int8[], $4::int8[], $5::int4[]) as v(id, granted, charged, expired, noticed)
      where a.id = v.id`,
    [`{${ids.join(',')}}`, `{${granted.join(',')}}`, `{${charged.join(',')}}`, `{${expired.join(',')}}`, `{${noticed.join(',')}}`],
  );
  // Companies: half have a monthly cap, never below their busiest month (it would have stopped them).
  const capIds: string[] = [];
  const caps: number[] = [];
  for (const [i, t] of tenants.entries()) {
    if (t.kind !== 'company' || i % 2 === 1) continue;
    const busiest = Math.max(0, ...t.monthlyCostCents.values());
    capIds.push(t.id);
    caps.push(Math.max(500_000, Math.ceil((busiest * 1.5) / 100_000) * 100_000));
  }
  if (capIds.length > 0) {
    await bulk.unsafe(`update organisations o set monthly_cap_cents = v.cap from unnest($1::uuid[], $2::int8[]) as v(id, cap) where o.id = v.id`, [`{${capIds.join(',')}}`, `{${caps.join(',')}}`]);
  }
}

// ---- main --------------------------------------------------------------------------------------

const fmt = (n: number, digits = 0) => n.toLocaleString('en-GB', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function summary(stats: Stats, tenants: Tenant[], classes: Map<string, ClassInfo>): string[] {
  const lines: string[] = [];
  const totalCapacity = (c: ClassInfo) => c.capacityGpus * DAYS * 86_400;
  for (const c of classes.values()) {
    const used = stats.gpuSecondsByClass.get(c.id) ?? 0;
    lines.push(`  ${c.id}: ${fmt(used / 3600)} GPU-hours, utilisation ${fmt((100 * used) / totalCapacity(c), 1)} % of ${c.capacityGpus} GPUs`);
  }
  const perTenant = tenants.map((t) => stats.jobsByTenant.get(t.id) ?? 0).sort((a, b) => a - b);
  const runtimes = [...stats.runtimes].sort((a, b) => a - b);
  const q = (p: number) => runtimes[Math.min(runtimes.length - 1, Math.floor(p * runtimes.length))] ?? 0;
  lines.push(
    `  jobs per tenant: median ${fmt(perTenant[perTenant.length >> 1] ?? 0)}, max ${fmt(perTenant[perTenant.length - 1] ?? 0)}, min ${fmt(perTenant[0] ?? 0)}`,
    `  runtime (sample): median ${fmt(q(0.5) / 60, 1)} min, p90 ${fmt(q(0.9) / 60, 1)} min, p99 ${fmt(q(0.99) / 3600, 1)} h, max ${fmt(q(1) / 3600, 1)} h`,
    `  jobs with ≥ 64 GPUs: ${fmt(stats.big)}; states: ${[...stats.states].map(([s, n]) => `${s} ${fmt(n)}`).join(', ')}`,
    `  tenants: ${tenants.filter((t) => t.kind === 'academic').length} academic, ${tenants.filter((t) => t.kind === 'company').length} company; users ${fmt(tenants.reduce((s, t) => s + t.users.length, 0))}; projects ${fmt(tenants.reduce((s, t) => s + t.projects.length, 0))}`,
  );
  return lines;
}

async function main(): Promise<void> {
  const opts = options();
  const started = performance.now();
  const elapsed = () => `${fmt((performance.now() - started) / 1000, 1)} s`;
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const historyEndMs = Date.parse(`${opts.endDay}T00:00:00Z`) + DAY_MS;
  const historyStartMs = historyEndMs - DAYS * DAY_MS;
  const todayIndex = Math.floor((Date.now() - historyStartMs) / DAY_MS);
  const catalogue = scaledCatalogue(Math.max(1, Math.round(opts.jobs / 1_000_000)));
  const classes = catalogueClasses(catalogue);
  const random = new Random(opts.seed);
  const tenants = buildCentre(random, opts.tenants, classes);
  const stats: Stats = { jobs: 0, gpuSecondsByClass: new Map(), big: 0, states: new Map(), runtimes: [], jobsByTenant: new Map() };
  log(`bench:data — ${fmt(opts.tenants)} tenants, ${fmt(opts.jobs)} settled jobs, ${dayOf(historyStartMs, 0)} … ${opts.endDay}, seed ${opts.seed}`);

  if (opts.dryRun) {
    for (const batch of generateJobs(random, tenants, classes, opts, historyStartMs, stats)) void batch;
    log(`Dry run: generated in ${elapsed()}.`);
    for (const line of summary(stats, tenants, classes)) log(line);
    return;
  }

  const name = databaseName(opts.url);
  await prepareDatabase(opts.url, opts.fresh, log);
  const handle = await openDb({ driver: 'postgres', url: opts.url, max: 2, statementTimeoutMs: 0, lockTimeoutMs: 0 });
  const bulk = postgres(opts.url, { max: 1, onnotice: () => undefined, connection: { synchronous_commit: 'off' } });
  try {
    await migrateDb(handle);
    await syncCatalogue(handle.db, catalogue);
    const passwordHash = await hashPassword(BENCH_PASSWORD);
    await insertCentre(handle.db, tenants, historyStartMs, todayIndex, passwordHash);
    log(`Centre inserted (tenants, users, memberships, projects, allocations) after ${elapsed()}.`);

    // Drop the secondary indexes of jobs for the load; rebuilt below from their own definitions.
    const indexes = await bulk<{ name: string; def: string }[]>`select indexname as name, indexdef as def from pg_indexes where schemaname = 'public' and tablename = 'jobs' and indexname <> 'jobs_pkey'`;
    for (const index of indexes) await bulk.unsafe(`drop index ${ident(index.name)}`);

    const loadStarted = performance.now();
    let inflight: Promise<unknown> | null = null;
    let written = 0;
    for (const batch of generateJobs(random, tenants, classes, opts, historyStartMs, stats)) {
      const params = JOB_COLUMNS.map((_, column) => arrayLiteral(batch, column));
      if (inflight) await inflight;
      inflight = bulk.unsafe(INSERT_JOBS_SQL, params).then(() => {
        written += batch.length;
        const seconds = (performance.now() - loadStarted) / 1000;
        if (written % 50_000 < batch.length || written === opts.jobs) log(`  jobs ${fmt(written)} / ${fmt(opts.jobs)} (${fmt((100 * written) / opts.jobs)} %) · ${fmt(seconds, 1)} s · ${fmt(written / seconds)} rows/s`);
      });
      inflight.catch(() => undefined);
    }
    if (inflight) await inflight;
    log(`Jobs inserted after ${elapsed()}; rebuilding ${indexes.length} indexes…`);
    await bulk`set maintenance_work_mem = '256MB'`;
    for (const index of indexes) await bulk.unsafe(index.def);
    await settleBalances(bulk, tenants, todayIndex);
    log(`Indexes rebuilt, balances set after ${elapsed()}; building usage rollups…`);
    const { rows } = await rebuildRollups(handle.db);
    log(`${fmt(rows)} rollup rows after ${elapsed()}; VACUUM ANALYZE…`);
    await bulk`vacuum (analyze)`;
    const loadSeconds = (performance.now() - started) / 1000;
    const meta = { loadSeconds: Math.round(loadSeconds * 10) / 10, jobs: opts.jobs, tenants: opts.tenants, seed: opts.seed, from: dayOf(historyStartMs, 0), to: opts.endDay, loadedAt: new Date().toISOString() };
    await bulk.unsafe(`comment on database ${ident(name)} is '${JSON.stringify(meta).replace(/'/g, "''")}'`);
    log(`Done in ${elapsed()}. Sign in as any user or bench-admin@centre.example with "${BENCH_PASSWORD}".`);
    for (const line of summary(stats, tenants, classes)) log(line);
  } finally {
    await bulk.end({ timeout: 5 });
    await handle.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof UsageError ? error.message : error);
  process.exitCode = 1;
});
