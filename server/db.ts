// The process-wide database of the running portal (server, worker, CLI). Opened once, migrated,
// and seeded with the demo centre when it is new and the portal runs in demo mode.
// Kept on globalThis: Next bundles instrumentation and routes separately, and they must share it.
import { migrateDb, openDb, type Db, type DbHandle, type DbTarget } from '~/db/client';
import { env } from './env.js';

interface AppDbState {
  promise?: Promise<DbHandle>;
}

const state: AppDbState = ((globalThis as { __portalDb?: AppDbState }).__portalDb ??= {});

/** appDbTarget describes the database the configuration points at. */
export function appDbTarget(command = 'portal server'): DbTarget {
  const config = env();
  return config.DATABASE_URL
    ? {
        driver: 'postgres',
        url: config.DATABASE_URL,
        max: config.DATABASE_POOL_MAX,
        statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
        lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
        tenantUrl: config.DATABASE_TENANT_URL,
        tenantMax: config.DATABASE_TENANT_POOL_MAX,
      }
    : { driver: 'pglite', dataDir: config.PORTAL_DATA_DIR, command };
}

/** startAppDb opens and migrates the portal's database once per process and seeds the demo centre when new. */
export function startAppDb(options: { command?: string; seed?: boolean } = {}): Promise<DbHandle> {
  state.promise ??= (async () => {
    const handle = await openDb(appDbTarget(options.command));
    try {
      // Processes starting together on one Postgres take turns (migrateDb's lock): the first migrates,
      // syncs the catalogue and seeds, the others find it done.
      await migrateDb(handle, undefined, {
        thenUnderLock: async () => {
          const config = env();
          const [{ configuredCatalogue }, { syncCatalogue }] = await Promise.all([import('./catalogue'), import('./services/catalogue')]);
          await syncCatalogue(handle.db, configuredCatalogue());
          if (options.seed !== false && config.PORTAL_ENV === 'demo' && config.DEMO_SEED === 'auto') {
            const { seedDemoCentreIfEmpty } = await import('./services/demo/demo-seed');
            await seedDemoCentreIfEmpty(handle.db, { log: console.log });
          }
        },
      });
      return handle;
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  })().catch((error: unknown) => {
    state.promise = undefined; // a failed open must not poison every later request
    throw error;
  });
  return state.promise;
}

/** getDb returns the portal's database, opening it on first use. */
export async function getDb(): Promise<Db> {
  return (await startAppDb()).db;
}

/** closeAppDb closes the process's database (CLI and tests). */
export async function closeAppDb(): Promise<void> {
  const promise = state.promise;
  state.promise = undefined;
  if (promise) await (await promise).close();
}
