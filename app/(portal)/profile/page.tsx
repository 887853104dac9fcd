import type { Metadata } from 'next';
import Link from 'next/link';
import { Badge, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDateTime, timeZoneNames } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { CreateApiToken, RevokeApiToken } from './api-tokens';
import { RemoveIdentity } from './identity-actions';
import { MailPreferences } from './mail-preferences';
import { TimeZoneSetting } from './time-zone-setting';
import { ChangePassword, EndOtherSessions, EndSession } from './session-actions';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('profile.title') };
}

/** A short name for a browser from its user agent: "Firefox on Linux", or the raw text when unknown. */
function browserOf(userAgent: string | null): string | null {
  if (!userAgent) return null;
  const browser = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrom(e|ium)\//.test(userAgent) ? 'Chrome' : /Safari\//.test(userAgent) ? 'Safari' : null;
  const system = /Windows/.test(userAgent) ? 'Windows' : /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS' : /Mac OS X/.test(userAgent) ? 'macOS' : /Linux/.test(userAgent) ? 'Linux' : null;
  return browser && system ? `${browser} · ${system}` : (browser ?? userAgent.slice(0, 60));
}

export default async function ProfilePage() {
  const me = await requireUser();
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const [sessions, identities, mailPreferences, hasPassword, tokens, organisations, tokenProjects] = await Promise.all([
    caller.account.sessions(),
    caller.account.identities(),
    caller.notification.preferences(),
    caller.account.hasPassword(),
    caller.account.apiTokens(),
    caller.account.myOrganisations(),
    caller.account.tokenProjects(),
  ]);
  const tokenTone = { active: 'green', expired: 'slate', revoked: 'red' } as const;
  return (
    <div className="space-y-6">
      <PageHeader title={t('profile.title')} subtitle={`${me.name} · ${me.email}`} />
      <Card title={t('profile.sessionsTitle')} actions={sessions.length > 1 && <EndOtherSessions />}>
        <p className="mb-3 text-sm text-slate-600">{t('profile.sessionsIntro')}</p>
        <Table>
          <thead>
            <tr>
              <Th>{t('profile.sessionDevice')}</Th>
              <Th className="hidden sm:table-cell">{t('profile.sessionAddress')}</Th>
              <Th className="hidden sm:table-cell">{t('profile.sessionStarted')}</Th>
              <Th>{t('profile.sessionLastSeen')}</Th>
              <Th>
                <span className="sr-only">{t('profile.endSession')}</span>
              </Th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id} data-testid="session">
                <Td>
                  {browserOf(s.userAgent) ?? t('profile.unknownDevice')}
                  {s.current && <span className="ml-2 rounded bg-indigo-50 px-1.5 py-0.5 text-xs font-medium text-indigo-700">{t('profile.thisSession')}</span>}
                </Td>
                <Td className="hidden sm:table-cell">{s.address ?? '—'}</Td>
                <Td className="hidden sm:table-cell">{formatDateTime(locale, s.createdAt, timeZone)}</Td>
                <Td>{formatDateTime(locale, s.lastSeenAt, timeZone)}</Td>
                <Td>{!s.current && <EndSession sessionId={s.id} />}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Card>
      <Card title={t('profile.identitiesTitle')}>
        <p className="mb-3 text-sm text-slate-600">{identities.length === 0 ? t('profile.identitiesNone') : t('profile.identitiesIntro')}</p>
        {identities.length > 0 && (
          <Table>
            <thead>
              <tr>
                <Th>{t('profile.identityProvider')}</Th>
                <Th className="hidden sm:table-cell">{t('profile.identityEmail')}</Th>
                <Th className="hidden sm:table-cell">{t('profile.identityLinked')}</Th>
                <Th>{t('profile.identityLastUsed')}</Th>
                <Th>
                  <span className="sr-only">{t('profile.identityRemove')}</span>
                </Th>
              </tr>
            </thead>
            <tbody>
              {identities.map((i) => (
                <tr key={i.id} data-testid="identity">
                  <Td>{i.providerName}</Td>
                  <Td className="hidden sm:table-cell">{i.email ?? '—'}</Td>
                  <Td className="hidden sm:table-cell">{formatDateTime(locale, i.createdAt, timeZone)}</Td>
                  <Td>{formatDateTime(locale, i.lastUsedAt, timeZone)}</Td>
                  <Td>
                    <RemoveIdentity identityId={i.id} providerName={i.providerName} />
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      {hasPassword ? (
        <ChangePassword />
      ) : (
        <Card title={t('profile.setPasswordTitle')}>
          <p className="mb-3 text-sm text-slate-600">{t('profile.setPasswordIntro')}</p>
          <Link className="text-sm font-medium text-indigo-700 hover:underline" href={`/forgot-password?email=${encodeURIComponent(me.email)}`}>
            {t('profile.setPasswordAction')}
          </Link>
        </Card>
      )}
      <TimeZoneSetting current={timeZone} zones={timeZoneNames()} />
      <MailPreferences preferences={mailPreferences} />
      <Card
        title={t('profile.tokensTitle')}
        actions={
          <Link className="text-sm font-medium text-indigo-700 hover:underline" href="/developers/api">
            {t('profile.tokensReference')}
          </Link>
        }
      >
        <p className="mb-3 text-sm text-slate-600">{t('profile.tokensIntro')}</p>
        <CreateApiToken organisations={organisations.map((o) => ({ id: o.id, name: o.name }))} projects={tokenProjects} isStaff={me.staffRoles.length > 0} />
        <div className="mt-5">
          {tokens.length === 0 ? (
            <p className="text-sm text-slate-600">{t('profile.tokensNone')}</p>
          ) : (
            <Table>
              <thead>
                <tr>
                  <Th>{t('profile.tokenName')}</Th>
                  <Th className="hidden md:table-cell">{t('profile.tokenScopes')}</Th>
                  <Th className="hidden sm:table-cell">{t('profile.tokenExpires')}</Th>
                  <Th>{t('profile.tokenLastUsed')}</Th>
                  <Th>
                    <span className="sr-only">{t('profile.tokenRevoke')}</span>
                  </Th>
                </tr>
              </thead>
              <tbody>
                {tokens.map((token) => (
                  <tr key={token.id} data-testid="api-token">
                    <Td>
                      <div className="font-medium text-slate-900">{token.name}</div>
                      <div className="text-xs text-slate-500">
                        <code className="font-mono">{token.prefix}…</code> · {token.orgName ?? t('profile.tokenOrgNone')}
                        {token.projectTitle && <> · {t('profile.tokenPaysFrom', { project: token.projectTitle })}</>}
                      </div>
                      <div className="mt-1">
                        <Badge tone={tokenTone[token.state]}>{t(`profile.tokenState.${token.state}`)}</Badge>
                      </div>
                    </Td>
                    <Td className="hidden md:table-cell">
                      <span className="font-mono text-xs">{token.scopes.join(' ')}</span>
                    </Td>
                    <Td className="hidden sm:table-cell">{formatDateTime(locale, token.expiresAt, timeZone)}</Td>
                    <Td>
                      {token.lastUsedAt ? formatDateTime(locale, token.lastUsedAt, timeZone) : t('profile.tokenNeverUsed')}
                      {token.lastUsedFrom && <div className="text-xs text-slate-500">{token.lastUsedFrom}</div>}
                    </Td>
                    <Td>{token.state === 'active' && <RevokeApiToken tokenId={token.id} name={token.name} />}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </div>
      </Card>
    </div>
  );
}
