'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formatEuros } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';

/** The owner accepts the price list: the credit line is there at once. */
export function StartPayAsYouGoButton() {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [credit, setCredit] = useState<number | null>(null);
  const start = useMutation(trpc.organisation.startPayAsYouGo.mutationOptions());
  return (
    <div className="space-y-3">
      <Button
        disabled={start.isPending || credit !== null}
        onClick={async () => {
          setErrors({ fields: {} });
          try {
            const started = await start.mutateAsync();
            setCredit(started.creditCents);
            // The page itself then says it is done (a refresh alone would unmount this confirmation).
            router.replace('/prices?started=1');
          } catch (error) {
            setErrors(formErrors(error, []));
          }
        }}
      >
        {start.isPending ? t('common.working') : t('payg.accept')}
      </Button>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      {credit !== null && <Alert tone="success">{t('payg.done', { credit: formatEuros(locale, credit) })}</Alert>}
    </div>
  );
}
