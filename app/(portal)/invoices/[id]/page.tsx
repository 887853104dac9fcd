import type { Metadata } from 'next';
import Link from 'next/link';
import { Fragment } from 'react';
import { notFound } from 'next/navigation';
import { Card, Table, Td, Th } from '~/app/_components/ui';
import { formatEuros } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { invoiceContent, type PartyBlock } from '~/server/documents/invoice-content';
import { CreditNoteForm } from './credit-note-form';
import { PaymentsCard } from './payments-card';
import { PrintButton } from './print-button';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('invoice.document') };
}

/** The printable invoice: issuer, recipient, dates, lines, totals, legal notes and credit notes; the PDF says the same (invoice-content.ts). */
export default async function InvoicePage({ params }: { params: Promise<{ id: string }> }) {
  const me = await requireUser();
  const { id } = await params;
  const { t, locale } = await getT();
  const caller = await api();
  const isStaff = me.staffRoles.length > 0;
  const invoice = await (isStaff ? caller.invoice.staffGet({ id }) : caller.invoice.get({ id })).catch(() => undefined);
  if (!invoice) notFound();
  const isAdmin = me.staffRoles.includes('admin');
  const doc = invoiceContent(invoice, t, locale);

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3 print:hidden">
        <Link href={isStaff ? '/staff/invoices' : '/invoices'} className="text-sm text-indigo-700 hover:underline">
          ← {t('common.back')}
        </Link>
        <div className="flex flex-wrap items-center gap-3">
          <a href={`/api/invoices/${invoice.id}/pdf`} download className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-50">
            {t('invoice.downloadPdf')}
          </a>
          <EInvoiceLinks invoiceId={invoice.id} label={t('invoice.eInvoice.title')} xrechnung={t('invoice.downloadXRechnung')} facturX={t('invoice.downloadFacturX')} />
          <PrintButton />
        </div>
      </div>

      <article className="rounded-lg bg-white p-8 shadow-sm ring-1 ring-slate-200 print:p-0 print:shadow-none print:ring-0" aria-labelledby="invoice-title">
        <header className="flex flex-wrap items-start justify-between gap-6 border-b border-slate-200 pb-6">
          <Party block={doc.issuer} accent />
          <div className="text-right">
            <h1 id="invoice-title" className="text-2xl font-semibold tracking-tight text-slate-900">
              {doc.title}
            </h1>
            <p className="mt-1 font-medium text-slate-900 tabular-nums">{doc.number}</p>
          </div>
        </header>

        <div className="grid gap-6 border-b border-slate-200 py-6 sm:grid-cols-2">
          <Party block={doc.recipient} />
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm sm:justify-self-end">
            {doc.facts.map(([label, value]) => (
              <Fragment key={label}>
                <dt className="text-slate-600">{label}</dt>
                <dd className="font-medium tabular-nums">{value}</dd>
              </Fragment>
            ))}
          </dl>
        </div>

        <div className="py-6">
          <Table>
            <thead>
              <tr>
                {doc.columns.map((column) => (
                  <Th key={column.label} className={column.numeric ? 'text-right' : undefined}>
                    {column.label}
                  </Th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {doc.rows.map((row) => (
                <tr key={row[0]}>
                  {row.map((cell, i) => (
                    <Td key={i} className={doc.columns[i]?.numeric ? 'text-right whitespace-nowrap tabular-nums' : i === 1 ? 'font-medium' : 'text-slate-600 tabular-nums'}>
                      {cell}
                    </Td>
                  ))}
                </tr>
              ))}
            </tbody>
          </Table>

          <dl className="mt-6 ml-auto grid max-w-sm grid-cols-[1fr_auto] gap-x-6 gap-y-2 text-sm">
            {doc.totals.map((total) =>
              total.id === 'gross' ? (
                <Fragment key={total.id}>
                  <dt className="border-t border-slate-300 pt-2 font-semibold text-slate-900">{total.label}</dt>
                  <dd className="border-t border-slate-300 pt-2 text-right font-semibold text-slate-900 tabular-nums" data-testid="invoice-gross">
                    {total.value}
                  </dd>
                </Fragment>
              ) : (
                <Fragment key={total.id}>
                  <dt className="text-slate-600">{total.label}</dt>
                  <dd className="text-right tabular-nums" data-testid={`invoice-${total.id}`}>
                    {total.value}
                  </dd>
                </Fragment>
              ),
            )}
          </dl>
          <div className="mt-6 space-y-2 text-sm text-slate-700">
            {doc.notes.map((note) => (
              <p key={note.text} className={note.prominent ? 'font-medium' : 'text-xs text-slate-500'} data-testid={note.text === t('invoice.reverseCharge') ? 'invoice-reverse-charge' : undefined}>
                {note.text}
              </p>
            ))}
          </div>
        </div>

        {doc.creditNotes && (
          <section className="border-t border-slate-200 pt-6 print:break-inside-avoid" aria-labelledby="credit-notes-title">
            <h2 id="credit-notes-title" className="text-base font-semibold text-slate-900">
              {doc.creditNotes.heading}
            </h2>
            <p className="mt-1 text-sm text-slate-600">{doc.creditNotes.note}</p>
            <div className="mt-3">
              <Table>
                <thead>
                  <tr>
                    {doc.creditNotes.columns.map((column) => (
                      <Th key={column.label} className={column.numeric ? 'text-right' : undefined}>
                        {column.label}
                      </Th>
                    ))}
                    {/* A visible header: an sr-only one is positioned outside the scroll box and widened the page at 390 px. */}
                    <Th className="print:hidden">{t('invoice.creditNote.downloads')}</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {doc.creditNotes.rows.map((row, r) => (
                    <tr key={row[0]}>
                      {row.map((cell, i) => (
                        <Td key={i} className={doc.creditNotes!.columns[i]?.numeric ? 'text-right tabular-nums' : i === 0 ? 'font-medium tabular-nums' : 'text-slate-600'}>
                          {cell}
                        </Td>
                      ))}
                      <Td className="print:hidden">
                        <span className="flex gap-x-3 whitespace-nowrap">
                          <a href={`/api/invoices/${invoice.id}/credit-notes/${invoice.creditNotes[r]!.id}/pdf`} download aria-label={t('invoice.creditNote.pdfLabel', { number: row[0]! })} className="text-indigo-700 hover:underline">
                            {t('invoice.creditNote.pdf')}
                          </a>
                          <a href={`/api/invoices/${invoice.id}/credit-notes/${invoice.creditNotes[r]!.id}/xrechnung`} download aria-label={t('invoice.creditNote.xrechnungLabel', { number: row[0]! })} className="text-indigo-700 hover:underline">
                            {t('invoice.creditNote.xrechnung')}
                          </a>
                          <a href={`/api/invoices/${invoice.id}/credit-notes/${invoice.creditNotes[r]!.id}/factur-x`} download aria-label={t('invoice.creditNote.facturXLabel', { number: row[0]! })} className="text-indigo-700 hover:underline">
                            {t('invoice.creditNote.facturX')}
                          </a>
                        </span>
                      </Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            </div>
            <p className="mt-3 text-sm text-slate-700">{doc.creditNotes.remaining}</p>
          </section>
        )}

        {doc.footer.length > 0 && (
          <footer className="mt-6 grid gap-4 border-t border-slate-200 pt-4 text-xs text-slate-600 sm:grid-cols-3">
            {doc.footer.map((column) => (
              <div key={column[0]}>
                {column.map((line) => (
                  <p key={line}>{line}</p>
                ))}
              </div>
            ))}
          </footer>
        )}
      </article>

      <PaymentsCard invoice={invoice} t={t} locale={locale} isAdmin={isAdmin} today={new Date().toISOString().slice(0, 10)} />

      {isAdmin && invoice.remainingNetCents > 0 && (
        <Card title={t('invoice.creditNote.title')} className="print:hidden">
          <CreditNoteForm invoiceId={invoice.id} remainingLabel={formatEuros(locale, invoice.remainingNetCents)} />
        </Card>
      )}
    </div>
  );
}

/** The invoice as EN 16931 e-invoices, for an accounts department's software: XRechnung (XML) and ZUGFeRD / Factur-X (PDF). */
function EInvoiceLinks({ invoiceId, label, xrechnung, facturX }: { invoiceId: string; label: string; xrechnung: string; facturX: string }) {
  const link = 'rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-50';
  return (
    <div role="group" aria-labelledby="e-invoice-label" className="flex flex-wrap items-center gap-2">
      <span id="e-invoice-label" className="text-sm text-slate-600">
        {label}:
      </span>
      <a href={`/api/invoices/${invoiceId}/xrechnung`} download className={link}>
        {xrechnung}
      </a>
      <a href={`/api/invoices/${invoiceId}/factur-x`} download className={link}>
        {facturX}
      </a>
    </div>
  );
}

function Party({ block, accent = false }: { block: PartyBlock; accent?: boolean }) {
  return (
    <div>
      <p className="text-xs font-semibold tracking-wide text-slate-500 uppercase">{block.heading}</p>
      <p className={accent ? 'mt-1 text-lg font-semibold text-indigo-700 print:text-slate-900' : 'mt-1 font-medium text-slate-900'}>{block.name}</p>
      {block.lines.map((line) => (
        <p key={line} className="text-sm text-slate-600">
          {line}
        </p>
      ))}
    </div>
  );
}
