import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { getT } from '~/app/_lib/i18n-server';
import { currentUser } from '~/app/_lib/session';
import { safeLocalPath } from '~/server/core/redirect';
import { ssoProviders } from '~/server/auth/sso-providers';
import { env } from '~/server/env.js';
import { SignInForm } from './sign-in-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('signIn.title') };
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; email?: string; error?: string; reset?: string }> }) {
  const params = await searchParams;
  const callbackUrl = safeLocalPath(params.callbackUrl);
  if (await currentUser()) redirect(callbackUrl);
  return (
    <SignInForm
      callbackUrl={callbackUrl}
      defaultEmail={params.email ?? ''}
      showDemoHint={env().PORTAL_ENV === 'demo'}
      passwordReset={params.reset === 'done'}
      providers={ssoProviders()}
      // Only bare codes from the address bar: a code with text in it (an organisation's name) could be forged by a link.
      initialError={typeof params.error === 'string' && /^[A-Za-z]{1,40}$/.test(params.error) ? params.error : undefined}
    />
  );
}
