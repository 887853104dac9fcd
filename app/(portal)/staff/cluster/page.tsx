import type { Metadata } from 'next';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { env } from '~/server/env.js';
import { BudgetsView } from './budgets-view';
import { ClusterView } from './cluster-view';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('cluster.title') };
}

export default async function ClusterPage() {
  await requireStaff();
  const { t } = await getT();
  const config = env();
  return (
    <div className="space-y-6">
      <PageHeader title={t('cluster.title')} subtitle={config.SCHEDULER === 'slurm' ? t('cluster.subtitleSlurm', { cluster: config.SLURM_CLUSTER ?? '' }) : t('cluster.subtitle')} />
      <ClusterView />
      <BudgetsView />
    </div>
  );
}
