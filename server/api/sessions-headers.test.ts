import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConnection } from '~/server/services/sessions/connection';
import { appCookieHeader, appRequestHeaders, appResponseHeaders, isPortalCookie, parseCookies, scopeAppCookie, SecretMask, withoutTokenParameter } from './sessions-headers';
import { ownsPath, sessionRoute } from './sessions-http';

const SECRET = 'Sx_9-abcdefghijklmnopqrstuvwxyz0123456789';
const JOB = '0b6f3c1e-8d2a-4e5b-9c7d-1a2b3c4d5e6f';
const BASE = `/sessions/${JOB}/`;

/** masked runs a body through SecretMask in the given chunks. */
async function masked(chunks: string[], secret = SECRET): Promise<string> {
  return text(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(new SecretMask(secret)));
}

describe('the portal cookies the app never sees', () => {
  it('knows next-auth’s cookies over http and https and the portal’s own', () => {
    for (const name of ['next-auth.session-token', '__Secure-next-auth.session-token', 'next-auth.session-token.0', '__Host-next-auth.csrf-token', 'next-auth.callback-url', '__Secure-next-auth.pkce.code_verifier', 'next-auth.state', 'next-auth.nonce', 'portal-org', 'portal-locale']) {
      expect(isPortalCookie(name), name).toBe(true);
    }
    for (const name of ['_xsrf', 'username-node-a-8888', 'my-next-auth.x', 'portal-orgs']) expect(isPortalCookie(name), name).toBe(false);
  });

  it('strips them from the Cookie header and keeps the app’s', () => {
    expect(appCookieHeader('next-auth.session-token=abc; _xsrf=2|x; portal-org=o1; portal-locale=de; __Host-next-auth.csrf-token=z; username-a=b')).toBe('_xsrf=2|x; username-a=b');
    expect(appCookieHeader('next-auth.session-token=abc; portal-org=o1')).toBeUndefined();
    expect(appCookieHeader(undefined)).toBeUndefined();
  });

  it('parses cookies, the first of a name winning', () => {
    const cookies = parseCookies('a=1; b="two"; a=3; c=%20x; bad; =nameless');
    expect([...cookies]).toEqual([
      ['a', '1'],
      ['b', 'two'],
      ['c', ' x'],
    ]);
  });
});

