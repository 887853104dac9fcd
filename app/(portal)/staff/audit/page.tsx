import type { Metadata } from 'next';
import Link from 'next/link';
import { Alert, Card, PageHeader, Table, Td, Th, Button } from '~/app/_components/ui';
import { inputClass } from '~/app/_components/field';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { AUDIT_KINDS, decodeAuditCursor, encodeAuditCursor, isAuditKind } from '~/server/core/audit';
import { auditKindText } from '~/server/i18n/audit';
import { formatDateTime } from '~/server/i18n/format';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staff.audit.title') };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const PAGE = 200;

type AuditParams = { org?: string; actor?: string; kind?: string; from?: string; to?: string; cursor?: string };

/** The query string of this page with the given filters (empty ones left out). */
function auditHref(params: AuditParams): string {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => Boolean(entry[1])));
  const text = query.toString();
  return text ? `/staff/audit?${text}` : '/staff/audit';
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<AuditParams> }) {
  const { t, locale, timeZone } = await getT();
  const params = await searchParams;
  const orgId = params.org && UUID.test(params.org) ? params.org : undefined;
  const actorUserId = params.actor && UUID.test(params.actor) ? params.actor : undefined;
  const action = params.kind && isAuditKind(params.kind) ? params.kind : undefined;
  const from = params.from && DAY.test(params.from) && !Number.isNaN(Date.parse(params.from)) ? params.from : undefined;
  const to = params.to && DAY.test(params.to) && !Number.isNaN(Date.parse(params.to)) ? params.to : undefined;
  const cursor = params.cursor && decodeAuditCursor(params.cursor) ? params.cursor : undefined;
  const periodInvalid = Boolean(from && to && to < from);
  await requireStaff();
  const caller = await api();
  const [events, tenants, actors] = await Promise.all([
    periodInvalid ? Promise.resolve([]) : caller.staff.audit({ orgId, actorUserId, action, from, to, cursor, limit: PAGE }),
    caller.staff.tenants({}),
    caller.staff.auditActors(),
  ]);
  const filters = { org: orgId, actor: actorUserId, kind: action, from, to };
  const last = events.length === PAGE ? events[events.length - 1] : undefined;
  const kinds = AUDIT_KINDS.map((kind) => ({ kind, text: t(auditKindText(kind)) })).sort((a, b) => a.text.localeCompare(b.text, locale));
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
        <label className="space-y-1 text-sm">
          <span className="block font-medium text-slate-800">{t('staff.audit.filterKind')}</span>
          <select name="kind" defaultValue={action ?? ''} className={`${inputClass} w-64`}>
            <option value="">{t('common.all')}</option>
            {kinds.map(({ kind, text }) => (
              <option key={kind} value={kind}>
                {text}
              </option>
            ))}
          </select>
        </label>
        <label className="space-y-1 text-sm">
          <span className="block font-medium text-slate-800">{t('staff.audit.filterFrom')}</span>
          <input type="date" name="from" defaultValue={from ?? ''} className={`${inputClass} w-40`} />
        </label>
        <label className="space-y-1 text-sm">
          <span className="block font-medium text-slate-800">{t('staff.audit.filterTo')}</span>
          <input type="date" name="to" defaultValue={to ?? ''} className={`${inputClass} w-40`} aria-invalid={periodInvalid || undefined} />
        </label>
        <Button type="submit" variant="secondary">
          {t('common.filter')}
        </Button>
      </form>
      {periodInvalid && <Alert tone="error">{t('staff.audit.periodInvalid')}</Alert>}
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
                return (
                  <tr key={e.id} data-testid="audit-row" data-at={e.at.toISOString()} data-kind={e.action}>
                    <Td className="whitespace-nowrap text-slate-600">{formatDateTime(locale, e.at, timeZone)}</Td>
                    <Td>{e.actorName ?? '—'}</Td>
                    <Td>
                      <span className="font-medium">{isAuditKind(e.action) ? t(auditKindText(e.action)) : e.action}</span>
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
      {(cursor || last) && (
        <nav className="flex gap-4 text-sm">
          {cursor && (
            <Link href={auditHref(filters)} className="font-medium text-indigo-700 underline">
              {t('staff.audit.newest')}
            </Link>
          )}
          {last && (
            <Link href={auditHref({ ...filters, cursor: encodeAuditCursor({ at: last.at, id: last.id }) })} className="font-medium text-indigo-700 underline" data-testid="audit-older">
              {t('staff.audit.older')}
            </Link>
          )}
        </nav>
      )}
    </div>
  );
}
