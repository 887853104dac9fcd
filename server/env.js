// @ts-check
// The one place that reads configuration from the environment. Validated once with zod;
// a bad value stops the start (and the build, through next.config.js) with a message
// naming the variable and what is expected.
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** One identity provider of OIDC_PROVIDERS (docs/deploy.md, "Single sign-on (OIDC)"). */
const oidcProvider = z
  .object({
    /** In the callback path /api/auth/callback/<id>; "credentials" and "sso-link" are the portal's own. */
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'id must be lower-case letters, digits, - or _').refine((id) => id !== 'credentials' && id !== 'sso-link', 'id is reserved'),
    name: z.string().trim().min(1).max(60),
    issuer: z.url('issuer must be an absolute URL').transform((v) => v.replace(/\/$/, '')),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    scopes: z.string().trim().min(1).default('openid email profile').refine((v) => v.split(/\s+/).includes('openid'), 'scopes must include openid'),
    claims: z
      .object({
        email: z.string().min(1).default('email'),
        name: z.string().min(1).default('name'),
        entitlements: z.string().min(1).default('eduPersonEntitlement'),
        /** The claim with the person's POSIX user from the centre's directory (such as `uid`); unset: the portal makes one from the mail address. */
        posixName: z.string().min(1).optional(),
      })
      .strict()
      .default({ email: 'email', name: 'name', entitlements: 'eduPersonEntitlement' }),
    entitlements: z
      .array(z.object({ value: z.string().min(1), org: z.string().trim().min(1), role: z.enum(['owner', 'manager', 'member']) }).strict())
      .default([]),
  })
  .strict();

