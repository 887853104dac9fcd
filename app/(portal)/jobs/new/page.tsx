import type { Metadata } from 'next';
import Link from 'next/link';
import { Alert, PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { SubmitJobForm } from './submit-job-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('jobs.submitTitle') };
}

export default async function NewJobPage({ searchParams }: { searchParams: Promise<{ template?: string; allocation?: string }> }) {
  await requireUser();
  const { template, allocation } = await searchParams;
  const { t } = await getT();
  const caller = await api();
  const [targets, org] = await Promise.all([caller.job.targets(), caller.organisation.current()]);
  return (
    <div className="space-y-6">
      <PageHeader title={t('jobs.submitTitle')} subtitle={t('jobs.submitSubtitle')} />
      {org.status !== 'active' && <Alert tone="warning">{t('job.tenantPending')}</Alert>}
      {targets.allocations.length === 0 ? (
        <Alert tone="info">
          {t('jobs.noAllocation')}{' '}
          <Link href="/projects" className="font-medium underline">
            {t('nav.projects')}
          </Link>
        </Alert>
      ) : (
        <SubmitJobForm targets={targets} initialTemplate={template === 'fine-tune' ? 'fine-tune' : 'custom'} initialAllocationId={allocation} companyTenant={org.kind === 'company'} />
      )}
    </div>
  );
}
