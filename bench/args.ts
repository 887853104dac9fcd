// Command-line flags of the benchmark scripts: `--name value`, integers with optional `_` separators.
import { DEFAULT_ADMIN_URL } from './database';

/** A bad argument: printed without a stack. */
export class UsageError extends Error {}

/** flag returns the value after `name` on the command line, if given. */
export function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** intFlag returns `name` as a whole number ≥ min (default 1), or the fallback when it is not given. */
export function intFlag(name: string, fallback: number, min = 1): number {
  const raw = flag(name);
  if (raw === undefined) return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${name} must be an integer ≥ ${min}, got ${raw}`);
  return n;
}

/** The flags every benchmark of the production server takes (bench/http-server.ts starts it). */
export interface ServerBenchFlags {
  /** Postgres to make the bench database in: --database-url, else BENCH_ADMIN_URL, else the local one. */
  adminUrl: string;
  port: number;
  /** --rebuild: build even when .next is current; --no-build: use .next as it is. */
  rebuild: boolean;
  reuseBuild: boolean;
  webpack: boolean;
  keep: boolean;
  /** Unless --no-write: the section goes into BENCHMARKS.md. */
  write: boolean;
}

/** serverBenchFlags reads those flags, the server on `defaultPort` unless --port says otherwise. */
export function serverBenchFlags(defaultPort: number): ServerBenchFlags {
  const has = (name: string) => process.argv.includes(name);
  return {
    adminUrl: flag('--database-url') ?? process.env.BENCH_ADMIN_URL ?? DEFAULT_ADMIN_URL,
    port: intFlag('--port', defaultPort),
    rebuild: has('--rebuild'),
    reuseBuild: has('--no-build'),
    webpack: has('--webpack'),
    keep: has('--keep'),
    write: !has('--no-write'),
  };
}
