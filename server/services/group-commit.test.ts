import { describe, expect, it } from 'vitest';
import { groupCommit } from './group-commit';

describe('groupCommit', () => {
  it('runs one batch at a time per key: what arrives meanwhile goes together next, in order', async () => {
    const batches: number[][] = [];
    let running = 0;
    let most = 0;
    const submit = groupCommit<number, number>('test-order', async (_key, items) => {
      running += 1;
      most = Math.max(most, running);
      batches.push(items);
      await new Promise((r) => setTimeout(r, 5));
      running -= 1;
      return items.map((n) => ({ ok: true as const, value: n * 10 }));
    });
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => submit('a', n)));
    expect(answers).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
    expect(most).toBe(1);
  });

  it('gives each item its own outcome; a batch that throws fails all its items, the next batch goes on', async () => {
    let round = 0;
    const submit = groupCommit<number, string>('test-outcomes', async (_key, items) => {
      round += 1;
      await Promise.resolve();
      if (round === 2) throw new Error('database gone');
      return items.map((n) => (n % 2 ? { ok: true as const, value: `odd ${n}` } : { ok: false as const, error: new Error(`even ${n}`) }));
    });
    const first = submit('k', 1);
    const second = [submit('k', 2), submit('k', 3)];
    await expect(first).resolves.toBe('odd 1');
    await expect(second[0]).rejects.toThrow('database gone');
    await expect(second[1]).rejects.toThrow('database gone');
    await expect(submit('k', 4)).rejects.toThrow('even 4');
    await expect(submit('k', 5)).resolves.toBe('odd 5');
  });

  it('keeps keys apart: two keys run side by side', async () => {
    let running = 0;
    let most = 0;
    const submit = groupCommit<string, string>('test-keys', async (key, items) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running -= 1;
      return items.map((i) => ({ ok: true as const, value: `${key}:${i}` }));
    });
    expect(await Promise.all([submit('x', '1'), submit('y', '1')])).toEqual(['x:1', 'y:1']);
    expect(most).toBe(2);
  });

  it('caps a batch at maxBatch items', async () => {
    const sizes: number[] = [];
    const submit = groupCommit<number, number>(
      'test-max',
      async (_key, items) => {
        sizes.push(items.length);
        await Promise.resolve();
        return items.map((n) => ({ ok: true as const, value: n }));
      },
      3,
    );
    await Promise.all(Array.from({ length: 8 }, (_, i) => submit('m', i)));
    expect(sizes).toEqual([1, 3, 3, 1]);
  });
});
