import { HomeLink, StatusPage } from '~/app/_components/status-page';
import { getT } from '~/app/_lib/i18n-server';

export default async function NotFound() {
  const { t } = await getT();
  return <StatusPage code="404" title={t('notFound.title')} body={t('notFound.body')} action={<HomeLink label={t('goHome')} />} />;
}
