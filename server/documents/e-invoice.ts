// EN 16931 e-invoices rendered by @e-invoice-eu/core from the data of e-invoice-data.ts: XRechnung as UBL
// XML, and Factur-X/ZUGFeRD (profile EN 16931) as the invoice's own PDF made PDF/A-3 with the CII XML
// attached as factur-x.xml. The library validates its input against its schema and refuses what fails.
import { InvoiceService, type Invoice, type Logger } from '@e-invoice-eu/core';
import type { Locale } from '~/server/i18n';

export const XRECHNUNG_FORMAT = 'XRECHNUNG-UBL';
export const FACTUR_X_FORMAT = 'Factur-X-EN16931';

/** The library reports deprecations and its own progress: warnings and errors go to the server log, the rest is dropped. */
const logger: Logger = {
  log: () => undefined,
  warn: (message) => console.warn('[e-invoice]', message),
  error: (message) => console.error('[e-invoice]', message),
};

const service = new InvoiceService(logger);
const lang = (locale: Locale) => (locale === 'de' ? 'de-de' : 'en-gb');

/** renderXRechnung writes the e-invoice data as XRechnung (UBL 2.1 Invoice, or CreditNote for type 381). */
export async function renderXRechnung(data: Invoice, locale: Locale): Promise<string> {
  const xml = await service.generate(data, { format: XRECHNUNG_FORMAT, lang: lang(locale), noWarnings: true });
  return typeof xml === 'string' ? xml : new TextDecoder().decode(xml);
}

/** renderFacturX embeds the e-invoice data (CII, profile EN 16931) into the document's PDF and returns the PDF/A-3 bytes. */
export async function renderFacturX(data: Invoice, pdf: Uint8Array, fileName: string, locale: Locale): Promise<Uint8Array> {
  const bytes = await service.generate(data, { format: FACTUR_X_FORMAT, lang: lang(locale), pdf: { buffer: pdf, filename: fileName, mimetype: 'application/pdf' }, noWarnings: true });
  return typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
}
