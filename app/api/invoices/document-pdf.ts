// One answer for the invoice and credit-note PDFs: who may read them is decided by the invoice
// procedures the invoice page calls (a tenant's owners and managers their own, staff every one).
import { TRPCError } from '@trpc/server';
import { NextResponse } from 'next/server';
import type { InvoiceContent, InvoiceView } from '~/server/documents/invoice-content';
import { renderInvoicePdf } from '~/server/documents/invoice-pdf';
import { createRequestContext, requestLocale } from '~/server/api/context';
import { createCaller } from '~/server/api/root';
import { translate, type Locale, type MessageKey, type MessageParams } from '~/server/i18n';

export type T = (key: MessageKey, params?: MessageParams) => string;

/** plainAnswer is a short text answer for a refusal, never cached. */
export function plainAnswer(status: number, body: string): NextResponse {
  return new NextResponse(`${body}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
}

/** invoicePdfBytes lays out a document of an invoice as its PDF (the same for the plain PDF and the Factur-X one). */
export function invoicePdfBytes(invoice: InvoiceView, doc: InvoiceContent, t: T): Promise<Buffer> {
  return renderInvoicePdf(doc, { author: invoice.issuer?.name ?? t('app.name'), pageLabel: (page, pages) => t('invoice.page', { page, pages }) });
}

/**
 * invoiceDownload loads an invoice as the page does and lets `answer` make the download from it; a malformed
 * id, someone else's invoice or a missing document is "not found", exactly as the page answers.
 */
export async function invoiceDownload(invoiceId: string, route: string, answer: (invoice: InvoiceView, t: T, locale: Locale) => Promise<NextResponse>): Promise<NextResponse> {
  const locale = await requestLocale();
  const t: T = (key, p) => translate(locale, key, p);
  try {
    const caller = createCaller(await createRequestContext());
    const me = await caller.account.me();
    const invoice = me.staffRoles.length > 0 ? await caller.invoice.staffGet({ id: invoiceId }) : await caller.invoice.get({ id: invoiceId });
    return await answer(invoice, t, locale);
  } catch (error) {
    if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
      const status = { BAD_REQUEST: 404, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 }[error.code as string] ?? 400;
      return plainAnswer(status, error.message);
    }
    console.error(`[${route}]`, error);
    return plainAnswer(500, t('error.title'));
  }
}

/** documentPdf loads an invoice as the page does, builds a document from it and answers it as a PDF download. */
export async function documentPdf(invoiceId: string, build: (invoice: InvoiceView, t: T, locale: Locale) => InvoiceContent | null): Promise<NextResponse> {
  return invoiceDownload(invoiceId, 'invoice.pdf', async (invoice, t, locale) => {
    const doc = build(invoice, t, locale);
    if (!doc) return plainAnswer(404, t('error.notFound'));
    const bytes = await invoicePdfBytes(invoice, doc, t);
    return new NextResponse(new Uint8Array(bytes), {
      headers: { 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${doc.number}.pdf"`, 'cache-control': 'private, no-store' },
    });
  });
}
