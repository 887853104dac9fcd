import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { ApplicationForm } from '~/app/_components/application-form';
import { PageHeader } from '~/app/_components/ui';
import { formatDay } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { addDays } from '~/server/core/working-days';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('project.apply') };
}

export default async function ApplyPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ mode?: string }> }) {
  await requireUser();
  const { id } = await params;
  const { mode } = await searchParams;
  const { t, locale } = await getT();
  const caller = await api();
  const data = await caller.project.get({ projectId: id }).catch(() => undefined);
  if (!data?.canManage) notFound();
  const [modes, classes, org] = await Promise.all([caller.catalogue.accessModes(), caller.catalogue.resourceClasses(), caller.organisation.current()]);
  const today = new Date().toISOString().slice(0, 10);
  const chosen = modes.find((m) => m.id === mode) ?? modes.find((m) => m.id === 'development') ?? modes[0]!;
  return (
    <div className="space-y-6">
      <PageHeader title={t('project.apply')} subtitle={data.project.title} />
      <ApplicationForm
        projectId={id}
        tenantKind={org.kind}
        modes={modes}
        classes={classes}
        baseAllocations={data.allocations.filter((a) => a.unit === 'gpu_seconds' && a.status === 'active').map((a) => ({ id: a.id, label: `${a.resourceClassName ?? ''} (${formatDay(locale, a.periodStart)} – ${formatDay(locale, a.periodEnd)})`, periodStart: a.periodStart, periodEnd: a.periodEnd }))}
        initial={{ accessModeId: chosen.id, kind: 'new', periodStart: today, periodEnd: addDays(today, Math.min(chosen.durationDays, 90)), justification: '', gpuHours: {} }}
      />
    </div>
  );
}
