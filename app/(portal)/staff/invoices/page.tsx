import type { Metadata } from 'next';
import Link from 'next/link';
import { Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDay, formatEuros } from '~/app/_lib/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { previousMonth } from '~/server/core/invoicing';
import { formatMonth } from '../../invoices/invoice-format';
import { IssueMonthlyButton, IssueOneForm } from './invoice-actions';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('invoice.staffTitle') };
}

export default async function StaffInvoicesPage() {
  const me = await requireStaff();
  const { t, locale } = await getT();
  const caller = await api();
  const isAdmin = me.staffRoles.includes('admin');
  const [rows, tenants] = await Promise.all([caller.invoice.staffList({}), isAdmin ? caller.staff.tenants({}) : Promise.resolve([])]);
  const companies = tenants.filter((tenant) => tenant.kind === 'company').map((tenant) => ({ id: tenant.id, name: tenant.name }));
  return (
    <div className="space-y-6">
      <PageHeader title={t('invoice.staffTitle')} subtitle={t('invoice.staffSubtitle')} />
      {isAdmin && (
        <div className="grid gap-6 lg:grid-cols-2">
          <Card title={t('invoice.issueMonthly.title')}>
            <p className="mb-3 text-sm text-slate-600">{t('invoice.issueMonthly.explain')}</p>
            <IssueMonthlyButton />
          </Card>
          <Card title={t('invoice.issueOne.title')}>
            <IssueOneForm tenants={companies} defaultMonth={previousMonth(new Date())} />
          </Card>
        </div>
      )}
      <Card>
        {rows.length === 0 ? (
          <p className="text-sm text-slate-600">{t('invoice.noneStaff')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('invoice.number')}</Th>
                <Th>{t('staff.audit.tenant')}</Th>
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
                  <Td>{invoice.recipient.name === invoice.orgName ? invoice.orgName : `${invoice.orgName} (${invoice.recipient.name})`}</Td>
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
