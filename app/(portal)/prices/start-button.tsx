'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formatEuros } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';

/** The owner accepts the price list: a new company's credit line is there at once; one with a line from staff keeps it (`keepsLines`). */
export function StartPayAsYouGoButton({ keepsLines }: { keepsLines: boolean }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [started, setStarted] = useState<{ creditCents: number; allocationId: string | null } | null>(null);
  const start = useMutation(trpc.organisation.startPayAsYouGo.mutationOptions());
  return (
    <div className="space-y-3">
      <Button
        disabled={start.isPending || started !== null}
        onClick={async () => {
          setErrors({ fields: {} });
          try {
            const answer = await start.mutateAsync();
            setStarted(answer);
            // The page itself then says it is done (a refresh alone would unmount this confirmation).
            router.replace(answer.allocationId ? '/prices?started=1' : '/prices?started=kept');
          } catch (error) {
            setErrors(formErrors(error, []));
          }
        }}
      >
        {start.isPending ? t('common.working') : keepsLines ? t('payg.acceptOnly') : t('payg.accept')}
      </Button>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      {started !== null && <Alert tone="success">{started.allocationId ? t('payg.done', { credit: formatEuros(locale, started.creditCents) }) : t('payg.keptLines')}</Alert>}
    </div>
  );
}
