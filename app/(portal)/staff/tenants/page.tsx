import type { Metadata } from 'next';
import Link from 'next/link';
import { Badge, Card, PageHeader, STATUS_TONE, Table, Td, Th, cx } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { currentUser, requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { ORG_STATUSES, type OrgStatus } from '~/server/core/roles';
import { SignInActions } from './sign-in-actions';
import { TenantActions } from './tenant-actions';
import { formatDate } from '~/server/i18n/format';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staff.tenants.title') };
}

export default async function TenantsPage({ searchParams }: { searchParams: Promise<{ status?: string }> }) {
  const { t, locale } = await getT();
  const { status: rawStatus } = await searchParams;
  const status = (ORG_STATUSES as readonly string[]).includes(rawStatus ?? '') ? (rawStatus as OrgStatus) : undefined;
  await requireStaff();
  const caller = await api();
  const [tenants, me] = await Promise.all([caller.staff.tenants({ status }), currentUser()]);
  const isAdmin = me?.staffRoles.includes('admin') ?? false;
  const filters: { label: string; value?: OrgStatus }[] = [
    { label: t('common.all') },
    ...ORG_STATUSES.map((s) => ({ label: t(`status.${s}`), value: s })),
  ];
  return (
    <div className="space-y-6">
      <PageHeader title={t('staff.tenants.title')} />
      <nav aria-label={t('staff.tenants.filterStatus')} className="flex flex-wrap gap-2">
        {filters.map((f) => (
          <Link
            key={f.label}
            href={f.value ? `/staff/tenants?status=${f.value}` : '/staff/tenants'}
            aria-current={status === f.value ? 'page' : undefined}
            className={cx('rounded-full px-3 py-1 text-sm ring-1', status === f.value ? 'bg-indigo-600 text-white ring-indigo-600' : 'bg-white text-slate-700 ring-slate-300 hover:bg-slate-50')}
          >
            {f.label}
          </Link>
        ))}
      </nav>
      <Card>
        {tenants.length === 0 ? (
          <p className="text-sm text-slate-600">{t('staff.tenants.empty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('staff.tenants.name')}</Th>
                <Th>{t('staff.tenants.kind')}</Th>
                <Th>{t('staff.tenants.country')}</Th>
                <Th>{t('staff.tenants.residency')}</Th>
                <Th>{t('staff.tenants.members')}</Th>
                <Th>{t('staff.tenants.created')}</Th>
                <Th>{t('staff.tenants.status')}</Th>
                {isAdmin && <Th>{t('common.actions')}</Th>}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {tenants.map((tenant) => (
                <tr key={tenant.id} data-testid={`tenant-row-${tenant.name}`}>
                  <Td className="font-medium">
                    <Link href={`/staff/tenants/${tenant.id}`} className="text-indigo-700 hover:underline">
                      {tenant.name}
                    </Link>
                  </Td>
                  <Td>{t(`kind.${tenant.kind}`)}</Td>
                  <Td>{tenant.country}</Td>
                  <Td>{t(`residency.${tenant.residency}`)}</Td>
                  <Td className="tabular-nums">{tenant.memberCount}</Td>
                  <Td className="text-slate-600">{formatDate(locale, tenant.createdAt)}</Td>
                  <Td>
                    <Badge tone={STATUS_TONE[tenant.status]}>{t(`status.${tenant.status}`)}</Badge>
                    {tenant.status === 'suspended' && tenant.statusReason && <p className="mt-1 text-xs text-slate-500">{tenant.statusReason}</p>}
                  </Td>
                  {isAdmin && (
                    <Td>
                      <TenantActions orgId={tenant.id} orgName={tenant.name} status={tenant.status} />
                    </Td>
                  )}
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      {isAdmin && <SignInActions />}
    </div>
  );
}
