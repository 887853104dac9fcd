// Errors from slurmrestd, sorted into the few kinds the adapter acts on. Slurm 22.05 (REST v0.0.38,
// dbv0.0.38) reports failures inconsistently: submit errors carry `error_code`, the other endpoints
// `error_number` + `description` + `source`; an expired token is a 500 that talks about the config; a
// slurmdbd that is down or a token slurmdbd rejects is an HTTP 200 with an `errors` entry and an empty list.
// So every answer is classified from its status AND its `errors` entries, never the status alone.
//
// Numbers from slurm/slurm_errno.h (SchedMD/slurm, the 22.05 numbering; the ranges used here are unchanged
// in later releases).

/**
 * What a failure means for the caller:
 * - unreachable: slurmrestd, slurmctld or slurmdbd cannot be reached now; try again later.
 * - auth: the token was refused (expired, bad key, wrong user); renew it and try again.
 * - not-found: Slurm does not know the job (error 2017, and only that).
 * - permanent: the request can never succeed as asked (the job can never run): fail the job.
 * - transient: anything else; try again later.
 */
export type SlurmErrorKind = 'unreachable' | 'auth' | 'not-found' | 'permanent' | 'transient';

/** One entry of a response's `errors` array, in either of v0.0.38's shapes. */
export interface SlurmErrorEntry {
  code: number | null;
  error: string | null;
  description: string | null;
  source: string | null;
}

export class SlurmError extends Error {
  override readonly name = 'SlurmError';
  readonly kind: SlurmErrorKind;
  /** The Slurm error number of the entry that decided the kind, else null. */
  readonly code: number | null;
  /** The HTTP status, or null when no answer came. */
  readonly status: number | null;
  /** All failing `errors` entries of the answer (9003 "nothing found" left out). */
  readonly entries: SlurmErrorEntry[];

