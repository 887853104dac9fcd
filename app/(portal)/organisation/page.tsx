import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Badge, Card, PageHeader, STATUS_TONE } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { COUNTRIES } from '~/server/core/countries';
import { roleAtLeast } from '~/server/core/roles';
import { BillingProfileForm } from './billing-profile-form';
import { CreditRequestForm } from './credit-request-form';
import { InvitationsPanel } from './invitations-panel';
import { MembersTable } from './members-table';
import { MonthlyCapForm } from './monthly-cap-form';
import { SpendLimitsForm } from './spend-limits-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('org.title') };
}

export default async function OrganisationPage() {
  const { t, locale } = await getT();
  await requireUser();
  const caller = await api();
  const org = await caller.organisation.current().catch(() => undefined);
  if (!org) notFound();
  const canManage = roleAtLeast(org.myRole, 'manager') && org.status !== 'suspended';
  const ownsCompany = org.kind === 'company' && org.myRole === 'owner';
  const setsLimits = org.kind === 'company' && canManage;
  const [members, invitations, me, billing, credit, limits] = await Promise.all([
    caller.organisation.members(),
    roleAtLeast(org.myRole, 'manager') ? caller.organisation.invitations() : Promise.resolve([]),
    caller.account.me(),
    org.kind === 'company' ? caller.organisation.billingProfile() : Promise.resolve(null),
    ownsCompany ? caller.organisation.creditLines() : Promise.resolve(null),
    setsLimits ? caller.organisation.spendLimits() : Promise.resolve([]),
  ]);
  const country = new Intl.DisplayNames([locale], { type: 'region' }).of(org.country) ?? org.country;
  return (
    <div className="space-y-6">
      <PageHeader title={org.name} subtitle={t('org.title')} actions={<Badge tone={STATUS_TONE[org.status]}>{t(`status.${org.status}`)}</Badge>} />
      <Card title={t('org.details')}>
        <dl className="grid gap-4 text-sm sm:grid-cols-4">
          <div>
            <dt className="text-slate-600">{t('field.orgKind')}</dt>
            <dd className="mt-1 font-medium">{t(`kind.${org.kind}`)}</dd>
          </div>
          <div>
            <dt className="text-slate-600">{t('field.country')}</dt>
            <dd className="mt-1 font-medium">{country}</dd>
          </div>
          <div>
            <dt className="text-slate-600">{t('staff.tenants.residency')}</dt>
            <dd className="mt-1 font-medium">{t(`residency.${org.residency}`)}</dd>
          </div>
          <div>
            <dt className="text-slate-600">{t('dashboard.yourRole')}</dt>
            <dd className="mt-1 font-medium">{t(`role.${org.myRole}`)}</dd>
          </div>
        </dl>
      </Card>
      <Card title={`${t('org.members')} (${members.length})`}>
        <MembersTable
          orgName={org.name}
          members={members.map((m) => ({ ...m, since: m.since.toISOString() }))}
          myUserId={me.userId}
          myRole={org.myRole}
          canManage={canManage}
        />
        {!canManage && <p className="mt-3 text-xs text-slate-500">{t('org.readOnly')}</p>}
      </Card>
      {org.kind === 'company' && <BillingProfileForm profile={billing && { ...billing, updatedAt: billing.updatedAt.toISOString() }} countries={COUNTRIES} defaultCountry={org.country} canEdit={canManage} />}
      {org.kind === 'company' && org.myRole === 'owner' && org.status !== 'suspended' && <MonthlyCapForm capCents={org.monthlyCapCents} />}
      {setsLimits && <SpendLimitsForm people={members.map((m) => ({ userId: m.userId, name: m.name, monthlyCents: limits.find((l) => l.userId === m.userId)?.monthlyCents ?? null }))} />}
      {credit && org.status === 'active' && (
        <CreditRequestForm lines={credit.lines} requests={credit.requests.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }))} />
      )}
      {canManage && (
        <InvitationsPanel
          myRole={org.myRole}
          invitations={invitations.map((i) => ({ id: i.id, email: i.email, role: i.role, expiresAt: i.expiresAt.toISOString() }))}
        />
      )}
    </div>
  );
}
