// The server-side caller for React server components: the same routers, no HTTP round trip.
import { after } from 'next/server';
import { cache } from 'react';
import { loadCaller } from '~/server/services/identity/accounts';
import { chooseTenant } from '~/server/services/tenants/organisations';
import { PageTurn } from './page-turn';
import { appRouter, createCaller } from './root';
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
  return answeringQueriesOnce(createCaller({ ...ctx, gate: undefined, turn }));
});

/**
 * answeringQueriesOnce lets a page's layout and the page itself ask the same (the active organisation, the
 * project list) and have it read once: within one request a query with the same input is answered by the
 * same promise (a page shows one moment). Mutations run every time.
 */
function answeringQueriesOnce<C extends object>(caller: C): C {
  const answers = new Map<string, unknown>();
  const procedures = appRouter._def.procedures as Record<string, { _def?: { type?: string } } | undefined>;
  const wrap = (target: object, path: readonly string[]): object =>
    new Proxy(target, {
      get(object, key) {
        const value: unknown = Reflect.get(object, key);
        return typeof key === 'string' && (typeof value === 'function' || (typeof value === 'object' && value !== null)) ? wrap(value, [...path, key]) : value;
      },
      apply(fn, self, args: unknown[]) {
        const name = path.join('.');
        if (procedures[name]?._def?.type !== 'query') return Reflect.apply(fn as (...a: unknown[]) => unknown, self, args);
        const key = `${name}\0${JSON.stringify(args[0] ?? null)}`;
        if (!answers.has(key)) answers.set(key, Reflect.apply(fn as (...a: unknown[]) => unknown, self, args));
        return answers.get(key);
      },
    });
  return wrap(caller, []) as C;
}
