import type { Metadata } from 'next';
import { Alert, Badge, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDateTime, formatCount } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staff.mail.title') };
}

const TONE = { pending: 'amber', sent: 'green', failed: 'red' } as const;

/** The e-mail outbox: what the portal has sent, what waits for the SMTP server, and what it gave up. */
export default async function MailPage() {
  const { t, locale, timeZone } = await getT();
  await requireStaff();
  const outbox = await (await api()).staff.mailOutbox();
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('staff.mail.title')}
        subtitle={t('staff.mail.subtitle', { pending: formatCount(locale, outbox.counts.pending), sent: formatCount(locale, outbox.counts.sent), failed: formatCount(locale, outbox.counts.failed) })}
      />
      {outbox.configured ? (
        <p className="text-sm text-slate-600">{t('staff.mail.configured', { from: outbox.from })}</p>
      ) : (
        <Alert tone="info" title={t('staff.mail.notConfiguredTitle')}>
          {t('staff.mail.notConfigured')}
        </Alert>
      )}
      <Card>
        {outbox.mails.length === 0 ? (
          <p className="text-sm text-slate-600">{t('staff.mail.empty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('staff.mail.written')}</Th>
                <Th>{t('staff.mail.to')}</Th>
                <Th>{t('staff.mail.subject')}</Th>
                <Th>{t('staff.mail.status')}</Th>
                <Th className="text-right">{t('staff.mail.attempts')}</Th>
                <Th>{t('staff.mail.detail')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {outbox.mails.map((m) => (
                <tr key={m.id} data-testid="mail-row">
                  <Td className="whitespace-nowrap text-slate-600">{formatDateTime(locale, m.createdAt, timeZone)}</Td>
                  <Td className="whitespace-nowrap">{m.toAddress}</Td>
                  <Td className="min-w-64 max-w-md">
                    {m.subject} <span className="text-xs text-slate-500">({m.kind}, {m.locale})</span>
                    {m.text && (
                      <details className="mt-1">
                        <summary className="cursor-pointer text-xs text-indigo-700">{t('staff.mail.showText')}</summary>
                        <pre className="mt-1 text-xs break-words whitespace-pre-wrap text-slate-700">{m.text}</pre>
                      </details>
                    )}
                  </Td>
                  <Td>
                    <Badge tone={TONE[m.status]}>{t(`staff.mail.state.${m.status}`)}</Badge>
                  </Td>
                  <Td className="text-right tabular-nums">{formatCount(locale, m.attempts)}</Td>
                  <Td className="min-w-48 max-w-md text-slate-700">
                    {m.status === 'sent' && m.sentAt
                      ? t('staff.mail.sentAt', { at: formatDateTime(locale, m.sentAt, timeZone) })
                      : m.status === 'pending' && m.lastError
                        ? t('staff.mail.retryAt', { at: formatDateTime(locale, m.nextAttemptAt, timeZone), error: m.lastError })
                        : (m.lastError ?? '')}
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
