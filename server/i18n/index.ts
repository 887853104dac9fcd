// Locale resolution and translation; the one entry point for user-facing text.
import { de } from './de';
import { en, type MessageKey } from './en';
import { expandPlurals } from './plural';

export type { MessageKey } from './en';
export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
export const LOCALE_COOKIE = 'portal-locale';

export type Messages = Record<MessageKey, string>;
export type MessageParams = Record<string, string | number>;

const catalogues: Record<Locale, Messages> = { en, de };

/** isLocale tells whether a string names a supported locale. */
export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** messagesFor returns the whole catalogue of a locale. */
export function messagesFor(locale: Locale): Messages {
  return catalogues[locale];
}

const numberFormats = new Map<Locale, Intl.NumberFormat>();

/** formatNumber renders a number in a locale with at most two decimals. */
export function formatNumber(locale: Locale, value: number): string {
  let format = numberFormats.get(locale);
  if (!format) numberFormats.set(locale, (format = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 })));
  return format.format(value);
}

/** interpolate fills {placeholders} and picks the plural forms of {count, plural, …} blocks; numbers are formatted for the locale. */
export function interpolate(message: string, params?: MessageParams, locale: Locale = DEFAULT_LOCALE): string {
  if (!params) return message;
  return expandPlurals(message, params, locale, (n) => formatNumber(locale, n)).replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === 'number' ? formatNumber(locale, value) : value;
  });
}

/** translate renders a message key in a locale. */
export function translate(locale: Locale, key: MessageKey, params?: MessageParams): string {
  return interpolate(catalogues[locale][key], params, locale);
}

/** isMessageKey tells whether a string is a key of the catalogue. */
export function isMessageKey(value: string): value is MessageKey {
  return Object.hasOwn(en, value);
}

/** negotiateLocale picks the locale from a cookie value, else the browser's Accept-Language. */
export function negotiateLocale(cookieValue: string | undefined, acceptLanguage: string | null | undefined): Locale {
  if (isLocale(cookieValue)) return cookieValue;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag = '', ...rest] = part.trim().split(';');
      const q = rest.find((p) => p.trim().startsWith('q='));
      return { lang: tag.toLowerCase().split('-')[0] ?? '', q: q ? Number(q.trim().slice(2)) : 1 };
    })
    .filter((entry) => entry.lang && !Number.isNaN(entry.q))
    .sort((a, b) => b.q - a.q);
  for (const entry of ranked) if (isLocale(entry.lang)) return entry.lang;
  return DEFAULT_LOCALE;
}
