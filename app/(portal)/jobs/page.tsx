import type { Metadata } from 'next';
import Link from 'next/link';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { JobList } from './job-list';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('jobs.title') };
}

export default async function JobsPage() {
  await requireUser();
  const { t } = await getT();
  const caller = await api();
  const [projects, org] = await Promise.all([caller.project.list(), caller.organisation.current()]);
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('jobs.title')}
        subtitle={t('jobs.subtitle')}
        actions={
          <div className="flex gap-2">
            {org.kind === 'company' && (
              <Link href="/jobs/new?template=fine-tune" className="rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-50">
                {t('jobs.templateFineTune')}
              </Link>
            )}
            <Link href="/jobs/new" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
              {t('jobs.submitTitle')}
            </Link>
          </div>
        }
      />
      <JobList projects={projects.map((p) => ({ id: p.id, title: p.title }))} />
    </div>
  );
}
