// End-of-allocation reports for staff (issue #32): those missing (the longest overdue first) and the
// latest filed.
import type { Metadata } from 'next';
import Link from 'next/link';
import { Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { lastUsableDay } from '~/server/core/mail/reminders';
import { formatCount, formatDate, formatDay } from '~/server/i18n/format';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('reports.title') };
}

export default async function ReportsPage() {
  await requireStaff();
  const { t, locale } = await getT();
  const { missing, filed } = await (await api()).allocationReports.overview();
  return (
    <div className="space-y-6">
      <PageHeader title={t('reports.title')} subtitle={t('reports.intro')} />
      <Card title={t('reports.missing', { count: missing.length })}>
        {missing.length === 0 ? (
          <p className="text-sm text-slate-600">{t('reports.noneMissing')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('reports.project')}</Th>
                <Th>{t('reports.organisation')}</Th>
                <Th>{t('reports.pi')}</Th>
                <Th>{t('reports.ended')}</Th>
                <Th>{t('reports.asked')}</Th>
              </tr>
            </thead>
            <tbody>
              {missing.map((m) => (
                <tr key={m.applicationId} data-testid="missing-report">
                  <Td>
                    <Link href={`/staff/applications/${m.applicationId}`} className="text-indigo-700 hover:underline">
                      {m.projectTitle}
                    </Link>
                  </Td>
                  <Td>{m.orgName}</Td>
                  <Td>{m.pis.map((p) => p.name).join(', ') || '—'}</Td>
                  <Td className="whitespace-nowrap">{formatDay(locale, lastUsableDay(m.periodEnd))}</Td>
                  <Td className="whitespace-nowrap">{m.requestedAt ? formatDate(locale, m.requestedAt) : t('reports.notAsked')}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <Card title={t('reports.filed')}>
        {filed.length === 0 ? (
          <p className="text-sm text-slate-600">{t('reports.noneFiled')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('reports.project')}</Th>
                <Th>{t('reports.organisation')}</Th>
                <Th>{t('reports.by')}</Th>
                <Th>{t('reports.filedAt')}</Th>
                <Th className="text-right">{t('reports.outputs')}</Th>
              </tr>
            </thead>
            <tbody>
              {filed.map((f) => (
                <tr key={f.applicationId} data-testid="filed-report">
                  <Td>
                    <Link href={`/staff/applications/${f.applicationId}`} className="text-indigo-700 hover:underline">
                      {f.projectTitle}
                    </Link>
                  </Td>
                  <Td>{f.orgName}</Td>
                  <Td>{f.filedByName}</Td>
                  <Td className="whitespace-nowrap">{formatDate(locale, f.updatedAt)}</Td>
                  <Td className="text-right tabular-nums">
                    {formatCount(locale, f.publications.length)} · {formatCount(locale, f.datasets.length)}
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
