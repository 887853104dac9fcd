// The server-side caller for React server components: the same routers, no HTTP round trip.
import { after } from 'next/server';
import { cache } from 'react';
import { loadCaller } from '~/server/services/identity/accounts';
import { chooseTenant } from '~/server/services/tenants/organisations';
import { PageTurn } from './page-turn';
import { createCaller } from './root';
import { createRequestContext } from './context';

/** A page holds its tenant's turn at most this long, whatever happens (see PageTurn for the usual end). */
const PAGE_TURN_MAX_MS = 30_000;

/**
 * api returns a tRPC caller bound to the current request (one per request). A signed-in page is one
 * turn of the fair gate (server/api/fair-gate.ts) for its tenant, from its first call until its
 * response is sent: rendering costs more than the calls, and a tenant whose people open pages by the
 * hundred must not slow the pages of the others. Its calls then run without queueing again. The turn
 * ends when the response is sent or shortly after the page's last call (server/api/page-turn.ts).
 */
export const api = cache(async () => {
  const ctx = await createRequestContext();
  const { gate, userId, memo } = ctx;
  if (!gate || !userId || !memo) return createCaller(ctx);
  // The caller is loaded once for the page: the gate's tenant now, the procedures' actor later.
  const caller = await (memo.caller ??= loadCaller(ctx.db, userId, ctx.sessionId));
  const org = caller ? chooseTenant(caller.tenants, ctx.activeOrgId).org : undefined;
  const turn = new PageTurn(await gate.enter(org?.id ?? `user:${userId}`, { maxHoldMs: PAGE_TURN_MAX_MS }));
  try {
    after(() => turn.finish());
  } catch {
    // Outside a request's scope (nothing to wait for): the turn ends after the calls.
  }
  return createCaller({ ...ctx, gate: undefined, turn });
});
