import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { JobDetail } from './job-detail';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('jobs.jobTitle') };
}

export default async function JobPage({ params }: { params: Promise<{ id: string }> }) {
  await requireUser();
  const { id } = await params;
  const caller = await api();
  const job = await caller.job.get({ jobId: id }).catch(() => undefined);
  if (!job) notFound();
  return <JobDetail jobId={id} />;
}
