import type { Metadata } from 'next';
import Link from 'next/link';
import { BudgetBar } from '~/app/_components/burn-down-chart';
import { Card, PageHeader } from '~/app/_components/ui';
import { formatAmount } from '~/server/i18n/format';
import { purposeLine } from '~/app/_lib/project-purpose';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('projects.title') };
}

export default async function ProjectsPage() {
  await requireUser();
  const { t, locale } = await getT();
  const caller = await api();
  const projects = await caller.project.list();
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('projects.title')}
        subtitle={t('projects.subtitle')}
        actions={
          <Link href="/projects/new" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
            {t('projects.new')}
          </Link>
        }
      />
      {projects.length === 0 ? (
        <Card>
          <p className="text-sm text-slate-600">{t('projects.empty')}</p>
        </Card>
      ) : (
        <ul className="grid gap-4 md:grid-cols-2">
          {projects.map((p) => (
            <li key={p.id}>
              <Link href={`/projects/${p.id}`} className="block h-full rounded-lg bg-white p-5 shadow-sm ring-1 ring-slate-200 hover:ring-indigo-300">
                <h2 className="font-semibold text-slate-900">{p.title}</h2>
                <p className="mt-1 text-sm text-slate-600">
                  {[purposeLine(t, p), `${t('projects.pi')}: ${p.piName}`].filter(Boolean).join(' · ')}
                </p>
                <div className="mt-4 space-y-3">
                  {p.activeAllocations.length === 0 && <p className="text-sm text-slate-500">{t('projects.noActiveAllocation')}</p>}
                  {p.activeAllocations.map((a, i) => (
                    <div key={i} className="space-y-1">
                      <div className="flex justify-between text-xs text-slate-600">
                        <span>{t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })}</span>
                        <span>{t('allocation.remainingShort', { remaining: formatAmount(locale, a.unit, a.granted - a.charged - a.reserved - a.expired) })}</span>
                      </div>
                      <BudgetBar granted={a.granted} charged={a.charged} reserved={a.reserved} label={t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })} />
                    </div>
                  ))}
                </div>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
