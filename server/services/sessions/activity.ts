// The traffic of interactive sessions (issue #28): every HTTP request the portal's proxy carries to a
// session and every WebSocket frame, either way, counts as use. Idle shutdown (idle.ts) reads the time
// of the last use from `jobs.session_seen_at`; writing it on every frame would be one UPDATE per
// keystroke, so the time is kept in memory and written at most once per SEEN_EVERY_MS per session, all
// sessions due in one UPDATE.
import { inArray } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { jobs } from '~/db/schema';
import { logger } from '~/server/observability/log';

/** How often a session's `session_seen_at` is written at most (the idle time-outs are minutes long). */
export const SEEN_EVERY_MS = 30_000;

/** How long after the first traffic of a round the round's UPDATE is written: touches in between join it. */
const FLUSH_DELAY_MS = 1_000;

export interface SessionActivity {
  /** touch records traffic of a session now; cheap (one map look-up) when it was written less than SEEN_EVERY_MS ago. */
  touch(jobId: string): void;
  /** flush writes the sessions touched since the last write, in one UPDATE; returns how many. */
  flush(): Promise<number>;
  /** stop writes what is pending and ends the timer (the server's shutdown). */
  stop(): Promise<void>;
}

/**
 * createSessionActivity keeps the sessions' traffic for one database: `db` is the portal's own
 * connection (the write is the portal's bookkeeping, as the worker's are, not a tenant's change).
 */
export function createSessionActivity(options: { db: Db; everyMs?: number; flushDelayMs?: number; now?: () => number }): SessionActivity {
  const everyMs = options.everyMs ?? SEEN_EVERY_MS;
  const delay = options.flushDelayMs ?? FLUSH_DELAY_MS;
  const now = options.now ?? Date.now;
  // When each session's time was last taken for a write; entries older than everyMs are dropped at each flush.
  const taken = new Map<string, number>();
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<number> = Promise.resolve(0);

  const flush = (): Promise<number> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const ids = [...pending];
    pending.clear();
    const cutoff = now() - everyMs;
    for (const [id, at] of taken) if (at <= cutoff) taken.delete(id);
    // Nothing new: wait for a write in flight (a shutdown's last flush), write nothing.
    if (ids.length === 0) return writing.then(() => 0);
    const at = new Date(now());
    // One write at a time, in order: a slow database must not pile up UPDATEs.
    writing = writing.then(async () => {
      try {
        await options.db.update(jobs).set({ sessionSeenAt: at }).where(inArray(jobs.id, ids));
        return ids.length;
      } catch (error) {
        // Lost only until the next traffic of these sessions makes them due again.
        for (const id of ids) taken.delete(id);
        logger().warn({ component: 'sessions', err: error, sessions: ids.length }, "the sessions' last traffic could not be written");
        return 0;
      }
    });
    return writing;
  };

  return {
    touch(jobId) {
      const at = now();
      const last = taken.get(jobId);
      if (last !== undefined && at - last < everyMs) return;
      taken.set(jobId, at);
      pending.add(jobId);
      if (!timer) {
        timer = setTimeout(() => void flush(), delay);
        timer.unref();
      }
    },
    flush,
    async stop() {
      await flush();
    },
  };
}

const state: { activity?: SessionActivity } = ((globalThis as { __portalSessionActivity?: { activity?: SessionActivity } }).__portalSessionActivity ??= {});

/** useSessionActivity makes `activity` the process's (server/session-proxy.ts, on start). */
export function useSessionActivity(activity: SessionActivity | undefined): void {
  state.activity = activity;
}

/** touchSession records traffic of a session in the process's activity (nothing before the start set one). */
export function touchSession(jobId: string): void {
  state.activity?.touch(jobId);
}

/** flushSessionActivity writes the process's pending session traffic now. */
export function flushSessionActivity(): Promise<number> {
  return state.activity?.flush() ?? Promise.resolve(0);
}
