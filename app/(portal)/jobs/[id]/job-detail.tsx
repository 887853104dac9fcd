'use client';
import { ServiceSnippets } from '~/app/_components/service-snippets';
// One job: state, pending reason in plain words, resources by name, usage and run time in the
// cluster's time, the whole footprint (the figures frozen at settlement, which the usage page and
// invoices use), efficiency, a service's endpoint and traffic, the timeline, output; cancel (after a
// confirm step) or stop, and submit again.
import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState, type ReactNode } from 'react';
import { useT } from '~/app/_components/i18n';
import { ArrayCounts } from '~/app/_components/array-counts';
import { JobStateBadge } from '~/app/_components/job-state-badge';
import { Alert, Button, Card, PageHeader } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formatAmount, formatCo2eKg, formatCount, formatDateTime, formatDuration, formatEuros, formatGpuHours, formatKwh, formatPercent } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';
import type { RouterOutputs } from '~/app/_lib/types';
import { cancelWording } from '~/server/i18n/cancel-wording';
import { exitWording } from '~/server/i18n/exit-wording';
import { exitStatus } from '~/server/core/jobs/exit-status';
import { Co2eSaved } from './co2e-saved';
import { ConfirmDialog } from '~/app/_components/confirm-dialog';
import { JobFiles } from './job-files';
import { JobLog } from './job-log';
import { SessionPanel } from './session-panel';

type Job = RouterOutputs['job']['get'];
const ACTIVE = ['SUBMITTING', 'PENDING', 'RUNNING'];

