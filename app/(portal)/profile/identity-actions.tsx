'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';

/** Removes one linked identity; the server refuses the last way in of an account without a password. */
export function RemoveIdentity({ identityId, providerName }: { identityId: string; providerName: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const remove = useMutation(trpc.account.unlinkIdentity.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <div className="flex flex-col items-end gap-2">
      <Button variant="secondary" disabled={remove.isPending} onClick={() => remove.mutate({ identityId })} aria-label={t('profile.identityRemoveLabel', { provider: providerName })}>
        {t('profile.identityRemove')}
      </Button>
      {remove.error && <Alert tone="error">{formErrors(remove.error, []).message}</Alert>}
    </div>
  );
}
