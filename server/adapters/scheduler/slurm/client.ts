// A typed slurmrestd client (REST v0.0.38 + dbv0.0.38, Slurm 22.05) on openapi-fetch: one small function per
// operation the adapter needs. Each sends the JWT headers, gives up after timeoutMs, checks with zod only
// the fields it reads, and throws a classified SlurmError (errors.ts) on any failure, including the HTTP
// 200 answers that carry an `errors` entry (slurmdbd down, a token slurmdbd refuses).
import createClient from 'openapi-fetch';
import { type z } from 'zod';
import { tokenExpired } from './jwt';
import { classify, SLURM_ERRNO, SlurmError, toSlurmError, type SlurmErrorEntry } from './errors';
import type { components, paths } from './openapi';
import {
  accountsResponseSchema,
  associationsResponseSchema,
  ctldJobsResponseSchema,
  dbJobsResponseSchema,
  diagResponseSchema,
  nodesResponseSchema,
  partitionsResponseSchema,
  pingResponseSchema,
  submitResponseSchema,
  type CtldJob,
  type DbJob,
  type SlurmAccount,
  type SlurmAssociation,
  type SlurmNode,
  type SlurmPartition,
} from './schemas';

/** The body of POST /slurm/v0.0.38/job/submit. */
export type SlurmSubmitBody = components['schemas']['v0.0.38_job_submission'];
/** An account as POST /slurmdb/v0.0.38/accounts takes it. */
export type SlurmAccountInput = { name: string; description: string; organization: string };
/**
 * An association as POST /slurmdb/v0.0.38/associations takes it. Loosely typed on purpose: the limit that
 * works in 22.05 (`max.tres.group.minutes`) is not in the published spec, and the documented
 * `max.tres.total` crashed slurmrestd; limits.ts builds the exact body.
 */
export type SlurmAssociationInput = { account: string; cluster: string; user?: string; partition?: string } & Record<string, unknown>;

export type CancelSignal = 'USR1' | 'TERM' | 'KILL';

/** The end of the period slurmdbd is asked about for jobs by name: past the latest begin a job may have. */
const DB_JOBS_END = 'now+45days';

export interface SlurmClientOptions {
  /** slurmrestd's base URL, e.g. http://127.0.0.1:6820 (SLURM_REST_URL). */
  baseUrl: string;
  /** The user the token is for (X-SLURM-USER-NAME; SLURM_REST_USER). */
  user: string;
  /** The JWT, asked for on every call so that a renewed token is used at once (see jwt.ts tokenSource). */
  token: () => Promise<string> | string;
  /** Each call gives up after this long (default 20 s): a slurmctld that is down takes 9–18 s to answer. */
  timeoutMs?: number;
  /** The fetch to use (tests wrap it, e.g. to drop answers). */
  fetch?: typeof globalThis.fetch;
  /** The clock in milliseconds (default Date.now), to tell an expired token. */
  now?: () => number;
}

