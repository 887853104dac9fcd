// Which database errors mean "unavailable" (503 with Retry-After) and which do not (a 500, a refusal).
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isTransientDbError } from './errors';

/** An error as drizzle wraps the driver's: the driver's error is the cause. */
const wrapped = (cause: object) => Object.assign(new Error('Failed query: insert into jobs …'), { cause: Object.assign(new Error('driver'), cause) });

describe('isDatabaseUnavailable', () => {
  it('knows a lost, refused or shutting-down server, however deeply wrapped', () => {
    for (const code of ['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', '57P01', '57P03', '08006']) {
      expect(isDatabaseUnavailable(wrapped({ code })), code).toBe(true);
      expect(isDatabaseUnavailable({ code }), code).toBe(true);
    }
  });

  it('leaves contention, bad SQL, a constraint and a write in a read-only transaction alone', () => {
    for (const code of ['40001', '40P01', '55P03', '42601', '23505', '23514', '25006', '42501']) expect(isDatabaseUnavailable(wrapped({ code })), code).toBe(false);
    expect(isDatabaseUnavailable(new Error('no code'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    // Contention is retried, not "unavailable".
    expect(isTransientDbError(wrapped({ code: '40P01' }))).toBe(true);
    expect(isTransientDbError(wrapped({ code: 'CONNECTION_CLOSED' }))).toBe(false);
  });
});
