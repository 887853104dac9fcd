// The browser's tRPC calls as the portal's HTTP server answers them before Next.js (server/api/trpc-http.ts),
// over real HTTP: the person from the session cookie, queries and batches answered as the router answers
// them, a mutation from the portal's own page taken and a cross-site one refused before it runs, a body
// over 1 MiB refused, the signed-out, an ended session, a forged cookie and another tenant refused as
// app/api/trpc/[trpc]/route.ts refuses them; the API's headers and the request id on every answer.
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import http, { type IncomingHttpHeaders } from 'node:http';
import { eq } from 'drizzle-orm';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { users } from '~/db/schema';
import { createCaller } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { activeAllocation, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { refusedCookies, signedInCookie, startTransfersServer, type TransfersServer } from '~/server/testing/transfers-server';
import { routeOf } from './transfers-http';
import { acceptsGzip, COMPRESS_FROM_BYTES } from './trpc-http';

const AUTH_SECRET = randomBytes(32).toString('hex');

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  raw: Buffer;
}

/** One call's answer in a tRPC batch (superjson as the portal's client sends and reads it). */
type Envelope = { result?: { data: unknown }; error?: { json: { message: string; code: number; data: { code: string; httpStatus: number } } } };

describe('which tRPC requests the portal’s server takes before Next.js', () => {
  it('takes a query’s GET and a mutation’s POST on /api/trpc/<procedures>, and nothing else', () => {
    expect(routeOf('GET', '/api/trpc/account.me?batch=1&input=%7B%7D')).toEqual({ kind: 'trpc' });
    expect(routeOf('POST', '/api/trpc/account.setTimeZone?batch=1')).toEqual({ kind: 'trpc' });
    expect(routeOf('GET', '/api/trpc/account.me,project.list?batch=1')).toEqual({ kind: 'trpc' });
    for (const [method, url] of [
      ['PUT', '/api/trpc/account.me'],
      ['DELETE', '/api/trpc/account.me'],
      ['GET', '/api/trpc'],
      ['GET', '/api/trpc/'],
      ['GET', '/api/trpc/a/b'],
      ['GET', '/api/trpcx/account.me'],
    ] as const)
      expect(routeOf(method, url), `${method} ${url}`).toBeNull();
  });
});

describe('which answers go compressed', () => {
  it('takes gzip where the client names it with a weight above 0, or takes anything', () => {
    for (const header of ['gzip', 'gzip, deflate, br', 'br;q=1.0, gzip;q=0.8', '*', 'identity, *;q=0.5', 'GZIP']) expect(acceptsGzip(header), header).toBe(true);
    for (const header of [null, undefined, '', 'br', 'deflate, br', 'gzip;q=0', 'gzip;q=0.0, br', 'x-gzip-nope']) expect(acceptsGzip(header), String(header)).toBe(false);
  });
});

