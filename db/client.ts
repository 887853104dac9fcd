// One factory for the database: PGlite in a folder by default, real Postgres with DATABASE_URL.
// Same schema, same migrations, same drizzle API.
import path from 'node:path';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import * as schema from './schema';
import { acquireDataDirLock } from './lock';
import { preparing } from './prepared';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Either the database or a transaction on it: services accept both. */
export type DbOrTx = Db | Tx;

export type DbTarget =
  | {
      driver: 'pglite';
      dataDir?: string;
      command?: string;
      /** A database started from this dump of a data directory (PGlite's dumpDataDir): a migrated template in memory, or a backup restored into an empty folder. */
      loadDataDir?: Blob;
    }
  | {
      driver: 'postgres';
      url: string;
      /** Pool size (default 10). */
      max?: number;
      /** statement_timeout in ms (default 30 s; 0 = none, for bulk loads). */
      statementTimeoutMs?: number;
      /** lock_timeout in ms (default 10 s; 0 = none). */
      lockTimeoutMs?: number;
      /**
       * Tenant calls' own login (the authenticator pattern, issue #31): a role with no table rights of its own
       * that may only SET ROLE portal_tenant, so a `RESET ROLE` slipped into a tenant's transaction leaves it
       * with nothing (docs/deploy.md). Unset: tenant calls share the portal's login, as on PGlite.
       */
      tenantUrl?: string;
      /** Its pool size (default 10). */
      tenantMax?: number;
    };

/** A session-level advisory lock held on its own connection. */
export interface AdvisoryLease {
  /** stillHeld asks the database whether this connection is alive and still holds the lock. */
  stillHeld: () => Promise<boolean>;
  /** release gives the lock (and its connection) back. */
  release: () => Promise<void>;
}

export interface DbHandle {
  db: Db;
  driver: DbTarget['driver'];
  close: () => Promise<void>;
  /**
   * tryAdvisoryLock takes a session-level Postgres advisory lock on a dedicated connection and keeps
   * it until released or the connection drops; null if another process holds it. PGlite always
   * succeeds: its folder lock already makes this process the only one.
   */
  tryAdvisoryLock: (key: number) => Promise<AdvisoryLease | null>;
}

/** The pool of tenant calls' login, when it is not the portal's own (openDb's `tenantUrl`). */
const tenantPools = new WeakMap<Db, Db>();

/**
 * tenantSide is the connection pool a tenant's transaction runs on: the authenticator's when the database
 * was opened with one (`tenantUrl`), else the portal's own. The transaction then switches to portal_tenant
 * (server/services/transaction.ts `actAsTenant`); what follows its commit runs on `db` itself.
 */
