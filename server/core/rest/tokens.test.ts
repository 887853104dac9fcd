import { describe, expect, it } from 'vitest';
import { scopeNeeded } from './scopes';
import { API_TOKEN_RANDOM_BYTES, apiTokenFrom, apiTokenState, apiTokenWellFormed, bearerToken, crc32, lastUsedNeedsWrite, tokenRequestProblem } from './tokens';

const bytes = (fill: (i: number) => number, n = API_TOKEN_RANDOM_BYTES) => Uint8Array.from({ length: n }, (_, i) => fill(i));

describe('API token shape', () => {
  it('computes the standard CRC-32', () => {
    // The check value of CRC-32/ISO-HDLC.
    expect(crc32('123456789')).toBe(0xcbf43926);
  });

  it('makes afp_ + 30 base62 characters + a 6-character checksum, skipping bytes ≥ 248 so every character is equally likely', () => {
    const token = apiTokenFrom(bytes((i) => (i % 2 ? 250 : i)));
    expect(token).toMatch(/^afp_[0-9A-Za-z]{36}$/);
    // Bytes 0, 2, 4 … (the odd ones are 250 and skipped) → characters 0, 2, 4 … of the alphabet.
    expect(token.slice(4, 10)).toBe('02468A');
    expect(apiTokenWellFormed(token)).toBe(true);
    expect(() => apiTokenFrom(bytes(() => 255))).toThrow(/random/);
  });

  it('tells a real token from look-alikes by its checksum', () => {
    const token = apiTokenFrom(bytes((i) => (i * 37) % 248));
    for (let i = 4; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === 'x' ? 'y' : 'x') + token.slice(i + 1);
      expect(apiTokenWellFormed(changed), `character ${i}`).toBe(false);
    }
    expect(apiTokenWellFormed(token.slice(0, -1))).toBe(false);
    expect(apiTokenWellFormed(`xfp_${token.slice(4)}`)).toBe(false);
  });

  it('reads the bearer scheme in any case and nothing else', () => {
    expect(bearerToken('Bearer afp_x')).toBe('afp_x');
    expect(bearerToken('bearer   afp_x ')).toBe('afp_x');
    expect(bearerToken('Basic afp_x')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken(null)).toBeNull();
  });
});

describe('what a person may ask for', () => {
  const member = { isStaff: false, memberOf: ['org-a'] };
  const staff = { isStaff: true, memberOf: [] };
  it.each([
    [{ orgId: 'org-a', scopes: ['read', 'jobs:write'], expiresInDays: 90 }, member, null],
    [{ orgId: 'org-a', scopes: [], expiresInDays: 90 }, member, 'apiToken.scopesNeeded'],
    [{ orgId: 'org-b', scopes: ['read'], expiresInDays: 90 }, member, 'apiToken.notMember'],
    [{ orgId: null, scopes: ['read'], expiresInDays: 90 }, member, 'apiToken.orgNeeded'],
    [{ orgId: 'org-a', scopes: ['staff:read'], expiresInDays: 90 }, member, 'apiToken.staffScopeNotStaff'],
    [{ orgId: null, scopes: ['staff:read'], expiresInDays: 365 }, staff, null],
    [{ orgId: 'org-a', scopes: ['read'], expiresInDays: 366 }, member, 'apiToken.expiryRange'],
    [{ orgId: 'org-a', scopes: ['read'], expiresInDays: 0 }, member, 'apiToken.expiryRange'],
    [{ orgId: 'org-a', scopes: ['read'], expiresInDays: 1.5 }, member, 'apiToken.expiryRange'],
  ] as const)('%j by %j → %s', (request, person, problem) => {
    expect(tokenRequestProblem(request, person)?.key ?? null).toBe(problem);
  });
});

describe('token state and last use', () => {
  const now = new Date('2026-12-02T10:00:00Z');
  it('is expired at the instant of expiry, and revoked before anything else', () => {
    expect(apiTokenState({ expiresAt: new Date(now.getTime() + 1), revokedAt: null }, now)).toBe('active');
    expect(apiTokenState({ expiresAt: now, revokedAt: null }, now)).toBe('expired');
    expect(apiTokenState({ expiresAt: new Date(0), revokedAt: now }, now)).toBe('revoked');
  });
  it('writes last use once a minute per address', () => {
    expect(lastUsedNeedsWrite({ lastUsedAt: null, lastUsedFrom: null }, now, null)).toBe(true);
    expect(lastUsedNeedsWrite({ lastUsedAt: new Date(now.getTime() - 59_000), lastUsedFrom: '192.0.2.1' }, now, '192.0.2.1')).toBe(false);
    expect(lastUsedNeedsWrite({ lastUsedAt: new Date(now.getTime() - 59_000), lastUsedFrom: '192.0.2.1' }, now, '192.0.2.2')).toBe(true);
    expect(lastUsedNeedsWrite({ lastUsedAt: new Date(now.getTime() - 60_000), lastUsedFrom: '192.0.2.1' }, now, '192.0.2.1')).toBe(true);
  });
});

describe('the scope a call needs', () => {
  it('is the declared one, else read for reads, staff scopes for staff calls, and none for undeclared mutations', () => {
    expect(scopeNeeded('tenant', 'query')).toBe('read');
    expect(scopeNeeded('tenant', 'mutation')).toBeNull();
    expect(scopeNeeded('tenant', 'mutation', 'jobs:write')).toBe('jobs:write');
    expect(scopeNeeded('account', 'mutation')).toBeNull();
    expect(scopeNeeded('staff', 'query')).toBe('staff:read');
    expect(scopeNeeded('staff', 'mutation')).toBe('staff:write');
  });
});
