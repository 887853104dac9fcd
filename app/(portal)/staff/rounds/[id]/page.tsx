import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { Alert, Card, PageHeader } from '~/app/_components/ui';
import { formatDateTime, formatGpuHours } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { PanelForm, RankingTable } from './ranking-table';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('calls.ranking') };
}

/** A round's ranking (issue #32): its applications by mean score with the cut line at its GPU-hours, decided from here in bulk; its panel. */
export default async function RoundPage({ params }: { params: Promise<{ id: string }> }) {
  const me = await requireStaff();
  const { id } = await params;
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const [ranking, staff] = await Promise.all([caller.reviews.ranking({ roundId: id }).catch(() => undefined), caller.reviews.staff()]);
  if (!ranking) notFound();
  const { round } = ranking;
  const isAdmin = me.staffRoles.includes('admin');
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('ranking.title', { call: round.callTitle })}
        subtitle={
          <>
            {t('ranking.subtitle', { cutoff: formatDateTime(locale, round.cutoffAt, timeZone), hours: formatGpuHours(locale, round.gpuSecondsPerRound) })} ·{' '}
            <Link href="/staff/applications" className="text-indigo-700 underline">
              {t('review.backToQueue')}
            </Link>
          </>
        }
      />
      {round.status === 'open' && <Alert tone="info">{t('ranking.roundOpen', { cutoff: formatDateTime(locale, round.cutoffAt, timeZone) })}</Alert>}
      <Card title={t('calls.ranking')}>
        <p className="mb-3 text-sm text-slate-600">{t('ranking.hint')}</p>
        {ranking.rows.length === 0 ? <p className="text-sm text-slate-600">{t('ranking.empty')}</p> : <RankingTable ranking={ranking} canDecide={round.status === 'closed'} />}
      </Card>
      <Card title={t('ranking.panel')}>
        <p className="mb-3 text-sm text-slate-600">{t('ranking.panelHint')}</p>
        {ranking.panel.length === 0 ? (
          <p className="text-sm text-slate-600">{t('ranking.panelNone')}</p>
        ) : (
          <ul className="mb-4 list-inside list-disc text-sm" data-testid="round-panel">
            {ranking.panel.map((p) => (
              <li key={p.reviewerUserId}>{p.name}</li>
            ))}
          </ul>
        )}
        {isAdmin && <PanelForm roundId={round.id} candidates={staff.filter((s) => !ranking.panel.some((p) => p.reviewerUserId === s.userId)).map((s) => ({ userId: s.userId, name: s.name }))} />}
      </Card>
    </div>
  );
}
