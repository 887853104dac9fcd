import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { Card, Table, Td, Th } from '~/app/_components/ui';
import { formatDay, formatEuros } from '~/app/_lib/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { formatInvoiceGpuHours, formatMonth, formatVatRate } from '../invoice-format';
import { CreditNoteForm } from './credit-note-form';
import { PrintButton } from './print-button';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('invoice.document') };
}

/** The printable invoice: issuer, recipient, number, dates, lines (GPU-hours × unit price), totals and credit notes. */
export default async function InvoicePage({ params }: { params: Promise<{ id: string }> }) {
  const me = await requireUser();
  const { id } = await params;
  const { t, locale } = await getT();
  const caller = await api();
  const isStaff = me.staffRoles.length > 0;
  const invoice = await (isStaff ? caller.invoice.staffGet({ id }) : caller.invoice.get({ id })).catch(() => undefined);
  if (!invoice) notFound();
  const isAdmin = me.staffRoles.includes('admin');
  const country = new Intl.DisplayNames([locale], { type: 'region' }).of(invoice.recipient.country) ?? invoice.recipient.country;
  const euros = (cents: number) => formatEuros(locale, cents);
  const rate = formatVatRate(locale, invoice.vatPermille);

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3 print:hidden">
        <Link href={isStaff ? '/staff/invoices' : '/invoices'} className="text-sm text-indigo-700 hover:underline">
          ← {t('common.back')}
        </Link>
        <PrintButton />
      </div>

      <article className="rounded-lg bg-white p-8 shadow-sm ring-1 ring-slate-200 print:p-0 print:shadow-none print:ring-0" aria-labelledby="invoice-title">
        <header className="flex flex-wrap items-start justify-between gap-6 border-b border-slate-200 pb-6">
          <div>
            <p className="text-xs font-semibold tracking-wide text-slate-500 uppercase">{t('invoice.issuer')}</p>
            <p className="mt-1 text-lg font-semibold text-indigo-700 print:text-slate-900">{t('app.name')}</p>
            <p className="text-sm text-slate-600">{t('app.tagline')}</p>
          </div>
          <div className="text-right">
            <h1 id="invoice-title" className="text-2xl font-semibold tracking-tight text-slate-900">
              {t('invoice.document')}
            </h1>
            <p className="mt-1 font-medium text-slate-900 tabular-nums">{invoice.number}</p>
          </div>
        </header>

        <div className="grid gap-6 border-b border-slate-200 py-6 sm:grid-cols-2">
          <div>
            <p className="text-xs font-semibold tracking-wide text-slate-500 uppercase">{t('invoice.recipient')}</p>
            <p className="mt-1 font-medium text-slate-900">{invoice.recipient.name}</p>
            <p className="text-sm text-slate-600">{country}</p>
          </div>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm sm:justify-self-end">
            <dt className="text-slate-600">{t('invoice.number')}</dt>
            <dd className="font-medium tabular-nums">{invoice.number}</dd>
            <dt className="text-slate-600">{t('invoice.issueDate')}</dt>
            <dd className="font-medium">{formatDay(locale, invoice.issuedAt.toISOString().slice(0, 10))}</dd>
            <dt className="text-slate-600">{t('invoice.servicePeriod')}</dt>
            <dd className="font-medium">
              {formatMonth(locale, invoice.month)} ({formatDay(locale, invoice.periodMonth)} – {formatDay(locale, invoice.periodLastDay)})
            </dd>
          </dl>
        </div>

        <div className="py-6">
          <Table>
            <thead>
              <tr>
                <Th>{t('invoice.lineNo')}</Th>
                <Th>{t('invoice.description')}</Th>
                <Th className="text-right">{t('invoice.jobs')}</Th>
                <Th className="text-right">{t('invoice.gpuHours')}</Th>
                <Th className="text-right">{t('invoice.unitPrice')}</Th>
                <Th className="text-right">{t('invoice.amount')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {invoice.lines.map((line) => (
                <tr key={line.lineNo}>
                  <Td className="text-slate-600 tabular-nums">{line.lineNo}</Td>
                  <Td className="font-medium">{line.description}</Td>
                  <Td className="text-right tabular-nums">{line.jobs}</Td>
                  <Td className="text-right whitespace-nowrap tabular-nums">{formatInvoiceGpuHours(locale, line.gpuSeconds)}</Td>
                  <Td className="text-right whitespace-nowrap tabular-nums">{t('invoice.perGpuHour', { price: euros(line.unitPriceCentsPerGpuHour) })}</Td>
                  <Td className="text-right whitespace-nowrap tabular-nums">{euros(line.netCents)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>

          <dl className="mt-6 ml-auto grid max-w-sm grid-cols-[1fr_auto] gap-x-6 gap-y-2 text-sm">
            <dt className="text-slate-600">{t('invoice.netTotal')}</dt>
            <dd className="text-right tabular-nums" data-testid="invoice-net">{euros(invoice.netCents)}</dd>
            <dt className="text-slate-600">{t('invoice.vatAt', { rate })}</dt>
            <dd className="text-right tabular-nums" data-testid="invoice-vat">{euros(invoice.vatCents)}</dd>
            <dt className="border-t border-slate-300 pt-2 font-semibold text-slate-900">{t('invoice.grossTotal')}</dt>
            <dd className="border-t border-slate-300 pt-2 text-right font-semibold text-slate-900 tabular-nums" data-testid="invoice-gross">{euros(invoice.grossCents)}</dd>
          </dl>
          <p className="mt-6 text-xs text-slate-500">{t('invoice.pricingNote')}</p>
        </div>

        {invoice.creditNotes.length > 0 && (
          <section className="border-t border-slate-200 pt-6 print:break-inside-avoid" aria-labelledby="credit-notes-title">
            <h2 id="credit-notes-title" className="text-base font-semibold text-slate-900">
              {t('invoice.creditNotes')}
            </h2>
            <p className="mt-1 text-sm text-slate-600">{t('invoice.creditNotesNote', { number: invoice.number })}</p>
            <div className="mt-3">
              <Table>
                <thead>
                  <tr>
                    <Th>{t('invoice.number')}</Th>
                    <Th>{t('invoice.issueDate')}</Th>
                    <Th>{t('common.reason')}</Th>
                    <Th className="text-right">{t('invoice.net')}</Th>
                    <Th className="text-right">{t('invoice.vat')}</Th>
                    <Th className="text-right">{t('invoice.gross')}</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {invoice.creditNotes.map((note) => (
                    <tr key={note.id}>
                      <Td className="font-medium tabular-nums">{note.number}</Td>
                      <Td className="whitespace-nowrap">{formatDay(locale, note.issuedAt.toISOString().slice(0, 10))}</Td>
                      <Td className="text-slate-600">{note.reason}</Td>
                      <Td className="text-right tabular-nums">−{euros(note.netCents)}</Td>
                      <Td className="text-right tabular-nums">−{euros(note.vatCents)}</Td>
                      <Td className="text-right font-medium tabular-nums">−{euros(note.grossCents)}</Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            </div>
            <p className="mt-3 text-sm text-slate-700">{t('invoice.remainingNet', { amount: euros(invoice.remainingNetCents) })}</p>
          </section>
        )}
      </article>

      {isAdmin && invoice.remainingNetCents > 0 && (
        <Card title={t('invoice.creditNote.title')} className="print:hidden">
          <CreditNoteForm invoiceId={invoice.id} remainingLabel={euros(invoice.remainingNetCents)} />
        </Card>
      )}
    </div>
  );
}
