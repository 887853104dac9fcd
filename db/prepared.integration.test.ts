// drizzle's statements on Postgres are prepared (db/prepared.ts): described once per connection and
// then run in one round trip, inside transactions too; bulk statements with many parameters are not.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle, Tx } from '~/db/client';
import { users } from '~/db/schema';
import { openTestDb } from '~/server/testing/harness';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** The statements prepared on the connection the transaction runs on. */
async function preparedOn(tx: Tx): Promise<string[]> {
  const rows = await tx.select({ statement: sql<string>`statement` }).from(sql`pg_prepared_statements`);
  return rows.map((r) => r.statement);
}

describe.runIf(onPostgres)('prepared statements on postgres', () => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb('postgres');
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('prepares parametrised statements inside a transaction and reuses them', async () => {
    const marker = `prepared-${Date.now()}`;
    await handle.db.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) {
        const found = await tx.select({ id: users.id }).from(users).where(sql`${users.email} = ${marker}`);
        expect(found).toEqual([]);
      }
      const statements = (await preparedOn(tx)).filter((s) => s.includes('from "users"') && s.includes('"email" = $1'));
      expect(statements).toHaveLength(1);
    });
  });

  it('leaves statements with many parameters unnamed', async () => {
    const values = Array.from({ length: 80 }, (_, i) => `many-${i}`);
    await handle.db.transaction(async (tx) => {
      const found = await tx.select({ id: users.id }).from(users).where(sql`${users.email} in (${sql.join(values.map((v) => sql`${v}`), sql`, `)})`);
      expect(found).toEqual([]);
      expect((await preparedOn(tx)).some((s) => s.includes('$80'))).toBe(false);
    });
  });
});
