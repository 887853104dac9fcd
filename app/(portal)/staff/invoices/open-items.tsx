// Staff's open items: every invoice with a balance today, the most overdue first, and the CSV for the finance system.
import Link from 'next/link';
import { Table, Td, Th } from '~/app/_components/ui';
import type { InvoiceStatus } from '~/server/core/billing/payments';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatCount, formatDay, formatEuros } from '~/server/i18n/format';
import { InvoiceStatusBadge } from '../../invoices/invoice-status';

export interface OpenItemRow {
  invoiceId: string;
  number: string;
  orgName: string;
  dueDate: string | null;
  grossCents: number;
  openCents: number;
  daysOverdue: number;
  status: InvoiceStatus;
}

export function OpenItems({ rows, t, locale }: { rows: OpenItemRow[]; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  return (
    <div className="space-y-3">
      <p className="text-sm text-slate-600">{t('payment.openItems.explain')}</p>
      <a href="/api/invoices/open-items.csv" download className="inline-block rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-50">
        {t('payment.openItems.csv')}
      </a>
      {rows.length === 0 ? (
        <p className="text-sm text-slate-600">{t('payment.openItems.none')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('invoice.number')}</Th>
              <Th>{t('staff.audit.tenant')}</Th>
              <Th>{t('invoice.dueOn')}</Th>
              <Th className="text-right">{t('invoice.gross')}</Th>
              <Th className="text-right">{t('invoice.open')}</Th>
              <Th className="text-right">{t('invoice.daysOverdue')}</Th>
              <Th>{t('invoice.statusLabel')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {rows.map((row) => (
              <tr key={row.invoiceId}>
                <Td>
                  <Link href={`/invoices/${row.invoiceId}`} className="font-medium whitespace-nowrap text-indigo-700 tabular-nums hover:underline">
                    {row.number}
                  </Link>
                </Td>
                <Td>{row.orgName}</Td>
                <Td className="whitespace-nowrap text-slate-600">{row.dueDate ? formatDay(locale, row.dueDate) : '–'}</Td>
                <Td className="text-right whitespace-nowrap tabular-nums">{formatEuros(locale, row.grossCents)}</Td>
                <Td className="text-right font-medium whitespace-nowrap tabular-nums">{formatEuros(locale, row.openCents)}</Td>
                <Td className="text-right tabular-nums">{formatCount(locale, row.daysOverdue)}</Td>
                <Td>
                  <InvoiceStatusBadge status={row.status} t={t} />
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </div>
  );
}
