// The list of invoices: the tenant's own, or all of them for staff (with the tenant's name).
import Link from 'next/link';
import { Table, Td, Th } from '~/app/_components/ui';
import { formatDay, formatEuros } from '~/server/i18n/format';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatMonth } from '~/server/documents/invoice-format';
import type { InvoiceStatus } from '~/server/core/billing/payments';
import { InvoiceStatusBadge } from './invoice-status';

export interface InvoiceRow {
  id: string;
  number: string;
  periodMonth: string;
  issuedAt: Date;
  netCents: number;
  vatCents: number;
  grossCents: number;
  creditedGrossCents: number;
  openCents: number;
  status: InvoiceStatus;
  dueDate: string | null;
  recipient: { name: string };
  orgName?: string;
}

export function InvoiceTable({ rows, t, locale, showTenant }: { rows: InvoiceRow[]; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; showTenant: boolean }) {
  return (
    <Table>
      <thead>
        <tr>
          <Th>{t('invoice.number')}</Th>
          {showTenant && <Th>{t('staff.audit.tenant')}</Th>}
          <Th>{t('invoice.statusLabel')}</Th>
          <Th className="text-right">{t('invoice.open')}</Th>
          <Th>{t('invoice.period')}</Th>
          <Th>{t('invoice.issuedOn')}</Th>
          <Th className="text-right">{t('invoice.net')}</Th>
          <Th className="text-right">{t('invoice.vat')}</Th>
          <Th className="text-right">{t('invoice.gross')}</Th>
          <Th className="text-right">{t('invoice.credited')}</Th>
          <Th>{t('invoice.dueOn')}</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {rows.map((invoice) => (
          <tr key={invoice.id}>
            <Td>
              <Link href={`/invoices/${invoice.id}`} className="font-medium whitespace-nowrap text-indigo-700 tabular-nums hover:underline">
                {invoice.number}
              </Link>
            </Td>
            {showTenant && <Td>{invoice.recipient.name === invoice.orgName ? invoice.orgName : `${invoice.orgName} (${invoice.recipient.name})`}</Td>}
            <Td>
              <InvoiceStatusBadge status={invoice.status} t={t} />
            </Td>
            <Td className="text-right font-medium whitespace-nowrap tabular-nums">
              <span data-testid="invoice-open">{formatEuros(locale, invoice.openCents)}</span>
            </Td>
            <Td>{formatMonth(locale, invoice.periodMonth)}</Td>
            <Td className="whitespace-nowrap text-slate-600">{formatDay(locale, invoice.issuedAt.toISOString().slice(0, 10))}</Td>
            <Td className="text-right tabular-nums">{formatEuros(locale, invoice.netCents)}</Td>
            <Td className="text-right tabular-nums">{formatEuros(locale, invoice.vatCents)}</Td>
            <Td className="text-right font-medium tabular-nums">{formatEuros(locale, invoice.grossCents)}</Td>
            <Td className="text-right text-slate-600 tabular-nums">{invoice.creditedGrossCents > 0 ? formatEuros(locale, invoice.creditedGrossCents) : '–'}</Td>
            <Td className="whitespace-nowrap text-slate-600">{invoice.dueDate ? formatDay(locale, invoice.dueDate) : '–'}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
