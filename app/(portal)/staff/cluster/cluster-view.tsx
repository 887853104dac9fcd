'use client';
// The cluster now (nodes idle / allocated / down, queue, power) and its utilisation over the last day.
import { useQuery } from '@tanstack/react-query';
import { useT } from '~/app/_components/i18n';
import { Alert, Badge, Card, cx } from '~/app/_components/ui';
import { formatClockUtc, formatDateTime, formatDecimal, formatKw, formatPercent } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';
import { FacilityPowerChart } from './facility-power-chart';

const NODE_STYLE = { idle: 'bg-emerald-100 ring-emerald-300', allocated: 'bg-indigo-500 ring-indigo-600', down: 'bg-red-400 ring-red-500' } as const;

function UtilisationChart({ points, label }: { points: { at: Date; fraction: number }[]; label: string }) {
  const W = 720;
  const H = 160;
  const P = 28;
  if (points.length < 2) return null;
  const t0 = points[0]!.at.getTime();
  const t1 = points[points.length - 1]!.at.getTime();
  const x = (t: number) => P + ((t - t0) / Math.max(1, t1 - t0)) * (W - 2 * P);
  const y = (f: number) => H - P - f * (H - 2 * P);
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(p.at.getTime()).toFixed(1)},${y(p.fraction).toFixed(1)}`).join(' ');
  return (
    <svg viewBox={`0 0 ${W} ${H}`} className="h-auto w-full" role="img" aria-label={label}>
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line x1={P} x2={W - P} y1={y(f)} y2={y(f)} className="stroke-slate-200" />
          <text x={P - 4} y={y(f) + 3} textAnchor="end" className="fill-slate-500 text-[9px]">
            {Math.round(f * 100)}%
          </text>
        </g>
      ))}
      <path d={`${d} L${x(t1)},${y(0)} L${x(t0)},${y(0)} Z`} className="fill-indigo-100" />
      <path d={d} fill="none" className="stroke-indigo-600" strokeWidth={2} />
    </svg>
  );
}

export function ClusterView() {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.staff.cluster.queryOptions(), refetchInterval: 3000 });
  if (!query.data) return <p className="text-sm text-slate-500">{t('common.working')}</p>;
  const { description: c, samples, sitePower, scheduler, clusters } = query.data;
  const total = c ? c.nodes.reduce((s, n) => s + n.gpus, 0) : 0;
  const allocated = c ? c.nodes.reduce((s, n) => s + n.allocatedGpus, 0) : 0;
  const byTime = new Map<number, { total: number; allocated: number }>();
  for (const s of samples) {
    const key = new Date(s.at).getTime();
    const v = byTime.get(key) ?? { total: 0, allocated: 0 };
    v.total += s.totalGpus;
    v.allocated += s.allocatedGpus;
    byTime.set(key, v);
  }
  const points = [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([at, v]) => ({ at: new Date(at), fraction: v.total ? v.allocated / v.total : 0 }));
  const avg = points.length ? points.reduce((s, p) => s + p.fraction, 0) / points.length : 0;
  // Say what the samples really cover: a fresh cluster has minutes of them, not a day.
  const coveredMs = points.length >= 2 ? points[points.length - 1]!.at.getTime() - points[0]!.at.getTime() : 0;
  const wholeDay = coveredMs >= 23.5 * 3_600_000;
  const span = coveredMs < 3_600_000 ? t('cluster.spanMinutes', { minutes: Math.max(1, Math.round(coveredMs / 60_000)) }) : t('cluster.spanHours', { hours: Math.round(coveredMs / 3_600_000) });
  const utilisationTitle = wholeDay ? t('cluster.utilisationDay', { avg: formatPercent(locale, avg) }) : t('cluster.utilisationSpan', { span, avg: formatPercent(locale, avg) });
  const facilityNowW = sitePower.length > 0 && sitePower.every((site) => site.nowW !== null) ? sitePower.reduce((sum, site) => sum + site.nowW!, 0) : null;
  const stats = c
    ? [
        [t('cluster.gpusInUse'), `${allocated} / ${total} (${formatPercent(locale, total ? allocated / total : 0)})`],
        [t('cluster.queue'), `${c.pendingJobs} ${t('cluster.pending')} · ${c.runningJobs} ${t('cluster.running')}`],
        [t('cluster.powerNow'), formatKw(locale, c.powerW)],
        ...(facilityNowW === null ? [] : [[t('cluster.facilityPowerNow'), formatKw(locale, facilityNowW)]]),
        [t('cluster.nodesDown'), String(c.nodes.filter((n) => n.state === 'down').length)],
      ]
    : [];
  return (
    <div className="space-y-6">
      {!scheduler.reachable && (
        <Alert tone="error" title={t('cluster.unreachableTitle')}>
          <p data-testid="scheduler-unreachable">
            {scheduler.unreachableSince ? t('cluster.unreachableSince', { since: formatDateTime(locale, scheduler.unreachableSince, timeZone) }) : t('cluster.unreachableNow')}{' '}
            {t('cluster.unreachableMeaning')}
          </p>
          {scheduler.error && <p className="mt-2 font-mono text-xs break-words">{scheduler.error}</p>}
        </Alert>
      )}
      {clusters.length > 1 && (
        <Card title={t('cluster.clusters')}>
          <ul className="divide-y divide-slate-100 text-sm" data-testid="clusters">
            {clusters.map((cl) => (
              <li key={cl.name} className="flex flex-wrap items-center justify-between gap-2 py-2" data-testid="cluster-state" data-cluster={cl.name} data-reachable={cl.reachable}>
                <span>
                  <span className="font-mono font-medium">{cl.name}</span>
                  <span className="ml-2 text-slate-500">{t('cluster.clusterSites', { sites: (cl.sites ?? []).map((id) => sitePower.find((p) => p.siteId === id)?.siteName ?? id).join(', ') })}</span>
                </span>
                {cl.reachable ? (
                  <Badge tone="green">{t('cluster.clusterUp')}</Badge>
                ) : (
                  <span className="text-right">
                    <Badge tone="red">{cl.unreachableSince ? t('cluster.unreachableSince', { since: formatDateTime(locale, cl.unreachableSince, timeZone) }) : t('cluster.unreachableNow')}</Badge>
                    {cl.error && <span className="mt-1 block font-mono text-xs break-words text-slate-500">{cl.error}</span>}
                  </span>
                )}
              </li>
            ))}
          </ul>
        </Card>
      )}
      {stats.length > 0 && (
        <dl className="grid gap-4 sm:grid-cols-3 lg:grid-cols-5">
          {stats.map(([label, value]) => (
            <div key={label} className="rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200">
              <dt className="text-xs text-slate-500">{label}</dt>
              <dd className="mt-1 text-lg font-semibold tabular-nums" data-testid={`cluster-${label}`}>
                {value}
              </dd>
            </div>
          ))}
        </dl>
      )}
      <Card title={utilisationTitle}>
        {points.length < 2 ? <p className="text-sm text-slate-500">{t('cluster.collecting')}</p> : <UtilisationChart points={points} label={utilisationTitle} />}
      </Card>
      {sitePower.length > 0 && (
        <Card title={wholeDay || points.length < 2 ? t('cluster.facilityPower.title') : t('cluster.facilityPower.titleSpan', { span })}>
          <p className="text-sm text-slate-600">{t('cluster.facilityPower.intro')}</p>
          <div className="mt-4 space-y-6">
            {sitePower.map((site) => {
              const kw = (w: number) => formatKw(locale, w);
              const peakW = Math.max(0, ...site.points.map((p) => p.facilityW));
              const cap = site.capW === null ? null : kw(site.capW);
              return (
                <section key={site.siteId} data-testid={`facility-power-${site.siteId}`}>
                  <h3 className="text-sm font-semibold">{site.siteName}</h3>
                  <p className="text-lg font-semibold tabular-nums">
                    {site.nowW === null ? t('cluster.facilityPower.nowUnknown') : cap === null ? t('cluster.facilityPower.nowNoCap', { now: kw(site.nowW) }) : t('cluster.facilityPower.nowOfCap', { now: kw(site.nowW), cap })}
                  </p>
                  {site.points.length < 2 ? (
                    <p className="text-sm text-slate-500">{t('cluster.collecting')}</p>
                  ) : (
                    <FacilityPowerChart
                      points={site.points.map((p) => ({ at: new Date(p.at), facilityW: p.facilityW }))}
                      capW={site.capW}
                      formatKw={kw}
                      formatTick={(v) => formatDecimal(locale, v, 1)}
                      formatClock={(at) => formatClockUtc(locale, at)}
                      labels={{
                        title: cap === null ? t('cluster.facilityPower.ariaNoCap', { site: site.siteName, peak: kw(peakW) }) : t('cluster.facilityPower.ariaCap', { site: site.siteName, peak: kw(peakW), cap }),
                        axis: t('cluster.facilityPower.axis'),
                        time: t('cluster.facilityPower.time'),
                        line: t('cluster.facilityPower.line', { pue: formatDecimal(locale, site.pueMilli / 1000, 2) }),
                        cap: cap === null ? null : t('cluster.facilityPower.cap', { cap }),
                      }}
                    />
                  )}
                </section>
              );
            })}
          </div>
        </Card>
      )}
      {c?.partitions.map((p) => {
        const nodes = c.nodes.filter((n) => n.partition === p.name);
        const label = query.data.partitionLabels.find((l) => l.partition === p.name);
        return (
          <Card key={p.name} title={`${label?.className ?? p.name} · ${p.gpuModel}`}>
            <ul className="grid grid-cols-8 gap-2 sm:grid-cols-16" aria-label={t('cluster.nodesOf', { partition: p.name })}>
              {nodes.map((n) => (
                <li key={n.name} title={`${n.name}: ${t(`cluster.node.${n.state}`)} · ${n.allocatedGpus}/${n.gpus} GPU · ${Math.round(n.powerW)} W`} className={cx('h-8 rounded ring-1', NODE_STYLE[n.state])}>
                  <span className="sr-only">{`${n.name}: ${t(`cluster.node.${n.state}`)}, ${n.allocatedGpus}/${n.gpus} GPU, ${Math.round(n.powerW)} W`}</span>
                </li>
              ))}
            </ul>
            <p className="mt-3 flex gap-4 text-xs text-slate-600">
              {(['idle', 'allocated', 'down'] as const).map((s) => (
                <span key={s} className="flex items-center gap-1">
                  <span className={cx('inline-block h-3 w-3 rounded ring-1', NODE_STYLE[s])} aria-hidden /> {t(`cluster.node.${s}`)} ({nodes.filter((n) => n.state === s).length})
                </span>
              ))}
            </p>
          </Card>
        );
      })}
    </div>
  );
}
