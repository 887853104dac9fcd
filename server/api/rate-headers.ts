// The rate-limit headers of the REST API and the gateway below it.
import type { RateRule } from '~/server/core/rate-limits';

/** setRequestLimitHeaders says a token's requests a minute and what is left of them (x-ratelimit-limit, -remaining, -reset in seconds). */
export function setRequestLimitHeaders(headers: Headers, rule: RateRule, verdict: { hits: number; retryAfterSeconds: number }): void {
  headers.set('x-ratelimit-limit', String(rule.limit));
  headers.set('x-ratelimit-remaining', String(Math.max(0, rule.limit - verdict.hits)));
  headers.set('x-ratelimit-reset', String(verdict.retryAfterSeconds));
}
