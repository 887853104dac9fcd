// A tenant's call runs in one transaction as the role portal_tenant (row-level security, the second
// wall): reads and writes alike. A mutation is retried as a whole on contention, and may end its
// transaction early with `commit()` to do what must follow the commit on the portal's own connection
// (handing a job to the scheduler, whose adapter writes in transactions of its own). The transaction runs on
// the tenant calls' own login when there is one (db/client.ts `tenantSide`); what follows the commit on `db`.
import { tenantSide, type Db, type Tx } from '~/db/client';
import { isTransientDbError, isUniqueViolation } from '~/server/errors';
import { actAsTenant, withRetries } from '~/server/services/transaction';

/** What tRPC's `next()` answers: a result, or a failure with its cause. */
interface Outcome {
  ok: boolean;
  error?: { cause?: unknown };
}

/** Carries a failed call's outcome out of its transaction, which the throw rolls back. */
class RolledBack<R> extends Error {
  constructor(readonly outcome: R) {
    super('rolled back');
  }
}

/**
 * A second request with the idempotency key of one still in flight waits for it on the unique index,
 * then fails; run again, it finds the first job and answers with it (server/services/jobs/jobs.ts).
 */
function isIdempotencyConflict(error: unknown): boolean {
  return isUniqueViolation(error, 'jobs_idempotency_idx');
}

/** readAsTenant runs a tenant's read in a transaction as that tenant. */
export function readAsTenant<R>(db: Db, tenantId: string, run: (tx: Db) => Promise<R>): Promise<R> {
  return tenantSide(db).transaction(async (tx) => {
    const [, result] = await Promise.all([actAsTenant(tx, tenantId, 'read'), run(tx)]);
    return result;
  });
}

/**
 * mutateAsTenant runs a tenant's mutation in a transaction as that tenant: committed when the call
 * succeeds, rolled back when it fails, run again (up to five times) when it failed on contention
 * before it committed. `commit` ends the transaction before the call returns and hands back the
 * portal's own connection; the call must not use its transaction after that.
 */
export function mutateAsTenant<R extends Outcome>(db: Db, tenantId: string, run: (tx: Db, commit: () => Promise<Db>) => Promise<R>): Promise<R> {
  const once = async (): Promise<R> => {
    let commitAsked = false;
    let askCommit!: () => void;
    const asked = new Promise<undefined>((resolve) => (askCommit = () => resolve(undefined)));
    let outcome: Promise<R> | undefined;
    const transaction: Promise<void> = tenantSide(db).transaction(async (tx: Tx) => {
      const acting = actAsTenant(tx, tenantId, 'write');
      acting.catch(() => undefined); // awaited below; a failure must not count as unhandled meanwhile
      const commit = async () => {
        commitAsked = true;
        askCommit();
        await transaction;
        return db;
      };
      outcome = run(tx, commit);
      const finished = await Promise.race([outcome, asked]);
      await acting;
      if (finished && !finished.ok) throw new RolledBack(finished);
    });
    try {
      await transaction;
    } catch (error) {
      // Asked to commit: the call saw the commit's failure itself and answers for it.
      if (commitAsked && outcome) return outcome;
      if (!(error instanceof RolledBack)) throw error;
      const failed = (error as RolledBack<R>).outcome;
      // Thrown, the cause lets withRetries decide: contention is tried again, anything else answers as it is.
      const cause = failed.error?.cause;
      if (cause instanceof Error && isRetryable(cause)) throw cause;
      return failed;
    }
    return outcome!;
  };
  return withRetries(once, isIdempotencyConflict);
}

/** isRetryable: what withRetries would try again (contention, or an idempotency key in flight). */
function isRetryable(cause: unknown): boolean {
  return isIdempotencyConflict(cause) || isTransientDbError(cause);
}
