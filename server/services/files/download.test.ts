import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { appendFile, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, rename, rm, symlink, truncate, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etagOf } from '~/server/core/files/range';
import { DOWNLOAD_CHUNK_BYTES, fileResponse, folderArchiveResponse, type OpenFile } from './download';

let dir: string;
const content = randomBytes(1000);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'download-test-'));
  await writeFile(path.join(dir, 'data.bin'), content);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Opens a file as a caller would, and a promise of onDone. */
async function openFile(file: string, name = path.basename(file)): Promise<{ file: OpenFile; done: Promise<void>; onDone: () => void }> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  const stat = await handle.stat();
  let onDone!: () => void;
  const done = new Promise<void>((resolve) => (onDone = resolve));
  return { file: { handle, name, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino }, done, onDone };
}

function get(headers: Record<string, string> = {}, method = 'GET'): Request {
  return new Request('http://portal.test/api/files/x', { method, headers });
}

async function expectClosed(handle: FileHandle): Promise<void> {
  expect(handle.fd).toBe(-1);
  await expect(handle.read(new Uint8Array(1), 0, 1, 0)).rejects.toMatchObject({ code: 'EBADF' });
}

async function download(headers: Record<string, string>, method = 'GET') {
  const { file, done, onDone } = await openFile(path.join(dir, 'data.bin'));
  const response = fileResponse(get(headers, method), file, { onDone });
  const body = method === 'HEAD' ? null : Buffer.from(await response.arrayBuffer());
  await done;
  await expectClosed(file.handle);
  return { response, body, file };
}

