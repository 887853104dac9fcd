// The usage page's CSV downloads (usage, storage, model calls): a period from the query (?month=YYYY-MM,
// ?quarter=YYYY-Qn or ?from=…&to=…), the report's CSV through the tRPC caller as the signed-in person, a
// refusal as plain text with its status, a failure logged and answered 500.
import { NextResponse, type NextRequest } from 'next/server';
import { TRPCError } from '@trpc/server';
import { createCaller } from '~/server/api/root';
import { createRequestContext } from '~/server/api/context';
import type { periodField } from '~/server/api/routers/report';
import { logger } from '~/server/observability/log';
import { instrumentRoute } from '~/server/observability/metrics';
import type { z } from 'zod';

type Caller = ReturnType<typeof createCaller>;
type Period = z.infer<typeof periodField>;

/** reportCsvRoute answers GET `route` with the CSV `csvOf` gives, named `<name>-<from>-<to>.csv`. */
export function reportCsvRoute(route: string, name: string, csvOf: (caller: Caller, period: Period) => Promise<{ csv: string; from: string; to: string }>) {
  return instrumentRoute(route, async (request: NextRequest) => {
    const q = request.nextUrl.searchParams;
    const period = q.get('month') ? { month: q.get('month')! } : q.get('quarter') ? { quarter: q.get('quarter')! } : { from: q.get('from') ?? '', to: q.get('to') ?? '' };
    try {
      const caller = createCaller(await createRequestContext());
      const { csv, from, to } = await csvOf(caller, period);
      return new NextResponse(csv, {
        headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}-${from}-${to}.csv"`, 'cache-control': 'no-store' },
      });
    } catch (error) {
      if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
        const status = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 }[error.code as string] ?? 400;
        return new NextResponse(`${error.message}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      }
      logger().error({ err: error, route }, `${name} CSV failed`);
      return new NextResponse('Something went wrong on our side.\n', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    }
  });
}
