import type { Metadata } from 'next';
import { Alert, Card } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { api } from '~/server/api/server-caller';
import { ConfirmEmail, ContinueLink } from './confirm-email';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('verify.title') };
}

export default async function VerifyEmailPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const { t } = await getT();
  // Opening the page does not use the link: mail scanners open links too, and one that did would confirm
  // an address for whoever signed up with it. The person's click on the button confirms it.
  const usable = await (await api()).account.verificationLinkUsable({ token }).catch(() => false);
  return (
    <Card>
      <h1 className="mb-4 text-xl font-semibold">{t('verify.title')}</h1>
      {usable ? (
        <ConfirmEmail token={token} />
      ) : (
        <>
          <Alert tone="error">{t('verify.invalid')}</Alert>
          <ContinueLink />
        </>
      )}
    </Card>
  );
}
