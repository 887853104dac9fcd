import { describe, expect, it } from 'vitest';
import { LINK_TOKEN_SECONDS, signLinkToken, verifyLinkToken } from './link-token';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const link = {
  userId: '00000000-0000-4000-8000-000000000001',
  profile: { provider: 'kc', subject: 's', email: 'a@example.org', emailVerified: true, name: 'A', entitlements: [] },
  callbackUrl: '/dashboard',
};

describe('link tokens', () => {
  const now = new Date('2026-12-01T10:00:00Z');
  it('carry the pending link until they expire', () => {
    const token = signLinkToken(SECRET, link, now);
    expect(verifyLinkToken(SECRET, token, now)).toMatchObject(link);
    expect(verifyLinkToken(SECRET, token, new Date(now.getTime() + (LINK_TOKEN_SECONDS - 1) * 1000))).not.toBeNull();
    expect(verifyLinkToken(SECRET, token, new Date(now.getTime() + LINK_TOKEN_SECONDS * 1000))).toBeNull();
  });

  it('refuse a changed token or another secret', () => {
    const token = signLinkToken(SECRET, link, now);
    const [body, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...link, userId: '00000000-0000-4000-8000-000000000002', exp: 9e9 })).toString('base64url');
    expect(verifyLinkToken(SECRET, `${forged}.${mac}`, now)).toBeNull();
    expect(verifyLinkToken(`${SECRET}!`, token, now)).toBeNull();
    expect(verifyLinkToken(SECRET, `${body}`, now)).toBeNull();
    expect(verifyLinkToken(SECRET, 'garbage', now)).toBeNull();
  });
});
