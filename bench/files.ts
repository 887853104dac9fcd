/**
 * Data paths benchmark (issue #27): a large file up and down through the portal against a plain local
 * copy of it, with the server's memory watched, and a folder of many files listed a page at a time.
 * Writes the section "## Files: upload, download and listing" of BENCHMARKS.md.
 *
 * The production build (`scripts/server.mjs`, as `npm start` runs it) runs on a fresh database of the local Postgres (demo mode, so the
 * demo centre is seeded), its workspaces (PORTAL_FILES_DIR) in a temp folder on the same filesystem as
 * the file sent, so "a plain local copy" reads and writes where the portal does. As the demo PI
 * (pi@uni.example, signed in through next-auth) into the project "Protein structure prediction…" at
 * de-jena:
 *   - upload: a file of random bytes through `/api/uploads` as the browser sends it (tus 1.0: POST with
 *     Upload-Length and Upload-Metadata, then PATCHes of 16 MiB streamed from the file); the last answer
 *     carries the server's SHA-256, checked against the file's. Timed from the POST to the last answer
 *     (the server's hash covers the whole file before it answers);
 *   - download: GET `/api/projects/{id}/files/download` streamed to a file, its SHA-256 checked; then
 *     one resumed download (the first half with Range, the rest with Range + If-Range), bytes checked;
 *   - a plain local copy of the same file before each run (a stream copy, `pipeline(createReadStream,
 *     createWriteStream)`; `cp` once, and a bare Node HTTP server, for reference); `sync` before every
 *     timed transfer;
 *   - memory: the RSS of the server's processes (the server and any child) every 100 ms during each
 *     transfer, and its high-water mark (VmHWM, reset before each transfer through /proc/PID/clear_refs);
 *   - listing: a folder of N empty files made on disk in the project's workspace, then `files.list`
 *     (tRPC GET, limit 200) pages from its start and from its middle (reached with pages of 1,000),
 *     and where a page's time goes, measured in this process on the same folder.
 *
 *   npm run bench:files -- [--size-mb 1024] [--files 100000] [--runs 3] [--pages 10] [--port 3211]
 *                          [--rebuild | --no-build] [--webpack] [--database-url URL] [--keep] [--no-write]
 *
 * The build in .next is reused when it is newer than the sources, as for bench:http (--webpack where
 * node_modules is a link to outside the project). The database `portal_bench_<random>` and the temp
 * folder (the file, its copies, the server's data and workspaces) are removed at the end — also after a
 * failure or Ctrl-C — unless --keep. Run it through npm (or `node --import tsx`), not the `tsx` wrapper.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { listFolder, workspaceOf } from '~/server/services/files/workspace';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { intFlag, serverBenchFlags, UsageError, type ServerBenchFlags } from './args';
import { atInterrupt, createBenchDatabase, describeServer, wasInterrupted, type BenchDatabase } from './database';
import { Session } from './http-client';
import { ensureBuild, startServer, type PortalServer } from './http-server';
import { loadAverage, machine, mark, writeSection } from './markdown';
import { ascending, median, num, quantile } from './stats';

const SECTION = '## Files: upload, download and listing';
const PI = 'pi@uni.example';
const DEMO_PASSWORD = 'demo-password';
const PROJECT_TITLE = 'Protein structure prediction';
const SITE = 'de-jena';
const CHUNK_BYTES = 16 * 1024 * 1024; // what the browser sends per PATCH (app/(portal)/projects/[id]/files/uploads.tsx)
const PAGE = 200;
const HOP = 1000; // files.list's largest page (MAX_PAGE), to reach the middle of the folder
const SAMPLE_MS = 100;
const MiB = 1024 * 1024;
const TARGET = { ratio: 0.5, rssGrowthMiB: 128, pageP95Ms: 200 } as const;

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

// ---- options -----------------------------------------------------------------------------------

interface Options extends ServerBenchFlags {
  sizeMiB: number;
  files: number;
  runs: number;
  pages: number;
}

function options(): Options {
  return {
    ...serverBenchFlags(3211),
    sizeMiB: intFlag('--size-mb', 1024),
    files: intFlag('--files', 100_000),
    runs: intFlag('--runs', 3),
    pages: intFlag('--pages', 10),
  };
}

// ---- files on this side ------------------------------------------------------------------------

/** writeRandomFile writes `bytes` random bytes (16 MiB at a time) and returns their SHA-256. */
function writeRandomFile(path: string, bytes: number): string {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < bytes; ) {
      const n = Math.min(CHUNK_BYTES, bytes - written);
      const chunk = buffer.subarray(0, n);
      randomFillSync(chunk);
      hash.update(chunk);
      for (let at = 0; at < n; ) at += writeSync(fd, chunk, at, n - at);
      written += n;
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: MiB })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** settle writes back every dirty page (`sync`), so no transfer pays for the one before it. */
function settle(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

/** localCopy is the plain local copy a transfer is compared with: a stream copy in this process. */
async function localCopy(from: string, to: string): Promise<number> {
  const t0 = performance.now();
  await pipeline(createReadStream(from), createWriteStream(to));
  return performance.now() - t0;
}

// ---- the server's memory -----------------------------------------------------------------------

/** processTree is a process and all its descendants (through /proc/PID/task/TID/children, else a scan of /proc). */
function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    let children: number[] = [];
    try {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        children.push(
          ...readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8')
            .split(' ')
            .filter(Boolean)
            .map(Number),
        );
      }
    } catch {
      children = [];
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === p) children.push(Number(entry));
        } catch {
          // gone
        }
      }
    }
    for (const child of children) visit(child);
  };
  visit(pid);
  return out;
}

