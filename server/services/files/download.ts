// Downloads from project workspaces, as web Responses for route handlers: one file, streamed with HTTP
// Range; a folder, streamed as a tar archive. Neither knows the database or who may read what: the caller
// has resolved the path, checked access and (for a file) opened it. Both read on demand, one bounded
// chunk at a time, so a download of many GB holds about a MiB whatever its size. A file's content
// is never trusted to be shown: always an attachment, never sniffed, sandboxed if a browser tries anyway.

import { SESSION_FOLDER } from '~/server/core/files/paths';
import { isUtf8 } from 'node:buffer';
import { constants, existsSync } from 'node:fs';
import { open, opendir, type FileHandle } from 'node:fs/promises';
import { contentDisposition, etagOf, parseRange } from '~/server/core/files/range';

/** The most a file or archive stream reads and hands on at once (large reads and socket writes keep a download fast; bench/files.ts). */
export const DOWNLOAD_CHUNK_BYTES = 1024 * 1024;

/** A folder archive refuses to go on past this many names in the tree, unless the caller sets another limit. */
export const DEFAULT_MAX_ARCHIVE_ENTRIES = 100_000;

/** How deep a folder archive descends; each level holds one open directory while its subtree is written. */
export const MAX_ARCHIVE_DEPTH = 128;

function downloadHeaders(name: string, contentType: string): Headers {
  return new Headers({
    'content-type': contentType,
    'content-disposition': contentDisposition(name),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "sandbox; default-src 'none'",
    'cache-control': 'private, no-store',
  });
}

export type OpenFile = { handle: FileHandle; name: string; size: number; mtimeMs: number; ino?: number };

/**
 * fileResponse streams an open file and takes over its handle: the handle is closed exactly once, when
 * the body has been sent, fails, or is cancelled (the client went away), or at once when no body is sent
 * (HEAD, 304, 416); then `onDone` runs (once; what it throws is ignored). GET with a single `Range`
 * answers 206 with `Content-Range`, a range past the end 416 with `bytes *\/size`; `If-Range` with
 * another ETag or date gets the whole file (200). `If-None-Match` with the ETag answers 304. HEAD ignores
 * Range (RFC 9110 §14.2). Exactly `size` bytes (of the range) are sent: a file that grew is cut there;
 * one that shrank fails the stream, so the client sees a broken download rather than a short one.
 */
export function fileResponse(request: Request, file: OpenFile, options: { onDone?: () => void } = {}): Response {
  let closed: Promise<void> | undefined;
  const release = (): Promise<void> =>
    (closed ??= file.handle
      .close()
      .catch(() => undefined)
      .then(() => {
        try {
          options.onDone?.();
        } catch {
          // A listener's failure must not fail the download nor become an unhandled rejection.
        }
      }));
  try {
    return answerFile(request, file, release);
  } catch (error) {
    // The handle is ours from the call on, even when the answer cannot be built (a size that is no size).
    void release();
    throw error;
  }
}

function answerFile(request: Request, file: OpenFile, release: () => Promise<void>): Response {
  const { handle, size, mtimeMs } = file;
  const headers = downloadHeaders(file.name, 'application/octet-stream');
  const etag = etagOf(size, mtimeMs, file.ino);
  headers.set('accept-ranges', 'bytes');
  headers.set('etag', etag);
  headers.set('last-modified', new Date(mtimeMs).toUTCString());

  const method = request.method.toUpperCase();
  if ((method === 'GET' || method === 'HEAD') && ifNoneMatchMatches(request.headers.get('if-none-match'), etag)) {
    void release();
    return new Response(null, { status: 304, headers });
  }
  const range = method === 'GET' && ifRangeHolds(request.headers.get('if-range'), etag, mtimeMs) ? parseRange(request.headers.get('range'), size) : ({ kind: 'full' } as const);
  if (range.kind === 'unsatisfiable') {
    void release();
    headers.set('content-range', `bytes */${size}`);
    headers.set('content-length', '0');
    return new Response(null, { status: 416, headers });
  }
  const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, size - 1];
  headers.set('content-length', String(end - start + 1));
  if (range.kind === 'partial') headers.set('content-range', `bytes ${start}-${end}/${size}`);
  const status = range.kind === 'partial' ? 206 : 200;
  if (method === 'HEAD') {
    void release();
    return new Response(null, { status, headers });
  }
  return new Response(fileStream(handle, start, end + 1, release, request.signal), { status, headers });
}

