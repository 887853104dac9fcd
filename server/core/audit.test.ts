import { describe, expect, it } from 'vitest';
import { AUDIT_KINDS, decodeAuditCursor, encodeAuditCursor, isAuditKind } from './audit';

describe('audit kinds', () => {
  it('are listed once each, as area.verb', () => {
    expect(new Set(AUDIT_KINDS).size).toBe(AUDIT_KINDS.length);
    for (const kind of AUDIT_KINDS) expect(kind).toMatch(/^[a-z_]+\.[a-z_]+$/);
  });

  it('tell a known kind from a stored string that is none', () => {
    expect(isAuditKind('credit.raised')).toBe(true);
    expect(isAuditKind('forged')).toBe(false);
  });
});

describe('audit page cursors', () => {
  it('round-trip a position', () => {
    const at = new Date('2026-11-30T12:34:56.789Z');
    expect(decodeAuditCursor(encodeAuditCursor({ at, id: 4711 }))).toEqual({ at, id: 4711 });
  });

  it.each([
    ['empty', ''],
    ['not base64 of a position', 'hello'],
    ['a bad id', Buffer.from('2026-11-30T12:34:56.789Z|1 or 1=1').toString('base64url')],
    ['a zero id', Buffer.from('2026-11-30T12:34:56.789Z|0').toString('base64url')],
    ['a bad time', Buffer.from('yesterday|12').toString('base64url')],
    ['extra parts', Buffer.from('2026-11-30T12:34:56.789Z|12|x').toString('base64url')],
  ])('refuse %s', (_name, cursor) => {
    expect(decodeAuditCursor(cursor)).toBeNull();
  });
});
