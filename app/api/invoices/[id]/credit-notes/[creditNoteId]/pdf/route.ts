import type { NextRequest } from 'next/server';
import { creditNoteContent } from '~/server/documents/invoice-content';
import { instrumentRoute } from '~/server/observability/metrics';
import { documentPdf } from '../../../../document-pdf';

export const dynamic = 'force-dynamic';

/** GET /api/invoices/:id/credit-notes/:creditNoteId/pdf: a credit note on the invoice as a PDF (the invoice's access rules). */
export const GET = instrumentRoute('/api/invoices/[id]/credit-notes/[creditNoteId]/pdf', async (_request: NextRequest, { params }: { params: Promise<{ id: string; creditNoteId: string }> }) => {
  const { id, creditNoteId } = await params;
  return documentPdf(id, (invoice, t, locale) => creditNoteContent(invoice, creditNoteId, t, locale));
});
