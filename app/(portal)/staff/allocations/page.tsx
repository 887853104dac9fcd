import type { Metadata } from 'next';
import { AllocationTable } from '~/app/_components/allocation-table';
import { Card, PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { addDays } from '~/server/core/working-days';
import { CreditLineForm } from './credit-line-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('staffAllocations.title') };
}

export default async function StaffAllocationsPage() {
  const me = await requireStaff();
  const { t, locale } = await getT();
  const caller = await api();
  const [rows, companyProjects] = await Promise.all([caller.staff.allocations({}), me.staffRoles.includes('admin') ? caller.staff.companyProjects() : Promise.resolve([])]);
  const today = new Date().toISOString().slice(0, 10);
  return (
    <div className="space-y-6">
      <PageHeader title={t('staffAllocations.title')} />
      <CreditLineForm projects={companyProjects} today={today} yearLater={addDays(today, 365)} />
      <Card>
        {rows.length === 0 ? (
          <p className="text-sm text-slate-600">{t('project.noAllocations')}</p>
        ) : (
          <AllocationTable rows={rows} t={t} locale={locale} showTenant />
        )}
      </Card>
    </div>
  );
}
