import type { NextRequest } from 'next/server';
import { instrumentRoute } from '~/server/observability/metrics';
import { eInvoiceDownload } from '../../e-invoice-download';

export const dynamic = 'force-dynamic';

/** GET /api/invoices/:id/xrechnung: the invoice as an EN 16931 e-invoice, XRechnung (UBL XML). */
export const GET = instrumentRoute('/api/invoices/[id]/xrechnung', async (_request: NextRequest, { params }: { params: Promise<{ id: string }> }) => {
  const { id } = await params;
  return eInvoiceDownload(id, null, 'xrechnung');
});