export interface SlurmClient {
  /** ping asks slurmctld whether it is up (GET /slurm/v0.0.38/ping). */
  ping(): Promise<{ hostname: string | null; ping: string | null; mode: string | null }[]>;
  /** submitJob submits a batch job and returns its Slurm job id. */
  submitJob(body: SlurmSubmitBody): Promise<{ jobId: string }>;
  /** listJobs lists every job slurmctld still holds (finished ones for MinJobAge). */
  listJobs(): Promise<CtldJob[]>;
  /** getJob reads one job from slurmctld; an unknown id throws SlurmError 'not-found'. */
  getJob(jobId: string): Promise<CtldJob>;
  /** cancelJob cancels a job, or with `signal` only sends it that signal (TERM: ask it to end). */
  cancelJob(jobId: string, options?: { signal?: CancelSignal }): Promise<void>;
  /** setTimeLimit updates a job's time limit, in minutes (`scontrol update TimeLimit=`; raising it needs an operator's token). */
  setTimeLimit(jobId: string, minutes: number): Promise<void>;
  /**
   * dbJobs looks jobs up in slurmdbd by name (several at once); no names, no query. `startTime` is a
   * Slurm time expression (default now-30days; an epoch is refused). With `bySubmission`: every record
   * that ended since `startTime` or has not ended, also those slurmdbd gave no eligible time, but without
   * their steps (slurmdbd sends none for such a query).
   */
  dbJobs(query: { names: string[]; startTime?: string; cluster?: string; bySubmission?: boolean }): Promise<DbJob[]>;
  /** dbJobsOfAccounts lists slurmdbd's records of every job of these accounts in the period (no accounts, no query). */
  dbJobsOfAccounts(query: { accounts: string[]; startTime: string; cluster?: string }): Promise<DbJob[]>;
  /**
   * dbJob reads a job's accounting records (several when job ids were reused). With an array's id: every
   * record of the array with its steps, also the record of its tasks that never ran, which a query by name
   * (start_time…end_time: eligible in the period) misses, as slurmdbd gives it no eligible time.
   */
  dbJob(jobId: string): Promise<DbJob[]>;
  nodes(): Promise<SlurmNode[]>;
  partitions(): Promise<SlurmPartition[]>;
  /** diag reports slurmctld's queue towards slurmdbd (0 = every record sent). */
  diag(): Promise<{ dbdAgentQueueSize: number | null }>;
  accounts(): Promise<SlurmAccount[]>;
  /** postAccounts creates (or updates) accounts. */
  postAccounts(accounts: SlurmAccountInput[]): Promise<void>;
  /** deleteAccount removes an account with all its associations (tests clean up with it). */
  deleteAccount(name: string): Promise<void>;
  associations(query?: AssociationQuery): Promise<SlurmAssociation[]>;
  /**
   * postAssociations creates or updates associations. `accept` lets through an `errors` entry that this
   * particular write is known to send on success (see limits.ts); every other entry still throws.
   */
  postAssociations(associations: SlurmAssociationInput[], options?: { accept?: (entry: SlurmErrorEntry) => boolean }): Promise<void>;
  /** deleteAssociation removes one user's association in an account (and partition). */
  deleteAssociation(query: { cluster: string; account: string; user: string; partition?: string }): Promise<void>;
}

export interface AssociationQuery {
  account?: string;
  user?: string;
  partition?: string;
  cluster?: string;
}

/** What every call sends besides its own parameters. */
type CallInit = {
  headers: Record<string, string>;
  signal: AbortSignal;
};

/** What an openapi-fetch call resolves to, as far as the classifier needs it. */
interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

// Job names go into one comma-separated query value; a name with a comma could not be asked for.
function checkName(name: string): string {
  if (name === '' || name.includes(',')) throw new SlurmError('permanent', `dbJobs: a job name cannot be empty or contain ',': ${JSON.stringify(name)}`);
  return name;
}

function checkJobId(jobId: string): string {
  if (!/^[1-9][0-9]*$/.test(jobId)) throw new SlurmError('permanent', `not a Slurm job id: ${JSON.stringify(jobId)}`);
  return jobId;
}