/** One figure: a number keeps to one line; a text (`wrap`: names, image, nodes) breaks where it must. */
function Row({ label, children, testId, wrap = false }: { label: ReactNode; children: ReactNode; testId?: string; wrap?: boolean }) {
  return (
    <div className="flex justify-between gap-4">
      <dt className={wrap ? 'shrink-0 text-slate-500' : 'min-w-0 text-slate-500'}>{label}</dt>
      <dd className={wrap ? 'min-w-0 text-right break-words' : 'shrink-0 text-right whitespace-nowrap tabular-nums'} data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/** The timeline with each state once: a state's later events (a new pending reason, a cancel request, settlement) are listed under it. */
function byState(events: Job['events']): { state: Job['events'][number]['state']; events: Job['events'] }[] {
  const groups = new Map<string, { state: Job['events'][number]['state']; events: Job['events'] }>();
  for (const e of events) {
    const group = groups.get(e.state) ?? { state: e.state, events: [] };
    group.events.push(e);
    groups.set(e.state, group);
  }
  return [...groups.values()];
}

export function JobDetail({ jobId }: { jobId: string }) {
  const { t, has, locale, timeZone } = useT();
  const trpc = useTRPC();
  const [confirming, setConfirming] = useState(false);
  const query = useQuery({ ...trpc.job.get.queryOptions({ jobId }), refetchInterval: (q) => (q.state.data && !ACTIVE.includes(q.state.data.state) ? false : 1500) });
  const cancel = useMutation(trpc.job.cancel.mutationOptions({ onSuccess: () => void query.refetch() }));
  const job = query.data;
  if (!job) return <p className="text-sm text-slate-500">{t('common.working')}</p>;
  const active = ACTIVE.includes(job.state);
  const stopping = job.kind === 'inference' && job.state === 'RUNNING';
  const wording = cancelWording(job.kind, job.state);
  const reasonKey = job.pendingReason ? `pendingReason.${job.pendingReason}` : '';
  const reasonText = has(reasonKey) ? t(reasonKey) : job.pendingReason;
  const settled = job.settledAt !== null;
  const dash = '—';
  const eff = job.efficiency;
  const exit = exitWording(job.exitStatus);
  return (
    <div className="space-y-6">
      <PageHeader
        title={<span className="break-words">{job.name}</span>}
        subtitle={
          <Link href={`/projects/${job.projectId}`} className="text-indigo-700 hover:underline">
            {job.projectTitle}
          </Link>
        }
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <JobStateBadge state={job.state} t={t} />
            {active && job.canCancel && (
              <Button variant="danger" disabled={cancel.isPending || job.cancelRequestedAt !== null} onClick={() => setConfirming(true)}>
                {job.cancelRequestedAt ? t('jobs.cancelling') : stopping ? t('jobs.stopService') : t('jobs.cancel')}
              </Button>
            )}
            {!active && job.kind === 'interactive' && (
              <Link href="/apps" className="rounded-md bg-white px-3 py-2 text-sm font-medium text-slate-800 shadow-sm ring-1 ring-slate-300 hover:bg-slate-50">
                {t('sessions.startAnother')}
              </Link>
            )}
            {!active && job.kind !== 'interactive' && (
              <Link href={`/jobs/new?clone=${job.id}`} className="rounded-md bg-white px-3 py-2 text-sm font-medium text-slate-800 shadow-sm ring-1 ring-slate-300 hover:bg-slate-50" data-testid="job-clone">
                {t('jobs.clone')}
              </Link>
            )}
          </div>
        }
      />
      <ConfirmDialog
        open={confirming}
        title={t(wording.title)}
        confirmLabel={t(wording.confirm)}
        cancelLabel={t(wording.keep)}
        onClose={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false);
          cancel.mutate({ jobId });
        }}
      >
        {t(wording.text)}
      </ConfirmDialog>
      {cancel.error && <Alert tone="error">{formErrors(cancel.error, []).message}</Alert>}
      {job.kind === 'interactive' && <SessionPanel jobId={job.id} />}
      {job.waitingForScheduler && (
        <Alert tone="warning" title={t('jobs.schedulerUnreachable')}>
          <span data-testid="waiting-for-scheduler">{t('job.waitingForScheduler')}</span>
        </Alert>
      )}
      {job.state === 'PENDING' && reasonText && (
        <Alert tone="info" title={t('jobs.whyWaiting')}>
          <span data-testid="pending-reason">{reasonText}</span>
        </Alert>
      )}
      {stopping && <Alert tone="info">{t('jobs.inferenceRunning')}</Alert>}
      {job.inference && (
        <Card title={t('jobs.service')}>
          <dl className="grid gap-3 text-sm sm:grid-cols-2 lg:grid-cols-4" data-testid="job-service">
            <div className="min-w-0 sm:col-span-2">
              <dt className="text-slate-500">{t('jobs.endpoint')}</dt>
              <dd className="font-mono text-xs break-all" data-testid="job-endpoint">{job.inference.endpointUrl}</dd>
            </div>
            <div className="min-w-0 sm:col-span-2">
              <dt className="text-slate-500">{t('jobs.serviceModel')}</dt>
              <dd className="font-mono text-xs break-all" data-testid="job-model">{job.inference.model}</dd>
            </div>
            <div>
              <dt className="text-slate-500">{t('jobs.requestsServed')}</dt>
              <dd className="tabular-nums" data-testid="job-requests">{formatCount(locale, job.inference.requests)}</dd>
            </div>
            <div>
              <dt className="text-slate-500">{t('jobs.tokensServed')}</dt>
              <dd className="tabular-nums" data-testid="job-tokens">{formatCount(locale, job.inference.tokens)}</dd>
            </div>
          </dl>
          <p className="mt-3 text-sm text-slate-700">{t('jobs.serviceHowTo')}</p>
          <ServiceSnippets endpointUrl={job.inference.endpointUrl} model={job.inference.model} />
          <p className="mt-3 text-xs text-slate-500">{t('jobs.serviceTraffic')}</p>
        </Card>
      )}
      <div className="grid gap-6 md:grid-cols-2">
        <Card title={t('jobs.resources')}>
          <dl className="space-y-2 text-sm">
            <Row wrap label={t('jobs.kind')}>{t(`jobKind.${job.kind}`)}</Row>
            <Row wrap label={t('application.resourceClass')} testId="job-resource-class">{job.resourceClassName}</Row>
            <Row wrap label={t('jobs.site')} testId="job-site">{job.siteName}</Row>
            <Row wrap label={t('jobs.gpus')} testId="job-gpus">
              <span data-value={job.gpus}>{job.gpus}</span> × {job.gpuModel} ({t('jobs.nodeCount', { nodes: job.nodes })})
            </Row>
            <Row label={t('jobs.walltimeRequested')}>
              {formatDuration(job.walltimeSeconds)}
              {job.array ? ` ${t('jobs.array.perTask')}` : ''}
            </Row>
            {job.beginAt && (
              <Row label={t('jobs.beginAt')} testId="job-begin">
                {formatDateTime(locale, new Date(job.beginAt), timeZone)}
              </Row>
            )}
            {job.dependency && (
              <Row wrap label={t('jobs.after.waitsFor')} testId="job-after">
                <span data-type={job.dependency.type}>
                  {job.dependencyJobs.map((d, i) => (
                    <span key={d.id}>
                      {i > 0 && ', '}
                      <Link href={`/jobs/${d.id}`} className="text-indigo-700 underline">
                        {d.name}
                      </Link>{' '}
                      ({t(`jobState.${d.state}`)})
                    </span>
                  ))}{' '}
                  — {t(`jobs.after.once.${job.dependency.type}`, { count: job.dependency.jobIds.length })}
                </span>
              </Row>
            )}
            {job.runAsUser && (
              <Row wrap label={t('jobs.runsAs')} testId="job-runs-as">
                <span className="font-mono text-xs break-all">
                  {t('jobs.runsAsValue', { user: job.runAsUser, group: job.runAsGroup ?? dash })}
                </span>
              </Row>
            )}
            <Row wrap label={t('jobs.nodeList')}>
              <span className="font-mono text-xs break-all">{job.nodeList?.join(', ') || dash}</span>
            </Row>
            {!active && (
              <Row wrap label={t('jobs.exitStatus')} testId="job-exit">
                <span data-exit-code={job.exitCode ?? ''} data-signal={job.exitSignal ?? ''}>{t(exit.key, exit.params)}</span>
              </Row>
            )}
            <Row wrap label={t('jobs.image')}>
              <span className="font-mono text-xs break-all">{job.image}</span>
            </Row>
          </dl>
        </Card>
        <Card title={t('jobs.usage')}>
          <dl className="space-y-2 text-sm">
            <Row label={t('jobs.reserved')}>{formatAmount(locale, job.reservedUnit, job.reservedAmount)}</Row>
            <Row label={active ? t('jobs.gpuHoursSoFar') : t('jobs.gpuHours')} testId="job-gpu-hours">
              {job.gpuSeconds !== null ? formatGpuHours(locale, job.gpuSeconds) : dash}
            </Row>
            <Row label={settled ? t('jobs.cost') : t('jobs.costSoFar')} testId="job-cost">
              {job.costSoFarCents !== null ? formatEuros(locale, job.costSoFarCents) : dash}
            </Row>
            {settled && job.chargedAmount !== null && (
              <Row label={t('jobs.charged')} testId="job-charged">
                {formatAmount(locale, job.reservedUnit, job.chargedAmount)}
              </Row>
            )}
            {job.estimate && typeof job.estimate.runtimeSeconds === 'number' && <Row label={t('jobs.estimatedRuntime')}>{formatDuration(job.estimate.runtimeSeconds)}</Row>}
            {eff && (
              <Row label={active ? t('jobs.runtimeSoFar') : t('jobs.runtimeCluster')} testId="job-runtime">
                <span data-seconds={eff.runSeconds}>{formatDuration(eff.runSeconds)}</span>
              </Row>
            )}
          </dl>
        </Card>
        <Card title={t('jobs.footprint')}>
          <dl className="space-y-2 text-sm" data-testid="job-footprint">
            <Row label={t('usage.itEnergy')} testId="job-it-energy">
              {job.energyWh !== null ? `${formatKwh(locale, job.energyWh)} (${job.energyMeasured ? t('jobs.measured') : t('jobs.modelled')})` : dash}
            </Row>
            <Row label={t('jobs.pue')} testId="job-pue">
              {job.site ? new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 3 }).format(job.site.pueMilli / 1000) : dash}
            </Row>
            <Row label={t('usage.facilityEnergy')} testId="job-facility-energy">
              {job.facilityEnergyWh !== null ? formatKwh(locale, job.facilityEnergyWh) : dash}
            </Row>
            <Row label={t('usage.heatReused')} testId="job-heat-reused">
              {job.heatReusedWh !== null ? formatKwh(locale, job.heatReusedWh) : dash}
            </Row>
            <Row label={t('usage.co2e')} testId="job-co2e">
              {job.co2eGrams !== null ? formatCo2eKg(locale, job.co2eGrams) : dash}
            </Row>
          </dl>
          {!settled && <p className="mt-3 text-xs text-slate-500">{t('jobs.footprintSoFar')}</p>}
          <Co2eSaved saved={job.co2eSaved} />
        </Card>
        {/* An array's run time and utilisation are per task: its tasks' rows show them. */}
        {!job.array && (
          <Card title={t('jobs.efficiency')}>
            <dl className="space-y-3 text-sm" data-testid="job-efficiency">
              <div>
                <dt className="text-slate-500">{t('jobs.meanGpuUtil')}</dt>
                <dd className="text-lg font-semibold tabular-nums" data-testid="job-gpu-util">
                  {eff?.meanGpuUtilPercent != null ? formatPercent(locale, eff.meanGpuUtilPercent / 100) : dash}
                </dd>
                <dd className="text-xs text-slate-500">{t('jobs.meanGpuUtilHint')}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{active ? t('jobs.runtimeSoFar') : t('jobs.runtimeCluster')}</dt>
                <dd className="text-lg font-semibold tabular-nums">{eff ? formatDuration(eff.runSeconds) : dash}</dd>
                <dd className="text-xs text-slate-500" data-testid="job-walltime-used">
                  {t('jobs.walltimeUsed', { percent: formatPercent(locale, (eff?.walltimeUsedPercent ?? 0) / 100), walltime: formatDuration(job.walltimeSeconds) })}
                </dd>
              </div>
            </dl>
          </Card>
        )}
      </div>
      {job.array && <ArrayTasks array={job.array} />}
      <Card title={t('jobs.timeline')}>
        <ol className="space-y-3 border-l border-slate-200 pl-4 text-sm" data-testid="timeline">
          {byState(job.events).map((group) => (
            <li key={group.state} className="relative" data-testid="timeline-state">
              <span className="absolute top-1.5 -left-[1.32rem] h-2 w-2 rounded-full bg-indigo-500" aria-hidden />
              <p className="font-medium">{t(`jobState.${group.state}`)}</p>
              <ul className="mt-1 space-y-1">
                {group.events.map((e) => {
                  const data = (e.data ?? {}) as { reason?: string };
                  const reason = data.reason && has(`pendingReason.${data.reason}`) ? t(`pendingReason.${data.reason}` as 'pendingReason.Priority') : (data.reason ?? '');
                  // The event's own figures (a session's idle minutes, a dependency's type) fill its text; the reason in words.
                  const params = Object.fromEntries(Object.entries(e.data ?? {}).filter((entry): entry is [string, string | number] => typeof entry[1] === 'string' || typeof entry[1] === 'number'));
                  return (
                    <li key={e.id} className="flex flex-wrap justify-between gap-x-3 text-slate-600">
                      <span>{e.message && has(e.message) ? t(e.message, { ...params, reason }) : e.message}</span>
                      <span className="text-xs text-slate-500">{formatDateTime(locale, new Date(e.at), timeZone)}</span>
                    </li>
                  );
                })}
              </ul>
            </li>
          ))}
        </ol>
      </Card>
      <Card title={t('jobs.output')}>
        <JobLog jobId={job.id} queued={job.state === 'PENDING' || job.state === 'SUBMITTING'} tasks={job.array ? job.array.list.map((task) => task.index) : null} />
        {job.outputLocation && (
          <p className="mt-3 text-xs text-slate-500" data-testid="job-output-location">
            {t('jobs.outputOnCluster')} <code className="font-mono break-all">{job.outputLocation}</code>
          </p>
        )}
      </Card>
      <Card title={t('files.jobFolder')}>
        <JobFiles jobId={job.id} active={active} />
      </Card>
      <Card title={t('jobs.command')}>
        <pre className="max-h-64 overflow-auto rounded-md bg-slate-50 p-3 font-mono text-xs whitespace-pre-wrap break-all">{job.command}</pre>
      </Card>
    </div>
  );
}

