import type { Metadata } from 'next';
import Link from 'next/link';
import { forbidden, notFound } from 'next/navigation';
import { Alert, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDay, formatEuros } from '~/app/_lib/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { roleAtLeast } from '~/server/core/roles';
import { formatMonth } from './invoice-format';

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
          <Table>
            <thead>
              <tr>
                <Th>{t('invoice.number')}</Th>
                <Th>{t('invoice.period')}</Th>
                <Th>{t('invoice.issuedOn')}</Th>
                <Th className="text-right">{t('invoice.net')}</Th>
                <Th className="text-right">{t('invoice.vat')}</Th>
                <Th className="text-right">{t('invoice.gross')}</Th>
                <Th className="text-right">{t('invoice.credited')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map((invoice) => (
                <tr key={invoice.id}>
                  <Td>
                    <Link href={`/invoices/${invoice.id}`} className="font-medium text-indigo-700 tabular-nums hover:underline">
                      {invoice.number}
                    </Link>
                  </Td>
                  <Td>{formatMonth(locale, invoice.periodMonth)}</Td>
                  <Td className="whitespace-nowrap text-slate-600">{formatDay(locale, invoice.issuedAt.toISOString().slice(0, 10))}</Td>
                  <Td className="text-right tabular-nums">{formatEuros(locale, invoice.netCents)}</Td>
                  <Td className="text-right tabular-nums">{formatEuros(locale, invoice.vatCents)}</Td>
                  <Td className="text-right font-medium tabular-nums">{formatEuros(locale, invoice.grossCents)}</Td>
                  <Td className="text-right text-slate-600 tabular-nums">{invoice.creditedGrossCents > 0 ? formatEuros(locale, invoice.creditedGrossCents) : '–'}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </div>
  );
}
