import type { NextRequest } from 'next/server';
import { invoiceContent } from '~/server/documents/invoice-content';
import { instrumentRoute } from '~/server/observability/metrics';
import { documentPdf } from '../../document-pdf';

export const dynamic = 'force-dynamic';

/** GET /api/invoices/:id/pdf: the invoice as a PDF in the reader's language, saying what its page says. */
export const GET = instrumentRoute('/api/invoices/[id]/pdf', async (_request: NextRequest, { params }: { params: Promise<{ id: string }> }) => {
  const { id } = await params;
  return documentPdf(id, invoiceContent);
});
