import type { Metadata } from 'next';
import Link from 'next/link';
import { Alert, Card } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { api } from '~/server/api/server-caller';
import { ResetPasswordForm } from './reset-password-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('reset.title') };
}

export default async function ResetPasswordPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const { t } = await getT();
  // Opening the page does not use the link (mail scanners open links too); setting the password does.
  const usable = await (await api()).account.resetLinkUsable({ token }).catch(() => false);
  if (!usable) return <LinkNoLongerWorks title={t('reset.invalidTitle')} text={t('reset.invalid')} action={t('reset.askAgain')} />;
  return <ResetPasswordForm token={token} />;
}

/** The page for a used, replaced, expired or unknown link: what happened and where to ask for a new one. */
function LinkNoLongerWorks({ title, text, action }: { title: string; text: string; action: string }) {
  return (
    <Card>
      <h1 className="mb-4 text-xl font-semibold">{title}</h1>
      <Alert tone="error">{text}</Alert>
      <p className="mt-6">
        <Link href="/forgot-password" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
          {action}
        </Link>
      </p>
    </Card>
  );
}
