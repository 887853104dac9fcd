'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { ORG_COOKIE } from '~/server/api/cookies';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';
import { useHydrated } from '~/app/_lib/use-hydrated';

export function AcceptInvitation({ token, orgName }: { token: string; orgName: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const hydrated = useHydrated();
  const accept = useMutation(
    trpc.invitation.accept.mutationOptions({
      onSuccess: (result) => {
        document.cookie = `${ORG_COOKIE}=${result.orgId}; path=/; max-age=31536000; samesite=lax`;
        router.push('/organisation');
        router.refresh();
      },
    }),
  );
  return (
    <div className="space-y-3">
      {accept.error && <Alert tone="error">{formErrors(accept.error, []).message}</Alert>}
      {accept.isSuccess && <Alert tone="success">{t('invite.accepted', { org: orgName })}</Alert>}
      <Button onClick={() => accept.mutate({ token })} disabled={!hydrated || accept.isPending || accept.isSuccess}>
        {accept.isPending ? t('common.working') : t('invite.accept')}
      </Button>
    </div>
  );
}