// Pull-based: a chunk is read when the queue is empty (highWaterMark 1), so at most one waits for a slow client.
function fileStream(handle: FileHandle, from: number, to: number, release: () => Promise<void>, signal: AbortSignal): ReadableStream<Uint8Array> {
  let position = from;
  let finished = false;
  const stop = (): Promise<void> => {
    finished = true;
    signal.removeEventListener('abort', onAbort);
    return release();
  };
  let onAbort = (): void => undefined;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Next cancels the body when the client disconnects; the request's signal is the same news by another road.
        onAbort = () => {
          if (finished) return;
          controller.error(new Error('download aborted by the client'));
          void stop();
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        if (finished) return;
        if (position >= to) {
          await stop();
          controller.close();
          return;
        }
        const length = Math.min(DOWNLOAD_CHUNK_BYTES, to - position);
        // Not zeroed first: only the bytes read are handed on (subarray below).
        const chunk = Buffer.allocUnsafe(length);
        let bytesRead: number;
        try {
          ({ bytesRead } = await handle.read(chunk, 0, length, position));
        } catch (error) {
          if (finished) return;
          await stop();
          controller.error(error);
          return;
        }
        if (finished) return;
        if (bytesRead === 0) {
          // The file shrank after its size was announced in Content-Length: a short body would look complete.
          await stop();
          controller.error(new Error(`the file ended at byte ${position}, before byte ${to} as announced`));
          return;
        }
        position += bytesRead;
        controller.enqueue(bytesRead === length ? chunk : chunk.subarray(0, bytesRead));
      },
      async cancel() {
        await stop();
      },
    },
    { highWaterMark: 1 },
  );
}

