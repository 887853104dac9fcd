import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { BudgetBar } from '~/app/_components/burn-down-chart';
import { AllocationStatusBadge, ApplicationStatusBadge } from '~/app/_components/status-badges';
import { Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatAmount, formatDay } from '~/server/i18n/format';
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
  const { t, locale } = await getT();
  const caller = await api();
  const data = await caller.project.get({ projectId: id }).catch(() => undefined);
  if (!data) notFound();
  const { project, members, allocations, applications, canManage } = data;
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
          canManage && (
            <Link href={`/projects/${project.id}/apply`} className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
              {t('project.apply')}
            </Link>
          )
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
