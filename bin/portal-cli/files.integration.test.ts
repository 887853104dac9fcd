// portal-cli's files and logs commands as a person runs them: the real CLI as a child process against a
// real HTTP server (node:http around the REST handler, a test database, a real token). An upload killed
// halfway (SIGKILL) and run again sends only the rest and prints the portal's SHA-256, equal to the local
// one; the file lists and downloads byte for byte; a download killed halfway resumes with Range; a
// folder comes as a tar or unpacked; `jobs logs --follow` prints lines as a job writes them and exits
// with the job. On PGlite and, with TEST_DATABASE_URL, real Postgres.
import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { createRestHandler } from '~/server/api/rest';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { apiTokens } from '~/server/testing/api-tokens';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { scriptedScheduler } from '~/server/testing/scripted-scheduler';
import { downloadKey } from './transfers.mjs';

const SITE = 'de-jena';
const CLI = path.resolve('bin/portal-cli.mjs');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** One request as the server saw it: the bytes of its body that reached the handler, the bytes of the answer sent. */
interface Exchange {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  status: number;
  /** A tus answer's Upload-Offset: where the upload stands. */
  offset: number | null;
  received: number;
  sent: number;
  closed: boolean;
}

/** A stream that counts (and, at `rate()` bytes a second, slows) what passes. */
function meter(count: (n: number) => void, rate: () => number): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      count(chunk.length);
      const perSecond = rate();
      if (perSecond > 0) setTimeout(() => done(null, chunk), (chunk.length / perSecond) * 1000);
      else done(null, chunk);
    },
  });
}

