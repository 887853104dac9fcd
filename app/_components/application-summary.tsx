// What an application asks for and what was decided: shared by the applicant's and the reviewer's pages.
import Link from 'next/link';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatBytes, formatDateTime, formatDay, formatGpuHours } from '~/server/i18n/format';
import { ApplicationStatusBadge } from './status-badges';
import { Card, Table, Td, Th } from './ui';

export interface ApplicationView {
  status: 'draft' | 'submitted' | 'changes_requested' | 'approved' | 'rejected';
  kind: 'new' | 'top_up' | 'renewal';
  modeName: string;
  projectTitle: string;
  orgName: string;
  orgKind: 'academic' | 'company';
  /** What the project said it is for: research its field, a company its workload and residency. */
  purpose: { fieldOfScience: string | null; workloadKind: 'training' | 'fine_tuning' | 'inference' | null; dataResidency: 'any' | 'EU' | 'DE' | null };
  reviewNote: { reason: 'instantOnceActive'; activeUntil: string } | null;
  targetDays: number;
  applicantName: string;
  periodStart: string;
  periodEnd: string;
  justification: string;
  submittedAt: Date | null;
  lines: { resourceClassId: string; name: string; gpuSeconds: number; storageGb: number }[];
  decisions: { id: string; outcome: 'approved' | 'rejected' | 'changes_requested'; comment: string; grantedLines: { resourceClassId: string; gpuSeconds: number; storageGb?: number }[] | null; decidedAt: Date; reviewerName: string | null }[];
  allocations: { id: string }[];
}

export function ApplicationSummary({ app, t, locale, timeZone, allocationHref }: { app: ApplicationView; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; timeZone: string; allocationHref: (id: string) => string }) {
  const gb = (gigabytes: number) => formatBytes(locale, gigabytes * 1_000_000_000);
  return (
    <div className="space-y-6">
      <Card title={t('application.summary')} actions={<ApplicationStatusBadge status={app.status} t={t} />}>
        <dl className="grid gap-4 text-sm sm:grid-cols-4">
          <div>
            <dt className="text-slate-500">{t('application.mode')}</dt>
            <dd className="mt-1 font-medium">{app.modeName}</dd>
          </div>
          <div>
            <dt className="text-slate-500">{t('application.kind')}</dt>
            <dd className="mt-1 font-medium">{t(`applicationKind.${app.kind}`)}</dd>
          </div>
          <div>
            <dt className="text-slate-500">{t('application.period')}</dt>
            <dd className="mt-1 font-medium">
              {formatDay(locale, app.periodStart)} – {formatDay(locale, app.periodEnd)}
            </dd>
          </div>
          <div>
            <dt className="text-slate-500">{t('application.applicant')}</dt>
            <dd className="mt-1 font-medium">
              {app.applicantName} ({app.orgName})
            </dd>
          </div>
        </dl>
        <div className="mt-4">
          <Table>
            <thead>
              <tr>
                <Th>{t('application.resourceClass')}</Th>
                <Th className="text-right">{t('application.requested')}</Th>
                <Th className="text-right">{t('application.storage')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {app.lines.map((l) => (
                <tr key={l.resourceClassId}>
                  <Td>{l.name}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, l.gpuSeconds)}</Td>
                  <Td className="text-right tabular-nums">{gb(l.storageGb)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
        {app.reviewNote && app.status === 'submitted' && (
          <p className="mt-4 rounded-md bg-sky-50 p-3 text-sm text-sky-900 ring-1 ring-sky-200" data-testid="review-note">
            <span className="font-semibold">{t('application.reviewNoteTitle')}: </span>
            {t('application.reviewNote.instantOnceActive', { mode: app.modeName, until: formatDay(locale, app.reviewNote.activeUntil), days: app.targetDays })}
          </p>
        )}
        <dl className="mt-4 grid gap-4 text-sm sm:grid-cols-4" data-testid="application-purpose">
          {app.orgKind === 'company' ? (
            <>
              <div>
                <dt className="text-slate-500">{t('application.workload')}</dt>
                <dd className="mt-1 font-medium">{app.purpose.workloadKind ? t(`workload.${app.purpose.workloadKind}`) : '—'}</dd>
              </div>
              <div className="sm:col-span-3">
                <dt className="text-slate-500">{t('application.dataResidency')}</dt>
                <dd className="mt-1 font-medium">{app.purpose.dataResidency ? t(`residency.${app.purpose.dataResidency}`) : '—'}</dd>
              </div>
            </>
          ) : (
            <div className="sm:col-span-4">
              <dt className="text-slate-500">{t('project.field')}</dt>
              <dd className="mt-1 font-medium">{app.purpose.fieldOfScience ?? '—'}</dd>
            </div>
          )}
        </dl>
        <h3 className="mt-6 text-sm font-semibold">{app.orgKind === 'company' ? t('application.workloadDescription') : t('application.justification')}</h3>
        <p className="mt-1 text-sm whitespace-pre-line text-slate-700">{app.justification}</p>
      </Card>
      {app.decisions.length > 0 && (
        <Card title={t('application.decisions')}>
          <ol className="space-y-4">
            {app.decisions.map((d) => (
              <li key={d.id} className="rounded-md p-4 ring-1 ring-slate-200" data-testid="decision">
                <p className="text-sm">
                  <span className="font-semibold">{t(`decisionOutcome.${d.outcome}`)}</span>
                  <span className="text-slate-500">
                    {' '}
                    · {d.reviewerName ?? t('application.instantReviewer')} · {formatDateTime(locale, d.decidedAt, timeZone)}
                  </span>
                </p>
                {d.grantedLines && (
                  <p className="mt-1 text-sm text-slate-700">
                    {t('application.granted')}:{' '}
                    {d.grantedLines
                      .map((g) => `${formatGpuHours(locale, g.gpuSeconds)}${g.storageGb === undefined ? '' : ` + ${t('application.grantedStorage', { size: gb(g.storageGb) })}`} (${app.lines.find((l) => l.resourceClassId === g.resourceClassId)?.name ?? g.resourceClassId})`)
                      .join(', ')}
                  </p>
                )}
                {d.comment && <blockquote className="mt-2 border-l-4 border-indigo-200 pl-3 text-sm text-slate-800">{d.comment}</blockquote>}
              </li>
            ))}
          </ol>
          {app.allocations.length > 0 && (
            <p className="mt-4 text-sm">
              {app.allocations.map((a) => (
                <Link key={a.id} href={allocationHref(a.id)} className="mr-4 font-medium text-indigo-700 hover:underline">
                  {t('application.viewAllocation')}
                </Link>
              ))}
            </p>
          )}
        </Card>
      )}
    </div>
  );
}
