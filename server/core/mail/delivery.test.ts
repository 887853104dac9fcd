import { describe, expect, it } from 'vitest';
import { afterFailure, isPermanentMailError, MAX_MAIL_ATTEMPTS, retryDelayMs } from './delivery';

describe('mail delivery rules', () => {
  it('waits 1, 2, 4 … minutes after failed attempts, at most 6 hours', () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(9)).toBe(256 * 60_000);
    expect(retryDelayMs(10)).toBe(6 * 3600_000);
    expect(retryDelayMs(1000)).toBe(6 * 3600_000);
  });

  it('gives up on a 5xx answer at once, on trouble that may pass only after the last attempt', () => {
    const now = new Date('2026-12-01T10:00:00Z');
    expect(isPermanentMailError(Object.assign(new Error('550 no such user'), { responseCode: 550 }))).toBe(true);
    expect(isPermanentMailError(Object.assign(new Error('451 try later'), { responseCode: 451 }))).toBe(false);
    expect(isPermanentMailError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNECTION' }))).toBe(false);
    expect(afterFailure(1, { responseCode: 550 }, now).status).toBe('failed');
    expect(afterFailure(1, new Error('ECONNREFUSED'), now)).toEqual({ status: 'pending', nextAttemptAt: new Date('2026-12-01T10:01:00Z') });
    expect(afterFailure(MAX_MAIL_ATTEMPTS, new Error('ECONNREFUSED'), now).status).toBe('failed');
  });
});
