// The request-bound tRPC context: reads the session and the caller's cookies.
import { availableParallelism } from 'node:os';
import { cookies, headers } from 'next/headers';
import { authOptions } from '~/server/auth/options';
import { portalSession } from '~/server/auth/session-cookie';
import { getDb } from '~/server/db';
import { env } from '~/server/env.js';
import { clientAddress } from '~/server/core/rate-limits';
import { LOCALE_COOKIE, negotiateLocale } from '~/server/i18n';
import { ORG_COOKIE } from './cookies';
import { defaultMaxInFlight, FairGate } from './fair-gate';
import { createContextInner, type Context } from './trpc';

/** requestLocale returns the caller's language: the chosen one, else the browser's. */
export async function requestLocale() {
  const [cookieStore, headerStore] = await Promise.all([cookies(), headers()]);
  return negotiateLocale(cookieStore.get(LOCALE_COOKIE)?.value, headerStore.get('accept-language'));
}

/** createRequestContext builds the tRPC context of the current request. */
export async function createRequestContext(): Promise<Context> {
  const [cookieStore, locale, db] = await Promise.all([cookies(), requestLocale(), getDb()]);
  // A cookie from before sessions were recorded names none: it counts as signed out.
  const session = await portalSession(new Map(cookieStore.getAll().map((c) => [c.name, c.value])), authOptions().secret!);
  return createContextInner({
    db,
    userId: session?.userId ?? null,
    sessionId: session?.sessionId,
    locale,
    activeOrgId: cookieStore.get(ORG_COOKIE)?.value,
    gate: requestGate(),
    memo: {},
    limits: true,
    address: clientAddress(await headers(), env().PORTAL_TRUST_PROXY),
  });
}

const gateState: { gate?: FairGate } = ((globalThis as { __portalGate?: { gate?: FairGate } }).__portalGate ??= {});

/** requestGate returns the process's fair gate for tenant calls, configured once from the environment. */
export function requestGate(): FairGate {
  const config = env();
  gateState.gate ??= new FairGate({
    maxInFlight: config.PORTAL_MAX_CONCURRENT_CALLS ?? defaultMaxInFlight(availableParallelism(), config.PORTAL_WEB_PROCESSES ?? 1),
    perTenant: config.PORTAL_MAX_CONCURRENT_CALLS_PER_TENANT,
  });
  return gateState.gate;
}