const oidcProviders = optionalString.pipe(
  z
    .string()
    .transform((v, ctx) => {
      try {
        return /** @type {unknown} */ (JSON.parse(v));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of providers such as [{"id":"keycloak","name":"Keycloak","issuer":"https://…","clientId":"…","clientSecret":"…"}]' });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .array(oidcProvider)
        .refine((list) => new Set(list.map((p) => p.id)).size === list.length, 'provider ids must be unique')
        .default([]),
    )
    .optional(),
).transform((v) => v ?? []);

/** class=partition pairs, comma-separated: h100=gpu,b200=b200. */
const partitionPairs = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*=[A-Za-z0-9_.-]+(,[a-z0-9][a-z0-9_-]*=[A-Za-z0-9_.-]+)*$/, 'must be class=partition pairs separated by commas, such as h100=gpu,b200=b200')
  .transform((v) => Object.fromEntries(v.split(',').map((pair) => /** @type {[string, string]} */ (pair.split('=')))));

/** One Slurm cluster of several (SLURM_CLUSTERS): the sites it runs jobs for and how to reach it; the other SLURM_* settings are shared. */
const slurmCluster = z
  .object({
    cluster: z.string().regex(/^[a-z0-9_-]+$/, 'must be the ClusterName of its slurm.conf'),
    sites: z.array(z.string().min(1)).min(1, 'must name the sites (catalogue ids) the cluster runs jobs for'),
    restUrl: z.url("must be the cluster's slurmrestd URL, such as http://slurm-head:6820"),
    partitions: partitionPairs,
    tokenFile: z.string().min(1).optional(),
    jwtKeyFile: z.string().min(1).optional(),
  })
  .strict();

const slurmClusters = optionalString.pipe(
  z
    .string()
    .transform((v, ctx) => {
      try {
        return /** @type {unknown} */ (JSON.parse(v));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of clusters such as [{"cluster":"jena","sites":["de-jena"],"restUrl":"http://jena-head:6820","partitions":"h100=gpu"}]' });
        return z.NEVER;
      }
    })
    .pipe(
      z
        .array(slurmCluster)
        .min(1)
        .refine((list) => new Set(list.map((c) => c.cluster)).size === list.length, 'cluster names must be unique')
        .refine((list) => new Set(list.flatMap((c) => c.sites)).size === list.flatMap((c) => c.sites).length, 'a site may belong to one cluster only'),
    )
    .optional(),
);

const schema = z
  .object({
    PORTAL_ENV: z.enum(['demo', 'production']).default('demo'),
    DATABASE_URL: optionalString.pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
        .optional(),
    ),
    /** Connections per process to a real Postgres (the worker's leader lock keeps one more of its own). */
    DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(500).default(10),
    /**
     * Tenant calls' own login to the same database (issue #31): a role with no table rights that may only
     * SET ROLE portal_tenant (docs/deploy.md). Unset: tenant calls use DATABASE_URL's login.
     */
    DATABASE_TENANT_URL: optionalString.pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
        .optional(),
    ),
    /** Connections per process of the tenant calls' login (DATABASE_TENANT_URL). */
    DATABASE_TENANT_POOL_MAX: z.coerce.number().int().min(2).max(500).default(10),
    /** A statement running longer is cancelled, so one stuck query cannot hold locks for every tenant. */
    DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
    /** A lock wait longer than this fails (and is retried), instead of queueing every request behind it. */
    DATABASE_LOCK_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(10_000),
    /** `off`: this web process runs no worker; `npm run worker` runs it as a process of its own (a load-balanced deployment: scripts/ha-stack.sh). */
    PORTAL_WORKER: z.enum(['on', 'off']).default('on'),
    /** The name this process's metrics carry in portal_process_info (default host:pid); a load balancer's server name fits. */
    PORTAL_INSTANCE: optionalString.pipe(z.string().max(100).optional()),
    /** Web processes `npm start` runs on its port (scripts/server.mjs reads it; `auto` = one per core; each process sees the number). */
    PORTAL_WEB_PROCESSES: z
      .union([z.literal('auto').transform(() => availableParallelism()), z.coerce.number().int().min(1).max(64)])
      .optional(),
    /** Tenant-scoped API calls running at once in one server process (default: 2 × CPU cores, at least 4, shared by the web processes but at least 3 each). */
    PORTAL_MAX_CONCURRENT_CALLS: z.coerce.number().int().min(1).max(10_000).optional(),
    /** Of those, how many one tenant may hold: a burst from one tenant queues behind its own calls. */
    PORTAL_MAX_CONCURRENT_CALLS_PER_TENANT: z.coerce.number().int().min(1).max(10_000).default(2),
    /** Requests one personal API token may make to the REST API (`/api/v1`) per minute; beyond them 429. */
    API_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
    /** Tokens (a call's worst case: input + max_tokens) one API token may send through the gateway a minute (issue #29). */
    INFERENCE_TOKENS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000_000).default(2_000_000),
    // Behind a reverse proxy that sets X-Forwarded-For: take the caller's address from it (per-address limits).
    PORTAL_TRUST_PROXY: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
    PORTAL_DATA_DIR: z.string().trim().min(1).default('.data'),
    /**
     * Where project workspaces lie for a site whose catalogue entry names no `filesystemRoot` (the embedded
     * default): `<this>/<site id>/<project group>`. Default `<PORTAL_DATA_DIR>/files`. With SCHEDULER=slurm
     * such a site's root is SLURM_JOB_DIR instead (the cluster's shared filesystem).
     */
    PORTAL_FILES_DIR: optionalString,
    /**
     * Minutes between the worker's scans of every project workspace, which book what each holds (what jobs
     * wrote included) into the storage usage, quotas and TB-months (docs/files.md). A scan walks every file.
     */
    STORAGE_SCAN_MINUTES: z.coerce.number().int().min(1).max(1440).default(15),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    PORTAL_URL: optionalString.pipe(z.url('must be an absolute URL such as https://portal.example.org').optional()),
    NEXTAUTH_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
    SCHEDULER: z.enum(['simulated', 'slurm']).default('simulated'),
    SIM_SPEED: z.coerce.number().int().min(1).max(1_000_000).default(60),
    SIM_NODE_MTBF_HOURS: z.coerce.number().int().min(0).max(10_000_000).default(5000),
    SIM_NODE_REPAIR_HOURS: z.coerce.number().int().min(1).max(10_000).default(4),
    DEMO_SEED: z.enum(['auto', 'off']).default('auto'),
    PORTAL_CATALOGUE: optionalString,
    VAT_PERMILLE: z.coerce.number().int().min(0).max(1000).default(190),
    /** Days after an invoice's due date on which its first and second payment reminders go out (ascending, comma-separated); empty: none. */
    INVOICE_REMINDER_DAYS: z
      .string()
      .trim()
      .default('7,21')
      .refine((v) => v === '' || /^\d{1,3}(,\d{1,3})*$/.test(v), 'must be days after the due date, comma-separated, such as 7,21')
      .transform((v) => (v === '' ? [] : v.split(',').map(Number)))
      .refine((days) => days.every((d, i) => d >= 1 && (i === 0 || d > /** @type {number} */ (days[i - 1]))), 'must be ascending days of at least 1, such as 7,21'),
    /** Refuse new submissions of a tenant with an invoice open more than this many days after its due date; unset: never. */
    INVOICE_OVERDUE_BLOCK_DAYS: optionalString.pipe(z.string().regex(/^\d{1,4}$/, 'must be a number of days, such as 30').transform(Number).optional()),
    /** Single sign-on: a JSON array of OpenID Connect providers (docs/deploy.md, "Single sign-on (OIDC)"); empty: passwords only. */
    OIDC_PROVIDERS: oidcProviders,
    // ---- E-mail: without SMTP_URL mails are kept in the outbox (shown to staff) and none is sent ----
    /** The SMTP server, e.g. smtps://user:password@mail.example.org:465 or smtp://relay.example.org:25. */
    SMTP_URL: optionalString.pipe(z.url('must be an smtp:// or smtps:// URL, such as smtps://user:password@mail.example.org:465').startsWith('smtp', 'must be an smtp:// or smtps:// URL, such as smtps://user:password@mail.example.org:465').optional()),
    /** The sender of every mail, e.g. "GPU Centre <portal@centre.example.org>". */
    MAIL_FROM: z.string().trim().min(3).default('AI Factory Portal <portal@localhost>'),
    // ---- SCHEDULER=slurm: a real Slurm through slurmrestd (REST v0.0.38 + dbv0.0.38, Slurm 22.05) ----
    SLURM_REST_URL: optionalString.pipe(z.url('must be slurmrestd\'s URL, such as http://slurm-head:6820').optional()),
    /** The service user the portal's jobs run as (the token's user). */
    SLURM_REST_USER: z.string().trim().regex(/^[a-z_][a-z0-9_.-]*$/, 'must be a Unix user name').default('portal'),
    /** A file holding a token (scontrol token), re-read when it changes; or the JWT key to mint short tokens. */
    SLURM_REST_TOKEN_FILE: optionalString,
    SLURM_JWT_KEY_FILE: optionalString,
    /** Lifespan of a token minted from SLURM_JWT_KEY_FILE, in seconds; it is renewed before it expires. */
    SLURM_TOKEN_LIFESPAN_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
    SLURM_CLUSTER: optionalString.pipe(z.string().regex(/^[a-z0-9_-]+$/, 'must be the ClusterName of slurm.conf').optional()),
    /** Resource class → partition, comma-separated: h100=gpu,b200=b200. */
    SLURM_PARTITIONS: optionalString.pipe(partitionPairs.optional()),
    /**
     * Several clusters, one per group of sites (a JSON array; docs/slurm.md, "Two clusters"): each names its
     * cluster, its sites, its slurmrestd URL and partitions, and optionally its own token or JWT key file;
     * the other SLURM_* settings (SLURM_JOB_DIR too) are shared. Replaces SLURM_REST_URL, SLURM_CLUSTER and
     * SLURM_PARTITIONS.
     */
    SLURM_CLUSTERS: slurmClusters,
    /** Working directory of the portal's jobs on the cluster (must exist on every node). */
    SLURM_JOB_DIR: z.string().trim().min(1).default('/tmp'),
    /**
     * The interactive-session launcher (issue #28) as the nodes see it: an absolute path to a copy of
     * bin/portal-session on every node. Default: the portal's own copy (the simulated cluster runs it here).
     */
    PORTAL_SESSION_LAUNCHER: z.string().trim().regex(/^\/[^\0\n\s]*$/, 'an absolute path without spaces').optional(),
    /** How a job's image is run: apptainer exec, pyxis (srun --container-image), or none (the command as is). */
    SLURM_JOB_LAUNCHER: z.enum(['apptainer', 'pyxis', 'none']).default('apptainer'),
    /**
     * Whether Slurm may requeue the portal's jobs (after a node failure or preemption): `off` submits them
     * with --no-requeue (a failed node ends the job NODE_FAIL, charged what it ran); `on` leaves it to the
     * site's JobRequeue, and a requeued job is followed to its last attempt and charged for all of them.
     */
    SLURM_REQUEUE: z.enum(['off', 'on']).default('off'),
    /**
     * Who the portal's jobs run as: `person` submits each job as its person's POSIX user (the centre's
     * directory provides the users and the projects' groups; SLURM_REST_USER must then be SlurmUser or root,
     * whose token slurmrestd lets act for anyone), in a folder of its project's group under SLURM_JOB_DIR;
     * `service` runs every job as SLURM_REST_USER (a test cluster without a directory).
     */
    SLURM_SUBMIT_AS: z.enum(['service', 'person']).default('service'),
    /**
     * `sacctmgr`: the budget sync also sets each project account's own GrpTRESMins (the sum over its
     * classes), which binds all its members together — slurmrestd 22.05 cannot change an account's limit.
     * Needs sacctmgr on the portal's host, run as a Slurm administrator. `off`: only the per-member limits.
     */
    SLURM_ACCOUNT_LIMITS: z.enum(['off', 'sacctmgr']).default('off'),
    /** How often the worker asks Slurm for the open jobs, in seconds (one cached GET /jobs per poll). */
    SLURM_POLL_SECONDS: z.coerce.number().int().min(1).max(600).default(5),
    /** A Slurm admin (AdminLevel=Admin) the portal writes budgets (GrpTRESMins) as; without it Slurm enforces none. */
    SLURM_ADMIN_USER: optionalString.pipe(z.string().regex(/^[a-z_][a-z0-9_.-]*$/, 'must be a Unix user name').optional()),
    /** How often the worker hands every project's budget to a scheduler that enforces budgets itself (a missed change heals). */
    SLURM_BUDGET_SYNC_SECONDS: z.coerce.number().int().min(10).max(86_400).default(300),
    // ---- Monitoring ----
    /** The bearer secret Prometheus sends to /api/metrics (Authorization: Bearer …); unset: /api/metrics answers 404. */
    METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters (generate one with `openssl rand -hex 32`)').optional()),
    /** How much the JSON logs on stdout say (pino levels); unset: info, and nothing under vitest. */
    LOG_LEVEL: optionalString.pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional()),
  })
  .superRefine((env, ctx) => {
    if (env.SCHEDULER === 'slurm') {
      /** @type {[keyof typeof env, string][]} */
      const needed = [
        ['SLURM_REST_URL', 'is required when SCHEDULER=slurm (slurmrestd\'s URL, such as http://slurm-head:6820)'],
        ['SLURM_CLUSTER', 'is required when SCHEDULER=slurm (the ClusterName of slurm.conf)'],
        ['SLURM_PARTITIONS', 'is required when SCHEDULER=slurm (which partition each resource class runs in, such as h100=gpu)'],
      ];
      if (!env.SLURM_CLUSTERS) for (const [name, message] of needed) if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message });
      const ownCredentials = env.SLURM_CLUSTERS?.every((c) => !c.tokenFile !== !c.jwtKeyFile) ?? false;
      if (!ownCredentials && !env.SLURM_REST_TOKEN_FILE === !env.SLURM_JWT_KEY_FILE) {
        ctx.addIssue({ code: 'custom', path: ['SLURM_JWT_KEY_FILE'], message: 'set exactly one of SLURM_JWT_KEY_FILE (the JWT key, to mint short tokens) and SLURM_REST_TOKEN_FILE (a token file) when SCHEDULER=slurm' });
      }
    }
    if (env.DATABASE_TENANT_URL && !env.DATABASE_URL) {
      ctx.addIssue({ code: 'custom', path: ['DATABASE_TENANT_URL'], message: 'needs DATABASE_URL: it is the tenant calls\' login to that same Postgres (PGlite has one connection)' });
    }
    // Links in mails and the API's address come from PORTAL_URL; in production they never follow a request's Host.
    if (env.PORTAL_ENV === 'production' && !env.PORTAL_URL) {
      ctx.addIssue({ code: 'custom', path: ['PORTAL_URL'], message: 'is required when PORTAL_ENV=production (the public address, such as https://portal.example.org: mails and the API reference link to it)' });
    }
    if (env.PORTAL_ENV === 'production' && !env.NEXTAUTH_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['NEXTAUTH_SECRET'],
        message: 'is required when PORTAL_ENV=production (generate one with `openssl rand -base64 48`)',
      });
    }
  });

