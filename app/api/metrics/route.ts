// Prometheus metrics for the centre's monitoring (docs/api.md, "Metrics"). Only with METRICS_TOKEN
// set, and only for a caller sending it as `Authorization: Bearer <METRICS_TOKEN>`: the figures
// (jobs, ledger totals, the cluster) are the centre's business, not the public's. Unset, the endpoint
// does not exist (404), so a portal nobody monitors shows nothing.
import { getDb } from '~/server/db';
import { env } from '~/server/env.js';
import { bearerMatches } from '~/server/observability/bearer';
import { instrumentRoute, metricsContentType } from '~/server/observability/metrics';
import { scrapeMetrics } from '~/server/observability/scrape';
import { getScheduler } from '~/server/scheduler';

export const dynamic = 'force-dynamic';

function plain(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(`${message}\n`, { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers } });
}

export const GET = instrumentRoute('/api/metrics', async (request: Request) => {
  const secret = env().METRICS_TOKEN;
  if (!secret) return plain(404, 'Not found');
  if (!bearerMatches(request.headers.get('authorization'), secret)) {
    return plain(401, 'Unauthorized: send Authorization: Bearer <METRICS_TOKEN>', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
  }
  const db = await getDb();
  const body = await scrapeMetrics(db, () => getScheduler(db));
  return new Response(body, { status: 200, headers: { 'Content-Type': metricsContentType(), 'Cache-Control': 'no-store' } });
});
