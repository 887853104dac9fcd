// The proxy to interactive sessions and its wall (issue #28), on PGlite and real Postgres, against a real
// HTTP + WebSocket app that records what reaches it: the session's own person gets through over HTTP and
// WebSocket, the app gets its secret as a header and none of the portal's cookies; everyone else —
// another member, another tenant, a forged, unknown or malformed id — gets the same "not found"; without a
// portal session a page asks to sign in and an upgrade is refused 401; a connection file naming a host
// that is not one of the job's nodes, an ended job, a file that is a link or readable by others: never
// connected (a link on the way to it neither). The secret appears in no header and no body of any
// answer, though the app echoes it.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { Db, DbHandle } from '~/db/client';
import { jobs } from '~/db/schema';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { SESSION_FOLDER } from '~/server/core/files/paths';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { endSession, startSession } from '~/server/services/identity/sessions';
import { createSessionActivity, type SessionActivity } from '~/server/services/sessions/activity';
import { sessionAccess } from '~/server/services/sessions/proxy-access';
import { activeAllocation, addMember, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSessionProxy, type SessionProxy } from './sessions-http';

const AUTH_SECRET = randomBytes(32).toString('base64url');
const SITE = 'de-jena';

/** What the app saw of one request or WebSocket handshake. */
interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  websocket: boolean;
}

/** An answer as the browser gets it. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * startApp runs the stand-in for Jupyter: it answers every request with what it received (its secret
 * included, as a careless app would), echoes the Authorization header in a header too, sets a cookie for
 * `/`, redirects `…/login` with the token in the URL, and echoes every WebSocket message.
 */