/** True when If-None-Match names this ETag (weak comparison, RFC 9110 §13.1.2) or is `*`. */
function ifNoneMatchMatches(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === '*') return true;
  return entityTags(header).some((tag) => tag.replace(/^W\//, '') === etag);
}

/**
 * If-Range (RFC 9110 §13.1.5): the range applies only if the client's copy is the current one. An
 * entity tag must match strongly (a weak tag never does); a date must equal Last-Modified to the second.
 * Anything unreadable does not hold. No If-Range: the range applies.
 */
function ifRangeHolds(header: string | null, etag: string, mtimeMs: number): boolean {
  if (header === null) return true;
  const value = header.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && date === Math.floor(mtimeMs / 1000) * 1000;
}

function entityTags(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

// ——— Folder archives ———

/**
 * folderArchiveResponse streams the folder at `dir.path` as an uncompressed POSIX tar (ustar, with PAX
 * records for long or non-ASCII names and files of 8 GiB or more), entries named `<name>/…`, depth
 * first, each folder's names in byte order. Only folders and regular files go in: symbolic links are
 * never followed nor stored, devices, FIFOs and sockets are left out, and so is whatever vanishes, turns
 * into one of those or may not be read while the archive is written. On Linux every entry is opened
 * through its parent's open handle (`/proc/self/fd/N/name`, with O_NOFOLLOW), so swapping a folder
 * for a link mid-walk cannot lead outside. A file's size is taken from the handle once it is open and
 * exactly that many bytes are written: growth is cut off, shrinking padded with zeros, so the archive
 * stays valid. `dir.path` may be `/proc/self/fd/N` for a folder the caller holds open (its link is
 * followed; any other root that is a link is refused). More than `maxEntries` names (default 100,000) or folders deeper than 128 fail the stream
 * (the client sees a broken download, never a silently partial archive). No Content-Length: chunked.
 */
export function folderArchiveResponse(request: Request, dir: { path: string; name: string }, options: { maxEntries?: number } = {}): Response {
  const name = archiveRootName(dir.name);
  const headers = downloadHeaders(`${name}.tar`, 'application/x-tar');
  headers.set('accept-ranges', 'none');
  if (request.method.toUpperCase() === 'HEAD') return new Response(null, { status: 200, headers });
  const chunks = tarChunks(dir.path, name, options.maxEntries ?? DEFAULT_MAX_ARCHIVE_ENTRIES);
  return new Response(iteratorStream(chunks, request.signal), { status: 200, headers });
}

// One path segment that cannot climb out of the folder it is extracted into.
function archiveRootName(name: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const clean = name.replace(/[/\\\u0000-\u001f\u007f]/g, '_');
  return clean === '' || clean === '.' || clean === '..' ? 'folder' : clean;
}

function iteratorStream(chunks: AsyncGenerator<Uint8Array, void, undefined>, signal: AbortSignal): ReadableStream<Uint8Array> {
  let finished = false;
  let onAbort = (): void => undefined;
  // return() runs the generator's finally blocks, which close every handle it holds; it waits for a pending next().
  const stop = async (): Promise<void> => {
    if (finished) return;
    finished = true;
    signal.removeEventListener('abort', onAbort);
    await chunks.return(undefined).catch(() => undefined);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onAbort = () => {
          if (finished) return;
          controller.error(new Error('download aborted by the client'));
          void stop();
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        if (finished) return;
        let next: IteratorResult<Uint8Array, void>;
        try {
          next = await chunks.next();
        } catch (error) {
          if (finished) return;
          await stop();
          controller.error(error);
          return;
        }
        if (finished) return;
        if (next.done) {
          await stop();
          controller.close();
        } else controller.enqueue(next.value);
      },
      cancel: stop,
    },
    { highWaterMark: 1 },
  );
}

type Frame = { handle: FileHandle; path: Buffer; entryName: Buffer; names: Buffer[]; next: number };

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NOFOLLOW: a link swapped in after the listing fails with ELOOP. O_NONBLOCK: a FIFO swapped in must not
// block the open (and with it a thread of libuv's pool). O_NOCTTY: a terminal never becomes ours.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
// Errors that mean "this entry is not (or no longer) something to archive": vanished, a link, a socket,
// not a folder any more, or not ours to read. Anything else (EIO, EMFILE …) fails the archive.
const SKIPPED = new Set(['ENOENT', 'ELOOP', 'ENXIO', 'ENOTDIR', 'EACCES', 'EPERM', 'EMLINK']);

// A folder the caller has opened safely, passed as `/proc/self/fd/N`: a link only this process can
// make, which must be followed (O_NOFOLLOW would refuse it).
const OPEN_HANDLE = /^\/proc\/self\/fd\/\d+$/;

let procFdUsable: boolean | undefined;
// Through /proc/self/fd/N a name is looked up in the directory the handle holds, whatever happened to
// the path since: openat(2) for Node. Elsewhere (a developer's Mac) the plain path, with O_NOFOLLOW
// guarding only its last component.
function childPath(parent: Frame, name: Buffer): Buffer {
  procFdUsable ??= existsSync('/proc/self/fd');
  const base = procFdUsable ? Buffer.from(`/proc/self/fd/${parent.handle.fd}/`) : Buffer.concat([parent.path, Buffer.from('/')]);
  return Buffer.concat([base, name]);
}

const SESSION_FOLDER_NAME = Buffer.from(SESSION_FOLDER);

async function* tarChunks(rootPath: string, rootName: string, maxEntries: number): AsyncGenerator<Uint8Array, void, undefined> {
  const stack: Frame[] = [];
  let listed = 0;
  const listing = async (handle: FileHandle, path: Buffer): Promise<Buffer[]> => {
    procFdUsable ??= existsSync('/proc/self/fd');
    // The listing is read whole (at most maxEntries names in all) and closed, so only one handle per level stays open.
    const names: Buffer[] = [];
    // Node reads the names as bytes with encoding 'buffer', which its types do not list.
    const reader = await opendir(procFdUsable ? `/proc/self/fd/${handle.fd}` : path, { encoding: 'buffer' as unknown as BufferEncoding });
    for await (const entry of reader) {
      if (++listed > maxEntries) throw new Error(`the folder holds more than ${maxEntries} entries`);
      // Links, devices, FIFOs and sockets are never opened. A type the file system does not report
      // (DT_UNKNOWN: all false) is opened like a file, and the open handle's fstat decides.
      if (entry.isSymbolicLink() || entry.isBlockDevice() || entry.isCharacterDevice() || entry.isFIFO() || entry.isSocket()) continue;
      // A session's connection folder (its app's secret) never leaves in an archive.
      if (SESSION_FOLDER_NAME.equals(entry.name as unknown as Buffer)) continue;
      names.push(entry.name as unknown as Buffer);
    }
    return names.sort((a, b) => Buffer.compare(a, b));
  };
  try {
    const root = await open(rootPath, OPEN_HANDLE.test(rootPath) ? constants.O_RDONLY | constants.O_DIRECTORY : DIRECTORY_FLAGS);
    const rootEntry = Buffer.from(`${rootName}/`);
    const frame: Frame = { handle: root, path: Buffer.from(rootPath), entryName: rootEntry, names: [], next: 0 };
    stack.push(frame);
    const rootStat = await root.stat();
    yield entryHeader(rootEntry, 'directory', 0, rootStat.mode, rootStat.mtimeMs);
    frame.names = await listing(root, frame.path);
    while (stack.length > 0) {
      const parent = stack[stack.length - 1]!;
      const name = parent.names[parent.next++];
      if (name === undefined) {
        stack.pop();
        await parent.handle.close();
        continue;
      }
      const entryName = Buffer.concat([parent.entryName, name]);
      const path = childPath(parent, name);
      let handle: FileHandle;
      try {
        handle = await open(path, FILE_FLAGS);
      } catch (error) {
        if (SKIPPED.has(errorCode(error))) continue;
        throw error;
      }
      let keep = false;
      // Once a file's header is out, its bytes must follow: any error then fails the archive.
      let committed = false;
      try {
        const stat = await handle.stat();
        if (stat.isDirectory()) {
          if (stack.length >= MAX_ARCHIVE_DEPTH) throw new Error(`the folder is nested deeper than ${MAX_ARCHIVE_DEPTH} levels`);
          const directoryName = Buffer.concat([entryName, Buffer.from('/')]);
          const child: Frame = { handle, path: Buffer.concat([parent.path, Buffer.from('/'), name]), entryName: directoryName, names: [], next: 0 };
          yield entryHeader(directoryName, 'directory', 0, stat.mode, stat.mtimeMs);
          child.names = await listing(handle, child.path);
          stack.push(child);
          keep = true;
        } else if (stat.isFile()) {
          committed = true;
          yield entryHeader(entryName, 'file', stat.size, stat.mode, stat.mtimeMs);
          yield* fileBlocks(handle, stat.size);
        }
      } catch (error) {
        if (committed || !SKIPPED.has(errorCode(error))) throw error;
      } finally {
        if (!keep) await handle.close();
      }
    }
    yield new Uint8Array(2 * BLOCK);
  } finally {
    for (const frame of stack) await frame.handle.close().catch(() => undefined);
  }
}

// Exactly `size` bytes, then zeros to the block boundary: the archive stays valid whatever the file does meanwhile.
async function* fileBlocks(handle: FileHandle, size: number): AsyncGenerator<Uint8Array, void, undefined> {
  let position = 0;
  let ended = false;
  while (position < size) {
    const length = Math.min(DOWNLOAD_CHUNK_BYTES, size - position);
    const chunk = new Uint8Array(length);
    const bytesRead = ended ? 0 : (await handle.read(chunk, 0, length, position)).bytesRead;
    // A file that shrank reads 0: the rest of the chunk stays zero, and so do the chunks after it.
    if (bytesRead === 0) ended = true;
    const filled = ended ? length : bytesRead;
    position += filled;
    yield filled === length ? chunk : chunk.subarray(0, filled);
  }
  const padding = (BLOCK - (size % BLOCK)) % BLOCK;
  if (padding > 0) yield new Uint8Array(padding);
}

function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : '';
}

