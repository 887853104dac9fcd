import type { Metadata } from 'next';
import { PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { NewProjectForm } from './new-project-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('projects.new') };
}

export default async function NewProjectPage() {
  const me = await requireUser();
  const { t } = await getT();
  const caller = await api();
  const [members, org] = await Promise.all([caller.organisation.members(), caller.organisation.current()]);
  return (
    <div className="max-w-2xl space-y-6">
      <PageHeader title={t('projects.new')} subtitle={org.kind === 'company' ? t('projects.newIntroCompany') : t('projects.newIntro')} />
      <NewProjectForm tenantKind={org.kind} tenantResidency={org.residency} colleagues={members.filter((m) => m.userId !== me.userId).map((m) => ({ userId: m.userId, name: m.name, email: m.email }))} />
    </div>
  );
}