  constructor(
    kind: SlurmErrorKind,
    message: string,
    details: { code?: number | null; status?: number | null; entries?: SlurmErrorEntry[]; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.code = details.code ?? null;
    this.status = details.status ?? null;
    this.entries = details.entries ?? [];
  }
}

/** isSlurmError tells whether a value is a SlurmError, optionally of one kind. */
export function isSlurmError(value: unknown, kind?: SlurmErrorKind): value is SlurmError {
  return value instanceof SlurmError && (kind === undefined || value.kind === kind);
}

/** Slurm error numbers the classifier knows (slurm_errno.h). */
export const SLURM_ERRNO = {
  /** Generic failure; with source slurm_load_ctl_conf it is a refused token (slurmrestd's misleading answer). */
  SLURM_ERROR: -1,
  SLURM_PROTOCOL_AUTHENTICATION_ERROR: 1007,
  SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR: 1800,
  SLURMCTLD_COMMUNICATIONS_SEND_ERROR: 1801,
  SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR: 1802,
  SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR: 1803,
  SLURMCTLD_COMMUNICATIONS_BACKOFF: 1804,
  SLURMCTLD_COMMUNICATIONS_HARD_DROP: 1805,
  ESLURM_INVALID_PARTITION_NAME: 2000,
  /** Not allowed to the token's user (a user raising a time limit: only an operator may). */
  ESLURM_ACCESS_DENIED: 2002,
  /** "Invalid user id": the token's user may not act on another's job. */
  ESLURM_USER_ID_MISSING: 2010,
  ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE: 2014,
  ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE: 2015,
  ESLURM_INVALID_JOB_ID: 2017,
  ESLURM_INVALID_FEATURE: 2029,
  ESLURM_INVALID_ACCOUNT: 2045,
  /** A held submit: the job exists (answered next to its job_id). */
  ESLURM_JOB_HELD: 2042,
  ESLURM_ACCOUNTING_POLICY: 2050,
  ESLURM_INVALID_TIME_LIMIT: 2051,
  ESLURM_RESERVATION_INVALID: 2053,
  ESLURM_INVALID_QOS: 2066,
  ESLURM_INVALID_GRES: 2072,
  ESLURM_INVALID_TRES: 2115,
  ESLURM_ENVIRONMENT_MISSING: 2127,
  /** Submit with a refused token (slurmctld closes the connection on it). */
  SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT: 5005,
  ESLURM_AUTH_CRED_INVALID: 6000,
  ESLURM_AUTH_EXPIRED: 6001,
  ESLURM_DB_CONNECTION: 7000,
  ESLURM_DB_CONNECTION_INVALID: 7008,
  ESLURM_REST_INVALID_QUERY: 9000,
  ESLURM_REST_FAIL_PARSING: 9001,
  ESLURM_REST_INVALID_JOBS_DESC: 9002,
  /** "Nothing found": not a failure. */
  ESLURM_REST_EMPTY_RESULT: 9003,
  ESLURM_REST_AUTH_FAIL: 9008,
} as const;

const E = SLURM_ERRNO;

const AUTH_CODES = new Set<number>([E.SLURM_PROTOCOL_AUTHENTICATION_ERROR, E.SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT, E.ESLURM_REST_AUTH_FAIL]);
const UNREACHABLE_CODES = new Set<number>([
  E.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR,
  E.SLURMCTLD_COMMUNICATIONS_SEND_ERROR,
  E.SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR,
  E.SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR,
  E.SLURMCTLD_COMMUNICATIONS_BACKOFF,
  E.SLURMCTLD_COMMUNICATIONS_HARD_DROP,
  E.ESLURM_DB_CONNECTION,
  E.ESLURM_DB_CONNECTION_INVALID,
]);
// The request as written can never succeed: a partition, account, QOS, GRES, node feature, reservation
// or time limit Slurm refuses,
// a job larger than any node (2014) or than the policy allows (2050), a body slurmrestd cannot parse.
// Retrying these would hold the job's reservation forever.
const PERMANENT_CODES = new Set<number>([
  E.ESLURM_INVALID_PARTITION_NAME,
  E.ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
  E.ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE,
  E.ESLURM_INVALID_ACCOUNT,
  E.ESLURM_ACCOUNTING_POLICY,
  E.ESLURM_INVALID_TIME_LIMIT,
  E.ESLURM_RESERVATION_INVALID,
  E.ESLURM_INVALID_FEATURE,
  E.ESLURM_INVALID_QOS,
  E.ESLURM_INVALID_GRES,
  E.ESLURM_INVALID_TRES,
  E.ESLURM_ENVIRONMENT_MISSING,
  E.ESLURM_REST_INVALID_QUERY,
  E.ESLURM_REST_FAIL_PARSING,
  E.ESLURM_REST_INVALID_JOBS_DESC,
]);

function isAuthCode(code: number): boolean {
  // The whole slurm_auth range (6000–6099): a credential Slurm refused.
  return AUTH_CODES.has(code) || (code >= 6000 && code < 6100);
}

/** The kind one `errors` entry stands for. */
export function classifyEntry(entry: SlurmErrorEntry): SlurmErrorKind {
  const { code } = entry;
  if (code === null) return 'transient';
  if (code === E.SLURM_ERROR && entry.source === 'slurm_load_ctl_conf') return 'auth';
  if (isAuthCode(code)) return 'auth';
  if (UNREACHABLE_CODES.has(code)) return 'unreachable';
  if (code === E.ESLURM_INVALID_JOB_ID) return 'not-found';
  if (PERMANENT_CODES.has(code)) return 'permanent';
  if (/invalid partition/i.test(`${entry.error ?? ''} ${entry.description ?? ''}`)) return 'permanent';
  return 'transient';
}

// When an answer has several failing entries, the one that says most about what to do wins: a refused
// token or an unreachable daemon explains every other entry; "not found" outranks a generic failure.
const PRECEDENCE: SlurmErrorKind[] = ['auth', 'unreachable', 'permanent', 'not-found', 'transient'];

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** errorEntries reads a body's `errors` array in either v0.0.38 shape (error_code, or error_number/description/source). */
export function errorEntries(body: unknown): SlurmErrorEntry[] {
  const errors = record(body)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.map((raw) => {
    const e = record(raw) ?? {};
    return {
      // Submit uses error_code, most endpoints error_number, GET /nodes errno.
      code: numberOrNull(e.error_code) ?? numberOrNull(e.error_number) ?? numberOrNull(e.errno),
      error: stringOrNull(e.error),
      description: stringOrNull(e.description),
      source: stringOrNull(e.source),
    };
  });
}

/** The failing entries of a body: every `errors` entry except 9003 ("nothing found"). */
export function failingEntries(body: unknown): SlurmErrorEntry[] {
  return errorEntries(body).filter((e) => e.code !== E.ESLURM_REST_EMPTY_RESULT);
}

function kindFromStatus(status: number): SlurmErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 502 || status === 503 || status === 504) return 'unreachable';
  // A request slurmrestd cannot parse (a raw ',' in a query is a 400) will never parse.
  if (status === 400 || status === 413 || status === 422) return 'permanent';
  return 'transient';
}