// ——— tar headers (POSIX.1-2001 pax over ustar) ———

const BLOCK = 512;
const USTAR_MAX_SIZE = 0o77777777777; // 11 octal digits: 8 GiB − 1

function entryHeader(name: Buffer, kind: 'file' | 'directory', size: number, mode: number, mtimeMs: number): Uint8Array {
  const records: Buffer[] = [];
  const ascii = name.every((byte) => byte >= 0x20 && byte < 0x7f);
  if (name.length > 100 || !ascii) {
    // pax strings are UTF-8; a name that is not (a Latin-1 name from an old system) is declared raw bytes.
    if (!isUtf8(name)) records.push(paxRecord('hdrcharset', Buffer.from('BINARY')));
    records.push(paxRecord('path', name));
  }
  if (size > USTAR_MAX_SIZE) records.push(paxRecord('size', Buffer.from(String(size))));
  const header = ustarHeader({
    name: ascii ? name.subarray(0, 100) : asciiFallback(name),
    type: kind === 'directory' ? '5' : '0',
    size: size > USTAR_MAX_SIZE ? 0 : size,
    mode: mode & 0o777,
    mtime: Math.max(0, Math.floor(mtimeMs / 1000)),
  });
  if (records.length === 0) return header;
  const body = Buffer.concat(records);
  const paxHeader = ustarHeader({ name: Buffer.from('PaxHeader'), type: 'x', size: body.length, mode: 0o644, mtime: 0 });
  const padding = (BLOCK - (body.length % BLOCK)) % BLOCK;
  return Buffer.concat([paxHeader, body, Buffer.alloc(padding), header]);
}

