// Throw-away databases for the live-path benchmarks: created on a real Postgres, dropped at the end —
// also after a failure or Ctrl-C — unless the run asks to keep them.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  name: string;
  url: string;
  /** drop removes the database (forcing out open connections), or only says where it is with keep. */
  drop: () => Promise<void>;
}

/** What to undo when the run is interrupted, newest first (a server before its database). */
const cleanups: (() => Promise<void>)[] = [];
let interrupted = false;
let listening = false;

async function onSignal(signal: NodeJS.Signals): Promise<void> {
  if (interrupted) process.exit(130);
  interrupted = true;
  process.stderr.write(`\n${signal}: cleaning up…\n`);
  for (const cleanup of [...cleanups].reverse()) await cleanup().catch((error: unknown) => process.stderr.write(`${String(error)}\n`));
  process.exit(130);
}

/** wasInterrupted tells whether SIGINT or SIGTERM stopped the run (its errors are then expected). */
export function wasInterrupted(): boolean {
  return interrupted;
}

/** atInterrupt runs `cleanup` if the run is stopped by SIGINT or SIGTERM; the returned function unregisters it. */
export function atInterrupt(cleanup: () => Promise<void>): () => void {
  if (!listening) {
    listening = true;
    process.on('SIGINT', (signal) => void onSignal(signal));
    process.on('SIGTERM', (signal) => void onSignal(signal));
  }
  cleanups.push(cleanup);
  return () => {
    const i = cleanups.indexOf(cleanup);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

/** urlOf returns the admin URL with its database replaced by `name`. */
export function urlOf(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** createBenchDatabase creates an empty database `portal_bench_<random>` through the admin URL. */
export async function createBenchDatabase(adminUrl: string, options: { keep: boolean; log: (line: string) => void }): Promise<BenchDatabase> {
  const name = `portal_bench_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  let dropped = false;
  let unregister = () => {};
  const database: BenchDatabase = {
    name,
    url: urlOf(adminUrl, name),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      unregister();
      if (options.keep) {
        options.log(`kept database ${name} (--keep): drop it with \`dropdb -h 127.0.0.1 -U postgres --force ${name}\``);
        return;
      }
      const client = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      try {
        await client.unsafe(`drop database if exists ${name} with (force)`);
        options.log(`dropped database ${name}`);
      } finally {
        await client.end({ timeout: 5 });
      }
    },
  };
  unregister = atInterrupt(database.drop);
  return database;
}

/**
 * describeServer names the Postgres version and the role the portal connects as, and whether
 * row-level security binds it: a superuser walks through the policies (drizzle/0018 FORCEs them on
 * the owner), so the realistic figure is a run as a role like docs/deploy.md's `portal`.
 */
export async function describeServer(adminUrl: string): Promise<string> {
  const { default: postgres } = await import('postgres');
  const client = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await client<{ v: string; role: string; superuser: boolean }[]>`select version() as v, current_user as role, (select rolsuper or rolbypassrls from pg_roles where rolname = current_user) as superuser`;
    const version = /^PostgreSQL [\d.]+/.exec(row?.v ?? '')?.[0] ?? 'PostgreSQL ?';
    return `${version} (the portal connects as \`${row?.role ?? '?'}\`, ${row?.superuser ? 'a superuser: row-level security does not bind its own path' : 'no superuser: row-level security binds every path'})`;
  } finally {
    await client.end({ timeout: 5 });
  }
}

