import type { Metadata } from 'next';
import Link from 'next/link';
import { LanguageSwitch } from '~/app/_components/language-switch';
import { Alert, Card } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { currentUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { ssoProviders } from '~/server/auth/sso-providers';
import { SsoButtons } from '~/app/(auth)/sign-in/sso-buttons';
import { AcceptInvitation } from './accept-invitation';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('invite.title') };
}

export default async function InvitationPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const { t } = await getT();
  const caller = await api();
  let preview: Awaited<ReturnType<typeof caller.invitation.preview>> | undefined;
  let problem: string | undefined;
  try {
    preview = await caller.invitation.preview({ token });
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  const me = await currentUser();
  return (
    <div className="flex min-h-screen flex-col">
      <header className="flex items-center justify-between px-6 py-4">
        <Link href="/" className="text-lg font-semibold text-indigo-700">
          {t('app.name')}
        </Link>
        <LanguageSwitch />
      </header>
      <main id="main" className="flex flex-1 items-start justify-center px-4 py-10">
        <div className="w-full max-w-md">
          <Card>
            <h1 className="mb-4 text-xl font-semibold">{t('invite.title')}</h1>
            {problem || !preview ? (
              <Alert tone="error">{problem ?? t('error.invitationInvalid')}</Alert>
            ) : (
              <div className="space-y-4">
                <p>{t('invite.body', { inviter: preview.inviterName, org: preview.orgName, role: t(`role.${preview.role}`) })}</p>
                {me && me.email.toLowerCase() === preview.email ? (
                  <AcceptInvitation token={token} orgName={preview.orgName} />
                ) : (
                  <>
                    <Alert tone="info">{t('invite.signInToAccept', { email: preview.email })}</Alert>
                    <div className="flex gap-3">
                      <Link className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700" href={`/sign-in?callbackUrl=/invitations/${token}&email=${encodeURIComponent(preview.email)}`}>
                        {t('nav.signIn')}
                      </Link>
                      <Link className="rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-50" href={`/sign-up?invitation=${token}`}>
                        {t('nav.signUp')}
                      </Link>
                    </div>
                    {/* A provider's account with the invited address comes back here to accept. */}
                    <SsoButtons providers={ssoProviders()} callbackUrl={`/invitations/${token}`} />
                  </>
                )}
              </div>
            )}
          </Card>
        </div>
      </main>
    </div>
  );
}
