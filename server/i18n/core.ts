// What the browser needs of the i18n as well as the server: the locales, the cookie, interpolation and
// number formats, locale negotiation. No catalogue is imported here: client components import this
// module (a catalogue in a client bundle sent both languages' texts with every page, 38 KB compressed);
// in the browser their messages are fetched once as a file the browser keeps (catalogue-file.ts), on
// the server they are read where index.ts puts them (app/_components/i18n.tsx). index.ts adds the catalogues.
import type { MessageKey } from './en';
import { expandPlurals } from './plural';

export type { MessageKey } from './en';
export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
export const LOCALE_COOKIE = 'portal-locale';

export type Messages = Record<MessageKey, string>;

/** The global under which index.ts puts the catalogues for client components rendered on the server. */
export const SERVER_CATALOGUES = '__portalCatalogues';

/** serverCatalogue is a locale's catalogue on the server, for client components rendered there (index.ts must be loaded: the root layout loads it). */
export function serverCatalogue(locale: Locale): Messages {
  const catalogues = (globalThis as { [SERVER_CATALOGUES]?: Record<Locale, Messages> })[SERVER_CATALOGUES];
  if (!catalogues) throw new Error('the message catalogues are not loaded on this server (server/i18n/index.ts sets them)');
  return catalogues[locale];
}
export type MessageParams = Record<string, string | number>;

/** isLocale tells whether a string names a supported locale. */
export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
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
