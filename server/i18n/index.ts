// Locale resolution and translation; the one entry point for user-facing text.
import { de } from './de';
import { en, type MessageKey } from './en';

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

/** interpolate fills {placeholders} in a message. */
export function interpolate(message: string, params?: MessageParams): string {
  if (!params) return message;
  return message.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

/** translate renders a message key in a locale. */
export function translate(locale: Locale, key: MessageKey, params?: MessageParams): string {
  return interpolate(catalogues[locale][key], params);
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
