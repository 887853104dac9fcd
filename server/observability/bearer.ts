// The check of /api/metrics's bearer secret. Both sides are hashed before the comparison, so it takes
// the same time whatever the caller sent (timingSafeEqual needs equal lengths; a length check first
// would tell the secret's length).
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** bearerMatches tells whether an Authorization header is `Bearer <secret>`, compared in constant time. */
export function bearerMatches(authorization: string | null | undefined, secret: string): boolean {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  // Compared even without a token, so a request without one takes as long as one with a wrong one.
  const given = match?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(secret)) && match !== null;
}
