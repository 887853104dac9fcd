// Without PORTAL_URL (demo mode), links in mails follow the address the request came to, not
// http://localhost:<port> (issue #24); the route handlers put that address in the request scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { env } from '~/server/env.js';
import { inRequestScope } from '~/server/request-scope';
import { requestLinkBase } from '~/server/portal-url';
import { callerFor, dbTargets, mailedLink, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';

describe.each(dbTargets())('mail links without PORTAL_URL on %s', (target) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  const signUp = (email: string) =>
    callerFor(handle.db).account.signUp({ name: 'Dana Demo', email, password: TEST_PASSWORD, organisation: { name: `Demo Lab ${email}`, kind: 'academic', country: 'DE', residency: 'any' } });

  it('runs without PORTAL_URL, as the demo does', () => {
    expect(env().PORTAL_URL).toBeUndefined();
  });

  it('mails the verification and reset links to the host the request came to', async () => {
    const headers = new Headers({ host: 'demo.example.org:3150' });
    const baseUrl = requestLinkBase(headers, 'http:');
    expect(baseUrl).toBe('http://demo.example.org:3150');
    await inRequestScope({ requestId: 'r1', baseUrl }, () => signUp('dana@demo.example'));
    expect((await mailedLink(handle.db, 'dana@demo.example', '/verify-email/')).url).toMatch(/^http:\/\/demo\.example\.org:3150\/verify-email\//);
    await inRequestScope({ requestId: 'r2', baseUrl }, () => callerFor(handle.db).account.requestPasswordReset({ email: 'dana@demo.example' }));
    expect((await mailedLink(handle.db, 'dana@demo.example', '/reset-password/')).url).toMatch(/^http:\/\/demo\.example\.org:3150\/reset-password\//);
  });

  it('never takes a host that smuggles in a path or another address, and falls back to this machine', async () => {
    expect(requestLinkBase(new Headers({ host: 'evil.example/steal?' }), 'http:')).toBeUndefined();
    // Forwarded headers count only behind a trusted proxy (PORTAL_TRUST_PROXY, off here).
    expect(requestLinkBase(new Headers({ host: 'portal.test', 'x-forwarded-host': 'evil.example' }), 'http:')).toBe('http://portal.test');
    await signUp('noscope@demo.example');
    expect((await mailedLink(handle.db, 'noscope@demo.example', '/verify-email/')).url).toMatch(new RegExp(`^http://localhost:${env().PORT}/verify-email/`));
  });
});