/** @typedef {z.infer<typeof schema>} PortalEnv */

/** Variables whose values a configuration error must not print. */
const SECRET_VARIABLES = ['OIDC_PROVIDERS', 'METRICS_TOKEN', 'DATABASE_URL', 'DATABASE_TENANT_URL'];

export class ConfigError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * parseEnv validates a plain environment object and returns the typed configuration.
 * @param {Record<string, string | undefined>} source
 * @returns {PortalEnv}
 */
export function parseEnv(source) {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    // OIDC_PROVIDERS, METRICS_TOKEN and the database URLs (passwords) hold secrets: their values are never repeated into logs.
    const got = typeof issue.path[0] === 'string' && !SECRET_VARIABLES.includes(issue.path[0]) ? source[issue.path[0]] : undefined;
    return `  ${name}: ${issue.message}${got !== undefined ? ` (got "${got}")` : ''}`;
  });
  return /** @type {never} */ (
    (() => {
      throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
    })()
  );
}

/** @type {PortalEnv | undefined} */
let cached;

/**
 * env returns the validated configuration of this process (read once).
 * @returns {PortalEnv}
 */
export function env() {
  cached ??= parseEnv(process.env);
  return cached;
}

/**
 * portalBaseUrl is the portal's own address for links that leave it (mails): PORTAL_URL, else this
 * machine on PORT (local use; a request's own address, when there is one, is server/portal-url.ts).
 * @returns {string}
 */
export function portalBaseUrl() {
  const config = env();
  return (config.PORTAL_URL ?? `http://localhost:${config.PORT}`).replace(/\/$/, '');
}
