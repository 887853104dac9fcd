// The invoice's payment status, balance, payments and reminders; staff admins record and reverse payments here.
import { Card, Table, Td, Th } from '~/app/_components/ui';
import type { InvoiceStatus } from '~/server/core/billing/payments';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatDay, formatEuros } from '~/server/i18n/format';
import { InvoiceStatusBadge } from '../invoice-status';
import { RecordPaymentForm, ReversePaymentForm } from './payment-forms';

export interface InvoicePayments {
  id: string;
  status: InvoiceStatus;
  dueDate: string | null;
  grossCents: number;
  paidCents: number;
  creditedGrossCents: number;
  openCents: number;
  payments: { id: string; paidOn: string; amountCents: number; reference: string; reversesId: string | null }[];
  reminders: { level: number; sentOn: string }[];
}

export function PaymentsCard({ invoice, t, locale, isAdmin, today }: { invoice: InvoicePayments; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; isAdmin: boolean; today: string }) {
  const reversed = new Set(invoice.payments.map((p) => p.reversesId).filter(Boolean));
  return (
    <Card title={t('payment.title')} actions={<InvoiceStatusBadge status={invoice.status} t={t} />} className="print:hidden">
      <dl className="grid max-w-sm grid-cols-[1fr_auto] gap-x-6 gap-y-1 text-sm">
        <dt className="text-slate-600">{t('invoice.grossTotal')}</dt>
        <dd className="text-right tabular-nums">{formatEuros(locale, invoice.grossCents)}</dd>
        <dt className="text-slate-600">{t('invoice.paid')}</dt>
        <dd className="text-right tabular-nums">{formatEuros(locale, invoice.paidCents)}</dd>
        <dt className="text-slate-600">{t('invoice.credited')}</dt>
        <dd className="text-right tabular-nums">{formatEuros(locale, invoice.creditedGrossCents)}</dd>
        <dt className="border-t border-slate-300 pt-1 font-semibold text-slate-900">{t('invoice.open')}</dt>
        <dd className="border-t border-slate-300 pt-1 text-right font-semibold tabular-nums" data-testid="invoice-open-balance">
          {formatEuros(locale, invoice.openCents)}
        </dd>
      </dl>
      <p className="mt-2 text-xs text-slate-500">{t('payment.explain')}</p>
      {invoice.reminders.map((r) => (
        <p key={r.level} className="mt-1 text-sm text-slate-600">
          {t('payment.reminderSent', { level: r.level, day: formatDay(locale, r.sentOn) })}
        </p>
      ))}
      <div className="mt-4">
        {invoice.payments.length === 0 ? (
          <p className="text-sm text-slate-600">{t('payment.none')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('payment.paidOn')}</Th>
                <Th className="text-right">{t('payment.amount')}</Th>
                <Th>{t('payment.reference')}</Th>
                {isAdmin && (
                  <Th>
                    <span className="sr-only">{t('payment.reverse.submit')}</span>
                  </Th>
                )}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {invoice.payments.map((p) => (
                <tr key={p.id} data-testid="invoice-payment">
                  <Td className="whitespace-nowrap">{formatDay(locale, p.paidOn)}</Td>
                  <Td className="text-right whitespace-nowrap tabular-nums">{formatEuros(locale, p.amountCents)}</Td>
                  <Td>{p.reversesId ? `${t('payment.reversal')}: ${p.reference}` : p.reference}</Td>
                  {isAdmin && <Td>{p.amountCents > 0 && !reversed.has(p.id) && <ReversePaymentForm paymentId={p.id} label={t('payment.reverse.label', { amount: formatEuros(locale, p.amountCents), day: formatDay(locale, p.paidOn) })} />}</Td>}
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </div>
      {isAdmin && invoice.openCents > 0 && (
        <div className="mt-6 border-t border-slate-200 pt-4">
          <h3 className="mb-3 text-sm font-semibold text-slate-900">{t('payment.record.title')}</h3>
          <RecordPaymentForm invoiceId={invoice.id} openLabel={formatEuros(locale, invoice.openCents)} today={today} />
        </div>
      )}
    </Card>
  );
}
