import type { Metadata } from 'next';
import { getT } from '~/app/_lib/i18n-server';
import { ForgotPasswordForm } from './forgot-password-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('forgot.title') };
}

export default async function ForgotPasswordPage({ searchParams }: { searchParams: Promise<{ email?: string }> }) {
  const { email } = await searchParams;
  return <ForgotPasswordForm defaultEmail={typeof email === 'string' ? email : ''} />;
}
