// Command-line flags of the benchmark scripts: `--name value`, integers with optional `_` separators.

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
