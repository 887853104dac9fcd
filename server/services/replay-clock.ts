// The time of a replayed history. The demo seed writes months of history through the real services
// in seconds; the rows the database would stamp with the moment of writing and that may never be
// changed afterwards (audit events, ledger entries) take the replayed instant instead. Live requests
// never set it, so for them the database's own clock stamps every row.
import { AsyncLocalStorage } from 'node:async_hooks';

const replayed = new AsyncLocalStorage<Date>();

/** atReplayedTime runs fn with the replayed instant `at` (demo history only). */
export function atReplayedTime<T>(at: Date, fn: () => Promise<T>): Promise<T> {
  return replayed.run(at, fn);
}

/** replayedTime is the instant of the history being replayed, or undefined (the database's clock) outside one. */
export function replayedTime(): Date | undefined {
  return replayed.getStore();
}

/** stampAt is a row's `at`: the given instant, else the replayed one, else none (the database's default). */
export function stampAt(at?: Date | null): { at?: Date } {
  const chosen = at ?? replayed.getStore();
  return chosen ? { at: chosen } : {};
}

/** stampCreatedAt is a new row's `createdAt` in a replayed history, else none (the database's default). */
export function stampCreatedAt(): { createdAt?: Date } {
  const chosen = replayed.getStore();
  return chosen ? { createdAt: chosen } : {};
}
