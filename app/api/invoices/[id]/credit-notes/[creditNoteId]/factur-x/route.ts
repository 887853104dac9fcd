import type { NextRequest } from 'next/server';
import { instrumentRoute } from '~/server/observability/metrics';
import { eInvoiceDownload } from '../../../../e-invoice-download';

export const dynamic = 'force-dynamic';

/** GET /api/invoices/:id/credit-notes/:creditNoteId/factur-x: a credit note as an EN 16931 e-invoice, Factur-X/ZUGFeRD PDF (the invoice's PDF with its CII XML embedded) (the invoice's access rules). */
export const GET = instrumentRoute('/api/invoices/[id]/credit-notes/[creditNoteId]/factur-x', async (_request: NextRequest, { params }: { params: Promise<{ id: string; creditNoteId: string }> }) => {
  const { id, creditNoteId } = await params;
  return eInvoiceDownload(id, creditNoteId, 'factur-x');
});