export function tenantSide(db: Db): Db {
  return tenantPools.get(db) ?? db;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_SECONDS = 10;
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
// A session idle inside a transaction (a crashed request handler) would keep its row locks forever.
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export const MIGRATIONS_FOLDER = path.join(process.cwd(), 'drizzle');

/** openDb opens (but does not migrate) a database; an embedded folder is locked to this process. */
export async function openDb(target: DbTarget): Promise<DbHandle> {
  if (target.driver === 'postgres') {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const pool = (url: string, max: number) =>
      postgres(url, {
        max,
        // A call waits this long for a connection (the driver's default is 30 s): while the primary fails over,
        // a call answers 503 within seconds and its client retries, instead of hanging half a minute.
        connect_timeout: CONNECT_TIMEOUT_SECONDS,
        onnotice: () => undefined,
        connection: {
          statement_timeout: target.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
          lock_timeout: target.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
          idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
        },
      });
    const client = pool(target.url, target.max ?? 10);
    const db = drizzle(preparing(client), { schema }) as unknown as Db;
    const tenantClient = target.tenantUrl ? pool(target.tenantUrl, target.tenantMax ?? 10) : null;
    if (tenantClient) tenantPools.set(db, drizzle(preparing(tenantClient), { schema }));
    const lockClients = new Set<ReturnType<typeof postgres>>();
    return {
      db,
      driver: 'postgres',
      close: async () => {
        for (const lockClient of lockClients) await lockClient.end({ timeout: 1 }).catch(() => undefined);
        lockClients.clear();
        await Promise.all([client.end({ timeout: 5 }), tenantClient?.end({ timeout: 5 })]);
      },
      tryAdvisoryLock: async (key) => {
        // The lock lives on a connection of its own, outside the pool: when it is lost the connection
        // may be dead, and it is then thrown away instead of going back to the pool (postgres.js hangs
        // on a dead connection handed out again).
        const lockClient = postgres(target.url, { max: 1, onnotice: () => undefined, idle_timeout: 0 });
        const drop = () => void lockClient.end({ timeout: 1 }).catch(() => undefined);
        let row: { ok: boolean; pid: number; since: string } | undefined;
        try {
          [row] = await lockClient<{ ok: boolean; pid: number; since: string }[]>`
            select pg_try_advisory_lock(${key}) as ok, pg_backend_pid() as pid,
                   (select backend_start::text from pg_stat_activity where pid = pg_backend_pid()) as since`;
        } catch (error) {
          drop();
          throw error;
        }
        if (!row?.ok) {
          drop();
          return null;
        }
        const holder = row;
        lockClients.add(lockClient);
        let lost = false;
        const letGo = () => {
          lost = true;
          if (lockClients.delete(lockClient)) drop();
        };
        return {
          release: async () => {
            if (!lockClients.has(lockClient)) return;
            if (!lost) await lockClient`select pg_advisory_unlock(${key})`.catch(() => undefined);
            letGo();
          },
          // Asked on the pool, never on the lock's own connection (it may be dead): does that backend
          // (pid and start time, so a reused pid does not count) still hold the lock?
          stillHeld: async () => {
            if (lost) return false;
            const [check] = await client<{ held: boolean }[]>`
              select exists (select 1 from pg_locks l join pg_stat_activity a on a.pid = l.pid
                             where l.locktype = 'advisory' and l.granted and l.pid = ${holder.pid}
                               and a.backend_start::text = ${holder.since}
                               and ((l.classid::bigint << 32) | l.objid::bigint) = ${key}::bigint) as held`.catch(() => [{ held: false }]);
            if (!check?.held) letGo();
            return Boolean(check?.held);
          },
        };
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  let release: (() => void) | undefined;
  if (target.dataDir) release = acquireDataDirLock(path.resolve(target.dataDir), target.command ?? 'portal');
  try {
    const load = target.loadDataDir ? { loadDataDir: target.loadDataDir } : {};
    const client = target.dataDir ? await PGlite.create(path.resolve(target.dataDir, 'pgdata'), load) : await PGlite.create(load);
    const db = drizzle(client, { schema }) as unknown as Db;
    return {
      db,
      driver: 'pglite',
      close: async () => {
        await client.close();
        release?.();
      },
      tryAdvisoryLock: () => Promise.resolve({ stillHeld: () => Promise.resolve(true), release: () => Promise.resolve() }),
    };
  } catch (error) {
    release?.();
    throw error;
  }
}

/** The advisory lock that makes processes starting together on one Postgres migrate one after another. */
export const MIGRATE_LOCK_KEY = 7_260_002;

/**
 * migrateDb applies the committed migrations in drizzle/ (tests of a migration may name a folder holding
 * only the earlier ones). On Postgres under an advisory lock: several web processes starting at once on a
 * fresh database would otherwise each create the first types and tables, and all but one fail; the ones
 * that wait find the work done. `thenUnderLock` runs after the migrations, still under the lock (the
 * portal's start: the catalogue's sync and the demo centre's seed, which a second process must find done).
 */
export async function migrateDb(handle: DbHandle, migrationsFolder = MIGRATIONS_FOLDER, options: { thenUnderLock?: () => Promise<void> } = {}): Promise<void> {
  if (handle.driver === 'postgres') {
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    const giveUpAt = Date.now() + 10 * 60_000;
    let lease = await handle.tryAdvisoryLock(MIGRATE_LOCK_KEY);
    while (!lease) {
      if (Date.now() > giveUpAt) throw new Error(`another process has held the migration lock (pg advisory lock ${MIGRATE_LOCK_KEY}) for 10 minutes: is a migration stuck?`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      lease = await handle.tryAdvisoryLock(MIGRATE_LOCK_KEY);
    }
    try {
      await migrate(handle.db as never, { migrationsFolder });
      await options.thenUnderLock?.();
    } finally {
      await lease.release();
    }
  } else {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(handle.db as never, { migrationsFolder });
    await options.thenUnderLock?.();
  }
}
