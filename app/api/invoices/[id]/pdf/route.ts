import { TRPCError } from '@trpc/server';
import { NextResponse, type NextRequest } from 'next/server';
import { invoiceContent } from '~/app/(portal)/invoices/invoice-content';
import { renderInvoicePdf } from '~/app/(portal)/invoices/invoice-pdf';
import { createRequestContext, requestLocale } from '~/server/api/context';
import { createCaller } from '~/server/api/root';
import { translate, type MessageKey, type MessageParams } from '~/server/i18n';

export const dynamic = 'force-dynamic';

/**
 * GET /api/invoices/:id/pdf: the invoice as a PDF in the reader's language, with the page's access
 * rules (the same procedures: a tenant's owners and managers their own invoices, staff every one).
 */
export async function GET(_request: NextRequest, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const locale = await requestLocale();
  const t = (key: MessageKey, p?: MessageParams) => translate(locale, key, p);
  const text = (status: number, body: string) => new NextResponse(`${body}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
  try {
    const caller = createCaller(await createRequestContext());
    const me = await caller.account.me();
    const invoice = me.staffRoles.length > 0 ? await caller.invoice.staffGet({ id }) : await caller.invoice.get({ id });
    const bytes = await renderInvoicePdf(invoiceContent(invoice, t, locale), { author: invoice.issuer?.name ?? t('app.name'), pageLabel: (page, pages) => t('invoice.page', { page, pages }) });
    return new NextResponse(new Uint8Array(bytes), {
      headers: {
        'content-type': 'application/pdf',
        'content-disposition': `attachment; filename="${invoice.number}.pdf"`,
        'cache-control': 'private, no-store',
      },
    });
  } catch (error) {
    if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
      // Someone else's invoice is "not found", exactly as the page answers.
      const status = { BAD_REQUEST: 404, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 }[error.code as string] ?? 400;
      return text(status, error.message);
    }
    console.error('[invoice.pdf]', error);
    return text(500, t('error.title'));
  }
}