/** serve runs the REST handler behind node:http, bodies streamed both ways; `throttle` slows uploads and downloads. */
async function serve(handler: (req: Request) => Promise<Response>) {
  const exchanges: Exchange[] = [];
  const throttle = { upload: 0, download: 0 };
  const server = http.createServer((req, res) => {
    const exchange: Exchange = { method: req.method!, path: req.url!, headers: req.headers, status: 0, offset: null, received: 0, sent: 0, closed: false };
    exchanges.push(exchange);
    const controller = new AbortController();
    res.on('close', () => {
      exchange.closed = true;
      if (!res.writableFinished) controller.abort();
    });
    let body: WebReadableStream | undefined;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const counter = meter((n) => (exchange.received += n), () => throttle.upload);
      // pipeline: a client that dies mid-body fails the stream the handler reads, as a cut connection does.
      pipeline(req, counter).catch(() => undefined);
      body = Readable.toWeb(counter);
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body, signal: controller.signal, ...(body ? { duplex: 'half' } : {}) } as RequestInit);
    handler(request)
      .then(async (response) => {
        exchange.status = response.status;
        exchange.offset = response.headers.has('upload-offset') ? Number(response.headers.get('upload-offset')) : null;
        // A failure of the portal itself is worth seeing beside the test's own message.
        if (response.status >= 500) console.error(`${req.method} ${req.url} answered ${response.status}: ${await response.clone().text()}`);
        res.statusCode = response.status;
        for (const [name, value] of response.headers) res.setHeader(name, value);
        if (!response.body || req.method === 'HEAD') {
          res.end();
          return;
        }
        await pipeline(Readable.fromWeb(response.body as WebReadableStream), meter((n) => (exchange.sent += n), () => throttle.download), res).catch(() => undefined);
      })
      .catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, exchanges, throttle, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** until polls a condition (every 20 ms) until it holds or the time is up; `context` says what the CLI said meanwhile. */
async function until(what: string, condition: () => boolean, context: () => string = () => '', ms = 30_000) {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${context() ? `; the CLI said:\n${context()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(dbTargets())('portal-cli files and logs against a real server on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let server: Awaited<ReturnType<typeof serve>>;
  let owner: { userId: string; orgId: string };
  let projectId: string;
  let allocationId: string;
  let token: string;
  let work: string;
  const slurm = scriptedScheduler();

  /** cli runs `node bin/portal-cli.mjs …` in the test's folder, signed in by the environment. */
  function cli(args: string[]) {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: work,
      env: { NODE_ENV: 'test', PATH: process.env.PATH, HOME: work, PORTAL_URL: server.url, PORTAL_TOKEN: token, PORTAL_CLI_CONFIG: path.join(work, 'config', 'config.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
    const said = () => `${stdout}${stderr}\n${server.exchanges
      .slice(-5)
      .map((e) => `${e.method} ${e.path} → ${e.status}`)
      .join('\n')}`;
    return { child, done, stdout: () => stdout, stderr: () => stderr, said };
  }
  const run = async (args: string[]) => cli(args).done;
  const stored = (name: string) => {
    const file = path.join(work, 'config', name);
    return fs.existsSync(file) ? Object.keys(JSON.parse(fs.readFileSync(file, 'utf8')) as object) : [];
  };
  const workspace = () => workspaceOf(configuredSiteRoots(), SITE, projectId);

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    const admin = await createStaff(db, 'admin');
    owner = await createTenant(db);
    ({ projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: new Date().toISOString().slice(0, 10) }));
    const tokens = apiTokens(db);
    token = await tokens.mint(owner, ['read', 'files:read', 'files:write']);
    server = await serve(createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 100_000, scheduler: slurm.port }));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-cli-files-'));
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    // The project's workspace holds 20 MB of this test: the next run has a project of its own.
    if (projectId) fs.rmSync(workspace().dir, { recursive: true, force: true });
  });

  const bytes = randomBytes(20 * 1024 * 1024 + 12_345);
  const remote = 'models/weights.bin';

  it('an upload killed halfway (SIGKILL) and run again sends only the rest; the SHA-256 printed is the local one', { timeout: 120_000 }, async () => {
    const local = path.join(work, 'weights.bin');
    fs.writeFileSync(local, bytes);
    const put = ['files', 'put', projectId, local, remote, '--site', SITE];
    const patches = () => server.exchanges.filter((e) => e.method === 'PATCH');

    server.throttle.upload = 8_000_000;
    const first = cli(put);
    await until('half the file at the server', () => patches().reduce((sum, e) => sum + e.received, 0) >= bytes.length / 2, first.said);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    await until('the cut PATCH to end', () => patches().every((e) => e.closed));
    server.throttle.upload = 0;
    const firstSent = patches().reduce((sum, e) => sum + e.received, 0);
    expect(firstSent).toBeLessThan(bytes.length);
    expect(stored('uploads.json')).toHaveLength(1);

    const before = patches().length;
    const second = await run(put);
    expect(second.stderr).toMatch(/went on at [\d.]+ MB from an earlier run/);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`${sha256(bytes)}  ${remote}\n`);
    const secondSent = patches()
      .slice(before)
      .reduce((sum, e) => sum + e.received, 0);
    // The resumed run asked where the upload stood, then sent exactly the rest.
    const head = server.exchanges.findLast((e) => e.method === 'HEAD')!;
    expect(head.offset).toBeGreaterThan(bytes.length / 4);
    expect(secondSent).toBe(bytes.length - head.offset!);
    expect(secondSent).toBeLessThan(bytes.length);
    // The URL store forgets a finished upload.
    expect(stored('uploads.json')).toEqual([]);
    expect(sha256(fs.readFileSync(path.join(workspace().dir, remote)))).toBe(sha256(bytes));

    // The same name again is refused (exit 5), before a byte is sent.
    const again = await run(put);
    expect(again.code).toBe(5);
    expect(again.stderr).toMatch(/already there/);
  });

  it('lists the upload; without --site picks the first site and says so', async () => {
    const listed = await run(['files', 'ls', projectId, 'models', '--site', SITE]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+TYPE\s+SIZE\s+MODIFIED \(UTC\)\nweights\.bin\s+file\s+21\.0 MB\s+\d{4}-\d\d-\d\d \d\d:\d\d\n$/);
    const json = await run(['files', 'ls', projectId, '--site', SITE, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ site: SITE, path: '', entries: [{ name: 'models', type: 'folder' }], total: 1 });
    const file = await run(['files', 'ls', projectId, remote, '--site', SITE]);
    expect(file.stdout).toContain(`${remote}  file`);

    const sites = (await callerFor(db, { userId: owner.userId, orgId: owner.orgId }).files.sites({ projectId })).map((s) => s.id);
    expect(sites.length).toBeGreaterThan(1);
    const defaulted = await run(['files', 'ls', projectId]);
    expect(defaulted.code).toBe(0);
    expect(defaulted.stderr).toContain(`Site ${sites[0]} (`);
    expect(defaulted.stderr).toContain('choose with --site');
  });

  it('downloads byte for byte; a download killed halfway resumes with Range and If-Range', { timeout: 120_000 }, async () => {
    const whole = await run(['files', 'get', projectId, remote, 'copy.bin', '--site', SITE]);
    expect(whole.code).toBe(0);
    expect(sha256(fs.readFileSync(path.join(work, 'copy.bin')))).toBe(sha256(bytes));

    const gets = () => server.exchanges.filter((e) => e.method === 'GET' && e.path.includes('/files/content'));
    server.throttle.download = 8_000_000;
    const started = gets().length;
    const first = cli(['files', 'get', projectId, remote, 'resumed.bin', '--site', SITE]);
    await until('half the file sent', () => gets().length > started && gets()[started]!.sent >= bytes.length / 2, first.said);
    first.child.kill('SIGKILL');
    await first.done;
    server.throttle.download = 0;
    const part = path.join(work, 'resumed.bin.part');
    const partial = fs.statSync(part).size;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(bytes.length);
    expect(stored('downloads.json')).toHaveLength(1);

    const second = await run(['files', 'get', projectId, remote, 'resumed.bin', '--site', SITE]);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/Resuming resumed\.bin at/);
    const resumedGet = gets().at(-1)!;
    expect(resumedGet.headers.range).toBe(`bytes=${partial}-`);
    expect(resumedGet.headers['if-range']).toMatch(/^"/);
    expect(resumedGet.status).toBe(206);
    expect(resumedGet.sent).toBe(bytes.length - partial);
    expect(sha256(fs.readFileSync(path.join(work, 'resumed.bin')))).toBe(sha256(bytes));
    expect(fs.existsSync(part)).toBe(false);
    expect(stored('downloads.json')).toEqual([]);
  });

  it('a partial download of a file that changed since comes whole again (If-Range), not spliced', async () => {
    // What a run killed before the file changed would have left: a part and the ETag it saw.
    const local = path.join(work, 'changed.bin');
    fs.writeFileSync(`${local}.part`, Buffer.alloc(1000, 7));
    const key = downloadKey({ base: `${server.url}/api/v1`, projectId, site: SITE, remotePath: remote, localPath: local });
    fs.writeFileSync(path.join(work, 'config', 'downloads.json'), JSON.stringify({ [key]: { etag: '"an-older-version"', size: bytes.length, storedAt: Date.now() } }));
    const result = await run(['files', 'get', projectId, remote, local, '--site', SITE]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/changed on the portal since the partial download: starting over/);
    expect(server.exchanges.at(-1)!.status).toBe(200);
    expect(sha256(fs.readFileSync(local))).toBe(sha256(bytes));
  });

  it('makes folders, uploads into one, gets it as a tar or unpacked, moves and deletes (a folder only with --recursive)', async () => {
    const made = await run(['files', 'mkdir', projectId, 'data', '--site', SITE]);
    expect(made.code, made.stderr).toBe(0);
    fs.writeFileSync(path.join(work, 'a.txt'), 'alpha\n');
    fs.writeFileSync(path.join(work, 'b.txt'), 'beta\n');
    fs.writeFileSync(path.join(work, 'empty.txt'), '');
    for (const name of ['a.txt', 'b.txt', 'empty.txt']) {
      const put = await run(['files', 'put', projectId, name, 'data', '--site', SITE]);
      expect(put.code, put.stderr).toBe(0);
      expect(put.stdout).toBe(`${sha256(fs.readFileSync(path.join(work, name)))}  data/${name}\n`);
    }
    expect((await run(['files', 'mv', projectId, 'data/b.txt', 'data/c.txt', '--site', SITE])).stdout).toBe(`Moved ${SITE}:data/b.txt to data/c.txt.\n`);

    const unpacked = path.join(work, 'unpacked');
    const extract = await run(['files', 'get', projectId, 'data', unpacked, '--extract', '--site', SITE]);
    expect(extract.code, extract.stderr).toBe(0);
    expect(fs.readFileSync(path.join(unpacked, 'data', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(fs.readFileSync(path.join(unpacked, 'data', 'c.txt'), 'utf8')).toBe('beta\n');
    expect(fs.readFileSync(path.join(unpacked, 'data', 'empty.txt'), 'utf8')).toBe('');
    const tar = await run(['files', 'get', projectId, 'data', '--site', SITE]);
    expect(tar.code).toBe(0);
    expect(fs.readFileSync(path.join(work, 'data.tar')).subarray(257, 262).toString()).toBe('ustar');

    const refused = await run(['files', 'rm', projectId, 'data', '--site', SITE]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --recursive');
    const removed = await run(['files', 'rm', projectId, 'data', '--recursive', '--site', SITE]);
    expect(removed.stdout).toBe(`Deleted ${SITE}:data (11 B).\n`);
    expect(fs.existsSync(path.join(workspace().dir, 'data'))).toBe(false);
    const missing = await run(['files', 'rm', projectId, 'data', '--site', SITE]);
    expect(missing.code).toBe(4);
  });

  it('jobs logs --follow prints lines as the job writes them and exits 0 once it completed and was settled', { timeout: 120_000 }, async () => {
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, scheduler: slurm.port });
    const job = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'follow me', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 30, image: 'img', command: 'python train.py', env: {}, idempotencyKey: randomUUID() });
    const log = path.join(jobDirOf(workspace(), job.id), 'stdout.log');

    const follow = cli(['jobs', 'logs', job.id, '--follow']);
    await until('the note that nothing is written yet', () => follow.stderr().includes('No stdout yet: the job is PENDING'), follow.said);
    fs.mkdirSync(path.dirname(log), { recursive: true });
    slurm.set(job.id, { state: 'RUNNING', pendingReason: null, startedAt: new Date(), nodeList: ['n1'] });
    await reconcileOnce(db, slurm.port, new Date());
    fs.writeFileSync(log, 'epoch 1 loss=2.31\n');
    await until('line 1', () => follow.stdout().includes('epoch 1'), follow.said);
    fs.appendFileSync(log, 'epoch 2 loss=1.');
    fs.appendFileSync(log, '87\nepoch 3 loss=1.52\n');
    await until('line 3', () => follow.stdout().includes('epoch 3 loss=1.52\n'), follow.said);
    expect(follow.child.exitCode).toBeNull();

    fs.appendFileSync(log, 'saved model/\n[portal] finished');
    slurm.set(job.id, { state: 'COMPLETED', endedAt: new Date(), exitCode: 0, gpuSeconds: 60 });
    await reconcileOnce(db, slurm.port, new Date());
    const result = await follow.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('epoch 1 loss=2.31\nepoch 2 loss=1.87\nepoch 3 loss=1.52\nsaved model/\n[portal] finished');
    expect(result.stderr).toMatch(/Job completed with exit code 0\.\n$/);

    // Without --follow: the end of it, and done.
    const tail = await run(['jobs', 'logs', job.id]);
    expect(tail.code).toBe(0);
    expect(tail.stdout).toBe(result.stdout);
  });

  it('jobs logs --follow of a job that failed prints its stderr and exits 1', { timeout: 60_000 }, async () => {
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, scheduler: slurm.port });
    const job = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'fails', kind: 'batch', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'false', env: {}, idempotencyKey: randomUUID() });
    const dir = jobDirOf(workspace(), job.id);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'stderr.log'), 'Traceback (most recent call last):\nValueError: bad shape\n');
    slurm.set(job.id, { state: 'FAILED', pendingReason: null, startedAt: new Date(Date.now() - 5000), endedAt: new Date(), exitCode: 3, nodeList: ['n1'], gpuSeconds: 5 });
    await reconcileOnce(db, slurm.port, new Date());
    const result = await run(['jobs', 'logs', job.id, '--stderr', '--follow']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Traceback (most recent call last):\nValueError: bad shape\n');
    expect(result.stderr).toBe('Job failed with exit code 3.\n');
  });
});
