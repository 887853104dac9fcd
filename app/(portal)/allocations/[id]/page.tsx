import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { AllocationView } from '~/app/_components/allocation-view';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('allocation.title') };
}

export default async function AllocationPage({ params }: { params: Promise<{ id: string }> }) {
  await requireUser();
  const { id } = await params;
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const a = await caller.allocation.overview({ allocationId: id }).catch(() => undefined);
  if (!a) notFound();
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('allocation.title')}
        subtitle={
          <Link href={`/projects/${a.projectId}`} className="text-indigo-700 hover:underline">
            {a.projectTitle}
          </Link>
        }
      />
      <AllocationView a={a} t={t} locale={locale} timeZone={timeZone} />
    </div>
  );
}
