// Background work of the portal, started once per server process (and by `npm run worker`):
// today, expiring allocations at the end of their period. The job reconciler joins it with the
// scheduler adapter.
import type { Db } from '~/db/client';
import { expireDueAllocations } from './services/ledger';

export interface Worker {
  stop: () => void;
  /** Runs one round now (tests and the CLI). */
  tick: () => Promise<void>;
}

const state: { worker?: Worker } = ((globalThis as { __portalWorker?: { worker?: Worker } }).__portalWorker ??= {});

/** startWorker runs the background rounds every `intervalMs`; a second call in the same process returns the first worker. */
export function startWorker(db: Db, options: { intervalMs?: number; now?: () => Date; log?: (line: string) => void } = {}): Worker {
  if (state.worker) return state.worker;
  const now = options.now ?? (() => new Date());
  const log = options.log ?? ((line: string) => console.log(line));
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const expired = await expireDueAllocations(db, now().toISOString().slice(0, 10));
      if (expired.length) log(`[worker] expired ${expired.length} allocation(s) at the end of their period`);
    } catch (error) {
      console.error('[worker] round failed:', error);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), options.intervalMs ?? 60_000);
  timer.unref();
  void tick();
  state.worker = {
    tick,
    stop: () => {
      clearInterval(timer);
      state.worker = undefined;
    },
  };
  return state.worker;
}
