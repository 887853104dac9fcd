// The portal's structured logs: one JSON object per line on stdout (pino), each carrying the request
// id, and the API token's name when a token made the call, of the request it was written in
// (server/request-scope.ts), so a line from deep in a service can be matched to the request that caused it.
import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import { env } from '~/server/env.js';
import { requestScope } from '~/server/request-scope';

export type { Logger };

/** requestFields is what every line written inside a request carries: its id and the token's name. */
export function requestFields(): { requestId?: string; token?: string } {
  const scope = requestScope();
  if (!scope) return {};
  return scope.token ? { requestId: scope.requestId, token: scope.token.name } : { requestId: scope.requestId };
}

/** createLogger builds a JSON logger at a level, writing to stdout or the given stream (tests). */
export function createLogger(options: { level: Level | 'silent'; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { pid: process.pid },
      // Level as its name and time as ISO-8601: readable by people and by log shippers alike.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: requestFields,
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

const state: { logger?: Logger } = ((globalThis as { __portalLogger?: { logger?: Logger } }).__portalLogger ??= {});

/**
 * logger returns the process's logger (LOG_LEVEL, default info), made on first use: Next bundles the
 * routes and the worker separately, and they share this one. Tests are quiet unless LOG_LEVEL asks.
 */
export function logger(): Logger {
  state.logger ??= createLogger({ level: env().LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info') });
  return state.logger;
}
