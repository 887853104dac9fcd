import type { Metadata } from 'next';
import { Card, PageHeader, Table, Td, Th, Button } from '~/app/_components/ui';
import { inputClass } from '~/app/_components/field';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { isMessageKey } from '~/server/i18n';
import { formatDateTime } from '~/server/i18n/format';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staff.audit.title') };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function AuditPage({ searchParams }: { searchParams: Promise<{ org?: string; actor?: string }> }) {
  const { t, locale, timeZone } = await getT();
  const params = await searchParams;
  const orgId = params.org && UUID.test(params.org) ? params.org : undefined;
  const actorUserId = params.actor && UUID.test(params.actor) ? params.actor : undefined;
  await requireStaff();
  const caller = await api();
  const [events, tenants, actors] = await Promise.all([
    caller.staff.audit({ orgId, actorUserId, limit: 200 }),
    caller.staff.tenants({}),
    caller.staff.auditActors(),
  ]);
  return (
    <div className="space-y-6">
      <PageHeader title={t('staff.audit.title')} />
      <form method="get" className="flex flex-wrap items-end gap-4">
        <label className="space-y-1 text-sm">
          <span className="block font-medium text-slate-800">{t('staff.audit.filterTenant')}</span>
          <select name="org" defaultValue={orgId ?? ''} className={`${inputClass} w-64`}>
            <option value="">{t('common.all')}</option>
            {tenants.map((tenant) => (
              <option key={tenant.id} value={tenant.id}>
                {tenant.name}
              </option>
            ))}
          </select>
        </label>
        <label className="space-y-1 text-sm">
          <span className="block font-medium text-slate-800">{t('staff.audit.filterActor')}</span>
          <select name="actor" defaultValue={actorUserId ?? ''} className={`${inputClass} w-64`}>
            <option value="">{t('common.all')}</option>
            {actors.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({a.email})
              </option>
            ))}
          </select>
        </label>
        <Button type="submit" variant="secondary">
          {t('common.filter')}
        </Button>
      </form>
      <Card>
        {events.length === 0 ? (
          <p className="text-sm text-slate-600">{t('staff.audit.empty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('staff.audit.when')}</Th>
                <Th>{t('staff.audit.actor')}</Th>
                <Th>{t('staff.audit.action')}</Th>
                <Th>{t('staff.audit.tenant')}</Th>
                <Th>{t('staff.audit.reason')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {events.map((e) => {
                const key = `audit.action.${e.action}`;
                return (
                  <tr key={e.id} data-testid="audit-row">
                    <Td className="whitespace-nowrap text-slate-600">{formatDateTime(locale, e.at, timeZone)}</Td>
                    <Td>{e.actorName ?? '—'}</Td>
                    <Td>
                      <span className="font-medium">{isMessageKey(key) ? t(key) : e.action}</span>
                      {e.isStaffAction && <span className="ml-2 text-xs text-indigo-700">{t('nav.staff')}</span>}
                      {e.action === 'api.call' && <span className="ml-2 font-mono text-xs text-slate-600">{e.targetId}</span>}
                      {typeof e.data?.apiToken === 'string' && <div className="text-xs text-slate-600">{t('staff.audit.viaToken', { name: e.data.apiToken })}</div>}
                    </Td>
                    <Td>{e.orgName ?? '—'}</Td>
                    <Td className="max-w-md text-slate-700">{e.reason ?? ''}</Td>
                  </tr>
                );
              })}
            </tbody>
          </Table>
        )}
      </Card>
    </div>
  );
}
