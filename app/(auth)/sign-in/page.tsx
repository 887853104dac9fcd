import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { getT } from '~/app/_lib/i18n-server';
import { currentUser } from '~/app/_lib/session';
import { safeLocalPath } from '~/server/core/redirect';
import { env } from '~/server/env.js';
import { SignInForm } from './sign-in-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('signIn.title') };
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string; email?: string; reset?: string }> }) {
  const params = await searchParams;
  const callbackUrl = safeLocalPath(params.callbackUrl);
  if (await currentUser()) redirect(callbackUrl);
  return <SignInForm callbackUrl={callbackUrl} defaultEmail={params.email ?? ''} showDemoHint={env().PORTAL_ENV === 'demo'} passwordReset={params.reset === 'done'} />;
}
