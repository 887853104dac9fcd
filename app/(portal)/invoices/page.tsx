import type { Metadata } from 'next';
import { forbidden, notFound } from 'next/navigation';
import { Alert, Card, PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { roleAtLeast } from '~/server/core/roles';
import { InvoiceTable } from './invoice-table';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('invoice.title') };
}

export default async function InvoicesPage() {
  await requireUser();
  const { t, locale } = await getT();
  const caller = await api();
  const org = await caller.organisation.current().catch(() => undefined);
  if (!org) notFound();
  if (org.kind !== 'company') {
    return (
      <div className="space-y-6">
        <PageHeader title={t('invoice.title')} />
        <Alert>{t('invoice.companyOnly', { org: org.name })}</Alert>
      </div>
    );
  }
  if (!roleAtLeast(org.myRole, 'manager')) forbidden();
  const rows = await caller.invoice.list();
  return (
    <div className="space-y-6">
      <PageHeader title={t('invoice.title')} subtitle={t('invoice.subtitle', { org: org.name })} />
      <Card>
        {rows.length === 0 ? (
          <p className="text-sm text-slate-600">{t('invoice.none')}</p>
        ) : (
          <InvoiceTable rows={rows} t={t} locale={locale} showTenant={false} />
        )}
      </Card>
    </div>
  );
}
