'use client';
import { useT } from '~/app/_components/i18n';
import { StatusPage } from '~/app/_components/status-page';
import { Button } from '~/app/_components/ui';

export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const { t } = useT();
  return <StatusPage code="500" title={t('error.title')} body={t('common.unexpectedError')} action={<Button onClick={reset}>{t('error.retry')}</Button>} />;
}
