'use client';
// The usage filter's period: one choice of kind (month, quarter or a range of days), then only that
// kind's fields. Native radio buttons (arrow keys move between them) and inputs inside the page's GET
// form, so the URL keeps the state and only the chosen kind's fields go into it.
import { useEffect, useRef, useState } from 'react';
import { inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';

export type PeriodMode = 'month' | 'quarter' | 'range';
const MODES: readonly PeriodMode[] = ['month', 'quarter', 'range'];

export function UsagePeriodFields({ mode: initial, month, quarter, from, to }: { mode: PeriodMode; month: string; quarter: string; from: string; to: string }) {
  const { t } = useT();
  const [mode, setMode] = useState<PeriodMode>(initial);
  const kinds = useRef<HTMLFieldSetElement>(null);
  // A kind picked on the server's HTML, before React attached its handlers, changed the radio but not the
  // state (CI saw "range" checked with the quarter's field still shown): once hydrated, the radio decides.
  useEffect(() => {
    const picked = kinds.current?.querySelector<HTMLInputElement>('input[name="mode"]:checked')?.value as PeriodMode | undefined;
    if (picked && MODES.includes(picked)) setMode(picked);
  }, []);
  const label = { month: t('usage.month'), quarter: t('usage.quarter'), range: t('usage.range') } satisfies Record<PeriodMode, string>;
  return (
    <>
      <fieldset ref={kinds} className="text-sm" data-testid="usage-period-kind">
        <legend className="block font-medium text-slate-800">{t('usage.periodType')}</legend>
        <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1 py-2">
          {MODES.map((m) => (
            <label key={m} className="inline-flex items-center gap-1.5">
              <input type="radio" name="mode" value={m} checked={mode === m} onChange={() => setMode(m)} className="h-4 w-4 text-indigo-600 focus-visible:ring-2 focus-visible:ring-indigo-500" />
              {label[m]}
            </label>
          ))}
        </div>
      </fieldset>
      {mode === 'month' && (
        <label className="text-sm">
          <span className="block font-medium text-slate-800">{t('usage.month')}</span>
          <input type="month" name="month" required defaultValue={month} className={`${inputClass} w-40`} />
        </label>
      )}
      {mode === 'quarter' && (
        <label className="text-sm">
          <span className="block font-medium text-slate-800">{t('usage.quarter')}</span>
          <input name="quarter" required placeholder="2026-Q4" pattern="\d{4}-Q[1-4]" defaultValue={quarter} className={`${inputClass} w-28`} />
        </label>
      )}
      {mode === 'range' && (
        <>
          <label className="text-sm">
            <span className="block font-medium text-slate-800">{t('usage.from')}</span>
            <input type="date" name="from" required defaultValue={from} className={`${inputClass} w-40`} />
          </label>
          <label className="text-sm">
            <span className="block font-medium text-slate-800">{t('usage.to')}</span>
            <input type="date" name="to" required defaultValue={to} className={`${inputClass} w-40`} />
          </label>
        </>
      )}
    </>
  );
}