function describe(entry: SlurmErrorEntry): string {
  const text = [entry.error, entry.description].filter((s) => s !== null).join(': ');
  return `${entry.code ?? '?'} ${text || 'error'}`;
}

/** What classify is given: a failed request (no answer), or an answer's HTTP status and parsed body. */
export type SlurmOutcome = { network: unknown } | { status: number; body: unknown; accept?: (entry: SlurmErrorEntry) => boolean };

/** A classified failure; null from classify means the answer is a success. */
export interface SlurmFailure {
  kind: SlurmErrorKind;
  code: number | null;
  status: number | null;
  entries: SlurmErrorEntry[];
  message: string;
}

function networkMessage(error: unknown): string {
  const e = record(error);
  const cause = record(e?.cause);
  const code = stringOrNull(cause?.code) ?? stringOrNull(e?.code);
  const name = stringOrNull(e?.name);
  const message = stringOrNull(e?.message) ?? String(error);
  return [name === 'TimeoutError' ? 'timed out' : null, code, message].filter((s) => s !== null).join(' ');
}

/**
 * classify sorts an outcome into a SlurmFailure, or null when it is a success (2xx and no failing entry).
 * Any request that got no answer (ECONNREFUSED, a timeout, a reset, an answer dropped on the way) is
 * 'unreachable': whether it took effect is unknown, which the caller must allow for on a submit.
 */
export function classify(outcome: SlurmOutcome): SlurmFailure | null {
  if ('network' in outcome) {
    return { kind: 'unreachable', code: null, status: null, entries: [], message: `slurmrestd unreachable: ${networkMessage(outcome.network)}` };
  }
  const { status, body, accept } = outcome;
  // `accept` lets one call take an entry Slurm sends on success (see the client's uses).
  const entries = failingEntries(body).filter((e) => !accept?.(e));
  if (entries.length > 0) {
    const kinds = entries.map(classifyEntry);
    const kind = PRECEDENCE.find((k) => kinds.includes(k)) ?? 'transient';
    const decisive = entries[kinds.indexOf(kind)] ?? entries[0];
    return { kind, code: decisive?.code ?? null, status, entries, message: `slurmrestd ${status}: ${entries.map(describe).join('; ')}` };
  }
  // "Nothing found" alone is an empty answer, also when slurmdbd sends it with a 500 (GET /associations
  // of an account without any).
  if ((status >= 200 && status < 300) || errorEntries(body).length > 0) return null;
  return { kind: kindFromStatus(status), code: null, status, entries: [], message: `slurmrestd answered HTTP ${status}` };
}

/** toSlurmError turns a classified failure into the error the client throws. */
export function toSlurmError(failure: SlurmFailure, context: string, cause?: unknown): SlurmError {
  return new SlurmError(failure.kind, `${context}: ${failure.message}`, { code: failure.code, status: failure.status, entries: failure.entries, cause });
}
