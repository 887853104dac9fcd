import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { BudgetBar } from '~/app/_components/burn-down-chart';
import { inputClass } from '~/app/_components/field';
import { AllocationStatusBadge } from '~/app/_components/status-badges';
import { Badge, Button, Card, PageHeader, STATUS_TONE, Table, Td, Th } from '~/app/_components/ui';
import { UsageSummary } from '~/app/_components/usage-summary';
import { formatAmount, formatDay } from '~/app/_lib/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staff.tenants.title') };
}

/** One tenant as staff see it: status, usage, cost and energy of a month, and its allocations. */
export default async function StaffTenantPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ month?: string }> }) {
  await requireStaff();
  const { id } = await params;
  const { month: requested } = await searchParams;
  const { t, locale } = await getT();
  const month = /^\d{4}-\d{2}$/.test(requested ?? '') ? requested! : new Date().toISOString().slice(0, 7);
  const caller = await api();
  const data = await caller.staff.tenantUsage({ orgId: id, period: { month }, groupBy: 'project' }).catch(() => undefined);
  if (!data) notFound();
  const allocations = await caller.staff.allocations({ orgId: id });
  const { org, report } = data;
  return (
    <div className="space-y-6">
      <PageHeader
        title={org.name}
        subtitle={`${t(`kind.${org.kind}`)} · ${org.country} · ${t(`residency.${org.residency}`)}`}
        actions={<Badge tone={STATUS_TONE[org.status]}>{t(`status.${org.status}`)}</Badge>}
      />
      <div className="flex flex-wrap items-end justify-between gap-4">
        <form method="get" className="flex items-end gap-3">
          <label className="text-sm">
            <span className="block font-medium text-slate-800">{t('usage.month')}</span>
            <input type="month" name="month" defaultValue={month} className={`${inputClass} w-40`} />
          </label>
          <Button type="submit" variant="secondary">
            {t('usage.show')}
          </Button>
        </form>
        <Link href={`/staff/audit?org=${org.id}`} className="text-sm font-medium text-indigo-700 hover:underline">
          {t('staffTenant.audit')}
        </Link>
      </div>
      <UsageSummary report={report} t={t} locale={locale} />
      <Card title={t('project.allocations')}>
        {allocations.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.noAllocations')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('review.project')}</Th>
                <Th>{t('application.resourceClass')}</Th>
                <Th>{t('application.period')}</Th>
                <Th>{t('allocation.used')}</Th>
                <Th>{t('staff.tenants.status')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {allocations.map(({ allocation: a, projectTitle, resourceClassName }) => (
                <tr key={a.id}>
                  <Td>
                    <Link href={`/staff/allocations/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                      {projectTitle}
                    </Link>
                  </Td>
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
