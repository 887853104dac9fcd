'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { ORG_COOKIE } from '~/server/api/cookies';
import { useT } from './i18n';

/** The organisation switcher for people in several tenants; the server checks membership on every call. */
export function OrgSwitcher({ orgs, activeId }: { orgs: { id: string; name: string }[]; activeId?: string }) {
  const { t } = useT();
  const router = useRouter();
  const queryClient = useQueryClient();
  if (orgs.length === 1) return <span className="text-sm font-medium text-slate-700">{orgs[0]!.name}</span>;
  return (
    <select
      aria-label={t('nav.activeOrganisation')}
      value={activeId}
      onChange={(event) => {
        document.cookie = `${ORG_COOKIE}=${event.target.value}; path=/; max-age=31536000; samesite=lax`;
        void queryClient.invalidateQueries();
        router.refresh();
      }}
      className="max-w-56 rounded-md border-0 py-1 pr-7 pl-2 text-sm ring-1 ring-slate-300"
    >
      {orgs.map((org) => (
        <option key={org.id} value={org.id}>
          {org.name}
        </option>
      ))}
    </select>
  );
}
