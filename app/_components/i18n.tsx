'use client';
// Translation in client components: the root layout passes the caller's catalogue and time zone down once.
import { createContext, useCallback, useContext, type ReactNode } from 'react';
import { interpolate, type Locale, type MessageKey, type MessageParams, type Messages } from '~/server/i18n/core';

const I18nContext = createContext<{ locale: Locale; messages: Messages; timeZone: string } | null>(null);

export function I18nProvider({ locale, messages, timeZone, children }: { locale: Locale; messages: Messages; timeZone: string; children: ReactNode }) {
  return <I18nContext.Provider value={{ locale, messages, timeZone }}>{children}</I18nContext.Provider>;
}

/** useT returns the active locale, the person's time zone (for formatDateTime) and a translate function. */
export function useT() {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useT outside I18nProvider');
  const { locale, messages, timeZone } = value;
  const t = useCallback((key: MessageKey, params?: MessageParams) => interpolate(messages[key], params, locale), [messages, locale]);
  /** has tells whether a string is a key of the catalogue (a reason or message key that came as data). */
  const has = useCallback((key: string): key is MessageKey => Object.hasOwn(messages, key), [messages]);
  return { locale, t, has, timeZone };
}