async function startApp(): Promise<{ port: number; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers, websocket: false });
    const token = String(req.headers.authorization ?? '').replace(/^token /, '');
    if (req.url?.endsWith('/login')) {
      res.writeHead(302, { location: `${req.url.replace(/login$/, 'tree')}?token=${token}` });
      res.end();
      return;
    }
    const body = JSON.stringify({ url: req.url, headers: req.headers, page: `<body data-jupyter-api-token="${token}">` });
    res.writeHead(200, { 'content-type': 'application/json', 'x-echo-authorization': String(req.headers.authorization), 'set-cookie': '_xsrf=2|app; Path=/', 'content-security-policy': "frame-ancestors 'self'" });
    res.end(body);
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    seen.push({ url: req.url ?? '', headers: req.headers, websocket: true });
    socket.on('message', (data, binary) => socket.send(data, { binary }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(dbTargets())('the session proxy on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let app: Awaited<ReturnType<typeof startApp>>;
  let proxy: SessionProxy;
  let activity: SessionActivity;
  let portal: http.Server;
  let base: string;
  /** Every answer the browser got in this file, checked for the secrets at the end. */
  const answers: Answer[] = [];
  const secrets: string[] = [];

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    app = await startApp();
    // A long throttle: the test writes the traffic itself with flush().
    activity = createSessionActivity({ db, flushDelayMs: 60_000 });
    proxy = createSessionProxy({
      // The simulated cluster reaches every node's sessions on this machine.
      access: (request) => sessionAccess({ db, authSecret: AUTH_SECRET, scheduler: () => Promise.resolve({ sessionAddress: () => Promise.resolve('127.0.0.1') }), roots: configuredSiteRoots() }, request),
      touch: (jobId) => activity.touch(jobId),
      trustProxy: false,
    });
    portal = http.createServer((req, res) => {
      if (proxy.ownsPath(req.url)) proxy.handleRequest(req, res);
      else res.writeHead(404).end('next.js');
    });
    portal.on('upgrade', (req, socket, head) => {
      if (proxy.ownsPath(req.url)) proxy.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
    await new Promise<void>((resolve) => portal.listen(0, '127.0.0.1', resolve));
    base = `127.0.0.1:${(portal.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await proxy?.close();
    await activity?.stop();
    portal?.closeAllConnections();
    await new Promise<void>((resolve) => (portal ? portal.close(() => resolve()) : resolve()));
    await app?.close();
    await handle?.close();
  });

  /** send makes one request to the portal, as a browser would (its cookies, its Origin), and keeps the answer. */
  async function send(method: string, pathAndQuery: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = http.request(`http://${base}${pathAndQuery}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
    answers.push(answer);
    return answer;
  }

  /** openSocket opens a WebSocket through the portal: the socket, or the status it was refused with. */
  function openSocket(pathAndQuery: string, headers: Record<string, string> = {}): Promise<{ socket: WebSocket } | { refused: number }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`ws://${base}${pathAndQuery}`, { headers: { origin: `http://${base}`, ...headers } });
      socket.once('open', () => resolve({ socket }));
      socket.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answers.push({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
          resolve({ refused: res.statusCode ?? 0 });
        });
      });
      socket.once('error', (error) => {
        // A refusal the server wrote and closed: unexpected-response has answered already.
        if (!String(error.message).includes('Unexpected server response')) reject(error);
      });
    });
  }

  /** The Cookie header of a browser signed in as `userId` (a session row, as next-auth's sign-in makes), with the portal's other cookies and the app's own. */
  async function signedIn(userId: string, orgId?: string): Promise<{ cookie: string; sessionId: string }> {
    const sessionId = await startSession(db, userId, { userAgent: 'test' });
    const jwt = await encode({ token: { sub: userId, sid: sessionId, name: 'Test', email: 'test@example.org' }, secret: AUTH_SECRET });
    return { cookie: `next-auth.session-token=${jwt}; portal-locale=en; ${orgId ? `portal-org=${orgId}; ` : ''}_xsrf=2|browser; next-auth.csrf-token=csrf`, sessionId };
  }

  async function setup() {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const colleague = await addMember(db, owner, 'manager');
    const stranger = await createTenant(db);
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    return { owner, colleague, stranger, projectId, allocationId };
  }

  type Setup = Awaited<ReturnType<typeof setup>>;

  /** startSessionJob inserts an interactive session's job row as the reconciler leaves a running one, and its connection.json. */
  async function startSessionJob(s: Setup, options: { state?: (typeof jobs.$inferInsert)['state']; nodeList?: string[]; kind?: 'interactive' | 'batch'; connection?: Record<string, unknown> | null; mode?: number } = {}) {
    const jobId = randomUUID();
    const kind = options.kind ?? 'interactive';
    await db.insert(jobs).values({
      id: jobId, orgId: s.owner.orgId, projectId: s.projectId, allocationId: s.allocationId, userId: s.owner.userId, idempotencyKey: randomUUID(), name: 'notebook', kind,
      resourceClassId: 'h100', siteId: SITE, gpus: 1, nodes: 1, walltimeSeconds: 3600, image: 'jupyter', command: 'portal-session jupyter', env: {}, state: options.state ?? 'RUNNING',
      reservedAmount: 3600, reservedUnit: 'gpu_seconds', centsPerGpuHour: 180, startedAt: new Date(), nodeList: options.nodeList ?? ['node-a'],
      ...(kind === 'interactive' ? { app: 'jupyter', idleTimeoutSeconds: 1800 } : {}),
    });
    // The launcher's connection folder in the job's folder.
    const dir = path.join(jobDirOf(workspaceOf(configuredSiteRoots(), SITE, s.projectId), jobId), SESSION_FOLDER);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const secret = randomBytes(32).toString('base64url');
    secrets.push(secret);
    if (options.connection !== null) {
      const file = path.join(dir, 'connection.json');
      await writeFile(file, JSON.stringify({ host: 'node-a', port: app.port, secret, basePath: `/sessions/${jobId}/`, ...options.connection }), { mode: 0o600 });
      await chmod(file, options.mode ?? 0o600);
    }
    return { jobId, secret, dir };
  }

  it('lets the owner through over HTTP: the secret as a header, none of the portal’s cookies, the secret never back', async () => {
    const s = await setup();
    const { jobId, secret } = await startSessionJob(s);
    const { cookie } = await signedIn(s.owner.userId, s.owner.orgId);
    const before = app.seen.length;
    const page = await send('GET', `/sessions/${jobId}/tree?token=guess&x=1`, { cookie, 'x-forwarded-for': '6.6.6.6' });
    expect(page.status).toBe(200);
    const received = app.seen[before]!;
    expect(received.url).toBe(`/sessions/${jobId}/tree?x=1`);
    expect(received.headers.authorization).toBe(`token ${secret}`);
    expect(received.headers.cookie).toBe('_xsrf=2|browser');
    expect(received.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(received.headers['x-forwarded-host']).toBe(base);
    expect(received.headers['accept-encoding']).toBe('identity');
    // The app echoed the secret in its page and a header: masked in the one, dropped with the other.
    expect(page.body).toContain('*'.repeat(secret.length));
    expect(page.headers['x-echo-authorization']).toBeUndefined();
    // The app's own policy, not the portal's; its cookie kept inside the session.
    expect(page.headers['content-security-policy']).toBe("frame-ancestors 'self'");
    expect(page.headers['set-cookie']).toEqual([`_xsrf=2|app; Path=/sessions/${jobId}/`]);
    // A redirect the app sends with its token in the URL arrives without it.
    const redirect = await send('GET', `/sessions/${jobId}/login`, { cookie });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe(`/sessions/${jobId}/tree`);
    // The address without its slash leads to the app's base path.
    expect((await send('GET', `/sessions/${jobId}?a=1`, { cookie })).headers.location).toBe(`/sessions/${jobId}/?a=1`);
    // A form the app's own page posts goes through; one from another site's page does not.
    expect((await send('POST', `/sessions/${jobId}/api/contents`, { cookie, origin: `http://${base}`, 'content-type': 'application/json' }, '{}')).status).toBe(200);
    const seenBefore = app.seen.length;
    const crossSite = await send('POST', `/sessions/${jobId}/api/contents`, { cookie, origin: 'https://evil.example', 'content-type': 'application/json' }, '{}');
    expect(crossSite.status).toBe(403);
    expect(app.seen.length).toBe(seenBefore);
  });

  it('lets the owner through over WebSocket: messages echo, the app gets the secret and no portal cookie', async () => {
    const s = await setup();
    const { jobId, secret } = await startSessionJob(s);
    const { cookie } = await signedIn(s.owner.userId);
    const opened = await openSocket(`/sessions/${jobId}/api/kernels/k1/channels?token=guess`, { cookie });
    if (!('socket' in opened)) throw new Error(`refused: ${opened.refused}`);
    const echoed = await new Promise<string>((resolve) => {
      opened.socket.once('message', (data: Buffer) => resolve(data.toString('utf8')));
      opened.socket.send('{"msg":"hello"}');
    });
    expect(echoed).toBe('{"msg":"hello"}');
    const handshake = app.seen.filter((r) => r.websocket).at(-1)!;
    expect(handshake.url).toBe(`/sessions/${jobId}/api/kernels/k1/channels`);
    expect(handshake.headers.authorization).toBe(`token ${secret}`);
    expect(handshake.headers.cookie).toBe('_xsrf=2|browser');
    opened.socket.close();
    // Another site's page may not open the owner's session's socket with the owner's cookie.
    expect(await openSocket(`/sessions/${jobId}/api/kernels/k1/channels`, { cookie, origin: 'https://evil.example' })).toEqual({ refused: 403 });
  });

  it('tells everyone but the owner "not found", the same for every case, and never contacts the app', async () => {
    const s = await setup();
    const { jobId } = await startSessionJob(s);
    const batch = await startSessionJob(s, { kind: 'batch' });
    const colleague = await signedIn(s.colleague.userId, s.owner.orgId);
    const stranger = await signedIn(s.stranger.userId, s.stranger.orgId);
    const owner = await signedIn(s.owner.userId);
    const before = app.seen.length;
    const cases: [string, string][] = [
      ['a colleague in the same tenant', colleague.cookie],
      ['a person of another tenant', stranger.cookie],
    ];
    const notFound = await send('GET', `/sessions/${randomUUID()}/tree`, { cookie: owner.cookie });
    for (const [who, cookie] of cases) {
      const answer = await send('GET', `/sessions/${jobId}/tree`, { cookie });
      expect(answer.status, who).toBe(404);
      expect(answer.body, who).toBe(notFound.body);
      expect(await openSocket(`/sessions/${jobId}/api/kernels/k1/channels`, { cookie }), who).toEqual({ refused: 404 });
    }
    for (const [what, url] of [
      ['an unknown id', `/sessions/${randomUUID()}/`],
      ['an id in capitals', `/sessions/${jobId.toUpperCase()}/`],
      ['dashes for an id', `/sessions/${'-'.repeat(36)}/`],
      ['a batch job', `/sessions/${batch.jobId}/`],
    ] as const) {
      const answer = await send('GET', url, { cookie: owner.cookie });
      expect(answer.status, what).toBe(404);
      expect(answer.body, what).toBe(notFound.body);
    }
    expect(app.seen.length).toBe(before);
  });

  it('asks a browser without a portal session to sign in, refuses its upgrade 401, and so after sign-out', async () => {
    const s = await setup();
    const { jobId } = await startSessionJob(s);
    const before = app.seen.length;
    const page = await send('GET', `/sessions/${jobId}/notebooks/a%20b.ipynb?kernel=1`);
    expect(page.status).toBe(302);
    expect(page.headers.location).toBe(`/sign-in?callbackUrl=${encodeURIComponent(`/sessions/${jobId}/notebooks/a%20b.ipynb?kernel=1`)}`);
    expect((await send('POST', `/sessions/${jobId}/api/contents`, { origin: `http://${base}` }, '{}')).status).toBe(401);
    expect(await openSocket(`/sessions/${jobId}/api/kernels/k1/channels`)).toEqual({ refused: 401 });
    // A forged cookie, one made with another secret, one without a session row: as none.
    const forged = await encode({ token: { sub: s.owner.userId, sid: randomUUID() }, secret: 'another-secret-entirely-0123456789' });
    expect((await send('GET', `/sessions/${jobId}/`, { cookie: `next-auth.session-token=${forged}` })).status).toBe(302);
    expect((await send('GET', `/sessions/${jobId}/`, { cookie: 'next-auth.session-token=not-a-jwt' })).status).toBe(302);
    const noRow = await encode({ token: { sub: s.owner.userId }, secret: AUTH_SECRET });
    expect((await send('GET', `/sessions/${jobId}/`, { cookie: `next-auth.session-token=${noRow}` })).status).toBe(302);
    // Signed out: the cookie still decodes, but its session row is ended.
    const { cookie, sessionId } = await signedIn(s.owner.userId);
    expect((await send('GET', `/sessions/${jobId}/`, { cookie })).status).toBe(200);
    await endSession(db, sessionId, 'signed_out');
    expect((await send('GET', `/sessions/${jobId}/`, { cookie })).status).toBe(302);
    expect(await openSocket(`/sessions/${jobId}/api/kernels/k1/channels`, { cookie })).toEqual({ refused: 401 });
    expect(app.seen.length).toBe(before + 1);
  });

  it('connects to no host that is not one of the job’s nodes, and never to a bad connection file', async () => {
    const s = await setup();
    const { cookie } = await signedIn(s.owner.userId);
    const before = app.seen.length;
    for (const host of ['evil.example', '127.0.0.1', 'node-b']) {
      const { jobId } = await startSessionJob(s, { connection: { host } });
      const answer = await send('GET', `/sessions/${jobId}/tree`, { cookie });
      expect(answer.status, host).toBe(502);
      expect(await openSocket(`/sessions/${jobId}/api/kernels/k1/channels`, { cookie }), host).toEqual({ refused: 502 });
    }
    // Not ready: no file yet, a file others may read, a link (to another session's file), a bad field.
    const other = await startSessionJob(s);
    const missing = await startSessionJob(s, { connection: null });
    const readable = await startSessionJob(s, { mode: 0o644 });
    const linked = await startSessionJob(s, { connection: null });
    await symlink(path.join(other.dir, 'connection.json'), path.join(linked.dir, 'connection.json'));
    // The job's folder itself a link to a folder elsewhere holding a file made for it.
    const folderLinked = await startSessionJob(s, { connection: null });
    const elsewhere = `${folderLinked.dir}-elsewhere`;
    await mkdir(elsewhere);
    await writeFile(path.join(elsewhere, 'connection.json'), JSON.stringify({ host: 'node-a', port: app.port, secret: folderLinked.secret, basePath: `/sessions/${folderLinked.jobId}/` }), { mode: 0o600 });
    await rm(folderLinked.dir, { recursive: true });
    await symlink(elsewhere, folderLinked.dir);
    const badPort = await startSessionJob(s, { connection: { port: 22 } });
    const otherPath = await startSessionJob(s, { connection: { basePath: `/sessions/${other.jobId}/` } });
    for (const [what, jobId] of [
      ['no file', missing.jobId],
      ['mode 0644', readable.jobId],
      ['a link', linked.jobId],
      ['a linked folder', folderLinked.jobId],
      ['port 22', badPort.jobId],
      ["another session's base path", otherPath.jobId],
    ] as const) {
      const answer = await send('GET', `/sessions/${jobId}/tree`, { cookie });
      expect(answer.status, what).toBe(503);
      expect(answer.headers['retry-after'], what).toBe('5');
      expect(answer.body, what).toContain('starting');
    }
    expect(app.seen.length).toBe(before);
  });

  it('proxies only a running job: pending is starting, ended is gone; an app that went away is a 502 page', async () => {
    const s = await setup();
    const { cookie } = await signedIn(s.owner.userId);
    const before = app.seen.length;
    const pending = await startSessionJob(s, { state: 'PENDING' });
    const ended = await startSessionJob(s, { state: 'COMPLETED' });
    expect((await send('GET', `/sessions/${pending.jobId}/`, { cookie })).status).toBe(503);
    expect((await send('GET', `/sessions/${ended.jobId}/`, { cookie })).status).toBe(410);
    expect(await openSocket(`/sessions/${ended.jobId}/api/kernels/k1/channels`, { cookie })).toEqual({ refused: 410 });
    expect(app.seen.length).toBe(before);
    // Nothing listens on the port the file names any more.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gonePort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gone = await startSessionJob(s, { connection: { port: gonePort } });
    const answer = await send('GET', `/sessions/${gone.jobId}/tree`, { cookie });
    expect(answer.status).toBe(502);
    expect(answer.body).toContain('cannot be reached');
    expect(answer.body).not.toMatch(/ECONNREFUSED|at .*\.ts|Error:/);
    expect(await openSocket(`/sessions/${gone.jobId}/api/kernels/k1/channels`, { cookie })).toEqual({ refused: 502 });
    await rm(gone.dir, { recursive: true, force: true });
  });

  it('writes the session’s last traffic, at most once per 30 s, one UPDATE for all sessions due', async () => {
    const s = await setup();
    const first = await startSessionJob(s);
    const second = await startSessionJob(s);
    const { cookie } = await signedIn(s.owner.userId);
    await activity.flush();
    await send('GET', `/sessions/${first.jobId}/a`, { cookie });
    await send('GET', `/sessions/${first.jobId}/b`, { cookie });
    await send('GET', `/sessions/${second.jobId}/a`, { cookie });
    expect(await activity.flush()).toBe(2);
    const seen = await db.select({ id: jobs.id, at: jobs.sessionSeenAt }).from(jobs).where(eq(jobs.projectId, s.projectId));
    expect(seen.filter((r) => r.at !== null).map((r) => r.id).sort()).toEqual([first.jobId, second.jobId].sort());
    // Within 30 s more traffic writes nothing, WebSocket frames included.
    await send('GET', `/sessions/${first.jobId}/c`, { cookie });
    const opened = await openSocket(`/sessions/${second.jobId}/api/kernels/k1/channels`, { cookie });
    if (!('socket' in opened)) throw new Error('refused');
    opened.socket.close();
    expect(await activity.flush()).toBe(0);
    // With a clock 31 s on, each frame counts again: one write per session.
    let now = Date.now();
    const clocked = createSessionActivity({ db, now: () => now, flushDelayMs: 60_000 });
    clocked.touch(first.jobId);
    clocked.touch(first.jobId);
    expect(await clocked.flush()).toBe(1);
    now += 10_000;
    clocked.touch(first.jobId);
    expect(await clocked.flush()).toBe(0);
    now += 21_000;
    clocked.touch(first.jobId);
    expect(await clocked.flush()).toBe(1);
    await clocked.stop();
  });

  it('never lets a secret reach the browser, in any answer of this file', () => {
    expect(answers.length).toBeGreaterThan(30);
    for (const answer of answers) {
      const everything = `${JSON.stringify(answer.headers)}\n${answer.body}`;
      for (const secret of secrets) expect(everything.includes(secret)).toBe(false);
    }
  });
});
