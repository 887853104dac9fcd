import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { FilesBrowser } from './files-browser';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('files.title') };
}

/** A project's files: its workspace at each site its residency allows (issue #27). */
export default async function ProjectFilesPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ site?: string; path?: string }> }) {
  await requireUser();
  const [{ id }, query] = await Promise.all([params, searchParams]);
  const { t } = await getT();
  const caller = await api();
  const [data, sites] = await Promise.all([caller.project.get({ projectId: id }).catch(() => undefined), caller.files.sites({ projectId: id }).catch(() => undefined)]);
  if (!data || !sites) notFound();
  const site = sites.find((s) => s.id === query.site)?.id ?? sites[0]?.id ?? null;
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('files.title')}
        subtitle={
          <Link href={`/projects/${id}`} className="text-indigo-700 hover:underline">
            {data.project.title}
          </Link>
        }
      />
      {site ? <FilesBrowser projectId={id} sites={sites} initialSite={site} initialPath={typeof query.path === 'string' ? query.path : ''} /> : <p className="text-sm text-slate-600">{t('files.noSites')}</p>}
    </div>
  );
}
