'use client';
// Interactive sessions (issue #28): the start form with its cost estimate, and the person's sessions
// as they go Starting → Running (Open) → Ended, with the time left; updated live.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useMemo, useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { JobStateBadge } from '~/app/_components/job-state-badge';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';
import { SessionExtend } from './session-extend';
import type { RouterOutputs } from '~/app/_lib/types';
import { formatDateTime, formatDuration, formatEuros, formatGpuHours } from '~/server/i18n/format';

type Targets = RouterOutputs['job']['targets'];
type Apps = RouterOutputs['session']['apps'];

const FIELDS = ['allocationId', 'resourceClassId', 'app', 'gpus', 'walltimeMinutes', 'idleTimeoutMinutes'] as const;

export function SessionsView({ targets, apps }: { targets: Targets; apps: Apps }) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [allocationId, setAllocationId] = useState(targets.allocations[0]?.id ?? '');
  const allocation = targets.allocations.find((a) => a.id === allocationId);
  const classes = useMemo(() => targets.resourceClasses.filter((rc) => !allocation?.resourceClassId || rc.id === allocation.resourceClassId), [targets, allocation]);
  const [resourceClassId, setResourceClassId] = useState(classes[0]?.id ?? '');
  const rc = classes.find((c) => c.id === resourceClassId) ?? classes[0];
  const [app, setApp] = useState(apps[0]?.id ?? 'jupyter');
  const [gpus, setGpus] = useState('1');
  const [hours, setHours] = useState('2');
  const [idle, setIdle] = useState('30');
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const walltimeMinutes = Math.round(Number(hours) * 60);
  const gpuCount = Number(gpus);
  const estimate = useQuery({
    ...trpc.job.estimate.queryOptions({ allocationId, resourceClassId: rc?.id ?? '', gpus: gpuCount || 1, nodes: 1, walltimeMinutes: Math.max(1, walltimeMinutes || 1) }),
    enabled: Boolean(allocationId && rc) && gpuCount > 0 && walltimeMinutes > 0,
    retry: false,
    placeholderData: (previous) => previous,
  });
  const sessions = useQuery({ ...trpc.session.list.queryOptions({}), refetchInterval: 2000 });
  const start = useMutation(trpc.session.start.mutationOptions());
  const end = useMutation(trpc.session.end.mutationOptions());
  const [key, setKey] = useState(() => crypto.randomUUID());

  async function onStart(e: React.FormEvent) {
    e.preventDefault();
    setErrors({ fields: {} });
    try {
      await start.mutateAsync({ allocationId, resourceClassId: rc?.id ?? '', app, gpus: gpuCount, walltimeMinutes, idleTimeoutMinutes: Number(idle), idempotencyKey: key });
      setKey(crypto.randomUUID());
      await queryClient.invalidateQueries({ queryKey: trpc.session.list.queryKey() });
    } catch (error) {
      setErrors(formErrors(error, FIELDS));
    }
  }

  if (targets.allocations.length === 0) return <Alert tone="info">{t('sessions.noAllocation')}</Alert>;
  const figures = estimate.data;
  return (
    <div className="space-y-6">
      <Card title={t('sessions.startTitle')}>
        <form onSubmit={onStart} className="space-y-4" noValidate>
          <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
            <Field label={t('sessions.allocation')} error={errors.fields.allocationId}>
              <select value={allocationId} onChange={(e) => setAllocationId(e.target.value)}>
                {targets.allocations.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.projectTitle}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('sessions.resourceClass')} error={errors.fields.resourceClassId}>
              <select value={rc?.id ?? ''} onChange={(e) => setResourceClassId(e.target.value)}>
                {classes.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name} · {c.gpuModel}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('sessions.app')} error={errors.fields.app}>
              <select value={app} onChange={(e) => setApp(e.target.value as typeof app)}>
                {apps.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('sessions.gpus')} error={errors.fields.gpus} hint={rc ? t('sessions.gpusHint', { max: rc.gpusPerNode }) : undefined}>
              <input type="number" min={1} max={rc?.gpusPerNode ?? 8} step={1} inputMode="numeric" value={gpus} onChange={(e) => setGpus(e.target.value)} />
            </Field>
            <Field label={t('sessions.hours')} error={errors.fields.walltimeMinutes} hint={t('sessions.hoursHint')}>
              <input type="number" min={0.25} step={0.25} inputMode="decimal" value={hours} onChange={(e) => setHours(e.target.value)} />
            </Field>
            <Field label={t('sessions.idle')} error={errors.fields.idleTimeoutMinutes} hint={t('sessions.idleHint')}>
              <input type="number" min={5} max={1440} step={5} inputMode="numeric" value={idle} onChange={(e) => setIdle(e.target.value)} />
            </Field>
          </div>
          {figures && (
            <p className="text-sm text-slate-700" data-testid="session-estimate">
              {t('sessions.estimate', {
                gpuHours: formatGpuHours(locale, figures.reservedGpuSeconds),
                cost: formatEuros(locale, figures.maxCostCents),
              })}
            </p>
          )}
          {figures && figures.shortfalls.length > 0 && <Alert tone="warning">{t('sessions.wouldBeRefused')}</Alert>}
          {errors.message && <Alert tone="error">{errors.message}</Alert>}
          <Button type="submit" disabled={start.isPending}>
            {start.isPending ? t('sessions.starting') : t('sessions.start')}
          </Button>
        </form>
      </Card>

      <Card title={t('sessions.mine')}>
        {(sessions.data ?? []).length === 0 ? (
          <p className="text-sm text-slate-600">{t('sessions.none')}</p>
        ) : (
          <ul className="divide-y divide-slate-200">
            {(sessions.data ?? []).map((s) => (
              <li key={s.id} className="flex flex-wrap items-center justify-between gap-3 py-3" data-testid="session-row" data-state={s.state} data-ready={s.ready ? 'true' : 'false'}>
                <div className="min-w-0 space-y-1 text-sm">
                  <div className="flex flex-wrap items-center gap-2">
                    <Link href={`/jobs/${s.id}`} className="font-medium text-indigo-700 hover:underline">
                      {s.appName}
                    </Link>
                    <JobStateBadge state={s.state} t={t} />
                    {s.state === 'RUNNING' && !s.ready && !s.cancelRequested && <span className="text-xs text-slate-500">{t('sessions.appStarting')}</span>}
                    {s.cancelRequested && s.state === 'RUNNING' && <span className="text-xs text-slate-500">{t('sessions.ending')}</span>}
                  </div>
                  <p className="text-xs text-slate-500">
                    {t('sessions.gpusOf', { count: s.gpus })} · {s.resourceClassName} · {t('sessions.startedAt', { at: formatDateTime(locale, s.submittedAt, timeZone) })}
                    {s.endsAt && s.state === 'RUNNING' && <> · {timeLeft(s.endsAt, t)}</>}
                  </p>
                  <SessionExtend session={s} />
                </div>
                <div className="flex shrink-0 items-center gap-2">
                  {s.ready && (
                    <a href={s.url} target="_blank" rel="noopener" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
                      {t('sessions.open')}
                    </a>
                  )}
                  {(s.state === 'PENDING' || s.state === 'RUNNING' || s.state === 'SUBMITTING') && !s.cancelRequested && (
                    <Button variant="secondary" onClick={() => end.mutate({ jobId: s.id }, { onSettled: () => void queryClient.invalidateQueries({ queryKey: trpc.session.list.queryKey() }) })}>
                      {t('sessions.end')}
                    </Button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}

/** The time a running session has left until its walltime ends (on the cluster's clock, as the wall sees it). */
function timeLeft(endsAt: Date, t: ReturnType<typeof useT>['t']): string {
  const left = Math.max(0, Math.round((endsAt.getTime() - Date.now()) / 1000));
  return t('sessions.left', { duration: formatDuration(left) });
}