describe.each(dbTargets())('the browser’s tRPC calls before Next.js on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let server: TransfersServer;
  let port: number;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    server = await startTransfersServer(db, AUTH_SECRET);
    port = server.port;
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
  });

  function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(bytes ? { 'content-length': String(bytes.length) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, body: raw.toString('utf8'), raw });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(bytes);
    });
  }

  /** A query as the portal's client sends it (httpBatchLink: GET, the inputs in the address). */
  const query = (procedures: string[], inputs: unknown[], headers: Record<string, string>) =>
    send('GET', `/api/trpc/${procedures.join(',')}?batch=1&input=${encodeURIComponent(JSON.stringify(Object.fromEntries(inputs.map((input, i) => [i, superjson.serialize(input)]))))}`, headers);
  /** A mutation as the portal's client sends it (POST, the input as the body). */
  const mutation = (procedure: string, input: unknown, headers: Record<string, string>) =>
    send('POST', `/api/trpc/${procedure}?batch=1`, { 'content-type': 'application/json', ...headers }, JSON.stringify({ 0: superjson.serialize(input) }));
  const envelopes = (answer: Answer) => JSON.parse(answer.body) as Envelope[];
  const data = (envelope: Envelope | undefined) => superjson.deserialize(envelope!.result!.data as Parameters<typeof superjson.deserialize>[0]);

  const signedIn = (userId: string, orgId?: string, locale = 'en') => signedInCookie(db, AUTH_SECRET, userId, orgId, locale);

  it('answers a signed-in person’s queries, batched, as the router answers them, with the API’s headers and the request id', async () => {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const { projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    const { cookie } = await signedIn(owner.userId, owner.orgId);
    const answer = await query(['account.me', 'project.list'], [undefined, undefined], { cookie, 'x-request-id': 'req-trpc-test-1' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(answer.headers['x-request-id']).toBe('req-trpc-test-1');
    const [me, projects] = envelopes(answer);
    const ctx = createContextInner({ db, userId: owner.userId, activeOrgId: owner.orgId, locale: 'en' });
    expect(data(me)).toEqual(await createCaller(ctx).account.me());
    expect(data(projects)).toEqual(await createCaller(ctx).project.list());
    expect((data(projects) as { id: string }[]).map((p) => p.id)).toContain(projectId);

    // A larger answer goes gzip-compressed to a client that takes it (as Next's compression did), with its length; a small one as it is.
    const many = Array.from({ length: 12 }, () => 'account.me');
    const plain = await query(many, many.map(() => undefined), { cookie });
    expect(plain.raw.byteLength).toBeGreaterThanOrEqual(COMPRESS_FROM_BYTES);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const zipped = await query(many, many.map(() => undefined), { cookie, 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/);
    expect(Number(zipped.headers['content-length'])).toBe(zipped.raw.byteLength);
    expect(zipped.raw.byteLength).toBeLessThan(plain.raw.byteLength / 3);
    expect(JSON.parse(gunzipSync(zipped.raw).toString('utf8'))).toEqual(JSON.parse(plain.body));
    const small = await query(['account.me'], [undefined], { cookie, 'accept-encoding': 'gzip' });
    expect(small.raw.byteLength).toBeLessThan(COMPRESS_FROM_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(Number(small.headers['content-length'])).toBe(small.raw.byteLength);
  });

  it('takes a mutation from the portal’s own page and refuses a cross-site one and a body over 1 MiB before it runs', async () => {
    const owner = await createTenant(db);
    const { cookie } = await signedIn(owner.userId, owner.orgId, 'de');
    const zone = async () => (await db.select({ timeZone: users.timeZone }).from(users).where(eq(users.id, owner.userId)))[0]!.timeZone;
    const before = await zone();

    const crossSite = await mutation('account.setTimeZone', { timeZone: 'Asia/Tokyo' }, { cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const [refused] = envelopes(crossSite);
    expect(refused!.error!.json.data.code).toBe('FORBIDDEN');
    expect(refused!.error!.json.message).not.toBe('');
    expect(await zone()).toBe(before);

    const huge = await mutation('account.setTimeZone', { timeZone: 'x'.repeat(1024 * 1024 + 10) }, { cookie, origin: `http://127.0.0.1:${port}` });
    expect(huge.status).toBe(413);
    // Refused before its bytes were read: the connection is not kept for a next request behind them.
    expect(huge.headers.connection).toBe('close');
    expect(envelopes(huge)[0]!.error!.json.data.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await zone()).toBe(before);

    const own = await mutation('account.setTimeZone', { timeZone: 'Europe/Berlin' }, { cookie, origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(200);
    expect(own.headers.connection).toBe('keep-alive');
    expect(data(envelopes(own)[0])).toEqual({ timeZone: 'Europe/Berlin' });
    expect(await zone()).toBe('Europe/Berlin');

    // A bad input is refused on its field, in the person's language (the cookie's), never a 500.
    const bad = await mutation('account.setTimeZone', { timeZone: 'Mars/Olympus' }, { cookie, origin: `http://127.0.0.1:${port}` });
    expect(bad.status).toBe(400);
    expect(envelopes(bad)[0]!.error!.json.data.code).toBe('BAD_REQUEST');
    expect(await zone()).toBe('Europe/Berlin');
  });

  it('refuses the signed-out, a forged cookie and an ended session, and shows no tenant another’s project', async () => {
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const stranger = await createTenant(db);
    const { projectId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    for (const [who, cookie] of await refusedCookies(db, AUTH_SECRET, owner.userId, owner.orgId)) {
      const answer = await query(['project.get'], [{ projectId }], { cookie });
      expect(answer.status, who).toBe(401);
      expect(envelopes(answer)[0]!.error!.json.data.code, who).toBe('UNAUTHORIZED');
    }
    const other = await signedIn(stranger.userId, stranger.orgId);
    const answer = await query(['project.get'], [{ projectId }], { cookie: other.cookie });
    expect(answer.status).toBe(404);
    expect(envelopes(answer)[0]!.error!.json.data.code).toBe('NOT_FOUND');
    expect(envelopes(answer)[0]!.result).toBeUndefined();
    const mine = await signedIn(owner.userId, owner.orgId);
    const own = await query(['project.get'], [{ projectId }], { cookie: mine.cookie });
    expect(own.status).toBe(200);
    expect(own.headers.connection).toBe('keep-alive');
    const page = data(envelopes(own)[0]) as { project: { id: string; title: string } };
    expect(page.project.id).toBe(projectId);
    // The stranger's refusal held nothing of it.
    expect(answer.body).not.toContain(page.project.title);
  });
});
