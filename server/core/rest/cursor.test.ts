import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, pageOf } from './cursor';

const id = '0b7c2f9e-3a41-4c55-9d7e-1f2a3b4c5d6e';

describe('page cursors', () => {
  it('round-trips a position', () => {
    const at = new Date('2026-11-30T12:34:56.789Z');
    expect(decodeCursor(encodeCursor({ at, id }))).toEqual({ at, id });
  });

  it.each([
    ['empty', ''],
    ['not base64 of a position', 'hello'],
    ['a bad id', Buffer.from('2026-11-30T12:34:56.789Z|1 or 1=1').toString('base64url')],
    ['a bad time', Buffer.from(`yesterday|${id}`).toString('base64url')],
    ['extra parts', Buffer.from(`2026-11-30T12:34:56.789Z|${id}|x`).toString('base64url')],
  ])('refuses %s', (_name, cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
  });

  it('cuts a page and says whether another follows', () => {
    const rows = [1, 2, 3].map((n) => ({ n, at: new Date(Date.UTC(2026, 0, n)), id }));
    const first = pageOf(rows, 2, (r) => r);
    expect(first.items.map((r) => r.n)).toEqual([1, 2]);
    expect(decodeCursor(first.nextCursor!)).toEqual({ at: rows[1]!.at, id });
    expect(pageOf(rows, 3, (r) => r).nextCursor).toBeNull();
  });
});
