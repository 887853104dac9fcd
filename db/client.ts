// One factory for the database: PGlite in a folder by default, real Postgres with DATABASE_URL.
// Same schema, same migrations, same drizzle API.
import path from 'node:path';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import * as schema from './schema';
import { acquireDataDirLock } from './lock';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Either the database or a transaction on it: services accept both. */
export type DbOrTx = Db | Tx;

export type DbTarget =
  | { driver: 'pglite'; dataDir?: string; command?: string }
  | { driver: 'postgres'; url: string; max?: number };

export interface DbHandle {
  db: Db;
  driver: DbTarget['driver'];
  close: () => Promise<void>;
  /**
   * tryAdvisoryLock takes a session-level Postgres advisory lock on a dedicated connection and
   * keeps it while the process lives; false if another process holds it. PGlite always succeeds:
   * its folder lock already makes this process the only one.
   */
  tryAdvisoryLock: (key: number) => Promise<boolean>;
}

export const MIGRATIONS_FOLDER = path.join(process.cwd(), 'drizzle');

/** openDb opens (but does not migrate) a database; an embedded folder is locked to this process. */
export async function openDb(target: DbTarget): Promise<DbHandle> {
  if (target.driver === 'postgres') {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const client = postgres(target.url, { max: target.max ?? 10, onnotice: () => undefined });
    const db = drizzle(client, { schema }) as unknown as Db;
    const held: Awaited<ReturnType<typeof client.reserve>>[] = [];
    return {
      db,
      driver: 'postgres',
      close: async () => {
        for (const connection of held) connection.release();
        await client.end({ timeout: 5 });
      },
      tryAdvisoryLock: async (key) => {
        const connection = await client.reserve();
        const [row] = await connection<{ ok: boolean }[]>`select pg_try_advisory_lock(${key}) as ok`;
        if (row?.ok) held.push(connection);
        else connection.release();
        return Boolean(row?.ok);
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  let release: (() => void) | undefined;
  if (target.dataDir) release = acquireDataDirLock(path.resolve(target.dataDir), target.command ?? 'portal');
  try {
    const client = target.dataDir ? await PGlite.create(path.resolve(target.dataDir, 'pgdata')) : await PGlite.create();
    const db = drizzle(client, { schema }) as unknown as Db;
    return {
      db,
      driver: 'pglite',
      close: async () => {
        await client.close();
        release?.();
      },
      tryAdvisoryLock: () => Promise.resolve(true),
    };
  } catch (error) {
    release?.();
    throw error;
  }
}

/** migrateDb applies the committed migrations in drizzle/ (tests of a migration may name a folder holding only the earlier ones). */
export async function migrateDb(handle: DbHandle, migrationsFolder = MIGRATIONS_FOLDER): Promise<void> {
  if (handle.driver === 'postgres') {
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    await migrate(handle.db as never, { migrationsFolder });
  } else {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(handle.db as never, { migrationsFolder });
  }
}
