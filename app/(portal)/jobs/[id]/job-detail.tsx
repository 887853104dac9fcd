'use client';
// One job: state, pending reason in plain words, timeline, resources, usage, energy, cost, output; cancel.
import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useT } from '~/app/_components/i18n';
import { JobStateBadge } from '~/app/_components/job-state-badge';
import { Alert, Button, Card, PageHeader } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formatAmount, formatDateTime, formatEuros, formatGpuHours } from '~/app/_lib/format';
import { useTRPC } from '~/app/_lib/trpc';
import { isMessageKey } from '~/server/i18n';

const ACTIVE = ['SUBMITTING', 'PENDING', 'RUNNING'];

function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : `${m} min ${seconds % 60} s`;
}

export function JobDetail({ jobId }: { jobId: string }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.job.get.queryOptions({ jobId }), refetchInterval: (q) => (q.state.data && !ACTIVE.includes(q.state.data.state) ? false : 1500) });
  const cancel = useMutation(trpc.job.cancel.mutationOptions({ onSuccess: () => void query.refetch() }));
  const job = query.data;
  if (!job) return <p className="text-sm text-slate-500">{t('common.working')}</p>;
  const active = ACTIVE.includes(job.state);
  const reasonKey = job.pendingReason ? `pendingReason.${job.pendingReason}` : '';
  const reasonText = isMessageKey(reasonKey) ? t(reasonKey) : job.pendingReason;
  const kwh = (wh: number) => `${new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(wh / 1000)} kWh`;
  return (
    <div className="space-y-6">
      <PageHeader
        title={job.name}
        subtitle={
          <Link href={`/projects/${job.projectId}`} className="text-indigo-700 hover:underline">
            {job.projectTitle}
          </Link>
        }
        actions={
          <div className="flex items-center gap-3">
            <JobStateBadge state={job.state} t={t} />
            {active && job.canCancel && (
              <Button variant="danger" disabled={cancel.isPending || job.cancelRequestedAt !== null} onClick={() => cancel.mutate({ jobId })}>
                {job.cancelRequestedAt ? t('jobs.cancelling') : job.kind === 'inference' && job.state === 'RUNNING' ? t('jobs.stopService') : t('jobs.cancel')}
              </Button>
            )}
          </div>
        }
      />
      {cancel.error && <Alert tone="error">{formErrors(cancel.error, []).message}</Alert>}
      {job.state === 'PENDING' && reasonText && (
        <Alert tone="info" title={t('jobs.whyWaiting')}>
          <span data-testid="pending-reason">{reasonText}</span>
        </Alert>
      )}
      {job.kind === 'inference' && job.state === 'RUNNING' && <Alert tone="info">{t('jobs.inferenceRunning')}</Alert>}
      <div className="grid gap-6 lg:grid-cols-3">
        <Card title={t('jobs.resources')}>
          <dl className="space-y-2 text-sm">
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.kind')}</dt><dd>{t(`jobKind.${job.kind}`)}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('application.resourceClass')}</dt><dd>{job.resourceClassId}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.site')}</dt><dd data-testid="job-site">{job.siteId}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.gpus')}</dt><dd>{job.gpus} ({job.nodes} {t('jobs.nodesShort')})</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.walltime')}</dt><dd>{duration(job.walltimeSeconds)}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.nodeList')}</dt><dd className="text-right font-mono text-xs">{job.nodeList?.join(', ') || '—'}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.image')}</dt><dd className="truncate font-mono text-xs">{job.image}</dd></div>
          </dl>
        </Card>
        <Card title={t('jobs.usage')}>
          <dl className="space-y-2 text-sm">
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.reserved')}</dt><dd className="tabular-nums">{formatAmount(locale, job.reservedUnit, job.reservedAmount)}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{active ? t('jobs.gpuHoursSoFar') : t('jobs.gpuHours')}</dt><dd className="tabular-nums" data-testid="job-gpu-hours">{job.gpuSeconds !== null ? formatGpuHours(locale, job.gpuSeconds) : '—'}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.energy')}</dt><dd className="tabular-nums">{job.energyWh !== null ? `${kwh(job.energyWh)} (${job.energyMeasured ? t('jobs.measured') : t('jobs.modelled')})` : '—'}</dd></div>
            <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.cost')}</dt><dd className="tabular-nums" data-testid="job-cost">{job.costCents !== null ? formatEuros(locale, job.costCents) : '—'}</dd></div>
            {job.settledAt && job.chargedAmount !== null && (
              <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.charged')}</dt><dd className="tabular-nums" data-testid="job-charged">{formatAmount(locale, job.reservedUnit, job.chargedAmount)}</dd></div>
            )}
            {job.estimate && typeof job.estimate.runtimeSeconds === 'number' && (
              <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.estimatedRuntime')}</dt><dd>{duration(job.estimate.runtimeSeconds)}</dd></div>
            )}
            {job.startedAt && (
              <div className="flex justify-between gap-4"><dt className="text-slate-500">{t('jobs.runtime')}</dt><dd>{duration(Math.round(((job.endedAt ? new Date(job.endedAt).getTime() : Date.now()) - new Date(job.startedAt).getTime()) / 1000))}</dd></div>
            )}
          </dl>
        </Card>
        <Card title={t('jobs.timeline')}>
          <ol className="space-y-3 border-l border-slate-200 pl-4 text-sm" data-testid="timeline">
            {job.events.map((e) => {
              const data = (e.data ?? {}) as { reason?: string };
              const reason = data.reason && isMessageKey(`pendingReason.${data.reason}`) ? t(`pendingReason.${data.reason}` as 'pendingReason.Priority') : data.reason ?? '';
              return (
                <li key={e.id} className="relative">
                  <span className="absolute top-1.5 -left-[1.32rem] h-2 w-2 rounded-full bg-indigo-500" aria-hidden />
                  <p className="font-medium">{t(`jobState.${e.state}`)}</p>
                  <p className="text-slate-600">{e.message && isMessageKey(e.message) ? t(e.message, { reason }) : e.message}</p>
                  <p className="text-xs text-slate-500">{formatDateTime(locale, new Date(e.at))}</p>
                </li>
              );
            })}
          </ol>
        </Card>
      </div>
      <Card title={t('jobs.output')}>
        <pre className="max-h-96 overflow-auto rounded-md bg-slate-900 p-4 font-mono text-xs text-slate-100" data-testid="job-output">{job.output.join('\n')}</pre>
        <p className="mt-2 text-xs text-slate-500">{t('jobs.outputNote')}</p>
      </Card>
      <Card title={t('jobs.command')}>
        <pre className="max-h-64 overflow-auto rounded-md bg-slate-50 p-3 font-mono text-xs whitespace-pre-wrap">{job.command}</pre>
      </Card>
    </div>
  );
}
