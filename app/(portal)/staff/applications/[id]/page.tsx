import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ApplicationSummary } from '~/app/_components/application-summary';
import { AllocationReport } from '~/app/_components/allocation-report';
import { Alert, Card, PageHeader } from '~/app/_components/ui';
import { lastUsableDay } from '~/server/core/mail/reminders';
import { formatDateTime, formatDay } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { DecisionForm } from './decision-form';
import { ReviewPanel } from './review-panel';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('review.title') };
}

export default async function ReviewPage({ params }: { params: Promise<{ id: string }> }) {
  const me = await requireStaff();
  const { id } = await params;
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  // Not found too for a member of staff excluded from it by a conflict of interest (issue #32).
  const [app, panel] = await Promise.all([caller.staff.application({ applicationId: id }).catch(() => undefined), caller.reviews.ofApplication({ applicationId: id }).catch(() => undefined)]);
  if (!app || !panel) notFound();
  return (
    <div className="space-y-6">
      <PageHeader
        title={`${t('review.title')}: ${app.projectTitle}`}
        subtitle={
          <Link href="/staff/applications" className="text-indigo-700 hover:underline">
            {t('review.backToQueue')}
          </Link>
        }
      />
      {app.missingReportsOfPi.length > 0 && (
        <Alert tone="warning" title={t('report.missingOfPi', { count: app.missingReportsOfPi.length })}>
          <ul className="mt-1 list-disc pl-5" data-testid="missing-reports-of-pi">
            {app.missingReportsOfPi.map((m) => (
              <li key={m.applicationId}>
                <Link href={`/staff/applications/${m.applicationId}`} className="underline">
                  {m.projectTitle}
                </Link>{' '}
                ({t('report.endedOn', { day: formatDay(locale, lastUsableDay(m.periodEnd)) })})
              </li>
            ))}
          </ul>
        </Alert>
      )}
      <ApplicationSummary app={app} t={t} locale={locale} timeZone={timeZone} allocationHref={(a) => `/staff/allocations/${a}`} />
      {app.report?.report && (
        <Card title={t('report.title')}>
          <AllocationReport report={app.report.report} t={t} locale={locale} />
        </Card>
      )}
      <ReviewPanel panel={panel} isAdmin={me.staffRoles.includes('admin')} viewerId={me.userId} t={t} locale={locale} timeZone={timeZone} />
      {app.status === 'submitted' && app.roundCutoffAt && app.roundCutoffAt.getTime() > Date.now() ? (
        <Alert tone="info">{t('review.roundOpen', { cutoff: formatDateTime(locale, app.roundCutoffAt, timeZone) })}</Alert>
      ) : (
        app.status === 'submitted' && <DecisionForm applicationId={app.id} lines={app.lines.map((l) => ({ resourceClassId: l.resourceClassId, name: l.name, gpuHours: l.gpuSeconds / 3600, storageGb: l.storageGb }))} />
      )}
    </div>
  );
}
