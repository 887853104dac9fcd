// drizzle hands every statement to postgres.js as `unsafe(text, params, { prepare: false })` unless a
// query is built with `.prepare(name)`. An unnamed statement with parameters costs postgres.js two
// round trips (Parse + Describe first, to learn the parameter types, then Bind + Execute) and costs
// Postgres a parse and a plan every time. A prepared one is described once per connection, then runs
// in one round trip from the cached plan. Our statements are few and their text is stable (values
// travel as parameters), so preparing them all is what the driver's own tagged templates do anyway.
import type { Sql } from 'postgres';

/**
 * Statements with more parameters than this (bulk inserts whose text changes with the row count)
 * stay unnamed: each row count would otherwise be one more statement cached on every connection.
 * The cache of the others lives as long as its connection (postgres.js replaces a connection after
 * 30–60 minutes), and a statement whose table changed shape is prepared again by the driver.
 */
const MAX_PREPARED_PARAMETERS = 64;

type Fn = (...args: unknown[]) => unknown;

/** preparing wraps a postgres.js client so that drizzle's statements (and those of its transactions) are prepared. */
export function preparing<T extends Sql>(sql: T): T {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === 'unsafe') {
        return (text: string, params?: unknown[], options?: Record<string, unknown>) => {
          const count = Array.isArray(params) ? params.length : 0;
          const prepare = count > 0 && count <= MAX_PREPARED_PARAMETERS;
          return (target.unsafe as Fn)(text, params, { ...options, prepare });
        };
      }
      if (prop === 'begin' || prop === 'savepoint') {
        // The callback receives a scoped client for the transaction: wrap that one too.
        return (...args: unknown[]) => {
          const fn = args.pop() as (scoped: T) => unknown;
          return ((target as unknown as Record<string, Fn>)[prop] as Fn)(...args, (scoped: T) => fn(preparing(scoped)));
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}
