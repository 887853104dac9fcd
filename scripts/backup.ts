// `npm run backup [-- --dir backups]`: the configured database, as pg_dump's custom format (PGlite: its data
// folder, compressed), with a manifest beside it (server/backup.ts). The embedded database is one process's:
// stop the portal first. Production: also archive the WAL for point-in-time recovery (docs/operations.md#backups).
import path from 'node:path';
import { openDb } from '~/db/client';
import { DataDirLockedError } from '~/db/lock';
import { backupPglite, backupPostgres, withoutPassword } from '~/server/backup';
import { ConfigError, env } from '~/server/env.js';

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

async function main(): Promise<void> {
  const config = env();
  const dir = flag('--dir') ?? process.env.BACKUP_DIR ?? 'backups';
  const started = Date.now();
  const url = config.DATABASE_URL;
  const handle = url ? await openDb({ driver: 'postgres', url, max: 2 }) : await openDb({ driver: 'pglite', dataDir: config.PORTAL_DATA_DIR, command: 'npm run backup' });
  try {
    const { file, manifest } = url ? await backupPostgres(handle.db, url, dir) : await backupPglite(handle.db, config.PORTAL_DATA_DIR, dir);
    const f = manifest.facts;
    console.log(`Backed up ${url ? withoutPassword(url) : path.resolve(config.PORTAL_DATA_DIR)} in ${((Date.now() - started) / 1000).toFixed(1)} s:`);
    console.log(`  ${file} (${(manifest.bytes / 1e6).toFixed(1)} MB, sha256 ${manifest.sha256.slice(0, 16)}…) and its manifest ${path.basename(file)}.manifest.json`);
    console.log(`  ${f.tables.organisations} tenants, ${f.tables.allocations} allocations, ${f.tables.ledger_entries} ledger rows, ${f.tables.jobs} jobs, ${f.audit.count} audit events, ${f.migrations} migrations`);
    if (f.drifted > 0) console.warn(`  warning: ${f.drifted} allocation(s) whose cached balance differs from their ledger, as it was backed up`);
  } finally {
    await handle.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof DataDirLockedError || error instanceof ConfigError) console.error(error.message);
  else console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
