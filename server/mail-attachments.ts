// What the worker attaches to a mail when it sends it: the outbox names the file (an invoice's PDF,
// in the reader's language), this renders it with the same content and PDF code as the invoice page's
// download (app/(portal)/invoices), so the attachment says what the page says.
import type { Db } from '~/db/client';
import { invoiceContent } from '~/server/documents/invoice-content';
import { renderInvoicePdf } from '~/server/documents/invoice-pdf';
import { invoiceOut } from './api/outputs';
import type { MailAttachment, MailAttachmentRef } from './core/mail/delivery';
import { isLocale, translate, type Locale, type MessageKey, type MessageParams } from './i18n';
import type { AttachmentRenderer } from './services/mail/mail';
import { loadInvoiceForMail } from './services/billing/invoices';

/** attachmentRenderer renders the attachments the outbox names, reading what they show from `db`. */
export function attachmentRenderer(db: Db): AttachmentRenderer {
  return async (ref: MailAttachmentRef): Promise<MailAttachment> => {
    const locale: Locale = isLocale(ref.locale) ? ref.locale : 'en';
    const t = (key: MessageKey, params?: MessageParams) => translate(locale, key, params);
    // Parsed as the invoice procedures answer it, so the PDF is built from exactly what the page shows.
    const invoice = invoiceOut.parse(await loadInvoiceForMail(db, ref.invoiceId));
    const doc = invoiceContent(invoice, t, locale);
    const content = await renderInvoicePdf(doc, { author: invoice.issuer?.name ?? t('app.name'), pageLabel: (page, pages) => t('invoice.page', { page, pages }) });
    return { filename: `${doc.number}.pdf`, contentType: 'application/pdf', content: new Uint8Array(content) };
  };
}