describe('fileResponse', () => {
  it('sends the whole file, 200, with its validators and the download headers, then closes the handle', async () => {
    const { response, body, file } = await download({});
    expect(response.status).toBe(200);
    expect(body!.equals(content)).toBe(true);
    expect(Object.fromEntries(response.headers)).toEqual({
      'accept-ranges': 'bytes',
      'cache-control': 'private, no-store',
      'content-disposition': `attachment; filename="data.bin"; filename*=UTF-8''data.bin`,
      'content-length': '1000',
      'content-security-policy': "sandbox; default-src 'none'",
      'content-type': 'application/octet-stream',
      etag: etagOf(1000, file.mtimeMs, file.ino),
      'last-modified': new Date(file.mtimeMs).toUTCString(),
      'x-content-type-options': 'nosniff',
    });
  });

  it.each([
    ['a closed range', 'bytes=10-19', 10, 19],
    ['a suffix', 'bytes=-100', 900, 999],
    ['an open end', 'bytes=990-', 990, 999],
    ['an end past the file', 'bytes=500-5000', 500, 999],
  ] as const)('sends %s as 206 with Content-Range', async (_label, range, start, end) => {
    const { response, body } = await download({ range });
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
    expect(response.headers.get('content-length')).toBe(String(end - start + 1));
    expect(body!.equals(content.subarray(start, end + 1))).toBe(true);
  });

  it('answers a range past the end 416 with the size, and closes the handle without a body', async () => {
    const { response, body } = await download({ range: 'bytes=1000-' });
    expect(response.status).toBe(416);
    expect(response.headers.get('content-range')).toBe('bytes */1000');
    expect(body!.length).toBe(0);
  });

  it('sends the whole file for several ranges or a malformed one', async () => {
    for (const range of ['bytes=0-1,5-6', 'bytes=5-2', 'pages=1-2']) {
      const { response, body } = await download({ range });
      expect(response.status).toBe(200);
      expect(body!.equals(content)).toBe(true);
    }
  });

  it('honours If-Range: the current ETag or date gets the range, another one the whole file', async () => {
    const { file } = await openFile(path.join(dir, 'data.bin'));
    await file.handle.close();
    const etag = etagOf(file.size, file.mtimeMs, file.ino);
    const lastModified = new Date(file.mtimeMs).toUTCString();
    const cases: [string, number][] = [
      [etag, 206],
      [lastModified, 206],
      ['"something-else"', 200],
      [`W/${etag}`, 200], // a weak tag never matches for If-Range
      [new Date(file.mtimeMs - 10_000).toUTCString(), 200],
      ['not a date', 200],
    ];
    for (const [ifRange, status] of cases) {
      const { response, body } = await download({ range: 'bytes=10-19', 'if-range': ifRange });
      expect([ifRange, response.status]).toEqual([ifRange, status]);
      expect(body!.length).toBe(status === 206 ? 10 : 1000);
    }
  });

  it('answers If-None-Match with the current ETag 304, without a body', async () => {
    const { file } = await openFile(path.join(dir, 'data.bin'));
    await file.handle.close();
    const etag = etagOf(file.size, file.mtimeMs, file.ino);
    for (const ifNoneMatch of [etag, `"other", W/${etag}`, '*']) {
      const { response, body } = await download({ 'if-none-match': ifNoneMatch });
      expect(response.status).toBe(304);
      expect(body!.length).toBe(0);
    }
    expect((await download({ 'if-none-match': '"other"' })).response.status).toBe(200);
  });

  it('answers HEAD with the headers only and closes the handle; a Range is ignored (RFC 9110 §14.2)', async () => {
    const { file, done, onDone } = await openFile(path.join(dir, 'data.bin'));
    const response = fileResponse(get({ range: 'bytes=0-9' }, 'HEAD'), file, { onDone });
    await done;
    await expectClosed(file.handle);
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
    expect(response.headers.get('content-length')).toBe('1000');
    expect(response.headers.get('content-range')).toBeNull();
  });

  it('sends an empty file as an empty 200, and refuses bytes=0- on it with 416', async () => {
    const empty = path.join(dir, 'empty.txt');
    await writeFile(empty, '');
    const whole = await openFile(empty);
    const response = fileResponse(get(), whole.file, { onDone: whole.onDone });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe('0');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
    await whole.done;
    await expectClosed(whole.file.handle);
    const ranged = await openFile(empty);
    expect(fileResponse(get({ range: 'bytes=0-' }), ranged.file, { onDone: ranged.onDone }).status).toBe(416);
    await ranged.done;
    await expectClosed(ranged.file.handle);
  });

  it('closes the handle when the client cancels mid-stream', async () => {
    const big = path.join(dir, 'cancel.bin');
    await writeFile(big, Buffer.alloc(4 * 1024 * 1024, 7));
    const { file, done, onDone } = await openFile(big);
    const reader = fileResponse(get(), file, { onDone }).body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    await reader.cancel();
    await done;
    await expectClosed(file.handle);
  });

  it('closes the handle when the request is aborted', async () => {
    const big = path.join(dir, 'abort.bin');
    await writeFile(big, Buffer.alloc(4 * 1024 * 1024, 7));
    const { file, done, onDone } = await openFile(big);
    const abort = new AbortController();
    const request = new Request('http://portal.test/x', { signal: abort.signal });
    const reader = fileResponse(request, file, { onDone }).body!.getReader();
    await reader.read();
    abort.abort();
    await done;
    await expectClosed(file.handle);
    await expect(reader.read()).rejects.toThrow(/aborted/);
  });

  it('streams a 20 MB file in bounded chunks', async () => {
    const big = path.join(dir, 'big.bin');
    const bytes = randomBytes(20 * 1000 * 1000);
    await writeFile(big, bytes);
    const { file, done, onDone } = await openFile(big);
    const reader = fileResponse(get(), file, { onDone }).body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    await done;
    await expectClosed(file.handle);
    expect(chunks.length).toBeGreaterThanOrEqual(20);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(Math.min(DOWNLOAD_CHUNK_BYTES, 1024 * 1024));
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it('sends exactly the announced bytes of a file that grows, and fails rather than cut short one that shrank', async () => {
    const growing = path.join(dir, 'growing.log');
    await writeFile(growing, 'first line\n');
    const grown = await openFile(growing);
    await appendFile(growing, 'second line\n');
    const response = fileResponse(get(), grown.file, { onDone: grown.onDone });
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe('first line\n');
    await grown.done;

    const shrinking = path.join(dir, 'shrinking.log');
    await writeFile(shrinking, Buffer.alloc(3 * DOWNLOAD_CHUNK_BYTES, 1));
    const shrunk = await openFile(shrinking);
    await truncate(shrinking, 10);
    await expect(fileResponse(get(), shrunk.file, { onDone: shrunk.onDone }).arrayBuffer()).rejects.toThrow();
    await shrunk.done;
    await expectClosed(shrunk.file.handle);
  });

  it('closes the handle when it cannot answer at all', async () => {
    const { file, done, onDone } = await openFile(path.join(dir, 'data.bin'));
    expect(() => fileResponse(get(), { ...file, size: -1 }, { onDone })).toThrow(/not a size/);
    await done;
    await expectClosed(file.handle);
  });

  it('names the download as an attachment, whatever the name holds', async () => {
    const { file, done, onDone } = await openFile(path.join(dir, 'data.bin'), 'Ergebnis "final"\nä.csv');
    const response = fileResponse(get({}, 'HEAD'), file, { onDone });
    await done;
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="Ergebnis _final__a.csv"; filename*=UTF-8''Ergebnis%20%22final%22_%C3%A4.csv`);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
  });
});

// ——— folder archives ———

function run(command: string, args: string[], input?: Buffer): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Every path under `root`, relative, with `/` after folders, and what each file holds. */
async function tree(root: string): Promise<Map<string, Buffer | 'dir' | 'link'>> {
  const found = new Map<string, Buffer | 'dir' | 'link'>();
  const walk = async (folder: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(folder)).sort()) {
      const full = path.join(folder, name);
      const stat = await lstat(full);
      if (stat.isSymbolicLink()) found.set(prefix + name, 'link');
      else if (stat.isDirectory()) {
        found.set(`${prefix}${name}/`, 'dir');
        await walk(full, `${prefix}${name}/`);
      } else found.set(prefix + name, await readFile(full));
    }
  };
  await walk(root, '');
  return found;
}

describe('folderArchiveResponse', () => {
  const longName = `${'Überlänge-'.repeat(12)}データ.txt`; // 140 characters, 180 bytes of UTF-8
  let source: string;

  beforeAll(async () => {
    source = path.join(dir, 'results');
    await mkdir(path.join(source, 'nested', 'deeper'), { recursive: true });
    await mkdir(path.join(source, 'empty-folder'));
    await writeFile(path.join(source, 'top.txt'), 'top\n');
    await writeFile(path.join(source, 'empty.txt'), '');
    await writeFile(path.join(source, 'nested', longName), 'long name\n');
    await writeFile(path.join(source, 'nested', 'deeper', 'block.bin'), randomBytes(512));
    await writeFile(path.join(source, 'nested', 'deeper', 'odd.bin'), randomBytes(3 * DOWNLOAD_CHUNK_BYTES + 7));
    await symlink('/etc/hostname', path.join(source, 'outside'));
    await symlink('/etc', path.join(source, 'nested', 'etc'));
    await symlink('top.txt', path.join(source, 'inside-link'));
  });

  it('streams a tar that GNU tar extracts to the same bytes, without the links or anything they point to', async () => {
    const response = folderArchiveResponse(get(), { path: source, name: 'results' });
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toEqual({
      'accept-ranges': 'none',
      'cache-control': 'private, no-store',
      'content-disposition': `attachment; filename="results.tar"; filename*=UTF-8''results.tar`,
      'content-security-policy': "sandbox; default-src 'none'",
      'content-type': 'application/x-tar',
      'x-content-type-options': 'nosniff',
    });
    const archive = Buffer.from(await response.arrayBuffer());
    expect(archive.length % 512).toBe(0);

    const listing = await run('tar', ['-tvf', '-'], archive);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stderr).toBe('');
    const lines = listing.stdout.trim().split('\n');
    expect(lines.every((line) => line.startsWith('-') || line.startsWith('d'))).toBe(true);
    expect(listing.stdout).not.toMatch(/outside|inside-link|etc|->/);

    const target = await mkdtemp(path.join(tmpdir(), 'download-extract-'));
    try {
      const extracted = await run('tar', ['-xf', '-', '-C', target], archive);
      expect(extracted.code, extracted.stderr).toBe(0);
      expect(await readdir(target)).toEqual(['results']);
      const got = await tree(path.join(target, 'results'));
      const want = await tree(source);
      for (const [name, kind] of want) if (kind === 'link') want.delete(name);
      expect([...got.keys()]).toEqual([...want.keys()]);
      for (const [name, bytes] of want) {
        const extracted = got.get(name);
        expect(bytes === 'dir' ? extracted === 'dir' : Buffer.isBuffer(bytes) && Buffer.isBuffer(extracted) && extracted.equals(bytes), name).toBe(true);
      }
      expect(got.get(`nested/${longName}`)?.toString()).toBe('long name\n');
      expect(got.get('empty.txt')?.length).toBe(0);
    } finally {
      await rm(target, { recursive: true, force: true });
    }
    // The links are still where they were: the archive only read.
    expect(await readlink(path.join(source, 'outside'))).toBe('/etc/hostname');
  });

  it('answers HEAD with the headers and walks nothing', () => {
    const response = folderArchiveResponse(get({}, 'HEAD'), { path: path.join(dir, 'no-such-folder'), name: 'x' });
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
  });

  it('keeps the root name one harmless path segment', async () => {
    const head = folderArchiveResponse(get({}, 'HEAD'), { path: source, name: '../a/b"\n' });
    expect(head.headers.get('content-disposition')).toBe(`attachment; filename=".._a_b__.tar"; filename*=UTF-8''.._a_b%22_.tar`);
    const folder = path.join(dir, 'one-file');
    await mkdir(folder);
    await writeFile(path.join(folder, 'a.txt'), 'a');
    for (const [name, root] of [['..', 'folder'], ['', 'folder'], ['x/../..', 'x_.._..']] as const) {
      const archive = Buffer.from(await folderArchiveResponse(get(), { path: folder, name }).arrayBuffer());
      const listing = await run('tar', ['-tf', '-'], archive);
      expect(listing.stdout.trim().split('\n')).toEqual([`${root}/`, `${root}/a.txt`]);
    }
  });

  it('fails the stream past maxEntries rather than send a partial archive', async () => {
    const response = folderArchiveResponse(get(), { path: source, name: 'results' }, { maxEntries: 3 });
    await expect(response.arrayBuffer()).rejects.toThrow(/more than 3 entries/);
  });

  it('archives a folder the caller holds open, named by /proc/self/fd/N', async () => {
    const folder = await open(source, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      const archive = Buffer.from(await folderArchiveResponse(get(), { path: `/proc/self/fd/${folder.fd}`, name: 'results' }).arrayBuffer());
      const listing = await run('tar', ['-tf', '-'], archive);
      expect(listing.code, listing.stderr).toBe(0);
      expect(listing.stdout).toContain('results/nested/deeper/odd.bin\n');
    } finally {
      await folder.close();
    }
  });

  it('fails the stream for a root that is a link', async () => {
    const link = path.join(dir, 'link-to-results');
    await symlink(source, link);
    await expect(folderArchiveResponse(get(), { path: link, name: 'x' }).arrayBuffer()).rejects.toThrow();
  });

  it('cuts a file that grows and pads one that shrinks to the size it had when opened, so the archive stays valid', async () => {
    for (const change of ['grow', 'shrink'] as const) {
      const folder = path.join(dir, `changing-${change}`);
      await mkdir(folder);
      const file = path.join(folder, 'log.bin');
      const original = Buffer.alloc(3 * DOWNLOAD_CHUNK_BYTES, 0x61);
      await writeFile(file, original);
      const reader = folderArchiveResponse(get(), { path: folder, name: 'changing' }).body!.getReader();
      const chunks: Uint8Array[] = [];
      // The folder's header, then the file's: its size is fixed from here on.
      while (Buffer.concat(chunks).length < 1024) chunks.push((await reader.read()).value!);
      if (change === 'grow') await appendFile(file, Buffer.alloc(DOWNLOAD_CHUNK_BYTES, 0x62));
      else await truncate(file, 0);
      for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);

      const target = await mkdtemp(path.join(tmpdir(), 'download-extract-'));
      try {
        const extracted = await run('tar', ['-xf', '-', '-C', target], Buffer.concat(chunks));
        expect(extracted.code, extracted.stderr).toBe(0);
        const bytes = await readFile(path.join(target, 'changing', 'log.bin'));
        expect(bytes.length).toBe(original.length);
        if (change === 'grow') expect(bytes.equals(original)).toBe(true);
        // At most the chunk read ahead before the truncation holds data; the last one is zeros.
        else expect(bytes.subarray(-DOWNLOAD_CHUNK_BYTES).every((byte) => byte === 0)).toBe(true);
      } finally {
        await rm(target, { recursive: true, force: true });
      }
    }
  });

  it('reads a folder swapped for a link mid-walk from the folder it opened, never through the link', async () => {
    const root = path.join(dir, 'swapped');
    const outside = path.join(dir, 'outside-secret');
    await mkdir(path.join(root, 'a'), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(outside, 'z.txt'), 'SECRET\n');
    await writeFile(path.join(root, 'a', 'big.bin'), Buffer.alloc(3 * DOWNLOAD_CHUNK_BYTES, 1));
    await writeFile(path.join(root, 'a', 'z.txt'), 'inside\n');
    const reader = folderArchiveResponse(get(), { path: root, name: 'swapped' }).body!.getReader();
    const chunks: Uint8Array[] = [];
    // The root's header, a/'s, a/big.bin's: the walk is inside a/, and z.txt is yet to come.
    while (Buffer.concat(chunks).length < 3 * 512) chunks.push((await reader.read()).value!);
    await rename(path.join(root, 'a'), path.join(root, 'a-moved'));
    await symlink(outside, path.join(root, 'a'));
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    const archive = Buffer.concat(chunks);
    expect(archive.includes('SECRET')).toBe(false);
    expect(archive.includes('inside\n')).toBe(true);
    const listing = await run('tar', ['-tf', '-'], archive);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stdout.trim().split('\n')).toEqual(['swapped/', 'swapped/a/', 'swapped/a/big.bin', 'swapped/a/z.txt']);
  });

  it('leaves out a FIFO without blocking on it', async () => {
    const folder = path.join(dir, 'with-fifo');
    await mkdir(folder);
    await writeFile(path.join(folder, 'a.txt'), 'a');
    const made = await run('mkfifo', [path.join(folder, 'pipe')]);
    expect(made.code, made.stderr).toBe(0);
    const archive = Buffer.from(await folderArchiveResponse(get(), { path: folder, name: 'f' }).arrayBuffer());
    const listing = await run('tar', ['-tf', '-'], archive);
    expect(listing.stdout.trim().split('\n')).toEqual(['f/', 'f/a.txt']);
  });

  it('stores a name that is not UTF-8 as raw bytes', async () => {
    const folder = path.join(dir, 'latin1');
    await mkdir(folder);
    const name = Buffer.from('caf\xe9.txt', 'latin1');
    await writeFile(Buffer.concat([Buffer.from(`${folder}/`), name]), 'bytes\n');
    const archive = Buffer.from(await folderArchiveResponse(get(), { path: folder, name: 'latin1' }).arrayBuffer());
    const target = await mkdtemp(path.join(tmpdir(), 'download-extract-'));
    try {
      const extracted = await run('tar', ['-xf', '-', '-C', target], archive);
      expect(extracted.code, extracted.stderr).toBe(0);
      const names = await readdir(path.join(target, 'latin1'), { encoding: 'buffer' });
      expect(names).toEqual([name]);
    } finally {
      await rm(target, { recursive: true, force: true });
    }
  });

  it('closes every handle when the client cancels mid-archive', async () => {
    const before = (await readdir('/proc/self/fd')).length;
    const reader = folderArchiveResponse(get(), { path: source, name: 'results' }).body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    // The walk held the root folder, a nested one and possibly a file; none stays open.
    expect((await readdir('/proc/self/fd')).length).toBeLessThanOrEqual(before);
  });
});
