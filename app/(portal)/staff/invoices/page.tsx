import type { Metadata } from 'next';
import { Card, PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { monthOf, previousMonth } from '~/server/core/billing/invoicing';
import { IssueMonthlyButton, IssueOneForm } from './invoice-actions';
import { InvoiceTable } from '../../invoices/invoice-table';
import { env } from '~/server/env.js';
import { LiftBlockForm } from './lift-block-form';
import { OpenItems } from './open-items';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('invoice.staffTitle') };
}

export default async function StaffInvoicesPage() {
  const me = await requireStaff();
  const { t, locale } = await getT();
  const caller = await api();
  const isAdmin = me.staffRoles.includes('admin');
  const [rows, open, tenants] = await Promise.all([caller.invoice.staffList({}), caller.invoice.openItems(), isAdmin ? caller.staff.tenants({}) : Promise.resolve([])]);
  const blockDays = env().INVOICE_OVERDUE_BLOCK_DAYS;
  const today = new Date().toISOString().slice(0, 10);
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
            <IssueOneForm tenants={companies} defaultMonth={previousMonth(new Date())} currentMonth={monthOf(new Date())} />
          </Card>
        </div>
      )}
      <Card title={t('payment.openItems.title')}>
        <OpenItems rows={open} t={t} locale={locale} />
      </Card>
      {isAdmin && (
        <Card title={t('payment.lift.title')}>
          {blockDays === undefined ? (
            <p className="text-sm text-slate-600">{t('payment.lift.policyOff')}</p>
          ) : (
            <>
              <p className="mb-3 text-sm text-slate-600">{t('payment.lift.explain', { days: blockDays })}</p>
              <LiftBlockForm tenants={companies} today={today} />
            </>
          )}
        </Card>
      )}
      <Card>
        {rows.length === 0 ? (
          <p className="text-sm text-slate-600">{t('invoice.noneStaff')}</p>
        ) : (
          <InvoiceTable rows={rows} t={t} locale={locale} showTenant />
        )}
      </Card>
    </div>
  );
}
