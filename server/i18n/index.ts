// Locale resolution and translation; the one entry point for user-facing text on the server. What a
// client component needs (no catalogue) is core.ts, re-exported here.
import { de } from './de';
import { en, type MessageKey } from './en';
import { interpolate, SERVER_CATALOGUES, type Locale, type MessageParams, type Messages } from './core';

export * from './core';

const catalogues: Record<Locale, Messages> = { en, de };
// Client components rendered on the server (to HTML) read the catalogues from here: core.ts
// `serverCatalogue`. The browser fetches its locale's as a file (catalogue-file.ts).
(globalThis as { [SERVER_CATALOGUES]?: Record<Locale, Messages> })[SERVER_CATALOGUES] = catalogues;

/** messagesFor returns the whole catalogue of a locale. */
export function messagesFor(locale: Locale): Messages {
  return catalogues[locale];
}

/** translate renders a message key in a locale. */
export function translate(locale: Locale, key: MessageKey, params?: MessageParams): string {
  return interpolate(catalogues[locale][key], params, locale);
}

/** isMessageKey tells whether a string is a key of the catalogue. */
export function isMessageKey(value: string): value is MessageKey {
  return Object.hasOwn(en, value);
}