/** A job array's tasks: how many are in each state, and the tasks that started with their figures. */
function ArrayTasks({ array }: { array: NonNullable<Job['array']> }) {
  const { t, locale, timeZone } = useT();
  const dash = '—';
  return (
    <Card title={t('jobs.array.title')}>
      <div className="space-y-3 text-sm" data-testid="job-array">
        <p className="text-slate-700">
          {t('jobs.array.summary', { tasks: array.tasks, text: array.text })}
          {array.throttle !== null && `, ${t('jobs.array.throttle', { throttle: array.throttle })}`}
        </p>
        <ArrayCounts counts={array.counts} t={t} locale={locale} />
        {array.list.length === 0 ? (
          <p className="text-slate-500">{t('jobs.array.none')}</p>
        ) : (
          <div className="max-h-96 overflow-auto rounded-md ring-1 ring-slate-200" tabIndex={0} aria-label={t('jobs.array.title')}>
            <table className="min-w-full text-sm" data-testid="job-array-tasks">
              <thead className="sticky top-0 bg-slate-50 text-left text-xs text-slate-500">
                <tr>
                  <th className="px-3 py-2 font-medium">{t('jobs.array.task')}</th>
                  <th className="px-3 py-2 font-medium">{t('staff.tenants.status')}</th>
                  <th className="px-3 py-2 font-medium">{t('job.event.started')}</th>
                  <th className="px-3 py-2 font-medium">{t('job.event.finished')}</th>
                  <th className="px-3 py-2 font-medium">{t('jobs.exitStatus')}</th>
                  <th className="px-3 py-2 text-right font-medium">{t('jobs.gpuHours')}</th>
                  <th className="px-3 py-2 text-right font-medium">{t('jobs.cost')}</th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {array.list.map((task) => {
                  const running = task.state === 'RUNNING' || task.state === 'PENDING';
                  const exit = exitWording(exitStatus(task.exitCode, task.exitSignal));
                  return (
                    <tr key={task.index} data-testid="job-array-task" data-index={task.index}>
                      <td className="px-3 py-1.5 font-mono tabular-nums">{task.index}</td>
                      <td className="px-3 py-1.5">
                        <JobStateBadge state={task.state} t={t} />
                      </td>
                      <td className="px-3 py-1.5 whitespace-nowrap text-slate-600">{task.startedAt ? formatDateTime(locale, new Date(task.startedAt), timeZone) : dash}</td>
                      <td className="px-3 py-1.5 whitespace-nowrap text-slate-600">{task.endedAt ? formatDateTime(locale, new Date(task.endedAt), timeZone) : dash}</td>
                      <td className="px-3 py-1.5 whitespace-nowrap text-slate-600">{running ? dash : t(exit.key, exit.params)}</td>
                      <td className="px-3 py-1.5 text-right tabular-nums">{formatGpuHours(locale, task.gpuSeconds)}</td>
                      <td className="px-3 py-1.5 text-right tabular-nums">{task.costCents !== null ? formatEuros(locale, task.costCents) : dash}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        {array.started > array.list.length && <p className="text-xs text-slate-500">{t('jobs.array.shown', { shown: array.list.length, started: array.started })}</p>}
      </div>
    </Card>
  );
}

