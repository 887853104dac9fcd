'use client';
// The job form's low-carbon start: for a job that may wait, the start within the window with the least
// CO2e at its site (job.lowCarbonStart, from the site's hourly grid profile) and what it saves against
// starting now; ticking the box makes that start the job's `begin`.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { useTRPC } from '~/app/_lib/trpc';
import { formatCo2eKg, formatEuros, formatTimeIn } from '~/server/i18n/format';

const WINDOWS = [0, 6, 12, 24] as const;

/** The job as the form describes it, as `job.estimate` takes it. */
export interface LowCarbonJob {
  allocationId: string;
  resourceClassId: string;
  gpus: number;
  nodes: number;
  walltimeMinutes: number;
  runtimeSeconds?: number | undefined;
}

export function LowCarbonStart({ job, enabled, onBeginChange }: { job: LowCarbonJob; enabled: boolean; onBeginChange: (begin: Date | null) => void }) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const [windowHours, setWindowHours] = useState(0);
  const [useSuggestion, setUseSuggestion] = useState(false);
  const suggestion = useQuery({
    ...trpc.job.lowCarbonStart.queryOptions({ ...job, windowHours }),
    enabled: enabled && windowHours > 0,
    placeholderData: (previous) => previous,
  });
  const data = windowHours > 0 ? suggestion.data : undefined;
  const begin = data && !data.startsNow && data.savedGrams > 0 ? data.begin : null;
  const chosen = useSuggestion && begin ? begin : null;
  const chosenAt = chosen?.getTime() ?? null;

  useEffect(() => {
    onBeginChange(chosenAt === null ? null : new Date(chosenAt));
  }, [chosenAt, onBeginChange]);

  const costSaved = data && data.energyCostNowCents !== null && data.energyCostAtBeginCents !== null ? data.energyCostNowCents - data.energyCostAtBeginCents : 0;
  return (
    <div className="space-y-2 text-sm" data-testid="low-carbon-start">
      <Field label={t('jobs.lowCarbon.window')}>
        <select value={windowHours} onChange={(e) => setWindowHours(Number(e.target.value))} data-testid="low-carbon-window">
          {WINDOWS.map((hours) => (
            <option key={hours} value={hours}>
              {hours === 0 ? t('jobs.lowCarbon.windowNone') : t('jobs.lowCarbon.windowHours', { hours })}
            </option>
          ))}
        </select>
      </Field>
      {data && begin && (
        <>
          <p data-testid="low-carbon-suggestion">
            {t(costSaved > 0 ? 'jobs.lowCarbon.savesWithCost' : 'jobs.lowCarbon.saves', {
              // In the person's zone, as the job page will show the begin (the site's zone only shapes the grid's hours).
              ...formatTimeIn(locale, begin, timeZone),
              co2e: formatCo2eKg(locale, data.savedGrams),
              percent: data.savedPercent,
              cost: formatEuros(locale, costSaved),
            })}
          </p>
          <label className="flex items-start gap-2">
            <input type="checkbox" className="mt-1" checked={useSuggestion} onChange={(e) => setUseSuggestion(e.target.checked)} data-testid="low-carbon-use" />
            <span>{t('jobs.lowCarbon.use')}</span>
          </label>
        </>
      )}
      {data && !begin && <p data-testid="low-carbon-suggestion">{t('jobs.lowCarbon.nowIsBest', { hours: windowHours })}</p>}
      {data && <p className="text-xs text-slate-500">{t('jobs.lowCarbon.hint', { util: data.assumedGpuUtilPercent })}</p>}
    </div>
  );
}
