import { describe, expect, it } from 'vitest';
import { clientAddress, lockoutMs, RATE_RULES, secondsUntil } from './rate-limits';

describe('rate limit rules', () => {
  it('doubles each lockout in a row up to the maximum', () => {
    const rule = RATE_RULES.signInAccount;
    expect([1, 2, 3, 4, 7, 8, 50].map((n) => lockoutMs(rule, n) / 60_000)).toEqual([1, 2, 4, 8, 60, 60, 60]);
  });

  it('rounds the wait up to whole seconds', () => {
    const now = new Date('2026-12-01T10:00:00.000Z');
    expect(secondsUntil(new Date('2026-12-01T10:00:59.001Z'), now)).toBe(60);
    expect(secondsUntil(new Date('2026-12-01T09:00:00.000Z'), now)).toBe(1);
  });

  it('takes the address a trusted proxy added, not the ones the client sent, and none without a trusted proxy', () => {
    const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n] ?? null });
    expect(clientAddress(headers({ 'x-forwarded-for': '6.6.6.6, 203.0.113.7' }), true)).toBe('203.0.113.7');
    expect(clientAddress(headers({ 'x-real-ip': '198.51.100.2' }), true)).toBe('198.51.100.2');
    expect(clientAddress(headers({}), true)).toBeUndefined();
    // Without a proxy the client can write these headers itself: they are not believed.
    expect(clientAddress(headers({ 'x-forwarded-for': '203.0.113.7' }), false)).toBeUndefined();
  });
});
