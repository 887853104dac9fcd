import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { BudgetBar } from '~/app/_components/burn-down-chart';
import { StorageBar } from '~/app/_components/storage-bar';
import { AllocationStatusBadge, ApplicationStatusBadge } from '~/app/_components/status-badges';
import { Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatAmount, formatBytes, formatDateTime, formatDay } from '~/server/i18n/format';
import { purposeLine } from '~/app/_lib/project-purpose';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { ProjectBudgetForm } from './project-budget-form';
import { ProjectMembers } from './project-members';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const { id } = await params;
  const caller = await api();
  const project = await caller.project.get({ projectId: id }).catch(() => undefined);
  return { title: project?.project.title ?? (await getT()).t('notFound.title') };
}

export default async function ProjectPage({ params }: { params: Promise<{ id: string }> }) {
  await requireUser();
  const { id } = await params;
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const data = await caller.project.get({ projectId: id }).catch(() => undefined);
  if (!data) notFound();
  const { project, members, allocations, applications, canManage } = data;
  // Storage at each site (issue #27): what the workspace holds, as last measured, against its quota.
  const storage = await caller.project.storage({ projectId: id });
  const gb = (gigabytes: number) => formatBytes(locale, gigabytes * 1_000_000_000);
  const colleagues = canManage ? await caller.organisation.members() : [];
  // A company project's budgets (issue #24): everyone in the tenant reads them, owners and managers set them.
  const isCompanyProject = project.fieldOfScience === null;
  const [budget, org] = isCompanyProject ? await Promise.all([caller.project.budget({ projectId: project.id }), caller.organisation.current()]) : [null, null];
  return (
    <div className="space-y-6">
      <PageHeader
        title={project.title}
        subtitle={[purposeLine(t, project), `${t('projects.pi')}: ${members.find((m) => m.role === 'pi')?.name ?? '—'}`].filter(Boolean).join(' · ')}
        actions={
          <div className="flex flex-wrap gap-3">
            <Link href={`/projects/${project.id}/files`} className="rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-slate-300 hover:bg-slate-50" data-testid="project-files">
              {t('files.title')}
            </Link>
            {canManage && (
              <Link href={`/projects/${project.id}/apply`} className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
                {t('project.apply')}
              </Link>
            )}
          </div>
        }
      />
      <Card title={project.fieldOfScience === null ? t('project.descriptionCompany') : t('project.abstract')}>
        <p className="text-sm whitespace-pre-line text-slate-700">{project.abstract}</p>
      </Card>
      {isCompanyProject && org && <ProjectBudgetForm projectId={project.id} budget={budget} canEdit={org.myRole === 'owner' || org.myRole === 'manager'} />}
      <Card title={t('project.allocations')}>
        {allocations.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.noAllocations')}</p>
        ) : (
          <ul className="space-y-4">
            {allocations.map((a) => {
              const remaining = a.granted - a.charged - a.reserved - a.expired;
              return (
                <li key={a.id} className="rounded-md p-4 ring-1 ring-slate-200">
                  <div className="flex flex-wrap items-center justify-between gap-2">
                    <Link href={`/allocations/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                      {a.unit === 'cents' ? t('allocation.creditLine') : a.resourceClassName}
                    </Link>
                    <AllocationStatusBadge status={a.status} t={t} />
                  </div>
                  <p className="mt-1 text-xs text-slate-600">
                    {formatDay(locale, a.periodStart)} – {formatDay(locale, a.periodEnd)}
                    {a.storageGb > 0 && ` · ${t(a.unit === 'cents' ? 'project.storage.lineEverySite' : 'project.storage.line', { size: gb(a.storageGb) })}`}
                  </p>
                  <dl className="mt-3 grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
                    {(
                      [
                        ['allocation.granted', a.granted],
                        ['allocation.used', a.charged],
                        ['allocation.reserved', a.reserved],
                        ['allocation.remaining', Math.max(0, remaining)],
                      ] as const
                    ).map(([key, value]) => (
                      <div key={key}>
                        <dt className="text-xs text-slate-500">{t(key)}</dt>
                        <dd className="font-medium tabular-nums">{formatAmount(locale, a.unit, value)}</dd>
                      </div>
                    ))}
                  </dl>
                  <div className="mt-3">
                    <BudgetBar granted={a.granted} charged={a.charged} reserved={a.reserved} label={t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })} />
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </Card>
      <Card title={t('project.storage.title')}>
        {storage.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.storage.none')}</p>
        ) : (
          <ul className="space-y-4">
            {storage.map((s) => (
              <li key={s.siteId} data-testid={`project-storage-${s.siteId}`}>
                <div className="flex flex-wrap items-baseline justify-between gap-2 text-sm">
                  <span className="font-medium">{s.siteName}</span>
                  <span className="tabular-nums text-slate-700">
                    {s.grantedGb > 0 ? t('project.storage.usedOf', { used: formatBytes(locale, s.usedBytes), granted: gb(s.grantedGb), percent: s.usedPercent ?? 0 }) : t('project.storage.usedNoQuota', { used: formatBytes(locale, s.usedBytes) })}
                  </span>
                </div>
                <div className="mt-2">
                  <StorageBar usedBytes={s.usedBytes} grantedGb={s.grantedGb} label={t('project.storage.usedOf', { used: formatBytes(locale, s.usedBytes), granted: gb(s.grantedGb), percent: s.usedPercent ?? 0 })} markLabel={t('project.storage.mark')} />
                </div>
                <p className="mt-1 text-xs text-slate-500">{s.measuredAt ? t('project.storage.measured', { at: formatDateTime(locale, s.measuredAt, timeZone) }) : t('project.storage.notMeasured')}</p>
              </li>
            ))}
          </ul>
        )}
        <p className="mt-4 text-xs text-slate-500">{t('project.storage.hint')}</p>
      </Card>
      <Card title={t('project.applications')}>
        {applications.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.noApplications')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('application.created')}</Th>
                <Th>{t('application.kind')}</Th>
                <Th>{t('application.period')}</Th>
                <Th>{t('staff.tenants.status')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {applications.map((a) => (
                <tr key={a.id}>
                  <Td>
                    <Link href={`/applications/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                      {t('application.of', { date: formatDay(locale, a.createdAt.toISOString().slice(0, 10)) })}
                    </Link>
                  </Td>
                  <Td>{t(`applicationKind.${a.kind}`)}</Td>
                  <Td className="text-slate-600">
                    {formatDay(locale, a.periodStart)} – {formatDay(locale, a.periodEnd)}
                  </Td>
                  <Td>
                    <ApplicationStatusBadge status={a.status} t={t} />
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card title={`${t('project.members')} (${members.length})`}>
        <ProjectMembers
          projectId={project.id}
          members={members}
          canManage={canManage}
          candidates={colleagues.filter((c) => !members.some((m) => m.userId === c.userId)).map((c) => ({ userId: c.userId, name: c.name }))}
        />
      </Card>
    </div>
  );
}