/** statusKiB reads a field of /proc/PID/status in KiB (0 when the process is gone). */
function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) : 0;
  } catch {
    return 0;
  }
}

function describeProcess(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return `${pid} (${argv.map((a) => a.split('/').slice(-2).join('/')).join(' ').slice(0, 80)})`;
  } catch {
    return String(pid);
  }
}

interface Memory {
  /** RSS of the server's processes together, MiB: just before, the highest sampled, the high-water mark. */
  baselineMiB: number;
  peakMiB: number;
  /** The kernel's peak RSS since the reset (summed over the processes), when it could be reset; else NaN. */
  hwmMiB: number;
  endMiB: number;
  samples: number;
}

/** watchMemory samples the server tree's RSS every 100 ms until the returned stop is called. */
function watchMemory(serverPid: number): () => Memory {
  const pids = processTree(serverPid);
  let hwmReset = true;
  for (const pid of pids) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    } catch {
      hwmReset = false;
    }
  }
  const rss = () => pids.reduce((s, pid) => s + statusKiB(pid, 'VmRSS'), 0) / 1024;
  const baselineMiB = rss();
  let peakMiB = baselineMiB;
  let samples = 1;
  const timer = setInterval(() => {
    peakMiB = Math.max(peakMiB, rss());
    samples++;
  }, SAMPLE_MS);
  return () => {
    clearInterval(timer);
    const endMiB = rss();
    peakMiB = Math.max(peakMiB, endMiB);
    const hwmMiB = hwmReset ? pids.reduce((s, pid) => s + statusKiB(pid, 'VmHWM'), 0) / 1024 : Number.NaN;
    return { baselineMiB, peakMiB, hwmMiB, endMiB, samples: samples + 1 };
  };
}

/** The growth of a transfer: the higher of the sampled peak and the high-water mark, less the baseline. */
const growthOf = (m: Memory) => Math.max(m.peakMiB, Number.isFinite(m.hwmMiB) ? m.hwmMiB : 0) - m.baselineMiB;

// ---- HTTP, streamed ------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as text (small answers), or the bytes written to `into`. */
  text: string;
  bytes: number;
}

/**
 * send makes one request with `body` streamed from a Readable (or none) and either reads the answer as
 * text (at most 64 KiB kept) or streams it into a file (`into`, opened with `flags`), never holding it.
 */
