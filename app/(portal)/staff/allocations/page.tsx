import type { Metadata } from 'next';
import Link from 'next/link';
import { BudgetBar } from '~/app/_components/burn-down-chart';
import { AllocationStatusBadge } from '~/app/_components/status-badges';
import { Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatAmount, formatDay } from '~/app/_lib/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { addDays } from '~/server/core/working-days';
import { CreditLineForm } from './credit-line-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staffAllocations.title') };
}

export default async function StaffAllocationsPage() {
  const me = await requireStaff();
  const { t, locale } = await getT();
  const caller = await api();
  const [rows, companyProjects] = await Promise.all([caller.staff.allocations({}), me.staffRoles.includes('admin') ? caller.staff.companyProjects() : Promise.resolve([])]);
  const today = new Date().toISOString().slice(0, 10);
  return (
    <div className="space-y-6">
      <PageHeader title={t('staffAllocations.title')} />
      <CreditLineForm projects={companyProjects} today={today} yearLater={addDays(today, 365)} />
      <Card>
        {rows.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.noAllocations')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('review.project')}</Th>
                <Th>{t('staff.audit.tenant')}</Th>
                <Th>{t('application.resourceClass')}</Th>
                <Th>{t('application.period')}</Th>
                <Th>{t('allocation.used')}</Th>
                <Th>{t('staff.tenants.status')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map(({ allocation: a, projectTitle, orgName, resourceClassName }) => (
                <tr key={a.id}>
                  <Td>
                    <Link href={`/staff/allocations/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                      {projectTitle}
                    </Link>
                  </Td>
                  <Td>{orgName}</Td>
                  <Td>{a.unit === 'cents' ? t('allocation.creditLine') : resourceClassName}</Td>
                  <Td className="whitespace-nowrap text-slate-600">
                    {formatDay(locale, a.periodStart)} – {formatDay(locale, a.periodEnd)}
                  </Td>
                  <Td className="min-w-48">
                    <p className="text-xs text-slate-600">{t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })}</p>
                    <BudgetBar granted={a.granted} charged={a.charged} reserved={a.reserved} label={t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })} />
                  </Td>
                  <Td>
                    <AllocationStatusBadge status={a.status} t={t} />
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </div>
  );
}
