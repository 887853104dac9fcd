import { HomeLink, StatusPage } from '~/app/_components/status-page';
import { getT } from '~/app/_lib/i18n-server';

export default async function Forbidden() {
  const { t } = await getT();
  return <StatusPage code="403" title={t('forbidden.title')} body={t('forbidden.body')} action={<HomeLink label={t('goHome')} />} />;
}
