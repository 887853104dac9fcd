// Backups and the restore drill (issue #31): `npm run backup` writes the database as pg_dump's custom format
// (an embedded PGlite folder: its data directory, compressed) with a manifest of what it holds — row counts,
// the ledger's sums by kind, the audit log's count, last id and digest, the migrations — taken in the same
// snapshot as the dump; `npm run restore` loads one into a fresh database and checks it against its manifest and
// every allocation's cached balance against its ledger. Point-in-time recovery is WAL archiving's (docs/operations.md).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';

export const MANIFEST_FORMAT = 'portal-backup/1';

/** The tables whose row counts a manifest records: the tenants, their money and work, and the audit log. */
export const COUNTED_TABLES = ['organisations', 'users', 'projects', 'allocations', 'ledger_entries', 'jobs', 'job_events', 'model_calls', 'invoices', 'invoice_lines', 'audit_events'] as const;

export interface BackupFacts {
  migrations: number;
  tables: Record<string, number>;
  /** The ledger's sum of amounts by kind (as strings: bigint sums). */
  ledger: Record<string, string>;
  audit: { count: number; lastId: number | null; sha256: string };
  /** Allocations whose cached balance differs from their ledger's sums (0 in a sound database). */
  drifted: number;
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  createdAt: string;
  driver: 'postgres' | 'pglite';
  /** Where it came from, without credentials. */
  source: string;
  serverVersion: string;
  file: string;
  bytes: number;
  sha256: string;
  facts: BackupFacts;
}

/** rowsOf runs a query and answers its rows, on either driver (PGlite answers { rows }, postgres.js the rows themselves). */
export async function rowsOf<T>(db: DbOrTx, query: ReturnType<typeof sql>): Promise<T[]> {
  const result: unknown = await db.execute(query);
  return (result && typeof result === 'object' && 'rows' in result ? result.rows : result) as T[];
}

function runner(db: DbOrTx) {
  return { rows: <T>(query: ReturnType<typeof sql>) => rowsOf<T>(db, query) };
}

/**
 * factsOf reads what a manifest records, in the caller's transaction (the dump's snapshot). Read as the
 * portal's own login: the FORCEd policies let it see every row through `service_rows`.
 */
export async function factsOf(db: DbOrTx): Promise<BackupFacts> {
  const q = runner(db);
  const [migrations] = await q.rows<{ n: number }>(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
  const tables: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    const [row] = await q.rows<{ n: number }>(sql`select count(*)::int as n from ${sql.identifier(table)}`);
    tables[table] = row!.n;
  }
  const ledgerRows = await q.rows<{ kind: string; total: string }>(sql`select kind::text as kind, sum(amount)::text as total from ledger_entries group by kind order by kind`);
  // The audit log in id order, each row's fields joined: a digest that changes if any row is lost, added or altered.
  const [audit] = await q.rows<{ n: number; last: string | null; digest: string | null }>(sql`
    select count(*)::int as n, max(id)::text as last,
           encode(sha256(convert_to(coalesce(string_agg(concat_ws('|', id, at, actor_user_id, org_id, action, target_type, target_id, reason, data::text, is_staff_action), E'\n' order by id), ''), 'UTF8')), 'hex') as digest
    from audit_events`);
  const [drift] = await q.rows<{ n: number }>(sql`
    select count(*)::int as n from allocations a
    left join (select allocation_id,
                      coalesce(sum(amount) filter (where kind in ('grant', 'adjust')), 0) as granted,
                      coalesce(sum(amount) filter (where kind = 'charge'), 0) - coalesce(sum(amount) filter (where kind = 'refund'), 0) as charged,
                      coalesce(sum(amount) filter (where kind = 'reserve'), 0) - coalesce(sum(amount) filter (where kind = 'release'), 0) as reserved,
                      coalesce(sum(amount) filter (where kind = 'expire'), 0) as expired,
                      coalesce(sum(overrun) filter (where kind = 'charge'), 0) as overrun
               from ledger_entries group by allocation_id) s on s.allocation_id = a.id
    where (a.granted, a.charged, a.reserved, a.expired, a.overrun) is distinct from (coalesce(s.granted, 0), coalesce(s.charged, 0), coalesce(s.reserved, 0), coalesce(s.expired, 0), coalesce(s.overrun, 0))`);
  return {
    migrations: migrations!.n,
    tables,
    ledger: Object.fromEntries(ledgerRows.map((r) => [r.kind, r.total])),
    audit: { count: audit!.n, lastId: audit!.last === null ? null : Number(audit!.last), sha256: audit!.digest ?? '' },
    drifted: drift!.n,
  };
}

