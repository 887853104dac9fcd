import { NextResponse } from 'next/server';
import { instrumentRoute } from '~/server/observability/metrics';
import { checkHealth } from '~/server/services/cluster/health';

export const dynamic = 'force-dynamic';

export const GET = instrumentRoute('/api/health', async () => {
  const health = await checkHealth();
  return NextResponse.json(health, { status: health.status === 'ok' ? 200 : 503 });
});
