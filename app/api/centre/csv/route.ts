// The centre dashboard as a CSV download, for staff only. Same query parameters as /staff/centre
// (from, to, partition, tenantKind) plus table=partitions|tenants; columns in docs/CSV.md.
import { createRequestContext } from '~/server/api/context';
import { createCaller } from '~/server/api/root';
import { centreRefusal, type centreCsvInput } from '~/server/api/routers/centre';
import { defaultRange } from '~/server/core/usage/percentiles';
import { instrumentRoute } from '~/server/observability/metrics';
import type { z } from 'zod';

export const dynamic = 'force-dynamic';

function plain(status: number, message: string): Response {
  return new Response(`${message}\n`, { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' } });
}

export const GET = instrumentRoute('/api/centre/csv', async (request: Request) => {
  const params = new URL(request.url).searchParams;
  const given = (name: string) => params.get(name)?.trim() || undefined;
  const range = defaultRange(new Date().toISOString().slice(0, 10));
  // Validated by the procedure (after its staff check), which refuses anything malformed with a 400.
  const input = {
    from: given('from') ?? range.from,
    to: given('to') ?? range.to,
    partition: given('partition'),
    tenantKind: given('tenantKind'),
    table: given('table'),
  } as z.input<typeof centreCsvInput>;
  const ctx = await createRequestContext();
  try {
    const { filename, body } = await createCaller(ctx).centre.csv(input);
    return new Response(body, {
      status: 200,
      headers: {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="${filename}"`,
        'Cache-Control': 'no-store',
      },
    });
  } catch (error) {
    const refusal = centreRefusal(error, ctx.locale);
    if (refusal) return plain(refusal.status, refusal.message);
    throw error;
  }
});
