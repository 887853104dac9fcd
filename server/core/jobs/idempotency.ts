// Idempotency keys as Stripe defines them (issue #31): a submission repeated with the same key and the
// same body answers the job the first one made (a double click, a retried request, also while the first
// is still in flight); the same key with another body is refused (422 `idempotency_key_reused`, naming
// the key), never answered with a job that is not what was asked; a key is kept 24 hours, then free for
// a new job.

import { createHash } from 'node:crypto';

/** How long a key answers with its job; after that the same key makes a new job. */
export const IDEMPOTENCY_KEY_HOURS = 24;

/** canonical is JSON with every object's keys sorted and undefined fields left out: one text per value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonical(v))).join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** requestFingerprint is a hash of a submission without its key: equal for the same request, whatever the order of its fields. */
export function requestFingerprint(input: object): string {
  const { idempotencyKey: _key, ...rest } = input as { idempotencyKey?: unknown };
  return createHash('sha256').update(canonical(rest)).digest('hex');
}

/** keyExpired tells whether a job submitted at `submittedAt` no longer holds its key at `now`. */
export function keyExpired(submittedAt: Date, now: Date): boolean {
  return now.getTime() - submittedAt.getTime() >= IDEMPOTENCY_KEY_HOURS * 3_600_000;
}

/** releasedKey is what an expired key's job keeps instead: with a space, which no key may hold, so no request can name it. */
export function releasedKey(key: string, jobId: string): string {
  return `${key} expired ${jobId}`;
}

/** The outcome of a key a job already holds: answer with its job, refuse the request, or make a new job (the key expired). */
export function keyOutcome(held: { idempotencyFingerprint: string | null; submittedAt: Date }, fingerprint: string, now: Date): 'same' | 'reused' | 'expired' {
  if (keyExpired(held.submittedAt, now)) return 'expired';
  // A job from before fingerprints (null) answers as it did: its body cannot be compared.
  return held.idempotencyFingerprint === null || held.idempotencyFingerprint === fingerprint ? 'same' : 'reused';
}
