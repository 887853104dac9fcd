'use client';
// "Extend" for a waiting or running session (issue #28): more time within its partition's and its
// allocation's walltime limits. The choices offered are those that fit; the added time's cost is the
// one the portal reserves (core jobReservation, the difference of the old and the new limit).
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';
import type { RouterOutputs } from '~/app/_lib/types';
import { jobReservation } from '~/server/core/jobs/estimates';
import { formatEuros, formatGpuHours } from '~/server/i18n/format';

type Session = RouterOutputs['session']['list'][number];

/** The extensions offered, in minutes. */
const CHOICES = [30, 60, 120, 240, 480] as const;

export function SessionExtend({ session }: { session: Session }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = useId();
  const choices = CHOICES.filter((m) => m * 60 <= session.extendableSeconds);
  const [minutes, setMinutes] = useState<number>(choices[1] ?? choices[0] ?? 30);
  const [error, setError] = useState<string | null>(null);
  const extend = useMutation(trpc.session.extend.mutationOptions());
  if (session.state !== 'PENDING' && session.state !== 'RUNNING') return null;
  if (session.cancelRequested) return null;
  if (choices.length === 0) {
    return session.state === 'RUNNING' ? <span className="text-xs text-slate-500">{t('sessions.noMoreTime')}</span> : null;
  }
  const chosen = choices.includes(minutes as (typeof CHOICES)[number]) ? minutes : choices[0]!;
  const price = { unit: session.unit, gpus: session.gpus, centsPerGpuHour: session.centsPerGpuHour };
  const added = jobReservation({ ...price, walltimeSeconds: session.walltimeSeconds + chosen * 60 }) - jobReservation({ ...price, walltimeSeconds: session.walltimeSeconds });
  const cost = session.unit === 'cents' ? formatEuros(locale, added) : formatGpuHours(locale, added);

  async function onExtend() {
    setError(null);
    try {
      await extend.mutateAsync({ jobId: session.id, minutes: chosen });
      await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.session.list.queryKey() }), queryClient.invalidateQueries({ queryKey: trpc.session.get.queryKey({ jobId: session.id }) })]);
    } catch (e) {
      // The one control shows every refusal as its message (the field it names is this one).
      setError(formErrors(e, []).message ?? null);
    }
  }

  return (
    <div className="flex flex-wrap items-center gap-2" data-testid="session-extend">
      <label htmlFor={id} className="sr-only">
        {t('sessions.extendBy')}
      </label>
      <select id={id} value={chosen} onChange={(e) => setMinutes(Number(e.target.value))} className="text-sm" aria-describedby={`${id}-cost`}>
        {choices.map((m) => (
          <option key={m} value={m}>
            {t('sessions.extendOption', { minutes: m })}
          </option>
        ))}
      </select>
      <Button variant="secondary" onClick={() => void onExtend()} disabled={extend.isPending}>
        {extend.isPending ? t('sessions.extending') : t('sessions.extend')}
      </Button>
      <span id={`${id}-cost`} className="text-xs text-slate-500">
        {t('sessions.extendCost', { cost })}
      </span>
      {error && (
        <p role="alert" className="w-full text-sm text-red-700">
          {error}
        </p>
      )}
    </div>
  );
}
