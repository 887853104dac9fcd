'use client';
// What a job that waited for its low-carbon `begin` saved against starting at once, by its site's
// hourly grid profile (server/services/jobs/co2e-saved.ts co2eSavedForJob). Shown only for a job with a begin.
import { useT } from '~/app/_components/i18n';
import { formatCo2eKg } from '~/server/i18n/format';

/** The figures of server/core/carbon/saved.ts `co2eSavedByWaiting`. */
export interface Co2eSavedFigures {
  co2eAtOnceGrams: number;
  co2eAsRunGrams: number;
  savedGrams: number;
}

export function Co2eSaved({ saved }: { saved: Co2eSavedFigures | null }) {
  const { t, locale } = useT();
  if (!saved) return null;
  return (
    <div className="mt-3 rounded-md bg-emerald-50 p-3 text-sm" data-testid="job-co2e-saved">
      <p className="flex justify-between gap-4">
        <span className="text-slate-600">{t('jobs.lowCarbon.savedTitle')}</span>
        <span className="font-semibold tabular-nums">{formatCo2eKg(locale, saved.savedGrams)}</span>
      </p>
      <p className="mt-1 text-xs text-slate-500">{t('jobs.lowCarbon.savedDetail', { asRun: formatCo2eKg(locale, saved.co2eAsRunGrams), atOnce: formatCo2eKg(locale, saved.co2eAtOnceGrams) })}</p>
    </div>
  );
}
