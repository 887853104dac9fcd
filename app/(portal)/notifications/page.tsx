import type { Metadata } from 'next';
import Link from 'next/link';
import { Card, PageHeader } from '~/app/_components/ui';
import { formatDateTime } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { MarkAllRead } from './mark-all-read';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('notifications.title') };
}

export default async function NotificationsPage() {
  await requireUser();
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const items = await caller.notification.list();
  return (
    <div className="space-y-6">
      <PageHeader title={t('notifications.title')} actions={items.some((n) => !n.read) && <MarkAllRead />} />
      <Card>
        {items.length === 0 ? (
          <p className="text-sm text-slate-600">{t('notifications.empty')}</p>
        ) : (
          <ul className="divide-y divide-slate-100">
            {items.map((n) => (
              <li key={n.id} className="flex items-start justify-between gap-4 py-3" data-testid="notification">
                <div>
                  {!n.read && <span role="img" className="mr-2 inline-block h-2 w-2 rounded-full bg-indigo-600" aria-label={t('notifications.unread')} />}
                  {n.link ? (
                    <Link href={n.link} className="text-sm text-slate-800 hover:text-indigo-700 hover:underline">
                      {n.text}
                    </Link>
                  ) : (
                    <span className="text-sm text-slate-800">{n.text}</span>
                  )}
                </div>
                <span className="text-xs whitespace-nowrap text-slate-500">{formatDateTime(locale, n.createdAt, timeZone)}</span>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
