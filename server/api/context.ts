// The request-bound tRPC context: reads the session and the caller's cookies.
import { cookies, headers } from 'next/headers';
import { getServerSession } from 'next-auth';
import { authOptions } from '~/server/auth/options';
import { getDb } from '~/server/db';
import { LOCALE_COOKIE, negotiateLocale } from '~/server/i18n';
import { ORG_COOKIE } from './cookies';
import { createContextInner, type Context } from './trpc';

/** requestLocale returns the caller's language: the chosen one, else the browser's. */
export async function requestLocale() {
  const [cookieStore, headerStore] = await Promise.all([cookies(), headers()]);
  return negotiateLocale(cookieStore.get(LOCALE_COOKIE)?.value, headerStore.get('accept-language'));
}

/** createRequestContext builds the tRPC context of the current request. */
export async function createRequestContext(): Promise<Context> {
  const [session, cookieStore, locale, db] = await Promise.all([
    getServerSession(authOptions()),
    cookies(),
    requestLocale(),
    getDb(),
  ]);
  const userId = (session?.user as { id?: string } | undefined)?.id ?? null;
  return createContextInner({ db, userId, locale, activeOrgId: cookieStore.get(ORG_COOKIE)?.value });
}
