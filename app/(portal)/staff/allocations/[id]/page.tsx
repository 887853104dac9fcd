import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { AllocationView } from '~/app/_components/allocation-view';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { AdjustForm } from './adjust-form';
import { LimitsForm } from './limits-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('allocation.title') };
}

export default async function StaffAllocationPage({ params }: { params: Promise<{ id: string }> }) {
  const me = await requireStaff();
  const { id } = await params;
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const a = await caller.staff.allocation({ allocationId: id }).catch(() => undefined);
  if (!a) notFound();
  return (
    <div className="space-y-6">
      <PageHeader title={`${a.projectTitle} · ${a.orgName}`} subtitle={t('allocation.title')} />
      {me.staffRoles.includes('admin') && a.status === 'active' && (
        <>
          <AdjustForm allocationId={a.id} unit={a.unit} money={a.money} />
          <LimitsForm allocationId={a.id} current={a} />
        </>
      )}
      <AllocationView a={a} t={t} locale={locale} timeZone={timeZone} />
    </div>
  );
}
