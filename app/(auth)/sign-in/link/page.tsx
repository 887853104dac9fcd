import type { Metadata } from 'next';
import { Alert, Card } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { pendingLink } from '~/server/auth/options';
import { ssoProviderName } from '~/server/auth/sso-providers';
import { LinkForm } from './link-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('link.title') };
}

/**
 * After a provider's sign-in for an address that already has an account: the account's password links
 * the identity (server/services/identity/identities.ts). What is shown comes from the portal's signed token only.
 */
export default async function LinkIdentityPage({ searchParams }: { searchParams: Promise<{ token?: string }> }) {
  const { token } = await searchParams;
  const { t } = await getT();
  const link = typeof token === 'string' ? pendingLink(token) : null;
  return (
    <Card>
      <h1 className="mb-4 text-xl font-semibold">{t('link.title')}</h1>
      {!link || !token ? (
        <Alert tone="error">{t('signIn.linkExpired')}</Alert>
      ) : (
        <LinkForm token={token} email={link.profile.email ?? ''} providerName={ssoProviderName(link.profile.provider)} callbackUrl={link.callbackUrl} />
      )}
    </Card>
  );
}
