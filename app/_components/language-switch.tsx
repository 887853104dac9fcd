'use client';
import { useRouter } from 'next/navigation';
import { LOCALE_COOKIE, LOCALES, type Locale } from '~/server/i18n/core';
import { useT } from './i18n';

const NAMES: Record<Locale, string> = { en: 'English', de: 'Deutsch' };

/** A language select that remembers the choice in a cookie and re-renders the page. */
export function LanguageSwitch() {
  const { locale, t } = useT();
  const router = useRouter();
  return (
    <label className="flex items-center gap-2 text-sm">
      <span className="sr-only">{t('nav.language')}</span>
      <select
        value={locale}
        onChange={(event) => {
          document.cookie = `${LOCALE_COOKIE}=${event.target.value}; path=/; max-age=31536000; samesite=lax`;
          router.refresh();
        }}
        className="rounded-md border-0 bg-transparent py-1 pr-7 pl-2 text-sm ring-1 ring-slate-300"
        aria-label={t('nav.language')}
      >
        {LOCALES.map((l) => (
          <option key={l} value={l}>
            {NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}
