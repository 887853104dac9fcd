// What-if planning for staff: queue a replay of a period of the centre's own history on a proposed
// machine (the worker runs it), and follow the runs; each run's page compares the two machines.
import type { Metadata } from 'next';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { addDays } from '~/server/core/working-days';
import { NewRunForm } from './new-run-form';
import { RunList } from './run-list';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('whatIf.title') };
}

export default async function WhatIfPage() {
  await requireStaff();
  const { t } = await getT();
  const today = new Date().toISOString().slice(0, 10);
  return (
    <div className="space-y-6">
      <PageHeader title={t('whatIf.title')} subtitle={t('whatIf.subtitle')} />
      <NewRunForm defaultFrom={addDays(today, -90)} defaultTo={addDays(today, -1)} today={today} />
      <RunList />
      <p className="max-w-3xl text-xs text-slate-600">{t('whatIf.note')}</p>
    </div>
  );
}