// What a reader without pax sees: printable ASCII, cut to the field.
function asciiFallback(name: Buffer): Buffer {
  return Buffer.from(name.subarray(0, 100).map((byte) => (byte >= 0x20 && byte < 0x7f ? byte : 0x5f)));
}

// `<length> <key>=<value>\n`, the length counting its own digits.
function paxRecord(key: string, value: Buffer): Buffer {
  const rest = Buffer.byteLength(` ${key}=`) + value.length + 1;
  let length = rest + 1;
  while (length !== rest + String(length).length) length = rest + String(length).length;
  return Buffer.concat([Buffer.from(`${length} ${key}=`), value, Buffer.from('\n')]);
}

function ustarHeader(entry: { name: Buffer; type: '0' | '5' | 'x'; size: number; mode: number; mtime: number }): Buffer {
  const header = Buffer.alloc(BLOCK);
  entry.name.copy(header, 0, 0, 100);
  octal(header, 100, 8, entry.mode);
  octal(header, 108, 8, 0); // uid: the cluster's numbers mean nothing where the archive is unpacked
  octal(header, 116, 8, 0); // gid
  octal(header, 124, 12, entry.size);
  octal(header, 136, 12, entry.mtime);
  header.write(entry.type, 156, 'ascii');
  header.write('ustar\u000000', 257, 'ascii');
  header.fill(0x20, 148, 156); // the checksum is summed with its own field as blanks
  const sum = header.reduce((total, byte) => total + byte, 0);
  header.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'ascii');
  return header;
}

function octal(header: Buffer, offset: number, width: number, value: number): void {
  header.write(`${value.toString(8).padStart(width - 1, '0')}\u0000`, offset, 'ascii');
}
