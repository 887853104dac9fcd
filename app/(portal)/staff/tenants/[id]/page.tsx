import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { AllocationTable } from '~/app/_components/allocation-table';
import { inputClass } from '~/app/_components/field';
import { Badge, Button, Card, PageHeader, STATUS_TONE } from '~/app/_components/ui';
import { UsageSummary } from '~/app/_components/usage-summary';
import { getT } from '~/app/_lib/i18n-server';
import { formatEuros } from '~/server/i18n/format';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { RequireSsoForm } from './require-sso-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staff.tenants.title') };
}

/** One tenant as staff see it: status, usage, cost and energy of a month, and its allocations. */
export default async function StaffTenantPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ month?: string }> }) {
  const me = await requireStaff();
  const { id } = await params;
  const { month: requested } = await searchParams;
  const { t, locale } = await getT();
  const month = /^\d{4}-\d{2}$/.test(requested ?? '') ? requested! : new Date().toISOString().slice(0, 7);
  const caller = await api();
  const data = await caller.staff.tenantUsage({ orgId: id, period: { month }, groupBy: 'project' }).catch(() => undefined);
  if (!data) notFound();
  const [allocations, signIn] = await Promise.all([caller.staff.allocations({ orgId: id }), caller.staff.tenantSignIn({ orgId: id })]);
  const { org, report } = data;
  const creditLines = allocations.map((row) => row.allocation).filter((a) => a.unit === 'cents' && a.status === 'active');
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
      <Card title={t('staff.tenants.signInTitle')}>
        <p className="mb-3 text-sm text-slate-700" data-testid="sso-status">
          {signIn.requireSso ? t('staff.tenants.ssoRequiredNow') : t('staff.tenants.ssoOptionalNow')}
        </p>
        {me.staffRoles.includes('admin') && <RequireSsoForm orgId={org.id} orgName={org.name} requireSso={signIn.requireSso} />}
      </Card>
      {org.kind === 'company' && (
        <Card title={t('staffTenant.moneyTitle')}>
          <dl className="grid gap-4 text-sm sm:grid-cols-2" data-testid="tenant-money">
            <div>
              <dt className="text-slate-600">{t('staffTenant.creditLines')}</dt>
              <dd className="mt-1 text-lg font-semibold tabular-nums">{creditLines.length === 0 ? t('staffTenant.noCreditLine') : formatEuros(locale, creditLines.reduce((sum, a) => sum + a.granted, 0))}</dd>
            </div>
            <div>
              <dt className="text-slate-600">{t('staffTenant.cap')}</dt>
              <dd className="mt-1 text-lg font-semibold tabular-nums">{org.monthlyCapCents === null ? t('staffTenant.noCap') : formatEuros(locale, org.monthlyCapCents)}</dd>
            </div>
          </dl>
        </Card>
      )}
      <Card title={t('project.allocations')}>
        {allocations.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.noAllocations')}</p>
        ) : (
          <AllocationTable rows={allocations} t={t} locale={locale} showTenant={false} />
        )}
      </Card>
      {allocations.length > 0 && (
        <Card title={t('files.workspaces')}>
          <ul className="flex flex-wrap gap-x-6 gap-y-2 text-sm" data-testid="tenant-workspaces">
            {[...new Map(allocations.map((a) => [a.allocation.projectId, a.projectTitle])).entries()].map(([projectId, title]) => (
              <li key={projectId}>
                <Link href={`/staff/projects/${projectId}/files`} className="text-indigo-700 hover:underline">
                  {t('files.openWorkspace', { project: title })}
                </Link>
              </li>
            ))}
          </ul>
        </Card>
      )}
    </div>
  );
}