/** createSlurmClient builds a client for one slurmrestd and one user. */
export function createSlurmClient(options: SlurmClientOptions): SlurmClient {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const now = options.now ?? Date.now;
  const api = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });

  async function token(): Promise<string> {
    try {
      return await options.token();
    } catch (error) {
      // No token to send (an unreadable token or key file): as good as a refused one.
      throw new SlurmError('auth', `no Slurm token: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  // Runs one call and returns its body: a thrown fetch (refused, timed out, dropped) is 'unreachable';
  // an answer is classified from its status and `errors` entries.
  async function call(context: string, send: (init: CallInit) => Promise<FetchResult>, accept?: (entry: SlurmErrorEntry) => boolean): Promise<unknown> {
    const jwt = await token();
    const init: CallInit = { headers: { 'X-SLURM-USER-NAME': options.user, 'X-SLURM-USER-TOKEN': jwt }, signal: AbortSignal.timeout(timeoutMs) };
    let result: FetchResult;
    try {
      result = await send(init);
    } catch (error) {
      if (error instanceof SlurmError) throw error;
      if (error instanceof SyntaxError) throw new SlurmError('transient', `${context}: slurmrestd sent no JSON`, { cause: error });
      throw toSlurmError(classify({ network: error })!, context, error);
    }
    const body = result.data ?? result.error;
    const failure = classify({ status: result.response.status, body, ...(accept ? { accept } : {}) });
    if (!failure) return body;
    // An expired token reads as a generic -1 on most slurmctld endpoints (only /ping names the config,
    // the rest look like slurmctld trouble): the token's own exp tells.
    if (failure.kind === 'transient' && tokenExpired(jwt, now() / 1000)) throw toSlurmError({ ...failure, kind: 'auth', message: `${failure.message} (the token has expired)` }, context);
    throw toSlurmError(failure, context);
  }

  function parse<S extends z.ZodType>(context: string, schema: S, body: unknown): z.infer<S> {
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new SlurmError('transient', `${context}: unexpected answer from slurmrestd: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`, {
        cause: parsed.error,
      });
    }
    return parsed.data;
  }

  async function read<S extends z.ZodType>(context: string, schema: S, send: (init: CallInit) => Promise<FetchResult>, accept?: (entry: SlurmErrorEntry) => boolean): Promise<z.infer<S>> {
    return parse(context, schema, await call(context, send, accept));
  }

  return {
    async ping() {
      const body = await read('ping', pingResponseSchema, (init) => api.GET('/slurm/v0.0.38/ping', init));
      return (body.pings ?? []).map((p) => ({ hostname: p.hostname ?? null, ping: p.ping ?? null, mode: p.mode ?? null }));
    },

    async submitJob(body) {
      // A held submit answers 2042 next to its job_id: the job exists (the schema still wants the id).
      const held = (e: SlurmErrorEntry) => e.code === SLURM_ERRNO.ESLURM_JOB_HELD;
      const answer = await read('submitJob', submitResponseSchema, (init) => api.POST('/slurm/v0.0.38/job/submit', { ...init, body }), held);
      return { jobId: String(answer.job_id) };
    },

    async listJobs() {
      const body = await read('listJobs', ctldJobsResponseSchema, (init) => api.GET('/slurm/v0.0.38/jobs', init));
      return body.jobs ?? [];
    },

    async getJob(jobId) {
      const context = `getJob ${jobId}`;
      const job_id = checkJobId(jobId);
      const body = await read(context, ctldJobsResponseSchema, (init) => api.GET('/slurm/v0.0.38/job/{job_id}', { ...init, params: { path: { job_id } } }));
      const job = (body.jobs ?? []).find((j) => String(j.job_id) === jobId);
      if (!job) throw new SlurmError('not-found', `${context}: slurmctld answered without the job`, { status: 200 });
      return job;
    },

    async cancelJob(jobId, cancel = {}) {
      const job_id = checkJobId(jobId);
      const query = cancel.signal ? { signal: cancel.signal } : undefined;
      await call(`cancelJob ${jobId}`, (init) => api.DELETE('/slurm/v0.0.38/job/{job_id}', { ...init, params: { path: { job_id }, ...(query ? { query } : {}) } }));
    },

    async setTimeLimit(jobId, minutes) {
      const job_id = checkJobId(jobId);
      if (!Number.isSafeInteger(minutes) || minutes < 1) throw new Error(`setTimeLimit: ${minutes} is not a whole number of minutes ≥ 1`);
      // The schema shares the submit's job_properties, which must carry `environment`; an update names only what changes.
      const body = { time_limit: minutes } as unknown as components['schemas']['v0.0.38_job_properties'];
      await call(`setTimeLimit ${jobId}`, (init) => api.POST('/slurm/v0.0.38/job/{job_id}', { ...init, params: { path: { job_id } }, body }));
    },

    async dbJobs({ names, startTime = 'now-30days', cluster, bySubmission = false }) {
      // Without a name filter slurmdbd would return every job of the period.
      if (names.length === 0) return [];
      // openapi-fetch encodes the value (',' → %2C): a raw ',' is a 400 "Unable to parse query".
      // The period is matched against a job's eligible time, which for a job with a begin lies ahead: with
      // the default end (now) a job cancelled before its begin was in no answer — never settled, and a
      // retry would have found "no such job". Begins are at most 30 days ahead (jobs.ts BEGIN_FUTURE_MS).
      // `submit_time` (dbv0.0.38: the period's start without sacct's default window) and no end: the records
      // without an eligible time too (a job held until it was cancelled, an array's tasks that never ran).
      const period = bySubmission ? { submit_time: startTime } : { start_time: startTime, end_time: DB_JOBS_END };
      const query = { job_name: [...new Set(names.map(checkName))].join(','), ...period, ...(cluster ? { cluster } : {}) };
      const body = await read('dbJobs', dbJobsResponseSchema, (init) => api.GET('/slurmdb/v0.0.38/jobs', { ...init, params: { query } }));
      return body.jobs ?? [];
    },

    async dbJobsOfAccounts({ accounts, startTime, cluster }) {
      if (accounts.length === 0) return [];
      const query = { account: [...new Set(accounts.map(checkName))].join(','), start_time: startTime, end_time: DB_JOBS_END, ...(cluster ? { cluster } : {}) };
      const body = await read('dbJobsOfAccounts', dbJobsResponseSchema, (init) => api.GET('/slurmdb/v0.0.38/jobs', { ...init, params: { query } }));
      return body.jobs ?? [];
    },

    async dbJob(jobId) {
      const job_id = checkJobId(jobId);
      const body = await read(`dbJob ${jobId}`, dbJobsResponseSchema, (init) => api.GET('/slurmdb/v0.0.38/job/{job_id}', { ...init, params: { path: { job_id } } }));
      return body.jobs ?? [];
    },

    async nodes() {
      const body = await read('nodes', nodesResponseSchema, (init) => api.GET('/slurm/v0.0.38/nodes', init));
      return body.nodes ?? [];
    },

    async partitions() {
      const body = await read('partitions', partitionsResponseSchema, (init) => api.GET('/slurm/v0.0.38/partitions', init));
      return body.partitions ?? [];
    },

    async diag() {
      const body = await read('diag', diagResponseSchema, (init) => api.GET('/slurm/v0.0.38/diag', init));
      return { dbdAgentQueueSize: body.statistics?.dbd_agent_queue_size ?? null };
    },

    async accounts() {
      const body = await read('accounts', accountsResponseSchema, (init) => api.GET('/slurmdb/v0.0.38/accounts', init));
      return body.accounts ?? [];
    },

    async postAccounts(accounts) {
      await call('postAccounts', (init) => api.POST('/slurmdb/v0.0.38/accounts', { ...init, body: { accounts } }));
    },

    async deleteAccount(name) {
      await call(`deleteAccount ${name}`, (init) => api.DELETE('/slurmdb/v0.0.38/account/{account_name}', { ...init, params: { path: { account_name: name } } }));
    },

    async associations(query = {}) {
      const body = await read('associations', associationsResponseSchema, (init) => api.GET('/slurmdb/v0.0.38/associations', { ...init, params: { query } }));
      return body.associations ?? [];
    },

    async postAssociations(associations, post = {}) {
      const body = { associations } as unknown as components['schemas']['dbv0.0.38_associations_info'];
      await call('postAssociations', (init) => api.POST('/slurmdb/v0.0.38/associations', { ...init, body }), post.accept);
    },

    async deleteAssociation(query) {
      await call(`deleteAssociation ${query.account}/${query.user}`, (init) => api.DELETE('/slurmdb/v0.0.38/association', { ...init, params: { query } }));
    },
  };
}
