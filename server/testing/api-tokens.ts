// Personal API tokens for the REST tests. TEMPORARY stand-in until the lead's
// server/services/api-tokens.ts is on main: the same contract (authenticate throws
// AppError('UNAUTHORIZED') for unknown, revoked and expired tokens), tokens kept in memory.
import { randomBytes } from 'node:crypto';
import type { Db } from '~/db/client';
import type { ApiTokenAuth, TokenScope } from '~/server/core/api/scopes';
import { AppError } from '~/server/errors';

export function apiTokens(_db: Db) {
  const known = new Map<string, { auth: ApiTokenAuth; revoked: boolean; expiresAt: Date }>();
  return {
    async mint(who: { userId: string; orgId: string }, scopes: TokenScope[], options: { expiredAgo?: boolean } = {}): Promise<string> {
      const token = `afp_${randomBytes(24).toString('base64url')}`;
      const expiresAt = new Date(Date.now() + (options.expiredAgo ? -60_000 : 86_400_000));
      known.set(token, { auth: { id: randomBytes(8).toString('hex'), name: 'test', userId: who.userId, orgId: who.orgId, scopes }, revoked: false, expiresAt });
      return Promise.resolve(token);
    },
    async revoke(_who: { userId: string; orgId: string }, token: string): Promise<void> {
      known.get(token)!.revoked = true;
      return Promise.resolve();
    },
    authenticate: (_db: Db, authorization: string | null, options: { now: Date }): Promise<ApiTokenAuth> => {
      const row = known.get(authorization?.replace(/^Bearer /, '') ?? '');
      if (!row || row.revoked || row.expiresAt <= options.now) return Promise.reject(new AppError('UNAUTHORIZED', 'error.unauthorized'));
      return Promise.resolve(row.auth);
    },
  };
}
