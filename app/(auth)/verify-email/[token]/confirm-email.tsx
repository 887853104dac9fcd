'use client';
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';

/** The button that uses a verification link: the address is confirmed by the person's click, not by opening the page. */
export function ConfirmEmail({ token }: { token: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const verify = useMutation(trpc.account.verifyEmail.mutationOptions());
  const [error, setError] = useState<string>();
  const [confirmed, setConfirmed] = useState<string>();

  async function confirm() {
    setError(undefined);
    try {
      // No refresh: this page, rendered again, would find its link used and say it no longer works.
      setConfirmed((await verify.mutateAsync({ token })).email);
    } catch (e) {
      setError(formErrors(e, []).message);
    }
  }

  if (confirmed) {
    return (
      <>
        <Alert tone="success">{t('verify.done', { email: confirmed })}</Alert>
        <ContinueLink />
      </>
    );
  }
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-600">{t('verify.intro')}</p>
      {error && <Alert tone="error">{error}</Alert>}
      <Button type="button" onClick={() => void confirm()} disabled={verify.isPending}>
        {verify.isPending ? t('common.working') : t('verify.confirm')}
      </Button>
    </div>
  );
}

/** On to the portal (the sign-in page first, for someone not signed in). */
export function ContinueLink() {
  const { t } = useT();
  return (
    <p className="mt-6">
      <Link href="/dashboard" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700">
        {t('verify.continue')}
      </Link>
    </p>
  );
}
