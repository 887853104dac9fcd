import Link from 'next/link';
import type { ReactNode } from 'react';
import { LanguageSwitch } from '~/app/_components/language-switch';
import { PortalNav } from '~/app/_components/nav-links';
import { OrgSwitcher } from '~/app/_components/org-switcher';
import { SignOutButton } from '~/app/_components/sign-out-button';
import { VerifyEmailBanner } from '~/app/_components/verify-email-banner';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export default async function PortalLayout({ children }: { children: ReactNode }) {
  const me = await requireUser();
  const { t } = await getT();
  const caller = await api();
  const [orgs, active, unread] = await Promise.all([
    caller.account.myOrganisations(),
    caller.organisation.current().catch(() => undefined),
    caller.notification.unreadCount(),
  ]);
  const links = [
    { href: '/dashboard', label: t('nav.dashboard') },
    ...(orgs.length
      ? [
          { href: '/projects', label: t('nav.projects') },
          { href: '/jobs', label: t('nav.jobs') },
          { href: '/apps', label: t('nav.apps') },
          { href: '/usage', label: t('nav.usage') },
          { href: '/prices', label: t('nav.prices') },
          { href: '/models', label: t('nav.models') },
          ...(active?.kind === 'company' ? [{ href: '/invoices', label: t('nav.invoices') }] : []),
          { href: '/organisation', label: t('nav.organisation') },
          { href: '/developers/api', label: t('nav.developers') },
        ]
      : []),
    ...(me.staffRoles.length
      ? [
          ...(orgs.length ? [] : [{ href: '/models', label: t('nav.models') }]),
          { href: '/staff/centre', label: t('nav.centre') },
          { href: '/staff/tco', label: t('nav.tco') },
          { href: '/staff/what-if', label: t('nav.whatIf') },
          { href: '/staff/applications', label: t('nav.reviews') },
          { href: '/staff/cluster', label: t('nav.cluster') },
          { href: '/staff/allocations', label: t('nav.allocations') },
          { href: '/staff/invoices', label: t('nav.invoices') },
          { href: '/staff/tenants', label: t('nav.tenants') },
          { href: '/staff/audit', label: t('nav.audit') },
          { href: '/staff/mail', label: t('nav.mail') },
        ]
      : []),
  ];
  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:rounded focus:bg-white focus:px-3 focus:py-2">
        {t('nav.skipToContent')}
      </a>
      <header className="border-b border-slate-200 bg-white print:hidden">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 gap-y-3 px-4 py-3">
          <Link href="/dashboard" className="text-lg font-semibold text-indigo-700">
            {t('app.name')}
          </Link>
          <PortalNav links={links} label={t('nav.main')} menuLabel={t('nav.menu')}>
            {orgs.length > 0 && <OrgSwitcher orgs={orgs.map((o) => ({ id: o.id, name: o.name }))} activeId={active?.id} />}
            <Link href="/notifications" className="relative rounded-md px-2 py-1 text-sm text-slate-700 ring-1 ring-slate-300 hover:bg-slate-50" aria-label={unread > 0 ? t('notifications.bell', { count: unread }) : t('notifications.title')}>
              <svg aria-hidden viewBox="0 0 20 20" className="inline h-4 w-4 fill-current align-[-2px]">
                <path d="M10 2a5 5 0 0 0-5 5v3.6L3.3 13.4A1 1 0 0 0 4.2 15h11.6a1 1 0 0 0 .9-1.6L15 10.6V7a5 5 0 0 0-5-5Zm0 18a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 10 20Z" />
              </svg>
              {unread > 0 && <span className="ml-1 rounded-full bg-indigo-600 px-1.5 text-xs font-semibold text-white tabular-nums">{unread}</span>}
            </Link>
            <LanguageSwitch />
            <Link href="/profile" className="text-sm text-slate-700 hover:underline" title={`${me.email} · ${t('nav.profile')}`}>
              {me.name}
            </Link>
            <SignOutButton />
          </PortalNav>
        </div>
      </header>
      {!me.emailVerified && <VerifyEmailBanner email={me.email} />}
      <main id="main" className="mx-auto max-w-6xl px-4 py-8 print:max-w-none print:p-0">
        {children}
      </main>
    </div>
  );
}
