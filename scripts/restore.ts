// `npm run restore -- <backup file> [--database-url postgres://… | --data-dir folder]`: loads a backup of
// `npm run backup` into an empty database (DATABASE_URL's, or an empty PGlite folder), then checks it against
// its manifest — every row count, the ledger's sums, the audit log (count, last id, digest) — and every
// allocation's cached balance against its ledger (server/backup.ts). Exit code 1 when anything differs.
import fs from 'node:fs';
import path from 'node:path';
import { openDb } from '~/db/client';
import { DataDirLockedError } from '~/db/lock';
import { compareFacts, factsOf, readManifest, restorePostgres, withoutPassword, type BackupFacts } from '~/server/backup';
import { ConfigError, env } from '~/server/env.js';

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

async function main(): Promise<void> {
  const file = process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && !['--database-url', '--data-dir'].includes(all[i - 1] ?? ''));
  if (!file) throw new ConfigError('usage: npm run restore -- <backup file> [--database-url postgres://… | --data-dir folder]');
  const config = env();
  const started = Date.now();
  const manifest = await readManifest(file);
  let facts: BackupFacts;
  let problems: string[];
  let target: string;
  if (manifest.driver === 'postgres') {
    const url = flag('--database-url') ?? config.DATABASE_URL;
    if (!url) throw new ConfigError('a pg_dump backup restores into Postgres: name an empty database with --database-url or DATABASE_URL');
    target = withoutPassword(url);
    const handle = await openDb({ driver: 'postgres', url, max: 2, statementTimeoutMs: 0 });
    try {
      ({ facts, problems } = await restorePostgres(handle.db, url, file));
    } finally {
      await handle.close();
    }
  } else {
    const dataDir = path.resolve(flag('--data-dir') ?? config.PORTAL_DATA_DIR);
    target = dataDir;
    if (fs.existsSync(path.join(dataDir, 'pgdata')) && fs.readdirSync(path.join(dataDir, 'pgdata')).length > 0) {
      throw new ConfigError(`${dataDir} already holds a database: restore into a new folder (--data-dir) and point PORTAL_DATA_DIR at it once it is checked`);
    }
    const handle = await openDb({ driver: 'pglite', dataDir, command: 'npm run restore', loadDataDir: new Blob([fs.readFileSync(file)]) });
    try {
      facts = await factsOf(handle.db);
      problems = compareFacts(manifest.facts, facts);
    } finally {
      await handle.close();
    }
  }
  console.log(`Restored ${path.basename(file)} (backed up ${manifest.createdAt} from ${manifest.source}) into ${target} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  console.log(`  ${facts.tables.organisations} tenants, ${facts.tables.allocations} allocations, ${facts.tables.ledger_entries} ledger rows, ${facts.tables.jobs} jobs, ${facts.audit.count} audit events, ${facts.migrations} migrations`);
  if (problems.length === 0) {
    console.log('  Checked: every count, the ledger’s sums and the audit log match the manifest; every allocation’s balance matches its ledger.');
    return;
  }
  console.error(`  The restored database differs from its backup:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exitCode = 1;
}

main().catch((error: unknown) => {
  if (error instanceof DataDirLockedError || error instanceof ConfigError) console.error(error.message);
  else console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
