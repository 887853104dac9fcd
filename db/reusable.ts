// Statements built once. drizzle turns a query builder into SQL text on every call, and for a select
// of a wide row that costs 60–170 µs of CPU each time (a submission runs a dozen such statements: the
// largest share of the portal's own CPU per submission, bench/slurm-submit.ts). A statement whose
// values are `sql.placeholder(...)`s has the same text every time, so `reusable` builds it on first use
// and then runs that text in whatever session it is handed — the pool or a transaction — with the
// call's values, mapping rows back exactly as drizzle does. drizzle's own `.prepare()` cannot do this:
// a prepared query is bound to the session it was built on, and most of ours run in a transaction.
import type { DbOrTx } from './client';

/** What a built drizzle query carries besides its session (drizzle-orm/pg-core/session PgPreparedQuery). */
interface BuiltQuery {
  query: { sql: string; params: unknown[] };
  fields?: unknown;
  joinsNotNullableMap?: unknown;
  customResultMapper?: unknown;
  _isResponseInArrayMode?: boolean;
}

interface Preparable {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<unknown> };
}

/** The rows (or result) a built query answers with. */
type ResultOf<B extends Preparable> = Awaited<ReturnType<ReturnType<B['prepare']>['execute']>>;

/**
 * reusable returns a function that runs the statement `build` makes (its values `sql.placeholder(name)`)
 * in the session given, with the values given by name. `name` identifies the statement in logs and to
 * the driver; the text is built the first time the function runs.
 */
export function reusable<B extends Preparable, V extends Record<string, unknown> = Record<string, unknown>>(name: string, build: (db: DbOrTx) => B): (db: DbOrTx, values: V) => Promise<ResultOf<B>> {
  let built: BuiltQuery | undefined;
  return (db, values) => {
    built ??= build(db).prepare(name) as unknown as BuiltQuery;
    const { query, fields, joinsNotNullableMap, customResultMapper, _isResponseInArrayMode } = built;
    const session = db._.session as unknown as { prepareQuery(...args: unknown[]): BuiltQuery & { execute(values: Record<string, unknown>): Promise<ResultOf<B>> } };
    const prepared = session.prepareQuery(query, fields, name, _isResponseInArrayMode, customResultMapper);
    prepared.joinsNotNullableMap = joinsNotNullableMap;
    return prepared.execute(values);
  };
}
