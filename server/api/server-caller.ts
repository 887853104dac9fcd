// The server-side caller for React server components: the same routers, no HTTP round trip.
import { after } from 'next/server';
import { cache } from 'react';
import { resolveTenant } from '~/server/services/organisations';
import { createCaller } from './root';
import { createRequestContext } from './context';

/** A page holds its tenant's turn at most this long (the turn ends when the response is sent). */
const PAGE_TURN_MAX_MS = 30_000;

/**
 * api returns a tRPC caller bound to the current request (one per request). A signed-in page is one
 * turn of the fair gate (server/api/fair-gate.ts) for its tenant, from its first call until its
 * response is sent: rendering costs more than the calls, and a tenant whose people open pages by the
 * hundred must not slow the pages of the others. Its calls then run without queueing again.
 */
export const api = cache(async () => {
  const ctx = await createRequestContext();
  const { gate, userId, memo } = ctx;
  if (!gate || !userId || !memo) return createCaller(ctx);
  const resolved = await (memo.tenant ??= resolveTenant(ctx.db, userId, ctx.activeOrgId));
  const leave = await gate.enter(resolved.org?.id ?? `user:${userId}`, { maxHoldMs: PAGE_TURN_MAX_MS });
  after(leave);
  return createCaller({ ...ctx, gate: undefined });
});
