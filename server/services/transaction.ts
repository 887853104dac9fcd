// One way to run a service transaction: retried a bounded number of times when Postgres reports a
// deadlock, a serialization failure or a lock timeout, so such a moment of contention never reaches
// a user as a 500. The lock order every transaction follows is in docs/ARCHITECTURE.md; with it,
// deadlocks should not happen at all, and this is the second guard.
import type { Db, Tx } from '~/db/client';
import { AppError, isTransientDbError } from '~/server/errors';

const ATTEMPTS = 5;

/** How many transactions were retried, by cause, since the process started (tests and the logs read it). */
export const transactionRetries = { deadlock: 0, serialization: 0, lockTimeout: 0 };

function countRetry(error: unknown): void {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === '40P01') transactionRetries.deadlock++;
    else if (code === '40001') transactionRetries.serialization++;
    else if (code === '55P03') transactionRetries.lockTimeout++;
    else continue;
    return;
  }
}

/** inTransaction runs fn in a transaction and retries it on transient database errors (fn must only touch the database). */
export async function inTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(fn);
    } catch (error) {
      if (!isTransientDbError(error)) throw error;
      countRetry(error);
      if (attempt >= ATTEMPTS) {
        console.error(`[db] transaction gave up after ${ATTEMPTS} attempts:`, error);
        throw new AppError('SERVICE_UNAVAILABLE', 'error.busy');
      }
      // Jittered backoff, so the transactions that collided do not collide again.
      await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
}
