import type { Metadata } from 'next';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { SessionsView } from './sessions-view';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('sessions.title') };
}

/** Interactive apps (issue #28): start a Jupyter notebook on a GPU node, open it, end it; the person's own sessions. */
export default async function AppsPage() {
  await requireUser();
  const { t } = await getT();
  const caller = await api();
  const [targets, apps] = await Promise.all([caller.job.targets(), caller.session.apps()]);
  return (
    <div className="space-y-6">
      <PageHeader title={t('sessions.title')} subtitle={t('sessions.subtitle')} />
      <SessionsView targets={targets} apps={apps} />
    </div>
  );
}
