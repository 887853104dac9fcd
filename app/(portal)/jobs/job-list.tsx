'use client';
// Active and finished jobs in one view, with filters; states update live without reloading.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { ArrayCounts } from '~/app/_components/array-counts';
import { JobStateBadge } from '~/app/_components/job-state-badge';
import { Card, Table, Td, Th, cx } from '~/app/_components/ui';
import { formatDateTime, formatEuros, formatGpuHours } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';

type Status = 'all' | 'active' | 'finished';
type Kind = 'training' | 'fine_tuning' | 'inference' | 'batch' | 'interactive';

export function JobList({ projects }: { projects: { id: string; title: string }[] }) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const [status, setStatus] = useState<Status>('all');
  const [projectId, setProjectId] = useState('');
  const [kind, setKind] = useState<Kind | ''>('');
  const query = useQuery({
    ...trpc.job.list.queryOptions({ status, projectId: projectId || undefined, kind: kind || undefined, limit: 200 }),
    refetchInterval: 2000,
  });
  const jobs = query.data ?? [];
  const projectTitle = (id: string) => projects.find((p) => p.id === id)?.title ?? '';
  return (
    <Card>
      <div className="mb-4 flex flex-wrap items-end gap-4">
        <div role="group" aria-label={t('jobs.filterStatus')} className="flex gap-1">
          {(['all', 'active', 'finished'] as const).map((s) => (
            <button key={s} type="button" aria-pressed={status === s} onClick={() => setStatus(s)} className={cx('rounded-full px-3 py-1 text-sm ring-1', status === s ? 'bg-indigo-600 text-white ring-indigo-600' : 'bg-white text-slate-700 ring-slate-300 hover:bg-slate-50')}>
              {t(`jobs.filter.${s}`)}
            </button>
          ))}
        </div>
        <label className="w-full text-sm sm:w-auto">
          <span className="block font-medium text-slate-800">{t('review.project')}</span>
          <select value={projectId} onChange={(e) => setProjectId(e.target.value)} className={`${inputClass} w-full sm:w-64`}>
            <option value="">{t('common.all')}</option>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.title}
              </option>
            ))}
          </select>
        </label>
        <label className="w-full text-sm sm:w-auto">
          <span className="block font-medium text-slate-800">{t('jobs.kind')}</span>
          <select value={kind} onChange={(e) => setKind(e.target.value as Kind | '')} className={`${inputClass} w-full sm:w-48`}>
            <option value="">{t('common.all')}</option>
            {(['training', 'fine_tuning', 'inference', 'batch', 'interactive'] as const).map((k) => (
              <option key={k} value={k}>
                {t(`jobKind.${k}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {query.isLoading ? (
        <p className="text-sm text-slate-500">{t('common.working')}</p>
      ) : jobs.length === 0 ? (
        <p className="text-sm text-slate-600">{t('jobs.empty')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('jobs.name')}</Th>
              <Th>{t('staff.tenants.status')}</Th>
              <Th>{t('review.project')}</Th>
              <Th>{t('jobs.resources')}</Th>
              <Th>{t('review.submitted')}</Th>
              <Th className="text-right">{t('jobs.gpuHours')}</Th>
              <Th className="text-right">{t('jobs.cost')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {jobs.map((j) => (
              <tr key={j.id} data-testid="job-row">
                <Td>
                  <Link href={`/jobs/${j.id}`} className="font-medium text-indigo-700 hover:underline">
                    {j.name}
                  </Link>
                  <span className="block text-xs text-slate-500">{t(`jobKind.${j.kind}`)}</span>
                </Td>
                <Td>
                  <JobStateBadge state={j.state} t={t} />
                  {j.array && (
                    <span className="mt-1 block" data-testid="job-row-array">
                      <span className="mr-1 text-xs text-slate-500">{t('jobs.array.badge', { tasks: j.array.tasks })}:</span>
                      <ArrayCounts counts={j.array.counts} t={t} locale={locale} />
                    </span>
                  )}
                </Td>
                <Td className="text-slate-700">{projectTitle(j.projectId)}</Td>
                <Td className="whitespace-nowrap text-slate-700">
                  {j.gpus} GPU · {j.resourceClassName}
                </Td>
                <Td className="whitespace-nowrap text-slate-600">{formatDateTime(locale, j.submittedAt, timeZone)}</Td>
                <Td className="text-right tabular-nums">{j.gpuSeconds !== null ? formatGpuHours(locale, j.gpuSeconds) : '—'}</Td>
                <Td className="text-right tabular-nums">{j.costCents !== null ? formatEuros(locale, j.costCents) : '—'}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Card>
  );
}