/** compareFacts lists how restored facts differ from a manifest's (empty: they agree), and any drift of balances. */
export function compareFacts(expected: BackupFacts, restored: BackupFacts): string[] {
  const problems: string[] = [];
  if (restored.migrations !== expected.migrations) problems.push(`migrations: ${restored.migrations}, the backup had ${expected.migrations}`);
  for (const [table, n] of Object.entries(expected.tables)) if (restored.tables[table] !== n) problems.push(`${table}: ${restored.tables[table]} rows, the backup had ${n}`);
  for (const kind of new Set([...Object.keys(expected.ledger), ...Object.keys(restored.ledger)])) {
    if (restored.ledger[kind] !== expected.ledger[kind]) problems.push(`ledger ${kind}: ${restored.ledger[kind] ?? 0}, the backup had ${expected.ledger[kind] ?? 0}`);
  }
  if (restored.audit.count !== expected.audit.count || restored.audit.lastId !== expected.audit.lastId || restored.audit.sha256 !== expected.audit.sha256) {
    problems.push(`audit log: ${restored.audit.count} rows to id ${restored.audit.lastId} (digest ${restored.audit.sha256.slice(0, 12)}), the backup had ${expected.audit.count} to id ${expected.audit.lastId} (${expected.audit.sha256.slice(0, 12)})`);
  }
  if (restored.drifted > 0) problems.push(`${restored.drifted} allocation(s) whose cached balance differs from their ledger`);
  return problems;
}

/** sha256File hashes a file as it streams. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The URL without its password, for a manifest and the logs (also a multi-host one, which URL cannot parse). */
export function withoutPassword(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/, '$1@');
}

