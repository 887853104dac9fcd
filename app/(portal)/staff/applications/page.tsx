import type { Metadata } from 'next';
import Link from 'next/link';
import { Badge, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDateTime, formatGpuHours } from '~/app/_lib/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('review.queueTitle') };
}

export default async function ReviewQueuePage() {
  await requireStaff();
  const { t, locale } = await getT();
  const caller = await api();
  const queue = await caller.staff.applicationQueue();
  return (
    <div className="space-y-6">
      <PageHeader title={t('review.queueTitle')} subtitle={t('review.queueSubtitle')} />
      <Card>
        {queue.length === 0 ? (
          <p className="text-sm text-slate-600">{t('review.queueEmpty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('review.project')}</Th>
                <Th>{t('staff.audit.tenant')}</Th>
                <Th>{t('application.mode')}</Th>
                <Th className="text-right">{t('application.requested')}</Th>
                <Th>{t('review.submitted')}</Th>
                <Th>{t('review.age')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {queue.map((a) => (
                <tr key={a.id} data-testid="queue-row">
                  <Td>
                    <Link href={`/staff/applications/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                      {a.projectTitle}
                    </Link>
                    {a.kind !== 'new' && <span className="ml-2 text-xs text-slate-500">{t(`applicationKind.${a.kind}`)}</span>}
                  </Td>
                  <Td>{a.orgName}</Td>
                  <Td>{a.modeName}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, a.requestedGpuSeconds)}</Td>
                  <Td className="whitespace-nowrap text-slate-600">{a.submittedAt ? formatDateTime(locale, a.submittedAt) : ''}</Td>
                  <Td>
                    <Badge tone={a.overdue ? 'red' : a.ageWorkingDays >= a.targetDays - 1 ? 'amber' : 'green'}>{t('review.ageOfTarget', { age: a.ageWorkingDays, target: a.targetDays })}</Badge>
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
