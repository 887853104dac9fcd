import type { Metadata } from 'next';
import Link from 'next/link';
import { BudgetBar } from '~/app/_components/burn-down-chart';
import { Alert, Badge, Card, PageHeader, STATUS_TONE } from '~/app/_components/ui';
import { formatAmount, formatCount, formatEuros } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { CompanyChecklist, type ChecklistStep } from './company-checklist';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('dashboard.title') };
}

function Stat({ label, value, href }: { label: string; value: string; href?: string }) {
  const body = (
    <>
      <dt className="text-sm text-slate-600">{label}</dt>
      <dd className="mt-1 text-3xl font-semibold tabular-nums">{value}</dd>
    </>
  );
  return href ? (
    <Link href={href} className="block rounded-md p-3 ring-1 ring-slate-200 hover:bg-slate-50">
      {body}
    </Link>
  ) : (
    <div className="rounded-md p-3 ring-1 ring-slate-200">{body}</div>
  );
}

export default async function DashboardPage() {
  const { t, locale } = await getT();
  const me = await requireUser();
  const caller = await api();
  const [org, counts, queue] = await Promise.all([
    caller.organisation.current().catch(() => undefined),
    me.staffRoles.length ? caller.staff.tenantCounts() : Promise.resolve(undefined),
    me.staffRoles.length ? caller.staff.applicationQueue() : Promise.resolve(undefined),
  ]);
  const company = org?.kind === 'company';
  // Accepting the price list opens a starter line only for a company without a credit line: with one
  // from staff the step does not apply (it would change no money) and is not offered.
  const offerPriceList = company && !org.hasCreditLine && org.priceListAcceptedAt === null;
  const [projects, billing, someJob, prices] = await Promise.all([
    org ? caller.project.list() : Promise.resolve([]),
    company ? caller.organisation.billingProfile() : Promise.resolve(null),
    company ? caller.job.list({ status: 'all', limit: 1 }) : Promise.resolve([]),
    offerPriceList ? caller.catalogue.priceList() : Promise.resolve(null),
  ]);
  const steps: ChecklistStep[] | null =
    org && company
      ? [
          { key: 'emailConfirmed', done: me.emailVerified, hint: t('checklist.emailConfirmedHint') },
          { key: 'verified', done: org.status === 'active', hint: t('checklist.verifiedHint') },
          { key: 'billingProfile', done: billing !== null, href: '/organisation', hint: t('checklist.billingProfileHint') },
          ...(offerPriceList
            ? [
                {
                  key: 'priceList' as const,
                  done: false,
                  href: '/prices',
                  hint: prices ? t('checklist.priceListHint', { credit: formatEuros(locale, prices.payAsYouGo.startingCreditCents), days: prices.payAsYouGo.durationDays }) : undefined,
                },
              ]
            : []),
          { key: 'firstJob', done: someJob.length > 0, href: '/jobs/new', hint: t('checklist.firstJobHint') },
        ]
      : null;
  return (
    <div className="space-y-6">
      <PageHeader title={t('dashboard.title')} subtitle={t('dashboard.welcome', { name: me.name })} />
      {counts && (
        <Card title={t('dashboard.staffTitle')} actions={<Link className="text-sm font-medium text-indigo-700 hover:underline" href="/staff/tenants?status=pending_verification">{t('dashboard.reviewTenants')}</Link>}>
          <dl className="grid gap-4 sm:grid-cols-4">
            <Stat label={t('dashboard.applicationsWaiting')} value={formatCount(locale, queue?.length ?? 0)} href="/staff/applications" />
            <Stat label={t('dashboard.tenantsPending')} value={formatCount(locale, counts.pending_verification)} href="/staff/tenants?status=pending_verification" />
            <Stat label={t('dashboard.tenantsActive')} value={formatCount(locale, counts.active)} href="/staff/tenants?status=active" />
            <Stat label={t('dashboard.tenantsSuspended')} value={formatCount(locale, counts.suspended)} href="/staff/tenants?status=suspended" />
          </dl>
        </Card>
      )}
      {org ? (
        <>
          {org.status === 'pending_verification' && (
            <Alert tone="warning" title={t('dashboard.pendingTitle')}>
              {me.emailVerified ? t('dashboard.pendingBody', { org: org.name }) : t('dashboard.pendingBodyUnconfirmed', { org: org.name })}
            </Alert>
          )}
          {steps?.some((step) => !step.done) && org.status !== 'suspended' && <CompanyChecklist steps={steps} paths={offerPriceList ? t('checklist.paths') : undefined} t={t} />}
          {org.status === 'suspended' && (
            <Alert tone="error" title={t('dashboard.suspendedTitle')}>
              {t('dashboard.suspendedBody', { org: org.name, reason: org.statusReason ?? '—' })}
            </Alert>
          )}
          <Card title={t('dashboard.organisation')}>
            <dl className="grid gap-4 sm:grid-cols-3">
              <div>
                <dt className="text-sm text-slate-600">{org.name}</dt>
                <dd className="mt-1">
                  <Badge tone={STATUS_TONE[org.status]}>{t(`status.${org.status}`)}</Badge>
                </dd>
              </div>
              <div>
                <dt className="text-sm text-slate-600">{t('dashboard.yourRole')}</dt>
                <dd className="mt-1 font-medium">{t(`role.${org.myRole}`)}</dd>
              </div>
              <div>
                <dt className="text-sm text-slate-600">{t('dashboard.members')}</dt>
                <dd className="mt-1 font-medium tabular-nums">{org.memberCount}</dd>
              </div>
            </dl>
          </Card>
          <Card title={t('projects.title')} actions={<Link className="text-sm font-medium text-indigo-700 hover:underline" href="/projects/new">{t('projects.new')}</Link>}>
            {projects.length === 0 ? (
              <p className="text-sm text-slate-600">{t('projects.empty')}</p>
            ) : (
              <ul className="divide-y divide-slate-100">
                {projects.map((p) => (
                  <li key={p.id} className="grid gap-2 py-3 sm:grid-cols-[1fr_20rem] sm:items-center">
                    <Link href={`/projects/${p.id}`} className="font-medium text-indigo-700 hover:underline">
                      {p.title}
                    </Link>
                    <div className="space-y-1">
                      {p.activeAllocations.length === 0 && <p className="text-xs text-slate-500">{t('projects.noActiveAllocation')}</p>}
                      {p.activeAllocations.map((a, i) => (
                        <div key={i}>
                          <p className="text-xs text-slate-600">{t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })}</p>
                          <BudgetBar granted={a.granted} charged={a.charged} reserved={a.reserved} label={t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) })} />
                        </div>
                      ))}
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </>
      ) : (
        !counts && <Alert tone="info">{t('dashboard.noOrganisation')}</Alert>
      )}
    </div>
  );
}
