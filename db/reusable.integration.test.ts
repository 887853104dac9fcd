// A statement built once (db/reusable.ts) runs in whatever session it is handed: in a transaction it
// sees that transaction's own rows and is rolled back with it, on the pool it sees committed rows only;
// rows come back mapped as drizzle maps them (camelCase, Dates, a left join's missing side as null).
// On PGlite and real Postgres.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { sessions, users } from '~/db/schema';
import { dbTargets, openTestDb } from '~/server/testing/harness';
import { reusable } from './reusable';

const userWithSession = reusable('test_user_with_session', (db) =>
  db
    .select({ id: users.id, email: users.email, createdAt: users.createdAt, sessionId: sessions.id })
    .from(users)
    .leftJoin(sessions, eq(sessions.userId, users.id))
    .where(eq(users.email, sql.placeholder('email'))),
);
const insertUser = reusable('test_insert_user', (db) => db.insert(users).values({ email: sql.placeholder('email'), name: sql.placeholder('name'), passwordHash: 'x' }).returning({ id: users.id, name: users.name }));

describe.each(dbTargets())('reusable statements on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('runs in a transaction (its own rows, rolled back with it) and on the pool, with the values given', async () => {
    const { db } = handle;
    const email = `reusable-${Date.now()}@example.org`;
    await expect(
      db.transaction(async (tx) => {
        const [inserted] = await insertUser(tx, { email, name: 'Inside' });
        expect(inserted?.name).toBe('Inside');
        const seen = await userWithSession(tx, { email });
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatchObject({ id: inserted!.id, email, sessionId: null });
        expect(seen[0]!.createdAt).toBeInstanceOf(Date);
        // Not committed: the pool does not see it (PGlite has one connection, which the transaction holds).
        if (target === 'postgres') expect(await userWithSession(db, { email })).toEqual([]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await userWithSession(db, { email })).toEqual([]);

    const [committed] = await insertUser(db, { email, name: 'Outside' });
    const other = `other-${email}`;
    await insertUser(db, { email: other, name: 'Other' });
    const [found] = await userWithSession(db, { email });
    expect(found).toMatchObject({ id: committed!.id, email, sessionId: null });
    expect(found!.createdAt).toBeInstanceOf(Date);
    expect((await userWithSession(db, { email: other }))[0]?.email).toBe(other);
  });

  it('names the missing value', async () => {
    await expect(userWithSession(handle.db, {})).rejects.toThrow('No value for placeholder "email"');
  });
});
