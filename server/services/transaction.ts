// One way to run a service transaction: retried a bounded number of times when Postgres reports a
// deadlock, a serialization failure or a lock timeout, so such a moment of contention never reaches
// a user as a 500. The lock order every transaction follows is in server/services/ledger/README.md; with it,
// deadlocks should not happen at all, and this is the second guard. What follows a commit (the scheduler)
// gets a SchedulerStep.
import { sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Db, Tx } from '~/db/client';
import type { SchedulerPort } from '~/server/core/scheduler/port';
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

/** isTransaction tells whether a handle is already a transaction (a tenant request's, or a service's). */
export function isTransaction(db: Db | Tx): db is Tx {
  return db instanceof PgTransaction;
}

/**
 * inTransaction runs fn in a transaction and retries it on transient database errors (fn must only
 * touch the database). Given a transaction (a tenant request runs in one: server/api/trpc.ts), fn joins
 * it: no savepoint, and the request retries as a whole.
 */
export async function inTransaction<T>(db: Db | Tx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (isTransaction(db)) return fn(db);
  return withRetries(() => db.transaction(fn));
}

/**
 * withRetries runs an attempt (a whole transaction) again on transient database errors, up to
 * ATTEMPTS times with jittered back-off, then refuses with "busy"; `retryable` adds causes of its own.
 */
export async function withRetries<T>(attempt: () => Promise<T>, retryable: (error: unknown) => boolean = () => false): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isTransientDbError(error) && !retryable(error)) throw error;
      countRetry(error);
      if (n >= ATTEMPTS) {
        console.error(`[db] transaction gave up after ${ATTEMPTS} attempts:`, error);
        throw new AppError('SERVICE_UNAVAILABLE', 'error.busy');
      }
      // Jittered backoff, so the transactions that collided do not collide again.
      await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** n * (0.5 + Math.random())));
    }
  }
}

/**
 * actAsTenant makes the rest of a transaction run as the role portal_tenant for one tenant: Postgres's
 * row-level security (drizzle/0009, 0018) then shows and lets it change only that tenant's rows, and
 * none of what the role may not touch at all. One statement; the settings end with the transaction.
 */
export async function actAsTenant(tx: Tx, tenantId: string, access: 'read' | 'write'): Promise<void> {
  // A read's transaction is read-only too: a write slipped into a read is refused, even to the tenant's own rows.
  await tx.execute(
    sql`select set_config('app.tenant_id', ${tenantId}, true), set_config('role', 'portal_tenant', true), set_config('transaction_read_only', ${access === 'read' ? 'on' : 'off'}, true)`,
  );
}

/**
 * After a service's transaction, what follows the commit runs on the portal's own connection: the
 * scheduler adapter writes in transactions of its own (on PGlite's single connection it would wait for
 * the open one for ever). A tenant request's transaction is the request's, so a request passes a step
 * that commits it first and hands back the connection and the scheduler (server/api/trpc.ts
 * `afterCommit`); the worker, tests and benchmarks pass the scheduler itself.
 */
export type SchedulerStep = SchedulerPort | (() => Promise<{ db: Db; scheduler: SchedulerPort }>);

/** stepAfterCommit takes the step: the request's commit, or the scheduler as it is. */
export async function stepAfterCommit(db: Db, step: SchedulerStep): Promise<{ db: Db; scheduler: SchedulerPort }> {
  return typeof step === 'function' ? step() : { db, scheduler: step };
}
