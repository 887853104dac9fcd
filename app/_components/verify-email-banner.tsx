'use client';
// Shown on every portal page while the person's address is unverified: their tenant may read but not
// act until they open the link mailed at sign-up, which they can have sent again here.
import { useMutation } from '@tanstack/react-query';
import { useTRPC } from '~/app/_lib/trpc';
import { formErrors } from '~/app/_lib/errors';
import { useT } from './i18n';
import { Alert, Button } from './ui';

export function VerifyEmailBanner({ email }: { email: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const resend = useMutation(trpc.account.resendVerification.mutationOptions());
  return (
    <div className="mx-auto max-w-6xl px-4 pt-4" role="region" aria-label={t('verify.title')}>
      <Alert tone="warning">
        <div className="flex flex-wrap items-center justify-between gap-3">
          <span>{t('verify.banner', { email })}</span>
          <Button variant="secondary" onClick={() => resend.mutate()} disabled={resend.isPending}>
            {resend.isPending ? t('common.working') : t('verify.resend')}
          </Button>
        </div>
        {resend.data && <p className="mt-2 text-sm">{t('verify.resent', { email: resend.data.email })}</p>}
        {resend.error && <p className="mt-2 text-sm text-red-700">{formErrors(resend.error, []).message}</p>}
      </Alert>
    </div>
  );
}