function send(url: URL, method: string, headers: Record<string, string>, o: { body?: Readable; into?: string; flags?: string } = {}): Promise<Answer> {
  return new Promise<Answer>((resolvePromise, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (o.into && status >= 200 && status < 300) {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        pipeline(res, createWriteStream(o.into, { flags: o.flags ?? 'w' })).then(() => resolvePromise({ status, headers: res.headers, text: '', bytes }), reject);
        return;
      }
      const parts: Buffer[] = [];
      let kept = 0;
      res.on('data', (chunk: Buffer) => {
        if (kept < 65_536) parts.push(chunk);
        kept += chunk.length;
      });
      res.on('end', () => resolvePromise({ status, headers: res.headers, text: Buffer.concat(parts).toString('utf8').slice(0, 65_536), bytes: kept }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (o.body) pipeline(o.body, req).catch(reject);
    else req.end();
  });
}

const header = (a: Answer, name: string) => {
  const v = a.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

function expect(a: Answer, status: number, what: string): void {
  if (a.status !== status) throw new Error(`${what}: HTTP ${a.status} (expected ${status}) ${a.text.trim().slice(0, 300)}`);
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

interface Upload {
  ms: number;
  /** The last PATCH alone: its 16 MiB, then the server finishes the file's hash, moves it and books it. */
  lastPatchMs: number;
  /** Every PATCH but the last: 16 MiB each, nothing but the bytes and the route's checks. */
  patchMs: number[];
  requests: number;
  sha256: string;
  landedPath: string;
}

/** tusUpload sends a file as the browser's tus-js-client does (chunks of 16 MiB) and returns what the server said. */
async function tusUpload(session: Session, o: { projectId: string; path: string; file: string; size: number }): Promise<Upload> {
  const base = new URL('/api/uploads', session.base);
  const cookie = session.cookieHeader();
  const t0 = performance.now();
  const created = await send(base, 'POST', {
    cookie,
    'tus-resumable': '1.0.0',
    'upload-length': String(o.size),
    'upload-metadata': [
      ['projectId', o.projectId],
      ['site', SITE],
      ['path', o.path],
      ['filename', o.path.split('/').pop()!],
      ['filetype', 'application/octet-stream'],
    ]
      .map(([k, v]) => `${k} ${b64(v!)}`)
      .join(','),
    'content-length': '0',
  });
  expect(created, 201, 'POST /api/uploads');
  const location = header(created, 'location');
  if (!location) throw new Error('POST /api/uploads: no Location');
  const url = new URL(location, session.base);
  let offset = 0;
  let requests = 1;
  let last: Answer = created;
  let lastPatchMs = 0;
  const patchMs: number[] = [];
  while (offset < o.size) {
    const length = Math.min(CHUNK_BYTES, o.size - offset);
    const p0 = performance.now();
    last = await send(
      url,
      'PATCH',
      { cookie, 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', 'content-length': String(length) },
      { body: createReadStream(o.file, { start: offset, end: offset + length - 1, highWaterMark: MiB }) },
    );
    if (lastPatchMs) patchMs.push(lastPatchMs);
    lastPatchMs = performance.now() - p0;
    requests++;
    expect(last, 204, `PATCH at ${offset}`);
    const next = Number(header(last, 'upload-offset'));
    if (next !== offset + length) throw new Error(`PATCH at ${offset}: the server is at ${next}, expected ${offset + length}`);
    offset = next;
  }
  const ms = performance.now() - t0;
  const sha256 = header(last, 'upload-sha256') ?? '';
  const landed = header(last, 'upload-path');
  return { ms, lastPatchMs, patchMs, requests, sha256, landedPath: landed ? decodeURIComponent(landed) : o.path };
}

/** describeFraming says how an answer's body was delimited (a download should announce its length). */
function describeFraming(a: Answer): string {
  const length = header(a, 'content-length');
  const encoding = header(a, 'transfer-encoding');
  return length !== undefined ? `Content-Length: ${length}` : `no Content-Length${encoding ? ` (Transfer-Encoding: ${encoding})` : ''}`;
}

/**
 * uploadOverhead times what every tus request pays before its bytes (the session, the person's access to
 * the project, the upload's record): HEADs of a new one-byte upload, which is then given up (DELETE).
 */
async function uploadOverhead(session: Session, projectId: string): Promise<{ postMs: number; headMs: number[] }> {
  const cookie = session.cookieHeader();
  const t0 = performance.now();
  const created = await send(new URL('/api/uploads', session.base), 'POST', {
    cookie,
    'tus-resumable': '1.0.0',
    'upload-length': '1',
    'upload-metadata': `projectId ${b64(projectId)},site ${b64(SITE)},path ${b64('bench/overhead.bin')}`,
    'content-length': '0',
  });
  const postMs = performance.now() - t0;
  expect(created, 201, 'POST /api/uploads (overhead)');
  const url = new URL(header(created, 'location')!, session.base);
  const headMs: number[] = [];
  for (let i = 0; i < 10; i++) {
    const h0 = performance.now();
    const head = await send(url, 'HEAD', { cookie, 'tus-resumable': '1.0.0' });
    headMs.push(performance.now() - h0);
    expect(head, 200, 'HEAD of an upload');
  }
  expect(await send(url, 'DELETE', { cookie, 'tus-resumable': '1.0.0', 'content-length': '0' }), 204, 'DELETE of an upload');
  return { postMs, headMs };
}

// The bare server of plainReference, run in a process of its own (as the portal's server is): PUT writes
// the body at Upload-Offset into PLAIN_TARGET, GET streams PLAIN_SOURCE (256 KiB reads, as the portal's).
const PLAIN_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const { pipeline } = require('node:stream/promises');
const target = process.env.PLAIN_TARGET, source = process.env.PLAIN_SOURCE;
const server = http.createServer((req, res) => {
  const fail = (error) => { res.statusCode = 500; res.end(String(error)); };
  if (req.method === 'PUT') {
    const offset = Number(req.headers['upload-offset'] || 0);
    pipeline(req, fs.createWriteStream(target, { flags: offset === 0 ? 'w' : 'r+', start: offset })).then(() => { res.statusCode = 204; res.end(); }, fail);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(fs.statSync(source).size) });
  pipeline(fs.createReadStream(source, { highWaterMark: 256 * 1024 }), res).catch(() => undefined);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

/**
 * plainReference runs the same client against a bare Node HTTP server in a process of its own (no Next,
 * no tus, no session): PUTs of 16 MiB written where they belong in a file, then a GET streaming the file
 * back — what HTTP through Node costs on this machine, the floor under the portal's figures.
 */
async function plainReference(work: string, source: { path: string; size: number }): Promise<{ uploadMs: number; downloadMs: number }> {
  const target = join(work, 'plain.bin');
  const child = spawn(process.execPath, ['-e', PLAIN_SERVER], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PLAIN_TARGET: target, PLAIN_SOURCE: source.path } });
  const stopChild = () => {
    child.kill('SIGTERM');
    return Promise.resolve();
  };
  const unregister = atInterrupt(stopChild);
  try {
    const port = await new Promise<number>((ok, fail) => {
      child.stdout.once('data', (chunk: Buffer) => ok(Number(chunk.toString().trim())));
      child.once('exit', (code) => fail(new Error(`the plain server exited (${code})`)));
    });
    const url = new URL(`http://127.0.0.1:${port}/file`);
    settle();
    const t0 = performance.now();
    for (let offset = 0; offset < source.size; offset += CHUNK_BYTES) {
      const length = Math.min(CHUNK_BYTES, source.size - offset);
      const answer = await send(url, 'PUT', { 'upload-offset': String(offset), 'content-length': String(length) }, { body: createReadStream(source.path, { start: offset, end: offset + length - 1, highWaterMark: MiB }) });
      expect(answer, 204, 'PUT (plain server)');
    }
    const uploadMs = performance.now() - t0;
    settle();
    const d0 = performance.now();
    const got = await send(url, 'GET', {}, { into: join(work, 'plain-download.bin') });
    const downloadMs = performance.now() - d0;
    if (got.bytes !== source.size) throw new Error(`plain server: ${got.bytes} bytes downloaded, expected ${source.size}`);
    return { uploadMs, downloadMs };
  } finally {
    await stopChild();
    unregister();
    rmSync(target, { force: true });
    rmSync(join(work, 'plain-download.bin'), { force: true });
  }
}

function downloadUrl(base: string, projectId: string, path: string): URL {
  const url = new URL(`/api/projects/${projectId}/files/download`, base);
  url.searchParams.set('site', SITE);
  url.searchParams.set('path', path);
  return url;
}

// ---- listing -------------------------------------------------------------------------------------

interface ListPage {
  entries: { name: string }[];
  nextCursor: string | null;
  total: number;
}

interface Listing {
  createSeconds: number;
  statMs: number[];
  first: number;
  startPages: number[];
  middlePages: number[];
  hops: number[];
  seen: number;
  total: number;
  problems: string[];
  inProcess: Profile;
  memory: Memory;
  loadStart: string;
  loadEnd: string;
}

interface Profile {
  listFolderFirst: number[];
  listFolderMiddle: number[];
  readdir: number[];
  keySortFirst: number[];
  keyFilterSortMiddle: number[];
  topKFirst: number[];
  lstatPage: number[];
}

/** makeManyFiles creates `n` empty files `shard-000000.bin` … in `dir` and returns the seconds it took. */
function makeManyFiles(dir: string, n: number): number {
  const t0 = performance.now();
  mkdirSync(dir, { recursive: true });
  const width = Math.max(6, String(n - 1).length);
  for (let i = 0; i < n; i++) closeSync(openSync(join(dir, `shard-${String(i).padStart(width, '0')}.bin`), 'w'));
  return (performance.now() - t0) / 1000;
}

async function timedPage(session: Session, input: Record<string, unknown>): Promise<{ ms: number; page: ListPage }> {
  const hit = await session.query('files.list', input);
  if (hit.error || hit.status !== 200) throw new Error(`files.list: HTTP ${hit.status} ${hit.error ?? ''}`);
  return { ms: hit.ms, page: hit.data as ListPage };
}

/** profileListing times, in this process and on the same folder, what one page of files.list does. */
async function profileListing(filesDir: string, projectId: string, folder: string, middleCursor: string | null, reps: number): Promise<Profile> {
  const roots = { rootOf: (site: string) => join(filesDir, site) };
  const workspace = workspaceOf(roots, SITE, projectId);
  const dir = join(workspace.dir, folder);
  const p: Profile = { listFolderFirst: [], listFolderMiddle: [], readdir: [], keySortFirst: [], keyFilterSortMiddle: [], topKFirst: [], lstatPage: [] };
  const keyOf = (isDir: boolean, name: string) => `${isDir ? '0' : '1'}${name}`;
  const cmp = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const after = middleCursor ? Buffer.from(middleCursor, 'base64url').toString('utf8') : '';
  for (let i = 0; i < reps; i++) {
    let t = performance.now();
    await listFolder(workspace, folder, { limit: PAGE });
    p.listFolderFirst.push(performance.now() - t);
    if (middleCursor) {
      t = performance.now();
      await listFolder(workspace, folder, { limit: PAGE, cursor: middleCursor });
      p.listFolderMiddle.push(performance.now() - t);
    }
    t = performance.now();
    const dirents = await readdir(dir, { withFileTypes: true });
    p.readdir.push(performance.now() - t);
    t = performance.now();
    const sorted = dirents.map((d) => ({ d, key: keyOf(d.isDirectory(), d.name) })).sort(cmp);
    p.keySortFirst.push(performance.now() - t);
    t = performance.now();
    dirents
      .map((d) => ({ d, key: keyOf(d.isDirectory(), d.name) }))
      .filter((e) => e.key > after)
      .sort(cmp);
    p.keyFilterSortMiddle.push(performance.now() - t);
    // What a selection of the page's entries (no whole sort) would cost: one pass keeping the smallest `PAGE` keys.
    t = performance.now();
    const best: string[] = [];
    for (const d of dirents) {
      const key = keyOf(d.isDirectory(), d.name);
      if (best.length === PAGE && key >= best[PAGE - 1]!) continue;
      let lo = 0;
      let hi = best.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (best[mid]! < key) lo = mid + 1;
        else hi = mid;
      }
      best.splice(lo, 0, key);
      if (best.length > PAGE) best.pop();
    }
    p.topKFirst.push(performance.now() - t);
    t = performance.now();
    await Promise.all(sorted.slice(0, PAGE).map(({ d }) => lstat(join(dir, d.name))));
    p.lstatPage.push(performance.now() - t);
  }
  return p;
}

async function listing(session: Session, server: PortalServer, o: Options, filesDir: string, projectId: string): Promise<Listing> {
  const folder = 'many';
  const workspaceDir = join(filesDir, SITE, projectGroupName(projectId));
  if (!existsSync(workspaceDir)) throw new Error(`the workspace ${workspaceDir} does not exist after the upload`);
  log(`listing: making ${num(o.files)} empty files in ${workspaceDir}/${folder}…`);
  const createSeconds = makeManyFiles(join(workspaceDir, folder), o.files);
  settle();
  const problems: string[] = [];
  // Warm-up (not timed): the procedure on the workspace's top folder.
  await timedPage(session, { projectId, site: SITE, path: '', limit: PAGE });
  const statMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const hit = await session.query('files.stat', { projectId, site: SITE, path: folder });
    if (hit.error || hit.status !== 200) throw new Error(`files.stat: HTTP ${hit.status} ${hit.error ?? ''}`);
    statMs.push(hit.ms);
  }
  const loadStart = loadAverage();
  const stop = watchMemory(server.pid);
  const names: string[] = [];
  const startPages: number[] = [];
  let cursor: string | null = null;
  let total = 0;
  for (let i = 0; i < o.pages; i++) {
    const { ms, page } = await timedPage(session, { projectId, site: SITE, path: folder, limit: PAGE, cursor });
    startPages.push(ms);
    names.push(...page.entries.map((e) => e.name));
    total = page.total;
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  const hops: number[] = [];
  const middle = Math.floor(o.files / 2);
  while (cursor && names.length + HOP <= middle) {
    const { ms, page } = await timedPage(session, { projectId, site: SITE, path: folder, limit: HOP, cursor });
    hops.push(ms);
    names.push(...page.entries.map((e) => e.name));
    cursor = page.nextCursor;
  }
  const middleCursor = cursor;
  const middlePages: number[] = [];
  for (let i = 0; cursor && i < o.pages; i++) {
    const { ms, page } = await timedPage(session, { projectId, site: SITE, path: folder, limit: PAGE, cursor });
    middlePages.push(ms);
    names.push(...page.entries.map((e) => e.name));
    cursor = page.nextCursor;
  }
  const memory = stop();
  const loadEnd = loadAverage();
  if (total !== o.files) problems.push(`total ${total}, expected ${o.files}`);
  for (let i = 1; i < names.length; i++) if (!(names[i - 1]! < names[i]!)) problems.push(`out of order or repeated at ${i}: ${names[i - 1]} then ${names[i]}`);
  const width = Math.max(6, String(o.files - 1).length);
  if (names.length && names[0] !== `shard-${'0'.repeat(width)}.bin`) problems.push(`the first name is ${names[0]}`);
  log(`listing: profiling a page in this process…`);
  const inProcess = await profileListing(filesDir, projectId, folder, middleCursor, 5);
  return { createSeconds, statMs, first: startPages[0] ?? Number.NaN, startPages, middlePages, hops, seen: names.length, total, problems: problems.slice(0, 5), inProcess, memory, loadStart, loadEnd };
}

// ---- the transfers ------------------------------------------------------------------------------

interface Run {
  copyMs: number;
  upload: Upload;
  uploadMemory: Memory;
  downloadMs: number;
  downloadMemory: Memory;
}

interface Transfers {
  runs: Run[];
  cpMs: number;
  hashMs: number;
  overhead: { postMs: number; headMs: number[] };
  plain: { uploadMs: number; downloadMs: number };
  /** How the download's body was framed: its Content-Length, or chunked. */
  framing: string;
  headFraming: string;
  resume: { firstMs: number; secondMs: number; status: [number, number]; ok: boolean; memory: Memory; framing: string };
  loadStart: string;
  loadEnd: string;
}

async function transfers(session: Session, server: PortalServer, o: Options, work: string, source: { path: string; size: number; sha256: string }, projectId: string): Promise<Transfers> {
  const runs: Run[] = [];
  let framing = '';
  const cookie = session.cookieHeader();
  const loadStart = loadAverage();
  // `cp` once, for reference (no reflink: a real copy of the bytes).
  settle();
  const cp0 = performance.now();
  const cp = spawnSync('cp', ['--reflink=never', source.path, join(work, 'cp.bin')]);
  const cpMs = performance.now() - cp0;
  if (cp.status !== 0) throw new Error(`cp failed: ${cp.stderr.toString()}`);
  rmSync(join(work, 'cp.bin'));
  // The cost of hashing the file (the server does it before its last answer), in this process.
  const h0 = performance.now();
  await sha256Of(source.path);
  const hashMs = performance.now() - h0;
  const overhead = await uploadOverhead(session, projectId);
  const plain = await plainReference(work, source);
  log(`  plain Node HTTP server (reference): upload ${num(plain.uploadMs / 1000, 2)} s, download ${num(plain.downloadMs / 1000, 2)} s; HEAD of an upload ${num(median(ascending(overhead.headMs)), 1)} ms`);
  for (let r = 1; r <= o.runs; r++) {
    settle();
    const copyMs = await localCopy(source.path, join(work, 'copy.bin'));
    rmSync(join(work, 'copy.bin'));
    log(`  run ${r}: local copy ${num(copyMs / 1000, 2)} s (${num(source.size / MiB / (copyMs / 1000), 1)} MiB/s)`);

    settle();
    let stop = watchMemory(server.pid);
    const upload = await tusUpload(session, { projectId, path: `bench/upload-${r}.bin`, file: source.path, size: source.size });
    const uploadMemory = stop();
    if (upload.sha256 !== source.sha256) throw new Error(`upload ${r}: the server's SHA-256 ${upload.sha256 || '(none)'} is not the file's ${source.sha256}`);
    log(`  run ${r}: upload ${num(upload.ms / 1000, 2)} s (${num(source.size / MiB / (upload.ms / 1000), 1)} MiB/s, last PATCH ${num(upload.lastPatchMs / 1000, 2)} s), SHA-256 equal; server RSS ${num(uploadMemory.baselineMiB)} → ${num(uploadMemory.peakMiB)} MiB`);

    settle();
    const target = join(work, `download.bin`);
    stop = watchMemory(server.pid);
    const d0 = performance.now();
    const got = await send(downloadUrl(session.base, projectId, upload.landedPath), 'GET', { cookie }, { into: target });
    const downloadMs = performance.now() - d0;
    const downloadMemory = stop();
    expect(got, 200, 'GET download');
    if (got.bytes !== source.size) throw new Error(`download ${r}: ${got.bytes} bytes, expected ${source.size}`);
    framing = describeFraming(got);
    const downloaded = await sha256Of(target);
    rmSync(target);
    if (downloaded !== source.sha256) throw new Error(`download ${r}: SHA-256 ${downloaded}, expected ${source.sha256}`);
    log(`  run ${r}: download ${num(downloadMs / 1000, 2)} s (${num(source.size / MiB / (downloadMs / 1000), 1)} MiB/s), SHA-256 equal; server RSS ${num(downloadMemory.baselineMiB)} → ${num(downloadMemory.peakMiB)} MiB`);
    runs.push({ copyMs, upload, uploadMemory, downloadMs, downloadMemory });
  }
  // A resumed download: the first half, then the rest with If-Range (the ETag of the first answer).
  settle();
  const resumed = join(work, 'resumed.bin');
  const url = downloadUrl(session.base, projectId, runs[0]!.upload.landedPath);
  const half = Math.floor(source.size / 2);
  const stop = watchMemory(server.pid);
  let t = performance.now();
  const first = await send(url, 'GET', { cookie, range: `bytes=0-${half - 1}` }, { into: resumed });
  const firstMs = performance.now() - t;
  expect(first, 206, 'GET download, first half');
  const firstFraming = describeFraming(first);
  const head = await send(url, 'HEAD', { cookie });
  expect(head, 200, 'HEAD download');
  const headFraming = describeFraming(head);
  const etag = header(first, 'etag');
  if (!etag) throw new Error('GET download, first half: no ETag');
  t = performance.now();
  const second = await send(url, 'GET', { cookie, range: `bytes=${half}-`, 'if-range': etag }, { into: resumed, flags: 'a' });
  const secondMs = performance.now() - t;
  const memory = stop();
  expect(second, 206, 'GET download, the rest with If-Range');
  const ok = statSync(resumed).size === source.size && (await sha256Of(resumed)) === source.sha256 && header(second, 'content-range') === `bytes ${half}-${source.size - 1}/${source.size}`;
  rmSync(resumed);
  if (!ok) throw new Error('the resumed download is not the file');
  log(`  resumed download: ${num(firstMs / 1000, 2)} s + ${num(secondMs / 1000, 2)} s, bytes equal`);
  return { runs, cpMs, hashMs, overhead, plain, framing, headFraming, resume: { firstMs, secondMs, status: [first.status, second.status], ok, memory, framing: firstFraming }, loadStart, loadEnd: loadAverage() };
}

// ---- report ------------------------------------------------------------------------------------

const mib = (n: number) => `${num(n, 0)} MiB`;
const ms = (n: number) => `${num(n, 1)} ms`;
const secs = (n: number) => `${num(n / 1000, 2)} s`;

function section(o: Options, r: { size: number; t: Transfers; l: Listing; pgVersion: string; tree: string[]; sameFs: boolean; load0: string; load1: string; server: PortalServer }): string {
  const date = new Date().toISOString().slice(0, 10);
  const rate = (msValue: number) => r.size / MiB / (msValue / 1000);
  const copyMs = median(ascending(r.t.runs.map((x) => x.copyMs)));
  const upMs = median(ascending(r.t.runs.map((x) => x.upload.ms)));
  const downMs = median(ascending(r.t.runs.map((x) => x.downloadMs)));
  // Each run's transfer against the local copy just before it (the machine's load moves between runs), then the median.
  const upRatio = median(ascending(r.t.runs.map((x) => x.copyMs / x.upload.ms)));
  const downRatio = median(ascending(r.t.runs.map((x) => x.copyMs / x.downloadMs)));
  const upGrowth = Math.max(...r.t.runs.map((x) => growthOf(x.uploadMemory)));
  const downGrowth = Math.max(...r.t.runs.map((x) => growthOf(x.downloadMemory)), growthOf(r.t.resume.memory));
  const pages = ascending([...r.l.startPages, ...r.l.middlePages]);
  const p95 = quantile(pages, 0.95);
  const sizeText = r.size >= 1024 ** 3 ? `${num(r.size / 1024 ** 3, r.size % 1024 ** 3 ? 2 : 0)} GiB` : mib(r.size / MiB);
  const memCell = (m: Memory) => `${mib(m.baselineMiB)} → ${mib(Math.max(m.peakMiB, Number.isFinite(m.hwmMiB) ? m.hwmMiB : 0))} (+${mib(growthOf(m))})`;
  const pr = r.l.inProcess;
  const med = (xs: number[]) => median(ascending(xs));
  const patchMedian = med(r.t.runs.flatMap((x) => x.upload.patchMs));
  const lastPatch = med(r.t.runs.map((x) => x.upload.lastPatchMs));
  const lines = [
    SECTION,
    '',
    `Measured by \`npm run bench:files\` (\`bench/files.ts\`) on ${date}. Machine: ${machine()}; the server (\`scripts/server.mjs\`, as \`npm start\` runs it, on the production build: ${r.tree.length === 1 ? 'one Node process' : `${r.tree.length} processes`}, the portal's own worker running) and ${r.pgVersion} (a fresh database, dropped after the run) on the same machine as the client. Load average at the start / end of the run: ${r.load0} → ${r.load1}.`,
    `The file: ${sizeText} of random bytes, in a temp folder ${r.sameFs ? 'on the same filesystem as' : 'on ANOTHER filesystem than'} the portal's workspaces (\`PORTAL_FILES_DIR\`); as the demo PI into the project "Protein structure prediction…" at ${SITE}. Each transfer starts after \`sync\` (no dirty pages left by the one before); the file is in the page cache throughout (23 GiB of RAM), so reads come from memory and writes go to the page cache, for the portal and the local copy alike.`,
    '',
    `- **Upload**: tus 1.0 through \`/api/uploads\` as the browser sends it (POST with Upload-Length and Upload-Metadata, then PATCHes of 16 MiB streamed from the file, one connection kept alive, the session cookie), timed from the POST to the last answer, which carries the server's SHA-256 (checked: equal). The server writes each PATCH's body at its offset as it arrives and hashes the bytes as they land, in a worker thread (server/services/files/upload-hash.ts); before the last answer it finishes the hash, moves the file into the workspace and books its storage. The portal's HTTP server answers the PATCHes (and the downloads) itself before Next.js sees them (server/api/transfers-http.ts: the bytes go straight between socket and file; through Next's route handlers they crossed into web streams and back, 0.39 and 0.37 of the local copy on 2026-12-05).`,
    `- **Download**: GET \`/api/projects/{id}/files/download\`, the body streamed into a file, its SHA-256 checked (equal).`,
    `- **Local copy**: \`pipeline(createReadStream, createWriteStream)\` of the same file into the same folder, in the client process, before each run.`,
    `- **Memory**: the RSS of the server's process${r.tree.length === 1 ? '' : 'es'} (${r.tree.join(', ')}) every ${SAMPLE_MS} ms and its high-water mark (VmHWM, reset before each transfer); "peak" is the higher of the two.`,
    '',
    `| transfer | run | time | MiB/s | ÷ local copy | server RSS before → peak (growth) |`,
    `| --- | ---: | ---: | ---: | ---: | ---: |`,
    ...r.t.runs.flatMap((x, i) => [
      `| local copy (stream) | ${i + 1} | ${secs(x.copyMs)} | ${num(rate(x.copyMs), 1)} | 1.00 | — |`,
      `| upload (tus, 16 MiB PATCHes) | ${i + 1} | ${secs(x.upload.ms)} (last PATCH ${secs(x.upload.lastPatchMs)}) | ${num(rate(x.upload.ms), 1)} | ${num(rate(x.upload.ms) / rate(x.copyMs), 2)} | ${memCell(x.uploadMemory)} |`,
      `| download (GET, streamed) | ${i + 1} | ${secs(x.downloadMs)} | ${num(rate(x.downloadMs), 1)} | ${num(rate(x.downloadMs) / rate(x.copyMs), 2)} | ${memCell(x.downloadMemory)} |`,
    ]),
    `| resumed download (Range, then Range + If-Range) | — | ${secs(r.t.resume.firstMs)} + ${secs(r.t.resume.secondMs)} | ${num(rate(r.t.resume.firstMs + r.t.resume.secondMs), 1)} | — | ${memCell(r.t.resume.memory)} |`,
    `| \`cp --reflink=never\` (reference) | — | ${secs(r.t.cpMs)} | ${num(rate(r.t.cpMs), 1)} | — | — |`,
    `| plain Node HTTP server, PUTs of 16 MiB to a file (reference) | — | ${secs(r.t.plain.uploadMs)} | ${num(rate(r.t.plain.uploadMs), 1)} | ${num(rate(r.t.plain.uploadMs) / rate(copyMs), 2)} | — |`,
    `| plain Node HTTP server, GET streaming the file (reference) | — | ${secs(r.t.plain.downloadMs)} | ${num(rate(r.t.plain.downloadMs), 1)} | ${num(rate(r.t.plain.downloadMs) / rate(copyMs), 2)} | — |`,
    `| SHA-256 of the file (reference: in the client) | — | ${secs(r.t.hashMs)} | ${num(rate(r.t.hashMs), 1)} | — | — |`,
    '',
    `Where an upload's time goes: a PATCH of 16 MiB (all but the last) takes ${ms(patchMedian)} at the median (${num(16 / (patchMedian / 1000), 1)} MiB/s while the bytes flow), of which the route's own checks before the bytes are about ${ms(med(r.t.overhead.headMs))} (the median HEAD of an upload: session, the person's access to the project, the upload's record; the POST that creates one ${ms(r.t.overhead.postMs)}); the last PATCH takes ${secs(lastPatch)} at the median: its 16 MiB, then the server finishes the hash its worker thread took as the bytes landed (hashing the whole file, as in the client, would take ${secs(r.t.hashMs)}), moves it into the workspace and books its storage. The "plain Node HTTP server" rows run the same client against a bare \`http.createServer\` in a Node process of its own (no Next, no tus, no session; PUTs written with \`createWriteStream\`, the GET read 256 KiB at a time): what HTTP through Node costs on this machine.`,
    '',
    `Resumed download: ${r.t.resume.status.join(' then ')}, the two halves together byte for byte the file. How the answers' bodies were delimited: the whole file ${r.t.framing}, the first half ${r.t.resume.framing}. HEAD of the file: ${r.t.headFraming}.`,
    '',
    `Listing: ${num(o.files)} empty files (\`shard-000000.bin\` …) made directly on disk in a folder of the workspace (${num(r.l.createSeconds, 1)} s), then tRPC \`files.list\` (GET, as the files page asks) with limit ${PAGE}: ${r.l.startPages.length} pages from the start (the first is the first listing of the folder since it was made), then pages of ${num(HOP)} to the middle (${r.l.hops.length}), then ${r.l.middlePages.length} pages of ${PAGE} there. Latency: request sent to whole body read. Load average ${r.l.loadStart} → ${r.l.loadEnd}.`,
    '',
    '| figure | target | measured | |',
    '| --- | --- | ---: | --- |',
    `| upload ÷ local copy (throughput, median of the runs' ratios) | ≥ ${TARGET.ratio} | ${num(upRatio, 2)} (medians ${num(rate(upMs), 1)} vs ${num(rate(copyMs), 1)} MiB/s) | ${mark(upRatio >= TARGET.ratio)} |`,
    `| download ÷ local copy (throughput, median of the runs' ratios) | ≥ ${TARGET.ratio} | ${num(downRatio, 2)} (medians ${num(rate(downMs), 1)} vs ${num(rate(copyMs), 1)} MiB/s) | ${mark(downRatio >= TARGET.ratio)} |`,
    `| server RSS growth during an upload of ${sizeText} | < ${TARGET.rssGrowthMiB} MiB | ${mib(upGrowth)} | ${mark(upGrowth < TARGET.rssGrowthMiB)} |`,
    `| server RSS growth during a download of ${sizeText} | < ${TARGET.rssGrowthMiB} MiB | ${mib(downGrowth)} | ${mark(downGrowth < TARGET.rssGrowthMiB)} |`,
    `| a page of ${PAGE} of a folder of ${num(o.files)} files, p95 (${pages.length} pages) | ≤ ${TARGET.pageP95Ms} ms | ${ms(p95)} | ${mark(p95 <= TARGET.pageP95Ms)} |`,
    `| the same, median | — | ${ms(median(pages))} | |`,
    `| the first page | — | ${ms(r.l.first)} | |`,
    `| pages from the start / from the middle, median | — | ${ms(med(r.l.startPages))} / ${ms(med(r.l.middlePages))} | |`,
    `| a page of ${num(HOP)}, median (${r.l.hops.length}) | — | ${ms(med(r.l.hops))} | |`,
    `| \`files.stat\` of the folder, median (the same call path without the listing) | — | ${ms(med(r.l.statMs))} | |`,
    `| server RSS during the listing (at its end) | — | ${memCell(r.l.memory)} (${mib(r.l.memory.endMiB)}) | |`,
    '',
    `Where a page's time goes, measured in the client process on the same folder (median of 5): \`listFolder\` itself ${ms(med(pr.listFolderFirst))} (first page) / ${ms(med(pr.listFolderMiddle))} (middle); of it \`readdir\` with types of the ${num(o.files)} names ${ms(med(pr.readdir))}, keys and the whole sort ${ms(med(pr.keySortFirst))} (${ms(med(pr.keyFilterSortMiddle))} with the cursor's filter from the middle), \`lstat\` of the page's ${PAGE} entries ${ms(med(pr.lstatPage))}. Keeping only the ${PAGE} smallest keys in one pass instead of sorting all: ${ms(med(pr.topKFirst))}.`,
    `Listing checks: ${r.l.seen === 0 ? 'no names seen' : `${num(r.l.seen)} names seen in order, none twice`}, total ${num(r.l.total)}${r.l.problems.length ? `; PROBLEMS: ${r.l.problems.join('; ')}` : ''}.`,
  ];
  if (r.server.logged.errors) lines.push('', `The server logged ${num(r.server.logged.errors)} error line(s); first: \`${r.server.logged.samples[0]?.replaceAll('`', "'")}\`.`);
  lines.push('', `Sizes of this run: \`--size-mb ${o.sizeMiB} --files ${o.files} --runs ${o.runs} --pages ${o.pages}\`. Regenerate with \`npm run bench:files\` (add \`--webpack\` where node_modules is a link).`, '');
  return lines.join('\n');
}

// ---- main --------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const o = options();
  const load0 = loadAverage();
  log(`bench/files — ${num(o.sizeMiB)} MiB, ${num(o.files)} files, ${o.runs} run(s); ${machine()}; load average ${load0}`);
  ensureBuild(root, { rebuild: o.rebuild, reuse: o.reuseBuild, webpack: o.webpack }, log);
  let database: BenchDatabase | undefined;
  let server: PortalServer | undefined;
  const work = mkdtempSync(join(tmpdir(), 'portal-bench-files-'));
  const removeWork = () => {
    if (o.keep) log(`kept ${work} (--keep)`);
    else rmSync(work, { recursive: true, force: true });
    return Promise.resolve();
  };
  const unregisterWork = atInterrupt(removeWork);
  let unregisterServer = () => {};
  try {
    const size = o.sizeMiB * MiB;
    const dataDir = join(work, 'data');
    const filesDir = join(work, 'files');
    mkdirSync(dataDir);
    mkdirSync(filesDir);
    const sourcePath = join(work, 'source.bin');
    log(`writing ${num(o.sizeMiB)} MiB of random bytes to ${sourcePath}…`);
    const sha256 = writeRandomFile(sourcePath, size);
    const sameFs = statSync(sourcePath).dev === statSync(filesDir).dev;
    database = await createBenchDatabase(o.adminUrl, { keep: o.keep, log });
    log(`starting the server on port ${o.port}: database ${database.name}, files in ${filesDir}`);
    server = await startServer(root, { port: o.port, databaseUrl: database.url, dataDir, env: { SIM_NODE_MTBF_HOURS: '0', PORTAL_FILES_DIR: filesDir } });
    unregisterServer = atInterrupt(server.stop);
    const tree = processTree(server.pid).map(describeProcess);
    log(`server processes: ${tree.join(', ')}`);
    const session = new Session(server.base);
    await session.signIn(PI, DEMO_PASSWORD);
    const projects = await session.must<{ id: string; title: string }[]>('project.list', undefined, 'query');
    const project = projects.find((p) => p.title.startsWith(PROJECT_TITLE));
    if (!project) throw new Error(`no project "${PROJECT_TITLE}…" for ${PI}: ${projects.map((p) => p.title).join(', ')}`);
    log(`project ${project.id} (${project.title}); transfers…`);
    const t = await transfers(session, server, o, work, { path: sourcePath, size, sha256 }, project.id);
    const l = await listing(session, server, o, filesDir, project.id);
    const pgVersion = await describeServer(o.adminUrl);
    const text = section(o, { size, t, l, pgVersion, tree, sameFs, load0, load1: loadAverage(), server });
    log(`\n${text}`);
    if (o.write) log(`wrote ${writeSection(root, SECTION, text)}`);
  } catch (error) {
    if (server) log(`--- last lines of the server ---\n${server.tail()}`);
    throw error;
  } finally {
    agent.destroy();
    await server?.stop().catch(() => undefined);
    unregisterServer();
    await database?.drop().catch((error: unknown) => log(`could not drop ${database?.name}: ${String(error)}`));
    await removeWork();
    unregisterWork();
  }
}

main().catch((error: unknown) => {
  if (wasInterrupted()) return;
  if (error instanceof UsageError) console.error(`bench/files: ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
});

