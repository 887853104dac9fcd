import type { Metadata } from 'next';
import Link from 'next/link';
import { Alert, Card } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { api } from '~/server/api/server-caller';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('verify.title') };
}

export default async function VerifyEmailPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const { t } = await getT();
  // Opening the link is the proof: it arrived at the address. Using it here, without a further click,
  // is what people expect of such a link; a mail scanner that opens it proves the same.
  const verified = await (await api()).account.verifyEmail({ token }).catch(() => undefined);
  return (
    <Card>
      <h1 className="mb-4 text-xl font-semibold">{t('verify.title')}</h1>
      {verified ? <Alert tone="success">{t('verify.done', { email: verified.email })}</Alert> : <Alert tone="error">{t('verify.invalid')}</Alert>}
      <p className="mt-6">
        <Link href="/dashboard" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
          {t('verify.continue')}
        </Link>
      </p>
    </Card>
  );
}
