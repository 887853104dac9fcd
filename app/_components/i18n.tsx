'use client';
// Translation in client components. The root layout passes the locale, the address of its catalogue and
// the person's time zone down once. Rendered on the server, the catalogue is the server's own
// (server/i18n/core.ts `serverCatalogue`); in the browser it is fetched once from that address (the root
// layout preloads it; the browser keeps it a year, its name changes with its content) — not sent with
// every page (server/i18n/catalogue-file.ts).
import { createContext, use, useCallback, useContext, type ReactNode } from 'react';
import { interpolate, serverCatalogue, type Locale, type MessageKey, type MessageParams, type Messages } from '~/server/i18n/core';

const I18nContext = createContext<{ locale: Locale; messages: Messages; timeZone: string } | null>(null);

const loading = new Map<string, Promise<Messages>>();

/**
 * fetchCatalogue fetches a catalogue once per address (twice if the first try fails: then the page shows
 * the messages' keys rather than nothing); the promise says when it is there, so `use` reads it at once.
 */
function fetchCatalogue(url: string): Promise<Messages> {
  let promise = loading.get(url);
  if (!promise) {
    const once = async () => {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`the message catalogue ${url} answered HTTP ${response.status}`);
      return (await response.json()) as Messages;
    };
    // React's `use` reads a promise marked fulfilled without suspending.
    const p: Promise<Messages> = once()
      .catch(once)
      .catch((error: unknown) => {
        console.error(error);
        return {} as Messages;
      })
      .then((messages) => {
        const marked = p as Promise<Messages> & { status?: 'fulfilled'; value?: Messages };
        marked.status = 'fulfilled';
        marked.value = messages;
        return messages;
      });
    loading.set(url, (promise = p));
  }
  return promise;
}

export function I18nProvider({ locale, catalogueUrl, timeZone, children }: { locale: Locale; catalogueUrl: string; timeZone: string; children: ReactNode }) {
  const messages = typeof window === 'undefined' ? serverCatalogue(locale) : use(fetchCatalogue(catalogueUrl));
  return <I18nContext.Provider value={{ locale, messages, timeZone }}>{children}</I18nContext.Provider>;
}

/** useT returns the active locale, the person's time zone (for formatDateTime) and a translate function. */
export function useT() {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useT outside I18nProvider');
  const { locale, messages, timeZone } = value;
  const t = useCallback((key: MessageKey, params?: MessageParams) => interpolate(messages[key] ?? key, params, locale), [messages, locale]);
  /** has tells whether a string is a key of the catalogue (a reason or message key that came as data). */
  const has = useCallback((key: string): key is MessageKey => Object.hasOwn(messages, key), [messages]);
  return { locale, t, has, timeZone };
}
