import { NextResponse } from 'next/server';
import { TRPCError } from '@trpc/server';
import { createCaller } from '~/server/api/root';
import { createRequestContext } from '~/server/api/context';
import { logger } from '~/server/observability/log';
import { instrumentRoute } from '~/server/observability/metrics';

export const dynamic = 'force-dynamic';

/** GET /api/invoices/open-items.csv: staff's open items (invoices with a balance today) for a finance system. */
export const GET = instrumentRoute('/api/invoices/open-items.csv', async () => {
  try {
    const caller = createCaller(await createRequestContext());
    const { csv, day } = await caller.invoice.openItemsCsv();
    return new NextResponse(csv, {
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="open-items-${day}.csv"`, 'cache-control': 'no-store' },
    });
  } catch (error) {
    if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
      const status = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 }[error.code as string] ?? 400;
      return new NextResponse(`${error.message}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    }
    logger().error({ err: error, route: '/api/invoices/open-items.csv' }, 'open items CSV failed');
    return new NextResponse('Something went wrong on our side.\n', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  }
});
