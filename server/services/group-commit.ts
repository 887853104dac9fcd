// A group commit: items of one key (e.g. model calls of one allocation) are written one batch at a
// time per key in a process. The items that arrive while a batch is written wait and go together in
// the next one, so a busy key takes its locks once per batch, not once per item, and its items never
// queue on a row lock inside one process. Each item gets its own outcome: a refused one fails alone.

/** An item's outcome in its batch: its value, or its own refusal. */
export type ItemOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * groupCommit returns `submit(key, item)`: the item is handed to `run` with the others of its key
 * waiting at that moment (at most `maxBatch`), one `run` at a time per key. `run` answers one outcome
 * per item in their order; when it throws, every item of the batch fails with that error.
 */
export function groupCommit<I, O>(name: string, run: (key: string, items: I[]) => Promise<ItemOutcome<O>[]>, maxBatch = 200): (key: string, item: I) => Promise<O> {
  // Kept on globalThis: a module loaded twice (Next.js's bundles) still has one queue per key.
  const registry = ((globalThis as { __portalGroupCommits?: Map<string, Map<string, { running: boolean; waiting: Waiting<unknown, unknown>[] }>> }).__portalGroupCommits ??= new Map());
  let turns = registry.get(name) as Map<string, { running: boolean; waiting: Waiting<I, O>[] }> | undefined;
  if (!turns) registry.set(name, (turns = new Map()) as never);
  const queues = turns;

  async function drain(key: string, turn: { running: boolean; waiting: Waiting<I, O>[] }): Promise<void> {
    turn.running = true;
    try {
      while (turn.waiting.length > 0) {
        const batch = turn.waiting.splice(0, maxBatch);
        try {
          const outcomes = await run(
            key,
            batch.map((w) => w.item),
          );
          batch.forEach((w, i) => {
            const outcome = outcomes[i];
            if (!outcome) w.reject(new Error(`${name}: no outcome for item ${i} of ${batch.length}`));
            else if (outcome.ok) w.resolve(outcome.value);
            else w.reject(outcome.error);
          });
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      turn.running = false;
      queues.delete(key);
    }
  }

  return (key, item) => {
    let turn = queues.get(key);
    if (!turn) queues.set(key, (turn = { running: false, waiting: [] }));
    const promise = new Promise<O>((resolve, reject) => turn.waiting.push({ item, resolve, reject }));
    if (!turn.running) void drain(key, turn);
    return promise;
  };
}
