import { describe, expect, it } from 'vitest';
import { contentDisposition, etagOf, parseRange, type ByteRange } from './range';

const full: ByteRange = { kind: 'full' };
const unsatisfiable: ByteRange = { kind: 'unsatisfiable' };
const partial = (start: number, end: number): ByteRange => ({ kind: 'partial', start, end });

describe('parseRange', () => {
  it.each([
    // label, header, size, expected
    ['no header', null, 100, full],
    ['an empty header', '', 100, full],
    ['a closed range', 'bytes=10-19', 100, partial(10, 19)],
    ['the first byte', 'bytes=0-0', 100, partial(0, 0)],
    ['the last byte', 'bytes=99-99', 100, partial(99, 99)],
    ['an open end', 'bytes=10-', 100, partial(10, 99)],
    ['from the start, open', 'bytes=0-', 100, partial(0, 99)],
    ['an end past the file, clamped', 'bytes=90-1000', 100, partial(90, 99)],
    ['an end far past 2^53, clamped', 'bytes=5-99999999999999999999999', 100, partial(5, 99)],
    ['a suffix', 'bytes=-10', 100, partial(90, 99)],
    ['a suffix longer than the file', 'bytes=-500', 100, partial(0, 99)],
    ['a suffix as long as the file', 'bytes=-100', 100, partial(0, 99)],
    ['a one-byte suffix', 'bytes=-1', 100, partial(99, 99)],
    ['a huge suffix', 'bytes=-99999999999999999999999', 100, partial(0, 99)],
    ['leading zeros', 'bytes=007-010', 100, partial(7, 10)],
    ['the unit in capitals', 'BYTES=1-2', 100, partial(1, 2)],
    ['blanks around', '  bytes = 1-2  ', 100, partial(1, 2)],
    ['blanks around the dash', 'bytes=1 - 2', 100, partial(1, 2)],
    ['an empty list element after', 'bytes=1-2, ', 100, partial(1, 2)],
    ['an empty list element before', 'bytes=,1-2', 100, partial(1, 2)],
    ['a one-byte file, whole', 'bytes=0-0', 1, partial(0, 0)],
  ] as const)('serves part for %s', (_label, header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it.each([
    ['two ranges', 'bytes=0-1,5-6'],
    ['two ranges with blanks', 'bytes=0-1 , 5-6'],
    ['overlapping ranges', 'bytes=0-50,10-60'],
    ['a range and a suffix', 'bytes=0-1,-5'],
    ['another unit', 'items=0-1'],
    ['no unit', '0-1'],
    ['a unit that only starts with bytes', 'bytesx=0-1'],
    ['no spec', 'bytes='],
    ['a dash alone', 'bytes=-'],
    ['end before start (invalid)', 'bytes=5-2'],
    ['letters', 'bytes=a-b'],
    ['a negative start', 'bytes=--5'],
    ['a fraction', 'bytes=1.5-2'],
    ['a sign', 'bytes=+1-2'],
    ['hex', 'bytes=0x1-0x2'],
    ['blanks inside a number', 'bytes=1 0-20'],
    ['a missing equals sign', 'bytes 0-1'],
  ] as const)('ignores %s and serves the whole file', (_label, header) => {
    expect(parseRange(header, 100)).toEqual(full);
  });

  it.each([
    ['a start at the size', 'bytes=100-', 100],
    ['a start past the size', 'bytes=150-200', 100],
    ['a zero suffix', 'bytes=-0', 100],
    ['an empty file from 0', 'bytes=0-', 0],
    ['an empty file, a closed range', 'bytes=0-0', 0],
    ['an empty file, a zero suffix', 'bytes=-0', 0],
  ] as const)('refuses %s as unsatisfiable', (_label, header, size) => {
    expect(parseRange(header, size)).toEqual(unsatisfiable);
  });

  it('sends an empty file whole for a non-zero suffix: satisfiable (RFC 9110 §14.1.1), but a 206 cannot carry zero bytes', () => {
    expect(parseRange('bytes=-5', 0)).toEqual(full);
  });

  it('ignores a malformed header on an empty file too', () => {
    expect(parseRange('bytes=x', 0)).toEqual(full);
  });

  it('refuses a size that is not a byte count', () => {
    expect(() => parseRange('bytes=0-', -1)).toThrow(/not a size/);
    expect(() => parseRange('bytes=0-', 1.5)).toThrow(/not a size/);
  });

  it('keeps every partial range within the file, for any header of digits', () => {
    for (let size = 0; size <= 12; size++) {
      for (const first of ['', '0', '1', '5', '11', '12', '13']) {
        for (const last of ['', '0', '1', '5', '11', '12', '13']) {
          const range = parseRange(`bytes=${first}-${last}`, size);
          if (range.kind === 'partial') {
            expect(range.start).toBeGreaterThanOrEqual(0);
            expect(range.end).toBeLessThan(size);
            expect(range.start).toBeLessThanOrEqual(range.end);
          }
        }
      }
    }
  });
});

describe('contentDisposition', () => {
  it.each([
    ['a plain name', 'report.csv', `attachment; filename="report.csv"; filename*=UTF-8''report.csv`],
    ['blanks', 'my file.txt', `attachment; filename="my file.txt"; filename*=UTF-8''my%20file.txt`],
    ['an umlaut, kept in filename*, dropped to its letter in the fallback', 'Bericht ä.pdf', `attachment; filename="Bericht a.pdf"; filename*=UTF-8''Bericht%20%C3%A4.pdf`],
    ['quotes and a backslash', 'a"b\\c.txt', `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`],
    ['a line break and a tab', 'a\r\nb\tc', `attachment; filename="a__b_c"; filename*=UTF-8''a__b_c`],
    ['a NUL, DEL and a C1 control', 'a\u0000b\u007fc\u0085d', `attachment; filename="a_b_c_d"; filename*=UTF-8''a_b_c_d`],
    ['a percent sign, which some browsers would decode', '100%.txt', `attachment; filename="100_.txt"; filename*=UTF-8''100%25.txt`],
    ["the characters encodeURIComponent leaves but RFC 8187 does not", "it's (1)*.txt", `attachment; filename="it's (1)*.txt"; filename*=UTF-8''it%27s%20%281%29%2A.txt`],
    ['a semicolon and an equals sign', 'a;b=c', `attachment; filename="a;b=c"; filename*=UTF-8''a%3Bb%3Dc`],
    ['Chinese', '数据.h5', `attachment; filename="__.h5"; filename*=UTF-8''%E6%95%B0%E6%8D%AE.h5`],
    ['an emoji (one fallback character, not two)', '🚀.bin', `attachment; filename="_.bin"; filename*=UTF-8''%F0%9F%9A%80.bin`],
    ['a lone surrogate', 'a\uD800b', `attachment; filename="a_b"; filename*=UTF-8''a%EF%BF%BDb`],
    ['an empty name', '', `attachment; filename="download"; filename*=UTF-8''download`],
    ['a slash', 'a/b', `attachment; filename="a/b"; filename*=UTF-8''a%2Fb`],
  ] as const)('writes %s', (_label, name, expected) => {
    expect(contentDisposition(name)).toBe(expected);
  });

  it('always yields a valid header value, never inline', () => {
    for (const name of ['x', '"', '\n', 'ä"\n\\', '\u2028', 'inline; filename=x']) {
      const value = contentDisposition(name);
      expect(value.startsWith('attachment; ')).toBe(true);
      expect(() => new Headers({ 'content-disposition': value })).not.toThrow();
      expect(value).toMatch(/^[\u0020-\u007e]*$/);
    }
  });
});

describe('etagOf', () => {
  it('is a quoted run of hex fields: size, mtime in microseconds, inode', () => {
    expect(etagOf(255, 1_700_000_000_123.456, 4096)).toBe(`"ff-${(1_700_000_000_123_456).toString(16)}-1000"`);
    expect(etagOf(0, 0)).toBe('"0-0"');
  });

  it('changes with the size, the time and the inode', () => {
    const base = etagOf(100, 1_700_000_000_000, 7);
    expect(etagOf(101, 1_700_000_000_000, 7)).not.toBe(base);
    expect(etagOf(100, 1_700_000_000_001, 7)).not.toBe(base);
    expect(etagOf(100, 1_700_000_000_000.001, 7)).not.toBe(base);
    expect(etagOf(100, 1_700_000_000_000, 8)).not.toBe(base);
    expect(etagOf(100, 1_700_000_000_000, 7)).toBe(base);
  });

  it('is a valid strong entity tag, also before 1970', () => {
    for (const tag of [etagOf(1, -86_400_000, 2), etagOf(2 ** 40, 1e12)]) {
      expect(tag).toMatch(/^"[0-9a-fn-]+"$/);
    }
    expect(etagOf(1, -1000)).not.toBe(etagOf(1, 1000));
  });

  it('refuses what is no size or time', () => {
    expect(() => etagOf(-1, 0)).toThrow(/not a size/);
    expect(() => etagOf(1, Number.NaN)).toThrow(/not a time/);
  });
});
