'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';

export function MarkAllRead() {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const mark = useMutation(trpc.notification.markRead.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <Button variant="secondary" disabled={mark.isPending} onClick={() => mark.mutate({})}>
      {t('notifications.markAllRead')}
    </Button>
  );
}
