import { NextResponse } from 'next/server';
import { instrumentRoute } from '~/server/observability/metrics';
import { checkHealth } from '~/server/services/cluster/health';

export const dynamic = 'force-dynamic';

// `?ready`: the load balancer's readiness check, the database alone (docs/deploy.md "Behind a load balancer").
export const GET = instrumentRoute('/api/health', async (request: Request) => {
  const health = await checkHealth({ readiness: new URL(request.url).searchParams.has('ready') });
  return NextResponse.json(health, { status: health.status === 'ok' ? 200 : 503 });
});
