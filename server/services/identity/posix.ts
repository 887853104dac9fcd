// A person's POSIX user on the cluster: read once it is set (by the single sign-on's claim or by staff),
// made from the mail address when first needed otherwise (server/core/scheduler/identity.ts).
import { and, eq, isNull } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { users } from '~/db/schema';
import { posixNameCandidates } from '~/server/core/scheduler/identity';
import { isUniqueViolation } from '~/server/errors';

/** How many taken names are tried before giving up (a centre with a hundred Anna Müllers is unheard of). */
const MAX_TRIES = 100;

/** posixNameOf returns the person's POSIX user name, giving them one when they have none yet. */
export async function posixNameOf(db: DbOrTx, userId: string): Promise<string> {
  const [row] = await db.select({ posixName: users.posixName, email: users.email }).from(users).where(eq(users.id, userId));
  if (!row) throw new Error(`posixNameOf: no such person ${userId}`);
  if (row.posixName) return row.posixName;
  let tries = 0;
  for (const candidate of posixNameCandidates(row.email)) {
    if (++tries > MAX_TRIES) break;
    try {
      const [set] = await db
        .update(users)
        .set({ posixName: candidate })
        .where(and(eq(users.id, userId), isNull(users.posixName)))
        .returning({ posixName: users.posixName });
      if (set?.posixName) return set.posixName;
      // Given one meanwhile (another hand-over of theirs): that one stands.
      const [again] = await db.select({ posixName: users.posixName }).from(users).where(eq(users.id, userId));
      if (again?.posixName) return again.posixName;
    } catch (error) {
      if (!isUniqueViolation(error, 'users_posix_name_idx')) throw error;
    }
  }
  throw new Error(`posixNameOf: no free user name for ${userId} after ${MAX_TRIES} tries`);
}
