'use client';
import { useMemo } from 'react';
import { useT } from '~/app/_components/i18n';

/** The options of a country select: names in the reader's language, sorted by them. */
export function CountryOptions({ countries }: { countries: readonly string[] }) {
  const { locale } = useT();
  const names = useMemo(() => new Intl.DisplayNames([locale], { type: 'region' }), [locale]);
  const sorted = useMemo(() => [...countries].sort((a, b) => (names.of(a) ?? a).localeCompare(names.of(b) ?? b, locale)), [countries, names, locale]);
  return sorted.map((code) => (
    <option key={code} value={code}>
      {names.of(code) ?? code}
    </option>
  ));
}
