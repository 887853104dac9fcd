// What the CLI's exit code means, so a script can tell "the job failed" from "the token expired"
// from "the portal is down". One table, shown in --help and used by main.mjs.
import { ApiError, NotTheApiError, NetworkError } from './api.mjs';

export const EXIT = Object.freeze({
  OK: 0,
  /** The watched job ended other than COMPLETED, or anything not covered below. */
  FAILED: 1,
  /** Bad flags, a bad job file, or a question that needs a terminal. */
  USAGE: 2,
  /** No token, or the portal refused it (401) or its scopes (403). */
  AUTH: 3,
  NOT_FOUND: 4,
  /** The portal refused the request: validation, a conflict, a limit (400, 409, 422, 429). */
  REFUSED: 5,
  /** The portal could not be reached, answered 5xx, or is not a portal at that address. */
  UNREACHABLE: 6,
  /** Stopped by Ctrl-C (`jobs logs --follow`), as a shell reports SIGINT. */
  INTERRUPTED: 130,
});

export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  the watched or followed job ended other than COMPLETED; an upload whose SHA-256 differs; any other failure
  2  usage error (bad flags, bad job file, confirmation needed without a terminal)
  3  not authenticated: no token, or the portal refused it (401) or its scopes (403)
  4  not found (404)
  5  refused by the portal: validation, conflict or rate limit (400, 409, 422, 429)
  6  server error (5xx) or the portal is unreachable (a transfer broken off: run it again, it resumes)
  130  stopped by Ctrl-C`;

/** UsageError is a mistake in how the CLI was called; it exits 2 and points at --help. */
export class UsageError extends Error {
  name = 'UsageError';
}

/** NotSignedInError: no token is configured; it exits 3 and says to run `login`. */
export class NotSignedInError extends Error {
  name = 'NotSignedInError';
}

/** exitCodeFor maps an error the CLI caught to its documented exit code. */
export function exitCodeFor(error) {
  if (error instanceof UsageError) return EXIT.USAGE;
  if (error instanceof NotSignedInError) return EXIT.AUTH;
  if (error instanceof NetworkError || error instanceof NotTheApiError) return EXIT.UNREACHABLE;
  if (error instanceof ApiError) {
    if (error.status === 401 || error.status === 403) return EXIT.AUTH;
    if (error.status === 404) return EXIT.NOT_FOUND;
    if ([400, 409, 422, 429].includes(error.status)) return EXIT.REFUSED;
    if (error.status >= 500) return EXIT.UNREACHABLE;
  }
  return EXIT.FAILED;
}
