// Personal API tokens for the REST tests, made and revoked through the service as the profile page does.
import type { Db } from '~/db/client';
import type { TokenScope } from '~/server/core/rest/scopes';
import { loadActor } from '~/server/services/identity/accounts';
import { authenticateToken, createApiToken, revokeApiToken } from '~/server/services/identity/api-tokens';

/** apiTokens mints, revokes and checks real tokens of a test database. */
export function apiTokens(db: Db) {
  let made = 0;
  const actorOf = async (userId: string) => {
    const actor = await loadActor(db, userId);
    if (!actor) throw new Error(`no person ${userId}`);
    return actor;
  };
  return {
    /** mint makes a token of a person for their tenant (the plaintext `afp_…`, shown once). */
    async mint(who: { userId: string; orgId: string }, scopes: TokenScope[], options: { expiresInDays?: number; projectId?: string } = {}): Promise<string> {
      made += 1;
      const { token } = await createApiToken(db, await actorOf(who.userId), { name: `test token ${made}`, orgId: who.orgId, scopes, expiresInDays: options.expiresInDays ?? 30, projectId: options.projectId ?? null }, new Date());
      return token;
    },
    /** revoke revokes a token as its owner would on the profile page. */
    async revoke(who: { userId: string }, token: string): Promise<void> {
      const { id } = await authenticateToken(db, `Bearer ${token}`, { now: new Date() });
      await revokeApiToken(db, await actorOf(who.userId), id, new Date());
    },
    authenticate: authenticateToken,
  };
}
