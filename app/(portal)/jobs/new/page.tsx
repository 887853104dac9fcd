import type { Metadata } from 'next';
import Link from 'next/link';
import { Alert, PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { SubmitJobForm, type JobDraft } from './submit-job-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('jobs.submitTitle') };
}

type Caller = Awaited<ReturnType<typeof api>>;

/** cloneDraft reads a job of the tenant into the form's values; environment values the viewer may not read stay out (their names as comments). */
async function cloneDraft(caller: Caller, jobId: string): Promise<{ name: string; draft: Partial<JobDraft> } | undefined> {
  if (!/^[0-9a-f-]{36}$/.test(jobId)) return undefined;
  const job = await caller.job.get({ jobId }).catch(() => undefined);
  if (!job) return undefined;
  const estimate = (job.estimate ?? {}) as { template?: string; assumptions?: Record<string, string | number> };
  const fineTune = estimate.template === 'fine-tune';
  const assumption = (key: string) => (estimate.assumptions?.[key] !== undefined ? String(estimate.assumptions[key]) : undefined);
  return {
    name: job.name,
    draft: {
      template: fineTune ? 'fine-tune' : 'custom',
      allocationId: job.allocationId,
      resourceClassId: job.resourceClassId,
      // A session copied into the batch form is run as a batch job of the same command.
      kind: job.kind === 'interactive' ? 'batch' : job.kind,
      name: job.name,
      gpus: String(job.gpus),
      nodes: String(job.nodes),
      walltimeHours: String(Math.round((job.walltimeSeconds / 3600) * 100) / 100),
      image: job.image,
      command: job.command,
      envText: job.env.map((e) => (e.value === null ? `# ${e.name}=` : `${e.name}=${e.value}`)).join('\n'),
      // An array again as its task indexes (a list sweep's values are already in its command).
      ...(job.array ? { sweep: { mode: 'indexes' as const, name: 'LR', values: '', indexes: job.array.text.replace(/%\d+$/, ''), atOnce: job.array.throttle === null ? '' : String(job.array.throttle) } } : {}),
      ...(fineTune ? { params: assumption('paramsBillions'), tokens: assumption('tokensBillions'), utilisation: assumption('utilisationPercent') } : {}),
    },
  };
}

export default async function NewJobPage({ searchParams }: { searchParams: Promise<{ template?: string; allocation?: string; clone?: string }> }) {
  await requireUser();
  const { template, allocation, clone } = await searchParams;
  const { t } = await getT();
  const caller = await api();
  const [targets, org, cloned] = await Promise.all([caller.job.targets(), caller.organisation.current(), clone ? cloneDraft(caller, clone) : undefined]);
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
        <SubmitJobForm targets={targets} initialTemplate={template === 'fine-tune' ? 'fine-tune' : 'custom'} initialAllocationId={allocation} companyTenant={org.kind === 'company'} clone={cloned} />
      )}
    </div>
  );
}
