// The HTTP rules of a file download, pure: which bytes a `Range` header asks for (RFC 9110 §14), the
// `Content-Disposition` that makes every file an attachment under its own name (RFC 6266, RFC 8187),
// and the validator that tells one version of a file from the next. The streaming is
// services/files/download.ts.

export type ByteRange = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

const FULL: ByteRange = { kind: 'full' };
const UNSATISFIABLE: ByteRange = { kind: 'unsatisfiable' };

/**
 * parseRange reads a `Range` header against a representation of `size` bytes. `end` is inclusive and
 * clamped to size − 1. Anything we do not serve as one range is ignored, as RFC 9110 §14.2 allows, and
 * answered with the whole file: no header, another unit, a malformed or invalid spec (`bytes=5-2`), and
 * several ranges (we send no multipart/byteranges). Unsatisfiable (416) is a range that starts at or
 * past the end, or a zero-length suffix (`bytes=-0`); so on an empty file `bytes=0-` is unsatisfiable.
 * A suffix with a non-zero length on an empty file is satisfiable by the RFC's definition (§14.1.1),
 * yet a 206 cannot say "no bytes" in Content-Range: the whole (empty) file is sent instead.
 */
export function parseRange(header: string | null, size: number): ByteRange {
  if (!Number.isSafeInteger(size) || size < 0) throw new Error(`parseRange: not a size: ${size}`);
  if (header === null) return FULL;
  const match = /^\s*bytes\s*=(.*)$/i.exec(header);
  if (!match) return FULL;
  // A list may carry empty elements (`bytes=0-1,`; RFC 9110 §5.6.1): they do not count as ranges.
  const specs = match[1]!.split(',').map((spec) => spec.trim()).filter((spec) => spec !== '');
  if (specs.length !== 1) return FULL;
  // Blanks around the dash are not in the grammar, but harmless to read.
  const spec = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]!);
  if (!spec) return FULL;
  const [, first = '', last = ''] = spec;
  if (first === '') {
    if (last === '') return FULL;
    // Digits beyond 2^53 parse inexactly, but any length that large already covers the whole file.
    const suffix = Number(last);
    if (suffix === 0) return UNSATISFIABLE;
    if (size === 0) return FULL;
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return FULL;
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

// C0 controls, DEL and C1 controls: never wanted in a file name, and a line break would end the header.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// A UTF-16 half without its other half cannot be encoded as UTF-8 (encodeURIComponent would throw).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * contentDisposition makes a download an attachment, never shown inline, under `name`:
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded UTF-8>`. Control
 * characters become `_` in both. The fallback, for clients without RFC 8187, drops accents
 * (`ä` → `a`) and writes `_` for what is left outside printable ASCII and for `"`, `\` and `%`
 * (which some browsers would decode). An empty name becomes `download`.
 */
export function contentDisposition(name: string): string {
  const clean = name.replace(LONE_SURROGATE, '\uFFFD').replace(CONTROL, '_') || 'download';
  const fallback = clean
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\u0020-\u007e]/gu, '_')
    .replace(/["\\%]/g, '_');
  // RFC 8187 attr-char is narrower than what encodeURIComponent leaves alone: ' ( ) * must be encoded too.
  const encoded = encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * etagOf is the strong validator of a file version: `"<size>-<mtime in µs>[-<inode>]"`, each in hex. A
 * change of length, of modification time or a replacement by another file (rename over it: a new inode)
 * changes it. It cannot see a rewrite of the same length within the file system's time resolution;
 * that is the "-ish" of strong. If-Range and resumed downloads rely on it.
 */
export function etagOf(size: number, mtimeMs: number, ino?: number): string {
  if (!Number.isSafeInteger(size) || size < 0) throw new Error(`etagOf: not a size: ${size}`);
  if (!Number.isFinite(mtimeMs)) throw new Error(`etagOf: not a time: ${mtimeMs}`);
  const parts = [size.toString(16), hexInteger(Math.round(mtimeMs * 1000))];
  if (ino !== undefined) parts.push(hexInteger(ino));
  return `"${parts.join('-')}"`;
}

// Before 1970 an mtime is negative: `n` instead of a minus keeps the tag one run of [0-9a-fn-].
function hexInteger(value: number): string {
  return value < 0 ? `n${(-value).toString(16)}` : value.toString(16);
}