/** run runs a program to its end; rejects with its last output lines when it fails. */
export function run(program: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.on('error', (error) => reject(new Error(`${program} could not start (${error.message}): is the PostgreSQL client installed (Debian: postgresql-client)?`)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${program} ended with ${code}:\n${stderr.trim()}`))));
  });
}

/** A timestamp fit for a file name: 2026-12-06T20-15-00Z. */
export function stamp(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}

/** manifestPathOf: the manifest beside a backup file (`<file>.manifest.json`). */
export function manifestPathOf(file: string): string {
  return `${file}.manifest.json`;
}

/** readManifest reads a backup's manifest and checks the file is the one it describes (size and sha256). */
export async function readManifest(file: string): Promise<Manifest> {
  const manifestPath = manifestPathOf(file);
  const text = await fs.readFile(manifestPath, 'utf8').catch(() => {
    throw new Error(`no manifest beside the backup: ${manifestPath} (a backup is its file and its manifest; npm run backup writes both)`);
  });
  const manifest = JSON.parse(text) as Manifest;
  const format: unknown = manifest.format;
  if (format !== MANIFEST_FORMAT) throw new Error(`${manifestPath}: not a portal backup manifest (format ${JSON.stringify(format)}, expected ${MANIFEST_FORMAT})`);
  if (path.basename(file) !== manifest.file) throw new Error(`${manifestPath} describes ${manifest.file}, not ${path.basename(file)}`);
  const { size } = await fs.stat(file);
  if (size !== manifest.bytes) throw new Error(`${file} has ${size} bytes, its manifest says ${manifest.bytes}: the file is incomplete or another one`);
  const digest = await sha256File(file);
  if (digest !== manifest.sha256) throw new Error(`${file}'s sha256 is ${digest}, its manifest says ${manifest.sha256}: the file is damaged or another one`);
  return manifest;
}

/** What a backup or a restore answers. */
export interface BackupResult {
  file: string;
  manifest: Manifest;
}

/**
 * backupPostgres dumps a database with pg_dump (custom format) into `dir`, and beside it its manifest, whose
 * facts are read in the dump's own snapshot (a repeatable-read transaction exports it; pg_dump uses it), so
 * they describe exactly what the file holds, however busy the portal is meanwhile.
 */
export async function backupPostgres(db: Db, url: string, dir: string, now = new Date()): Promise<BackupResult> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(path.resolve(dir), `portal-${stamp(now)}.dump`);
  const partial = `${file}.partial`;
  const { facts, serverVersion } = await db.transaction(
    async (tx) => {
      // A large database takes longer to count and dump than the pool's time-outs allow a statement or an idle transaction.
      await tx.execute(sql`select set_config('statement_timeout', '0', true), set_config('idle_in_transaction_session_timeout', '0', true)`);
      const [snapshot] = await runner(tx).rows<{ id: string; version: string }>(sql`select pg_export_snapshot() as id, current_setting('server_version') as version`);
      const read = await factsOf(tx);
      await run('pg_dump', ['--format=custom', '--enable-row-security', `--snapshot=${snapshot!.id}`, `--file=${partial}`, '--no-password', `--dbname=${url}`]);
      return { facts: read, serverVersion: snapshot!.version };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  await fs.rename(partial, file);
  return writeManifest(file, { createdAt: now.toISOString(), driver: 'postgres', source: withoutPassword(url), serverVersion, facts });
}

/** writeManifest describes a finished backup file beside it (its size and sha256 read from the file). */
async function writeManifest(file: string, about: Pick<Manifest, 'createdAt' | 'driver' | 'source' | 'serverVersion' | 'facts'>): Promise<BackupResult> {
  const manifest: Manifest = { format: MANIFEST_FORMAT, ...about, file: path.basename(file), bytes: (await fs.stat(file)).size, sha256: await sha256File(file) };
  await fs.writeFile(manifestPathOf(file), `${JSON.stringify(manifest, null, 2)}\n`);
  return { file, manifest };
}

/** The roles a restored database's grants and policies name (docs/deploy.md#a-real-postgres). */
const PORTAL_ROLES = [
  ['portal_tenant', 'NOLOGIN NOBYPASSRLS'],
  ['portal_service', 'NOLOGIN NOBYPASSRLS'],
  ['portal_authenticator', 'NOLOGIN NOINHERIT NOBYPASSRLS'],
] as const;

/**
 * restorePostgres loads a backup into an empty database (`db`, opened on `url` as the portal's own login),
 * then reads its facts as the manifest did and compares them: `problems` is empty when every row count, the
 * ledger's sums, the audit log and every allocation's balance agree. The roles the dump's grants name are
 * made when missing (with CREATEROLE), and the login is made a member of portal_tenant and portal_service
 * as the migrations make it.
 */
export async function restorePostgres(db: Db, url: string, file: string): Promise<BackupResult & { facts: BackupFacts; problems: string[] }> {
  const manifest = await readManifest(file);
  const q = runner(db);
  const [used] = await q.rows<{ n: number }>(sql`select count(*)::int as n from pg_tables where schemaname in ('public', 'drizzle')`);
  if (used!.n > 0) throw new Error(`the database at ${withoutPassword(url)} already holds ${used!.n} tables: restore into a new, empty one (createdb …) and point the portal at it once it is checked`);
  for (const [role, options] of PORTAL_ROLES) {
    const [exists] = await q.rows<{ n: number }>(sql`select count(*)::int as n from pg_roles where rolname = ${role}`);
    if (exists!.n > 0) continue;
    try {
      await db.execute(sql.raw(`create role ${role} ${options}`));
    } catch (error) {
      throw new Error(`the role ${role} is missing and could not be created (${(error as Error).message}): as a Postgres admin, CREATE ROLE ${role} ${options};`, { cause: error });
    }
  }
  await db.execute(sql.raw('grant portal_tenant, portal_service to current_user')).catch(() => undefined); // a member already, or granted by an admin
  await db.execute(sql.raw(`grant connect on database ${JSON.stringify((await q.rows<{ name: string }>(sql`select current_database() as name`))[0]!.name)} to portal_authenticator`));
  await run('pg_restore', ['--no-owner', '--exit-on-error', '--single-transaction', '--no-password', `--dbname=${url}`, file]);
  const facts = await db.transaction((tx) => factsOf(tx), { isolationLevel: 'repeatable read', accessMode: 'read only' });
  return { file, manifest, facts, problems: compareFacts(manifest.facts, facts) };
}

/** PGlite's own dump of its data directory, as openDb's handle carries it. */
type DumpingClient = { $client: { dumpDataDir(compression: 'gzip' | 'none'): Promise<Blob> } };

/**
 * backupPglite writes an embedded database's data directory (gzip'd tar, PGlite's dumpDataDir) into `dir`, with
 * its manifest. `db` must be the folder's one open handle (the portal stopped: the folder lock says so).
 */
export async function backupPglite(db: Db, dataDir: string, dir: string, now = new Date()): Promise<BackupResult> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(path.resolve(dir), `portal-${stamp(now)}.pglite.tar.gz`);
  const facts = await factsOf(db);
  const [version] = await runner(db).rows<{ version: string }>(sql`select current_setting('server_version') as version`);
  const dump = await (db as unknown as DumpingClient).$client.dumpDataDir('gzip');
  await fs.writeFile(`${file}.partial`, Buffer.from(await dump.arrayBuffer()));
  await fs.rename(`${file}.partial`, file);
  return writeManifest(file, { createdAt: now.toISOString(), driver: 'pglite', source: `pglite:${path.resolve(dataDir)}`, serverVersion: version!.version, facts });
}
