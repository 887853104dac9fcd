import Link from 'next/link';
import type { ReactNode } from 'react';
import { LanguageSwitch } from '~/app/_components/language-switch';
import { NavLinks } from '~/app/_components/nav-links';
import { OrgSwitcher } from '~/app/_components/org-switcher';
import { SignOutButton } from '~/app/_components/sign-out-button';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';

export default async function PortalLayout({ children }: { children: ReactNode }) {
  const me = await requireUser();
  const { t } = await getT();
  const caller = await api();
  const [orgs, active] = await Promise.all([
    caller.account.myOrganisations(),
    caller.organisation.current().catch(() => undefined),
  ]);
  const links = [
    { href: '/dashboard', label: t('nav.dashboard') },
    ...(orgs.length ? [{ href: '/organisation', label: t('nav.organisation') }] : []),
    ...(me.staffRoles.length
      ? [
          { href: '/staff/tenants', label: t('nav.tenants') },
          { href: '/staff/audit', label: t('nav.audit') },
        ]
      : []),
  ];
  return (
    <div className="min-h-screen">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:rounded focus:bg-white focus:px-3 focus:py-2">
        {t('nav.skipToContent')}
      </a>
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
          <Link href="/dashboard" className="text-lg font-semibold text-indigo-700">
            {t('app.name')}
          </Link>
          <NavLinks links={links} label={t('nav.main')} />
          <div className="ml-auto flex flex-wrap items-center gap-3">
            {orgs.length > 0 && <OrgSwitcher orgs={orgs.map((o) => ({ id: o.id, name: o.name }))} activeId={active?.id} />}
            <LanguageSwitch />
            <span className="hidden text-sm text-slate-600 sm:inline" title={me.email}>
              {me.name}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-6xl px-4 py-8">
        {children}
      </main>
    </div>
  );
}
