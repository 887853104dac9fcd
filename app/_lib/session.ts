// The signed-in person for server components, or undefined (also when the account no longer exists).
import { forbidden, redirect } from 'next/navigation';
import { cache } from 'react';
import { api } from '~/server/api/server-caller';

/**
 * currentUser returns the signed-in user with staff roles, or undefined. The request's caller has read the
 * session cookie already (server/api/context.ts): reading it a second time here would decrypt the cookie
 * and encrypt its renewal again on every page.
 */
export const currentUser = cache(async () => {
  const caller = await api();
  return caller.account.me().catch(() => undefined);
});

/** requireUser sends anonymous visitors to the sign-in page (layouts and pages render in parallel, so each asks). */
export async function requireUser() {
  const me = await currentUser();
  if (!me) redirect('/sign-in');
  return me;
}

/** requireStaff renders the 403 page unless the signed-in user is centre staff. */
export async function requireStaff() {
  const me = await requireUser();
  if (!me.staffRoles.length) forbidden();
  return me;
}
