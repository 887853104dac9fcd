// The e-invoice downloads of an invoice or a credit note: XRechnung (UBL XML) and Factur-X/ZUGFeRD (the
// document's own PDF with the CII XML embedded). Loaded through the invoice procedures, as the page and
// the PDF are, so the same people may fetch them and another tenant's invoice is "not found".
import { NextResponse } from 'next/server';
import { creditNoteEInvoiceData, invoiceEInvoiceData } from '~/server/documents/e-invoice-data';
import { renderFacturX, renderXRechnung } from '~/server/documents/e-invoice';
import { creditNoteContent, invoiceContent } from '~/server/documents/invoice-content';
import { invoiceDownload, invoicePdfBytes, plainAnswer } from './document-pdf';

export type EInvoiceKind = 'xrechnung' | 'factur-x';

/** eInvoiceDownload answers an invoice (creditNoteId null) or one of its credit notes as an e-invoice file. */
export function eInvoiceDownload(invoiceId: string, creditNoteId: string | null, kind: EInvoiceKind): Promise<NextResponse> {
  return invoiceDownload(invoiceId, `invoice.${kind}`, async (invoice, t, locale) => {
    const mapped = creditNoteId === null ? invoiceEInvoiceData(invoice, t, locale) : creditNoteEInvoiceData(invoice, creditNoteId, t);
    if (!mapped.ok) return mapped.refusal.reason === 'noCreditNote' ? plainAnswer(404, t('error.notFound')) : plainAnswer(409, t('invoice.eInvoice.noIssuer'));
    const number = mapped.data['ubl:Invoice']['cbc:ID'];
    const headers = (contentType: string, fileName: string) => ({ 'content-type': contentType, 'content-disposition': `attachment; filename="${fileName}"`, 'cache-control': 'private, no-store' });
    if (kind === 'xrechnung') {
      const xml = await renderXRechnung(mapped.data, locale);
      return new NextResponse(xml, { headers: headers('application/xml; charset=utf-8', `${number}-xrechnung.xml`) });
    }
    const doc = creditNoteId === null ? invoiceContent(invoice, t, locale) : creditNoteContent(invoice, creditNoteId, t, locale);
    if (!doc) return plainAnswer(404, t('error.notFound'));
    const pdf = await invoicePdfBytes(invoice, doc, t);
    const bytes = await renderFacturX(mapped.data, new Uint8Array(pdf), `${number}.pdf`, locale);
    return new NextResponse(new Uint8Array(bytes), { headers: headers('application/pdf', `${number}-factur-x.pdf`) });
  });
}
