'use client';
// Translation in client components: the root layout passes the caller's catalogue down once.
import { createContext, useCallback, useContext, type ReactNode } from 'react';
import { interpolate, type Locale, type MessageKey, type MessageParams, type Messages } from '~/server/i18n';

const I18nContext = createContext<{ locale: Locale; messages: Messages } | null>(null);

export function I18nProvider({ locale, messages, children }: { locale: Locale; messages: Messages; children: ReactNode }) {
  return <I18nContext.Provider value={{ locale, messages }}>{children}</I18nContext.Provider>;
}

/** useT returns the active locale and a translate function. */
export function useT() {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useT outside I18nProvider');
  const { locale, messages } = value;
  const t = useCallback((key: MessageKey, params?: MessageParams) => interpolate(messages[key], params, locale), [messages, locale]);
  return { locale, t };
}
