// Formatting particular to invoices: the invoiced month, and GPU-hours precise enough to check a line by hand.
import type { Locale } from '~/server/i18n';

/** formatMonth renders a month YYYY-MM (or a first day YYYY-MM-01) as e.g. "March 2026" / "März 2026". */
export function formatMonth(locale: Locale, month: string): string {
  return new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${month.slice(0, 7)}-01T00:00:00Z`));
}

/** formatInvoiceGpuHours renders GPU-seconds as GPU-hours with up to four decimals (exact for whole seconds to 0.36 s). */
export function formatInvoiceGpuHours(locale: Locale, gpuSeconds: number): string {
  return `${new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(gpuSeconds / 3600)} GPU-h`;
}

/** formatVatRate renders a per-mille rate as a percentage, e.g. 190 → "19 %" (en: "19%"). */
export function formatVatRate(locale: Locale, permille: number): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 }).format(permille / 1000);
}

/** formatInvoiceTbMonths renders thousandths of a TB-month with three decimals, e.g. 1234 → "1.234 TB-months" / "1,234 TB-Monate". */
export function formatInvoiceTbMonths(locale: Locale, milliTbMonths: number, unit: string): string {
  return `${new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(milliTbMonths / 1000)} ${unit}`;
}

/** formatTokens renders a count of tokens exactly, e.g. 1234567 → "1,234,567" / "1.234.567" (a token line's quantities, issue #29). */
export function formatTokens(locale: Locale, tokens: number): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(tokens);
}
