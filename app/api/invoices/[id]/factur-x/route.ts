import type { NextRequest } from 'next/server';
import { instrumentRoute } from '~/server/observability/metrics';
import { eInvoiceDownload } from '../../e-invoice-download';

export const dynamic = 'force-dynamic';

/** GET /api/invoices/:id/factur-x: the invoice as an EN 16931 e-invoice, Factur-X/ZUGFeRD PDF (the invoice's PDF with its CII XML embedded). */
export const GET = instrumentRoute('/api/invoices/[id]/factur-x', async (_request: NextRequest, { params }: { params: Promise<{ id: string }> }) => {
  const { id } = await params;
  return eInvoiceDownload(id, null, 'factur-x');
});
