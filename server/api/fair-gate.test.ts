import { describe, expect, it } from 'vitest';
import { defaultMaxInFlight, FairGate } from './fair-gate';

/** A call that runs until the test ends it, recording when it started. */
function controlled(log: string[], name: string) {
  let end: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (end = resolve));
  return {
    fn: async () => {
      log.push(name);
      await done;
    },
    end,
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('FairGate', () => {
  it('never runs more than the process limit or the tenant limit at once', async () => {
    const gate = new FairGate({ maxInFlight: 3, perTenant: 2 });
    const log: string[] = [];
    const calls = ['a1', 'a2', 'a3', 'b1', 'b2'].map((n) => ({ n, c: controlled(log, n) }));
    const runs = calls.map(({ n, c }) => gate.run(n[0]!, c.fn));
    await tick();
    // a3 waits for its tenant (2 of a running), b2 for the process (3 running).
    expect(log).toEqual(['a1', 'a2', 'b1']);
    expect(gate.stats()).toEqual({ inFlight: 3, waiting: 2 });
    calls[0]!.c.end();
    await tick();
    // a and b now run one call each; the slot goes to b, which was given fewer calls.
    expect(log).toEqual(['a1', 'a2', 'b1', 'b2']);
    for (const { c } of calls) c.end();
    await Promise.all(runs);
    expect(log).toHaveLength(5);
    expect(gate.stats()).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('lets a tenant with nothing running start at once, however long the others queue', async () => {
    const gate = new FairGate({ maxInFlight: 2, perTenant: 2 });
    const log: string[] = [];
    const burst = Array.from({ length: 20 }, (_, i) => controlled(log, `burst-${i}`));
    const burstRuns = burst.map((c) => gate.run('busy', c.fn));
    await tick();
    const quiet = controlled(log, 'quiet');
    const quietRun = gate.run('quiet', quiet.fn);
    await tick();
    // Its first call starts at once, although the pool is full.
    expect(log).toEqual(['burst-0', 'burst-1', 'quiet']);
    quiet.end();
    await quietRun;
    // And again for its next call: a tenant with nothing running never waits.
    const second = controlled(log, 'quiet-2');
    const secondRun = gate.run('quiet', second.fn);
    await tick();
    expect(log).toEqual(['burst-0', 'burst-1', 'quiet', 'quiet-2']);
    second.end();
    await secondRun;
    // The burst's own queue moves on as its calls end.
    burst[0]!.end();
    await tick();
    expect(log.at(-1)).toBe('burst-2');
    for (const c of burst) c.end();
    await Promise.all(burstRuns);
    // Within one tenant the order is first come, first served.
    expect(log.filter((n) => n.startsWith('burst'))).toEqual(burst.map((_, i) => `burst-${i}`));
  });

  it('gives the slot back when a call fails', async () => {
    const gate = new FairGate({ maxInFlight: 1, perTenant: 1 });
    await expect(gate.run('t', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run('t', () => Promise.resolve(7))).toBe(7);
    expect(gate.stats()).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('queues a tenant’s new call behind its waiting ones, even when none of its calls is running', async () => {
    const gate = new FairGate({ maxInFlight: 1, perTenant: 1 });
    const log: string[] = [];
    const [a1, a2, b1, a3] = ['a1', 'a2', 'b1', 'a3'].map((n) => controlled(log, n));
    const runs = [gate.run('a', a1!.fn), gate.run('a', a2!.fn), gate.run('b', b1!.fn)];
    await tick();
    expect(log).toEqual(['a1', 'b1']); // b had nothing running: it starts though the pool is full
    a1!.end();
    await tick();
    // a has nothing running but a2 waits for the pool (b1 holds it); a3 must not overtake a2.
    runs.push(gate.run('a', a3!.fn));
    await tick();
    expect(log).toEqual(['a1', 'b1']);
    b1!.end();
    await tick();
    expect(log).toEqual(['a1', 'b1', 'a2']);
    a2!.end();
    await tick();
    expect(log).toEqual(['a1', 'b1', 'a2', 'a3']);
    a3!.end();
    await Promise.all(runs);
    expect(gate.stats()).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('gives a turn back once, and by itself after maxHoldMs', async () => {
    const gate = new FairGate({ maxInFlight: 1, perTenant: 1 });
    const leave = await gate.enter('t');
    leave();
    leave();
    expect(gate.stats()).toEqual({ inFlight: 0, waiting: 0 });
    await gate.enter('t', { maxHoldMs: 20 });
    const next = gate.enter('t');
    expect(gate.stats()).toEqual({ inFlight: 1, waiting: 1 });
    (await next)();
    expect(gate.stats()).toEqual({ inFlight: 0, waiting: 0 });
  });
});

describe('defaultMaxInFlight', () => {
  it.each([
    [2, 1, 4],
    [8, 1, 16],
    [2, 2, 3],
    [8, 2, 8],
    [8, 8, 3],
    [1, 1, 4],
  ])('%i cores, %i web processes → %i calls at once in each', (cores, processes, expected) => {
    expect(defaultMaxInFlight(cores, processes)).toBe(expected);
  });
});
