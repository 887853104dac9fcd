import { describe, expect, it } from 'vitest';
import { AUTH_TOKEN_PATTERN, authTokenExpiry, authTokenState } from './tokens';

const now = new Date('2026-12-01T12:00:00Z');
const later = (ms: number) => new Date(now.getTime() + ms);

describe('authTokenState', () => {
  it.each([
    ['usable until it expires', { expiresAt: later(1), usedAt: null, voidedAt: null }, 'usable'],
    ['expired at the instant of expiry', { expiresAt: now, usedAt: null, voidedAt: null }, 'expired'],
    ['expired after it', { expiresAt: later(-1), usedAt: null, voidedAt: null }, 'expired'],
    ['used once is used', { expiresAt: later(1000), usedAt: later(-5), voidedAt: null }, 'used'],
    ['voided by a newer link', { expiresAt: later(1000), usedAt: null, voidedAt: later(-5) }, 'voided'],
  ] as const)('%s', (_, token, state) => {
    expect(authTokenState(token, now)).toBe(state);
  });
});

describe('authTokenExpiry', () => {
  it('gives a reset link one hour and a verification link seven days', () => {
    expect(authTokenExpiry('password_reset', now)).toEqual(later(3_600_000));
    expect(authTokenExpiry('email_verification', now)).toEqual(later(7 * 86_400_000));
  });
});

describe('AUTH_TOKEN_PATTERN', () => {
  it('accepts 32 bytes in base64url and nothing else', () => {
    expect(AUTH_TOKEN_PATTERN.test(Buffer.alloc(32, 7).toString('base64url'))).toBe(true);
    expect(AUTH_TOKEN_PATTERN.test('short')).toBe(false);
    expect(AUTH_TOKEN_PATTERN.test(`${Buffer.alloc(32, 7).toString('base64url').slice(1)}=`)).toBe(false);
  });
});