describe('the request the app gets', () => {
  const client = { remoteAddress: '203.0.113.7', encrypted: false, trustProxy: false };

  it('carries the secret as a token header in place of the browser’s, no portal cookie, no compression', () => {
    const out = appRequestHeaders({ host: 'portal.example', cookie: 'next-auth.session-token=jwt; _xsrf=x', authorization: 'Bearer stolen', 'accept-encoding': 'gzip, br', connection: 'keep-alive', 'x-forwarded-for': '6.6.6.6', 'x-forwarded-host': 'evil.example' }, SECRET, client, { upgrade: false });
    expect(out.authorization).toBe(`token ${SECRET}`);
    expect(out.cookie).toBe('_xsrf=x');
    expect(out['accept-encoding']).toBe('identity');
    expect(out.connection).toBeUndefined();
    expect(out.host).toBe('portal.example');
    // Not behind a trusted proxy: the browser's X-Forwarded-* are replaced, not extended.
    expect(out['x-forwarded-for']).toBe('203.0.113.7');
    expect(out['x-forwarded-host']).toBe('portal.example');
    expect(out['x-forwarded-proto']).toBe('http');
  });

  it('extends a trusted proxy’s X-Forwarded-* and keeps an upgrade’s Connection', () => {
    const out = appRequestHeaders({ host: 'internal:3000', connection: 'Upgrade', upgrade: 'websocket', 'x-forwarded-for': '198.51.100.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'portal.example' }, SECRET, { ...client, remoteAddress: '10.0.0.2', trustProxy: true }, { upgrade: true });
    expect(out['x-forwarded-for']).toBe('198.51.100.1, 10.0.0.2');
    expect(out['x-forwarded-proto']).toBe('https');
    expect(out['x-forwarded-host']).toBe('portal.example');
    expect(out.connection).toBe('Upgrade');
    expect(out.upgrade).toBe('websocket');
    expect(out['accept-encoding']).toBeUndefined();
    // The host the browser addressed, not the reverse proxy's upstream name.
    expect(out.host).toBe('portal.example');
  });

  it('names PORTAL_URL’s host when configured, whatever Host the request came with', () => {
    const out = appRequestHeaders({ host: '127.0.0.1:3000' }, SECRET, { ...client, publicHost: 'portal.example.org' }, { upgrade: true });
    expect(out.host).toBe('portal.example.org');
    expect(out['x-forwarded-host']).toBe('portal.example.org');
  });

  it('drops the token parameter from the path', () => {
    expect(withoutTokenParameter(`${BASE}tree?token=abc&x=1`)).toBe(`${BASE}tree?x=1`);
    expect(withoutTokenParameter(`${BASE}tree?t%6Fken=abc`)).toBe(`${BASE}tree`);
    expect(withoutTokenParameter(`${BASE}tree?tokens=1`)).toBe(`${BASE}tree?tokens=1`);
    expect(withoutTokenParameter(`${BASE}tree`)).toBe(`${BASE}tree`);
  });
});

describe('the response the browser gets', () => {
  it('drops any header carrying the secret and the token of a redirect', () => {
    const { headers, droppedForSecret } = appResponseHeaders(
      { 'x-echo': `token ${SECRET}`, location: `${BASE}tree?token=${SECRET}#top`, 'content-security-policy': "frame-ancestors 'self'", 'transfer-encoding': 'chunked', 'content-length': '12' },
      SECRET,
      BASE,
      { upgrade: false },
    );
    expect(droppedForSecret).toEqual(['x-echo']);
    expect(headers.location).toBe(`${BASE}tree#top`);
    expect(headers['content-security-policy']).toBe("frame-ancestors 'self'");
    expect(headers['transfer-encoding']).toBeUndefined();
    expect(headers['content-length']).toBe('12');
    expect(JSON.stringify(headers)).not.toContain(SECRET);
  });

  it('keeps the app’s cookies inside its session and refuses the portal’s names', () => {
    expect(scopeAppCookie('_xsrf=2|abc; Path=/; Domain=portal.example; SameSite=Lax', BASE)).toBe(`_xsrf=2|abc; Path=${BASE}; SameSite=Lax`);
    expect(scopeAppCookie(`username-x=y; Path=${BASE}tree; HttpOnly`, BASE)).toBe(`username-x=y; Path=${BASE}tree; HttpOnly`);
    expect(scopeAppCookie('a=b', BASE)).toBe(`a=b; Path=${BASE}`);
    expect(scopeAppCookie('next-auth.session-token=forged; Path=/', BASE)).toBeNull();
    expect(scopeAppCookie('portal-org=other; Path=/', BASE)).toBeNull();
    const { headers } = appResponseHeaders({ 'set-cookie': ['a=1; Path=/', `b=${SECRET}`, '__Secure-next-auth.session-token=x'] }, SECRET, BASE, { upgrade: false });
    expect(headers['set-cookie']).toEqual([`a=1; Path=${BASE}`]);
  });

  it('keeps Connection and Upgrade on a WebSocket’s 101', () => {
    const { headers } = appResponseHeaders({ connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-accept': 'abc=' }, SECRET, BASE, { upgrade: true });
    expect(headers).toEqual({ connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-accept': 'abc=' });
  });
});

describe('SecretMask', () => {
  it('masks the secret in a page, keeping its length', async () => {
    const page = `<body data-jupyter-api-token="${SECRET}"><a href="/tree?token=${SECRET}">`;
    const out = await masked([page]);
    expect(out).not.toContain(SECRET);
    expect(out).toHaveLength(page.length);
    expect(out).toContain('*'.repeat(SECRET.length));
  });

  it('masks a secret split over chunks, wherever the cuts fall', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), fc.array(fc.nat(200), { maxLength: 6 }), async (before, after, cuts) => {
        const body = `${before}${SECRET}${after}${SECRET}`;
        const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
        const chunks: string[] = [];
        let from = 0;
        for (const p of points) {
          chunks.push(body.slice(from, p));
          from = p;
        }
        chunks.push(body.slice(from));
        const out = await masked(chunks.filter((c) => c.length));
        expect(out).not.toContain(SECRET);
        expect(Buffer.byteLength(out)).toBe(Buffer.byteLength(body));
      }),
      { numRuns: 200 },
    );
  });

  it('passes a body without the secret unchanged, holding back only what could begin it', async () => {
    expect(await masked(['hello ', 'world'])).toBe('hello world');
    expect(await masked(['ends with Sx_9', '-abc'])).toBe('ends with Sx_9-abc');
  });
});

describe('a session’s path', () => {
  it('belongs to the proxy only with a job id after /sessions/', () => {
    expect(ownsPath(`/sessions/${JOB}/tree`)).toBe(true);
    expect(ownsPath(`/sessions/${JOB}`)).toBe(true);
    expect(ownsPath(`/sessions/${JOB}?x=1`)).toBe(true);
    expect(ownsPath('/sessions')).toBe(false);
    expect(ownsPath('/sessions/new')).toBe(false);
    expect(ownsPath(`/sessions/${JOB}x/`)).toBe(false);
    expect(ownsPath(`/api/sessions/${JOB}/`)).toBe(false);
  });

  it('splits the job id, the slash after it and the query', () => {
    expect(sessionRoute(`/sessions/${JOB}/api/kernels?x=1`)).toEqual({ jobId: JOB, bare: false, query: '?x=1' });
    expect(sessionRoute(`/sessions/${JOB}?a=b`)).toEqual({ jobId: JOB, bare: true, query: '?a=b' });
  });
});

describe('connection.json', () => {
  const good = { host: 'node-a', port: 8888, secret: SECRET, basePath: BASE };

  it('takes a file as the launcher writes it', () => {
    expect(parseConnection(JSON.stringify(good), JOB)).toEqual({ ok: true, connection: good });
  });

  it.each([
    ['host', { ...good, host: 'evil.example:80/x' }],
    ['host', { ...good, host: '' }],
    ['port', { ...good, port: 80 }],
    ['port', { ...good, port: 70000 }],
    ['port', { ...good, port: '8888' }],
    ['secret', { ...good, secret: 'short' }],
    ['secret', { ...good, secret: `${SECRET}<script>` }],
    ['basePath', { ...good, basePath: '/sessions/other/' }],
  ])('refuses a bad %s, naming it', (field, value) => {
    const parsed = parseConnection(JSON.stringify(value), JOB);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.field).toBe(field);
      expect(parsed.problem).not.toContain(SECRET);
    }
  });

  it('refuses what is not a JSON object', () => {
    expect(parseConnection('{"host":', JOB)).toMatchObject({ ok: false, field: 'connection.json' });
    expect(parseConnection('[1]', JOB)).toMatchObject({ ok: false, field: 'connection.json' });
  });
});
