import type { Metadata } from 'next';
import { getT } from '~/app/_lib/i18n-server';
import { api } from '~/server/api/server-caller';
import { COUNTRIES } from '~/server/core/countries';
import { SignUpForm } from './sign-up-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('signUp.title') };
}

export default async function SignUpPage({ searchParams }: { searchParams: Promise<{ invitation?: string }> }) {
  const { invitation } = await searchParams;
  let invited: { token: string; email: string; orgName: string } | undefined;
  if (invitation) {
    const caller = await api();
    const preview = await caller.invitation.preview({ token: invitation }).catch(() => undefined);
    if (preview) invited = { token: invitation, email: preview.email, orgName: preview.orgName };
  }
  return <SignUpForm countries={COUNTRIES} invited={invited} />;
}
