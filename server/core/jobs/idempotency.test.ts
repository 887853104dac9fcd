import { describe, expect, it } from 'vitest';
import { keyExpired, keyOutcome, releasedKey, requestFingerprint } from './idempotency';

describe('idempotency keys', () => {
  const body = { allocationId: 'a', gpus: 1, env: { B: '2', A: '1' }, inputs: ['x', 'y'], name: 'run' };

  it('fingerprints the request without its key, whatever the order of its fields', () => {
    const f = requestFingerprint({ ...body, idempotencyKey: 'key-one-1' });
    expect(requestFingerprint({ idempotencyKey: 'another-key', name: 'run', inputs: ['x', 'y'], env: { A: '1', B: '2' }, gpus: 1, allocationId: 'a' })).toBe(f);
    expect(requestFingerprint({ ...body, begin: undefined })).toBe(f);
    expect(requestFingerprint({ ...body, gpus: 2 })).not.toBe(f);
    expect(requestFingerprint({ ...body, inputs: ['y', 'x'] })).not.toBe(f);
    expect(requestFingerprint({ ...body, env: { A: '1', B: '3' } })).not.toBe(f);
    expect(requestFingerprint({ ...body, gpus: '1' })).not.toBe(f);
  });

  it('keeps a key 24 hours', () => {
    const at = new Date('2026-12-06T10:00:00Z');
    expect(keyExpired(at, new Date('2026-12-07T09:59:59Z'))).toBe(false);
    expect(keyExpired(at, new Date('2026-12-07T10:00:00Z'))).toBe(true);
  });

  it('answers the same body with its job, refuses another, and makes a new job after 24 hours', () => {
    const at = new Date('2026-12-06T10:00:00Z');
    const soon = new Date('2026-12-06T11:00:00Z');
    expect(keyOutcome({ idempotencyFingerprint: 'f', submittedAt: at }, 'f', soon)).toBe('same');
    expect(keyOutcome({ idempotencyFingerprint: 'f', submittedAt: at }, 'g', soon)).toBe('reused');
    expect(keyOutcome({ idempotencyFingerprint: null, submittedAt: at }, 'g', soon)).toBe('same');
    expect(keyOutcome({ idempotencyFingerprint: 'f', submittedAt: at }, 'g', new Date('2026-12-07T10:00:00Z'))).toBe('expired');
    expect(releasedKey('k-12345678', 'id')).toContain(' ');
  });
});
