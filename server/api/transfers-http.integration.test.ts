// The browser's upload PATCHes and downloads as the portal's HTTP server answers them before Next.js
// (server/api/transfers-http.ts), over real HTTP: the person from the session cookie; a PATCH's bytes
// taken off the socket to the upload's SHA-256; a download with its Content-Length, Range and HEAD;
// everyone else — signed out, a session that ended, another tenant — refused as Next's routes refuse
// them; a client that leaves mid-download does not stop the server; only the two routes are taken.
import { createHash, randomBytes } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { createRestHandler } from '~/server/api/rest';
import { createContextInner } from '~/server/api/trpc';
import { uploadResponse } from '~/server/api/uploads-http';
import { activeAllocation, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { refusedCookies, signedInCookie, startTransfersServer, type TransfersServer } from '~/server/testing/transfers-server';
import { routeOf } from './transfers-http';

const SITE = 'de-jena';
const AUTH_SECRET = randomBytes(32).toString('hex');
const OCTETS = { 'content-type': 'application/offset+octet-stream', 'tus-resumable': '1.0.0' };
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const meta = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

describe('which requests the transfers take', () => {
  it('takes an upload’s PATCH and a download’s GET and HEAD, and nothing else', () => {
    expect(routeOf('PATCH', '/api/uploads/de-jena.0b3c')).toEqual({ kind: 'upload' });
    expect(routeOf('GET', '/api/projects/p-1/files/download?site=de-jena&path=a.bin')).toEqual({ kind: 'download', projectId: 'p-1' });
    expect(routeOf('HEAD', '/api/projects/p%2D1/files/download?site=x')).toEqual({ kind: 'download', projectId: 'p-1' });
    expect(routeOf('PATCH', '/api/v1/uploads/de-jena.0b3c')).toEqual({ kind: 'rest' });
    expect(routeOf('GET', '/api/v1/projects/p-1/files/content?site=x&path=y')).toEqual({ kind: 'rest' });
    expect(routeOf('HEAD', '/api/v1/projects/p-1/files/content')).toEqual({ kind: 'rest' });
    expect(routeOf('POST', '/api/v1/openai/v1/chat/completions')).toEqual({ kind: 'gateway' });
    expect(routeOf('GET', '/api/v1/openai/v1/models')).toEqual({ kind: 'gateway' });
    expect(routeOf('POST', '/api/v1/openai/v2/chat/completions')).toBeNull();
    for (const [method, url] of [
      ['POST', '/api/uploads'],
      ['HEAD', '/api/uploads/de-jena.0b3c'],
      ['DELETE', '/api/uploads/de-jena.0b3c'],
      ['PATCH', '/api/uploads'],
      ['POST', '/api/v1/uploads'],
    ['HEAD', '/api/v1/uploads/de-jena.0b3c'],
      ['POST', '/api/projects/p-1/files/download'],
      ['PUT', '/api/v1/projects/p-1/files/content?site=x&path=y'],
    ['GET', '/api/v1/projects/p-1/files'],
      ['GET', '/api/projects/p-1/files/download/more'],
      ['GET', '/api/projects/%E0%A4%A/files/download'],
      ['GET', '/projects/p-1/files'],
    ] as const)
      expect(routeOf(method, url), `${method} ${url}`).toBeNull();
  });
});

describe.each(dbTargets())('the file transfers before Next.js on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let server: TransfersServer;
  let base: string;
  let tokens: TransfersServer['tokens'];

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    server = await startTransfersServer(db, AUTH_SECRET);
    tokens = server.tokens;
    base = `127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
  });

  function send(method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: Number(base.split(':')[1]), method, path, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const signedIn = (userId: string, orgId?: string) => signedInCookie(db, AUTH_SECRET, userId, orgId);

  async function setup() {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const stranger = await createTenant(db);
    const { projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    const ctx = createContextInner({ db, userId: owner.userId, activeOrgId: owner.orgId, locale: 'en' });
    /** create makes an upload as the browser's POST does (through Next's route: uploadResponse) and returns its path. */
    const create = async (file: string, length: number) => {
      const created = await uploadResponse(
        ctx,
        new Request('http://portal.test/api/uploads', { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': String(length), 'upload-metadata': meta({ projectId, site: SITE, path: file }) } }),
        '/api/uploads',
      );
      expect(created.status).toBe(201);
      return new URL(created.headers.get('location')!, 'http://portal.test').pathname;
    };
    return { owner, stranger, projectId, create };
  }

  it('takes a signed-in member’s upload off the socket and hands the file back whole, in part and as HEAD, with its length', async () => {
    const { owner, projectId, create } = await setup();
    const { cookie } = await signedIn(owner.userId, owner.orgId);
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const upload = await create('data/set.bin', bytes.length);
    const half = 1024 * 1024 + 3;
    const first = await send('PATCH', upload, { cookie, ...OCTETS, 'upload-offset': '0' }, bytes.subarray(0, half));
    expect(first.status).toBe(204);
    expect(first.headers['upload-offset']).toBe(String(half));
    expect(first.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    const last = await send('PATCH', upload, { cookie, ...OCTETS, 'upload-offset': String(half) }, bytes.subarray(half));
    expect(last.status).toBe(204);
    expect(last.headers['upload-sha256']).toBe(sha256(bytes));
    expect(decodeURIComponent(String(last.headers['upload-path']))).toBe('data/set.bin');

    const file = `/api/projects/${projectId}/files/download?site=${SITE}&path=data%2Fset.bin`;
    const whole = await send('GET', file, { cookie });
    expect(whole.status).toBe(200);
    expect(whole.headers['content-length']).toBe(String(bytes.length));
    expect(whole.headers['transfer-encoding']).toBeUndefined();
    expect(whole.headers['content-disposition']).toMatch(/^attachment; filename="set\.bin"/);
    expect(whole.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
    expect(whole.headers['x-frame-options']).toBeDefined();
    expect(sha256(whole.body)).toBe(sha256(bytes));
    const part = await send('GET', file, { cookie, range: 'bytes=1000-2000999', 'if-range': String(whole.headers.etag) });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1000-2000999/${bytes.length}`);
    expect(part.body.equals(bytes.subarray(1000, 2_001_000))).toBe(true);
    const head = await send('HEAD', file, { cookie });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(bytes.length));
    expect(head.body.length).toBe(0);
  });

  it('refuses the signed-out, an ended session and another tenant as Next’s routes do, and writes nothing for them', async () => {
    const { owner, stranger, projectId, create } = await setup();
    const bytes = randomBytes(50_000);
    const upload = await create('in/a.bin', bytes.length);
    const file = `/api/projects/${projectId}/files/download?site=${SITE}&path=in`;
    const other = await signedIn(stranger.userId, stranger.orgId);
    for (const [who, cookie] of [...(await refusedCookies(db, AUTH_SECRET, owner.userId, owner.orgId)), ['another tenant', other.cookie] as const]) {
      const patch = await send('PATCH', upload, { cookie, ...OCTETS, 'upload-offset': '0' }, bytes);
      // The owner's own upload with a session that ended: sign in again (401); anyone else: no such upload.
      expect(patch.status, who).toBe(who === 'an ended session' ? 401 : 404);
      if (patch.status === 404) expect(patch.body.toString(), who).toMatch(/upload/i);
      const download = await send('GET', file, { cookie });
      expect(download.status, who).toBe(who === 'another tenant' ? 404 : 401);
      expect(download.headers['content-type'], who).toBe('text/plain; charset=utf-8');
    }
    // Nothing arrived: the owner's upload still stands at 0 and takes its bytes.
    const mine = await signedIn(owner.userId, owner.orgId);
    const wrongOffset = await send('PATCH', upload, { cookie: mine.cookie, ...OCTETS, 'upload-offset': '10' }, bytes);
    expect(wrongOffset.status).toBe(409);
    const done = await send('PATCH', upload, { cookie: mine.cookie, ...OCTETS, 'upload-offset': '0' }, bytes);
    expect(done.status).toBe(204);
    expect(done.headers['upload-sha256']).toBe(sha256(bytes));
    // A folder comes as a tar, streamed (no length known before).
    const tar = await send('GET', file, { cookie: mine.cookie });
    expect(tar.status).toBe(200);
    expect(tar.headers['content-type']).toBe('application/x-tar');
    expect(tar.body.subarray(0, 100).toString('latin1')).toContain('in/');
  });

  it('takes the REST API’s PATCH and download with a token: its scopes, rate-limit headers and error shape', async () => {
    const { owner, stranger, projectId } = await setup();
    const writer = await tokens.mint(owner, ['read', 'files:read', 'files:write']);
    const reader = await tokens.mint(owner, ['read', 'files:read']);
    const strangers = await tokens.mint(stranger, ['read', 'files:read', 'files:write']);
    const bytes = randomBytes(2 * 1024 * 1024 + 1);
    // The POST that creates the upload goes to Next's route; here the REST handler makes it the same way.
    const rest = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 100_000 });
    const created = await rest(new Request('http://portal.test/api/v1/uploads', { method: 'POST', headers: { authorization: `Bearer ${writer}`, 'tus-resumable': '1.0.0', 'upload-length': String(bytes.length), 'upload-metadata': meta({ projectId, site: SITE, path: 'api/w.bin' }) } }));
    expect(created.status).toBe(201);
    const upload = new URL(created.headers.get('location')!, 'http://portal.test').pathname;
    expect(upload).toMatch(/^\/api\/v1\/uploads\//);

    const refused = await send('PATCH', upload, { authorization: `Bearer ${strangers}`, ...OCTETS, 'upload-offset': '0' }, bytes);
    expect(refused.status).toBe(404);
    const noToken = await send('PATCH', upload, { ...OCTETS, 'upload-offset': '0' }, bytes);
    expect(noToken.status).toBe(401);
    expect((JSON.parse(noToken.body.toString()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    const readOnly = await send('PATCH', upload, { authorization: `Bearer ${reader}`, ...OCTETS, 'upload-offset': '0' }, bytes);
    // The same person with a token that may only read: the upload is theirs, writing it is not this token's.
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.toString()).toMatch(/files:write/); // tus answers in text, also on the REST API
    const done = await send('PATCH', upload, { authorization: `Bearer ${writer}`, ...OCTETS, 'upload-offset': '0' }, bytes);
    expect(done.status).toBe(204);
    expect(done.headers['upload-sha256']).toBe(sha256(bytes));
    expect(done.headers['x-ratelimit-limit']).toBe('100000');
    expect(done.headers['x-request-id']).toBeDefined();

    const file = `/api/v1/projects/${projectId}/files/content?site=${SITE}&path=api%2Fw.bin`;
    const got = await send('GET', file, { authorization: `Bearer ${reader}` });
    expect(got.status).toBe(200);
    expect(got.headers['content-length']).toBe(String(bytes.length));
    expect(got.headers['x-ratelimit-remaining']).toBeDefined();
    expect(sha256(got.body)).toBe(sha256(bytes));
    const theirs = await send('GET', file, { authorization: `Bearer ${strangers}` });
    expect(theirs.status).toBe(404);
    const error = JSON.parse(theirs.body.toString()) as { error: { code: string; requestId: string } };
    expect(error.error.code).toBe('NOT_FOUND');
    expect(error.error.requestId).toBe(theirs.headers['x-request-id']);
  });

  it('takes the gateway’s calls with their bodies: the REST handler’s token check, the gateway’s answers and limits', async () => {
    const { owner, projectId } = await setup();
    const key = await tokens.mint(owner, ['inference'], { projectId });
    const call = (body: Buffer, headers: Record<string, string> = { authorization: `Bearer ${key}` }) => send('POST', '/api/v1/openai/v1/chat/completions', { 'content-type': 'application/json', ...headers }, body);
    expect((await call(Buffer.from('{}'), {})).status).toBe(401);
    const unknown = await call(Buffer.from(JSON.stringify({ model: 'nobody/runs-this', messages: [{ role: 'user', content: 'hi' }] })));
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body.toString())).toMatchObject({ error: { code: 'model_not_found', param: 'model' } });
    const noModel = await call(Buffer.from('{"messages":[]}'));
    expect(JSON.parse(noModel.body.toString())).toMatchObject({ error: { code: 'missing_required_parameter', param: 'model' } });
    const huge = await call(Buffer.alloc(9 * 1024 * 1024, 0x20));
    expect(huge.status).toBe(413);
    const models = await send('GET', '/api/v1/openai/v1/models', { authorization: `Bearer ${key}` });
    expect(JSON.parse(models.body.toString())).toEqual({ object: 'list', data: [] });
  });

  it('goes on serving when a client leaves in the middle of a download', async () => {
    const { owner, projectId, create } = await setup();
    const { cookie } = await signedIn(owner.userId, owner.orgId);
    const bytes = randomBytes(8 * 1024 * 1024);
    const upload = await create('big.bin', bytes.length);
    expect((await send('PATCH', upload, { cookie, ...OCTETS, 'upload-offset': '0' }, bytes)).status).toBe(204);
    const file = `/api/projects/${projectId}/files/download?site=${SITE}&path=big.bin`;
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: Number(base.split(':')[1]), path: file, headers: { cookie } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    });
    const again = await send('GET', file, { cookie, range: 'bytes=-10' });
    expect(again.status).toBe(206);
    expect(again.body.equals(bytes.subarray(-10))).toBe(true);
  });
});
