import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ApplicantReviews } from '~/app/_components/applicant-reviews';
import { ApplicationForm } from '~/app/_components/application-form';
import { ApplicationSummary } from '~/app/_components/application-summary';
import { AllocationReport } from '~/app/_components/allocation-report';
import { Alert, Card, PageHeader } from '~/app/_components/ui';
import { lastUsableDay } from '~/server/core/mail/reminders';
import { formatDateTime, formatDay, formatGpuHours } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { ReportForm } from './report-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('application.title') };
}

export default async function ApplicationPage({ params }: { params: Promise<{ id: string }> }) {
  await requireUser();
  const { id } = await params;
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const app = await caller.application.get({ applicationId: id }).catch(() => undefined);
  if (!app) notFound();
  const latest = app.decisions[0];
  const editing = app.canEdit ? await Promise.all([caller.catalogue.accessModes(), caller.catalogue.resourceClasses(), caller.project.get({ projectId: app.projectId })]) : undefined;
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('application.title')}
        subtitle={
          <Link href={`/projects/${app.projectId}`} className="text-indigo-700 hover:underline">
            {app.projectTitle}
          </Link>
        }
      />
      {app.status === 'submitted' &&
        (app.roundCutoffAt ? (
          <Alert tone="info">{t('application.waitingInRound', { cutoff: formatDateTime(locale, app.roundCutoffAt, timeZone), days: app.targetDays, due: app.decisionDueAt ? formatDateTime(locale, app.decisionDueAt, timeZone) : '' })}</Alert>
        ) : (
          <Alert tone="info">{t('application.waiting', { days: app.targetDays, due: app.decisionDueAt ? formatDateTime(locale, app.decisionDueAt, timeZone) : '' })}</Alert>
        ))}
      {app.status === 'changes_requested' && latest && (
        <Alert tone="warning" title={t('application.changesRequestedTitle')}>
          {latest.comment}
        </Alert>
      )}
      {app.status === 'rejected' && latest && (
        <Alert tone="error" title={t('application.rejectedTitle')}>
          {latest.comment}
        </Alert>
      )}
      {app.status === 'approved' && latest && (
        <Alert tone="success" title={t('application.approvedTitle')}>
          {latest.comment}
        </Alert>
      )}
      <ApplicationSummary app={app} t={t} locale={locale} timeZone={timeZone} allocationHref={(a) => `/allocations/${a}`} />
      <ApplicantReviews reviews={app.reviews} t={t} locale={locale} />
      {app.report && (
        <div id="report" className="scroll-mt-4">
          <Card title={t('report.title')}>
            <div className="space-y-4">
              {app.report.owed ? (
                <Alert tone="warning">{t('report.owed', { day: formatDay(locale, lastUsableDay(app.report.dueFrom)) })}</Alert>
              ) : (
                !app.report.report && <p className="text-sm text-slate-600">{t('report.notYet', { day: formatDay(locale, lastUsableDay(app.report.dueFrom)) })}</p>
              )}
              <p className="text-sm text-slate-600">{t('report.used', { used: formatGpuHours(locale, app.report.used.charged), granted: formatGpuHours(locale, app.report.used.granted) })}</p>
              {app.report.report && <AllocationReport report={app.report.report} t={t} locale={locale} />}
              {app.report.canFile &&
                (app.report.report ? (
                  <details className="rounded-md p-3 ring-1 ring-slate-200">
                    <summary className="cursor-pointer text-sm font-medium text-indigo-700">{t('report.edit')}</summary>
                    <div className="mt-4">
                      <ReportForm applicationId={app.id} initial={app.report.report} />
                    </div>
                  </details>
                ) : (
                  <ReportForm applicationId={app.id} initial={null} />
                ))}
            </div>
          </Card>
        </div>
      )}
      {editing && (
        <section aria-labelledby="edit-heading" className="space-y-4">
          <h2 id="edit-heading" className="text-lg font-semibold">
            {app.status === 'draft' ? t('application.editDraft') : t('application.editAndResubmit')}
          </h2>
          <ApplicationForm
            projectId={app.projectId}
            applicationId={app.id}
            tenantKind={app.orgKind}
            modes={editing[0]}
            classes={editing[1]}
            baseAllocations={editing[2].allocations.filter((a) => a.unit === 'gpu_seconds' && a.status === 'active').map((a) => ({ id: a.id, label: `${a.resourceClassName ?? ''} (${formatDay(locale, a.periodStart)} – ${formatDay(locale, a.periodEnd)})`, periodStart: a.periodStart, periodEnd: a.periodEnd }))}
            initial={{
              accessModeId: app.accessModeId,
              kind: app.kind,
              baseAllocationId: app.baseAllocationId ?? undefined,
              periodStart: app.periodStart,
              periodEnd: app.periodEnd,
              justification: app.justification,
              gpuHours: Object.fromEntries(app.lines.map((l) => [l.resourceClassId, String(l.gpuSeconds / 3600)])),
              storageGb: Object.fromEntries(app.lines.map((l) => [l.resourceClassId, String(l.storageGb)])),
            }}
          />
        </section>
      )}
    </div>
  );
}
