// One place for number, money and date formatting with units, in the reader's language.
import type { Locale } from '~/server/i18n';

const cache = new Map<string, Intl.NumberFormat>();
function numberFormat(locale: Locale, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale}:${JSON.stringify(options)}`;
  let format = cache.get(key);
  if (!format) cache.set(key, (format = new Intl.NumberFormat(locale, options)));
  return format;
}

/** formatGpuHours renders GPU-seconds as GPU-hours with a unit, e.g. "1,234.5 GPU-h". */
export function formatGpuHours(locale: Locale, gpuSeconds: number): string {
  const hours = gpuSeconds / 3600;
  const digits = Math.abs(hours) >= 100 ? 0 : Math.abs(hours) >= 10 ? 1 : 2;
  return `${numberFormat(locale, { maximumFractionDigits: digits }).format(hours)} GPU-h`;
}

/** formatEuros renders cents as euros, e.g. "€1,234.56" / "1.234,56 €". */
export function formatEuros(locale: Locale, cents: number): string {
  return numberFormat(locale, { style: 'currency', currency: 'EUR' }).format(cents / 100);
}

/** formatAmount renders an allocation amount in its unit. */
export function formatAmount(locale: Locale, unit: 'gpu_seconds' | 'cents', amount: number): string {
  return unit === 'cents' ? formatEuros(locale, amount) : formatGpuHours(locale, amount);
}

/** formatPercent renders a fraction (0..1) as a percentage. */
export function formatPercent(locale: Locale, fraction: number): string {
  return numberFormat(locale, { style: 'percent', maximumFractionDigits: 0 }).format(fraction);
}

/** formatDay renders a YYYY-MM-DD date in the reader's style. */
export function formatDay(locale: Locale, day: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

/** formatDayShort renders a day without its year, for chart axes ("Nov 2" / "2. Nov."). */
export function formatDayShort(locale: Locale, day: string): string {
  return new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

/** formatDateTime renders an instant with date and time. */
export function formatDateTime(locale: Locale, at: Date): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(at);
}
