// Domain errors. Services throw AppError; the tRPC layer maps it to a tRPC code in one place
// and renders its message in the caller's language.
import type { MessageKey, MessageParams } from './i18n';

export type AppErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  /** Well-formed but not to be done as asked (an idempotency key reused with another body): HTTP 422. */
  | 'UNPROCESSABLE_CONTENT'
  /** Too large for what is left (a project's storage quota): HTTP 413, as tus answers an upload over its limit. */
  | 'PAYLOAD_TOO_LARGE'
  | 'TOO_MANY_REQUESTS'
  | 'SERVICE_UNAVAILABLE';

/**
 * A refusal that clients tell apart by a name of its own, not only by its HTTP status: the REST API
 * answers it as its `code` (and tRPC as `data.reason`).
 */
export const ERROR_REASONS: Partial<Record<MessageKey, string>> = {
  'job.idempotencyKeyReused': 'idempotency_key_reused',
};

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    readonly key: MessageKey,
    readonly params: MessageParams = {},
    /** The input field the error is about, so a form can show it beside that field. */
    readonly field?: string,
  ) {
    super(key);
    this.name = 'AppError';
  }
}

/** isUniqueViolation tells whether a database error is a unique-constraint violation (optionally on one constraint). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const candidate = e as { code?: unknown; constraint?: unknown; constraint_name?: unknown };
    if (candidate.code === '23505') {
      const name = candidate.constraint ?? candidate.constraint_name;
      return constraint === undefined || name === constraint;
    }
  }
  return false;
}

/** Postgres error codes that mean "try the transaction again": serialization failure, deadlock, lock timeout. */
const TRANSIENT_CODES = new Set(['40001', '40P01', '55P03']);

/** isTransientDbError tells whether a database error would likely not happen again on a retry. */
export function isTransientDbError(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  }
  return false;
}

/**
 * What the database answers, or the driver reports, while it cannot be reached or is switching to another
 * server (a fail-over): the server shutting down or starting (57P01–57P03), a connection lost or refused
 * (class 08), and the driver's own connection errors and the socket's.
 */
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * isDatabaseUnavailable tells whether an error means the database could not be reached (or was lost in the
 * middle of the call): the caller is told 503 with Retry-After, never 500. A call that failed so may or may
 * not have committed; a submission's Idempotency-Key makes the client's retry safe either way.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  }
  return false;
}

/** Seconds a client is asked to wait (Retry-After) when the database is unavailable: about a fail-over's time. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** isStatementTimeout tells whether a database error is a statement cancelled by statement_timeout. */
export function isStatementTimeout(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === '57014') return true;
  }
  return false;
}
