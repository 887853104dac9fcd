// The signed-in person for server components, or undefined (also when the account no longer exists).
import { getServerSession } from 'next-auth';
import { cache } from 'react';
import { api } from '~/server/api/server-caller';
import { authOptions } from '~/server/auth/options';

/** currentUser returns the signed-in user with staff roles, or undefined. */
export const currentUser = cache(async () => {
  const session = await getServerSession(authOptions());
  if (!session) return undefined;
  const caller = await api();
  return caller.account.me().catch(() => undefined);
});
