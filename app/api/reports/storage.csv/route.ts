import { NextResponse, type NextRequest } from 'next/server';
import { TRPCError } from '@trpc/server';
import { createCaller } from '~/server/api/root';
import { createRequestContext } from '~/server/api/context';
import { logger } from '~/server/observability/log';
import { instrumentRoute } from '~/server/observability/metrics';

export const dynamic = 'force-dynamic';

/** GET /api/reports/storage.csv?from=YYYY-MM-DD&to=YYYY-MM-DD (or ?month=YYYY-MM, ?quarter=YYYY-Qn): storage in TB-months per project and site, then per site, as CSV (docs/CSV.md). */
export const GET = instrumentRoute('/api/reports/storage.csv', async (request: NextRequest) => {
  const q = request.nextUrl.searchParams;
  const period = q.get('month') ? { month: q.get('month')! } : q.get('quarter') ? { quarter: q.get('quarter')! } : { from: q.get('from') ?? '', to: q.get('to') ?? '' };
  try {
    const caller = createCaller(await createRequestContext());
    const { csv, from, to } = await caller.report.storageCsv({ period });
    return new NextResponse(csv, {
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="storage-${from}-${to}.csv"`, 'cache-control': 'no-store' },
    });
  } catch (error) {
    if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
      const status = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 }[error.code as string] ?? 400;
      return new NextResponse(`${error.message}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    }
    logger().error({ err: error, route: '/api/reports/storage.csv' }, 'storage CSV failed');
    return new NextResponse('Something went wrong on our side.\n', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  }
});
