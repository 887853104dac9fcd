'use client';
// A what-if run as staff read it: while queued or running, its progress (asked again every second);
// once done, the history replayed, the two machines side by side with the difference, per resource
// class, and the daily peak facility power of each site the proposal changes, against its cap.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useT } from '~/app/_components/i18n';
import { Alert, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import { useTRPC } from '~/app/_lib/trpc';
import { addDays } from '~/server/core/working-days';
import { formatBasisPoints, formatCo2e, formatCount, formatDay, formatDayShort, formatDecimal, formatDuration, formatEnergyWh, formatEuros, formatKw, formatPercent } from '~/server/i18n/format';
import { describeChange } from '../describe';
import { WhatIfPowerChart } from './power-chart';

type Run = RouterOutputs['whatIf']['get'];
type Outcome = NonNullable<Run['result']>['current'];

/** signed puts the sign of `value` before the text of its size, for the difference column ("−18 min", "+64"). */
function signed(text: string, value: number): string {
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : text;
}

export function RunView({ id }: { id: string }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const query = useQuery({
    ...trpc.whatIf.get.queryOptions({ id }),
    refetchInterval: (q) => (q.state.data && (q.state.data.status === 'queued' || q.state.data.status === 'running') ? 1000 : false),
  });
  const back = (
    <Link href="/staff/what-if" className="text-sm font-medium text-indigo-700 hover:underline">
      ← {t('whatIf.run.back')}
    </Link>
  );
  if (query.error) return <div className="space-y-4">{back}<Alert tone="error">{query.error.message}</Alert></div>;
  const run = query.data;
  if (!run) return <p className="text-sm text-slate-500">{t('common.working')}</p>;
  const percent = formatPercent(locale, run.progressPermille / 1000);
  const subtitle = `${formatDay(locale, run.fromDay)} – ${formatDay(locale, run.toDay)} · ${run.changes.map((c) => describeChange(t, locale, c)).join('; ')}`;
  return (
    <div className="space-y-6">
      {back}
      <PageHeader title={run.title} subtitle={subtitle} />
      {run.status === 'queued' && <Alert>{t('whatIf.run.queued')}</Alert>}
      {run.status === 'running' && (
        <div className="space-y-2" role="status">
          <p className="text-sm text-slate-700">{t('whatIf.run.progress', { percent })}</p>
          <progress className="h-2 w-full max-w-md" max={1000} value={run.progressPermille} aria-label={t('whatIf.run.progress', { percent })} />
        </div>
      )}
      {run.status === 'failed' && <Alert tone="error">{t('whatIf.run.failed', { error: run.error ?? '' })}</Alert>}
      {run.status === 'done' && run.result && <Result run={run} result={run.result} />}
    </div>
  );
}

function Result({ run, result }: { run: Run; result: NonNullable<Run['result']> }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const { history, current, proposed } = result;
  // The current machine's names in the reader's language; a class the proposal adds keeps the id staff gave it.
  const machine = useQuery(trpc.whatIf.machine.queryOptions());
  const className = (id: string) => machine.data?.classes.find((c) => c.id === id)?.name ?? id;
  const siteName = (id: string) => machine.data?.sites.find((s) => s.id === id)?.name ?? id;
  const count = (n: number) => formatCount(locale, n);
  const neverRun = (o: Outcome) => o.jobsNeverRun.partition + o.jobsNeverRun.nodes + o.jobsNeverRun.walltime + o.jobsNeverRun.power;
  /** A measure on both machines: each figure formatted, the difference signed (by default the format of its size). */
  const row = (key: string, label: string, now: number, then: number, format: (n: number) => string, difference = (d: number) => signed(format(Math.abs(d)), d)) => ({
    key,
    label,
    current: format(now),
    proposed: format(then),
    difference: difference(then - now),
  });
  const energy = (wh: number) => formatEnergyWh(locale, wh);
  const rows = [
    row('gpus', t('whatIf.m.gpus'), current.gpus, proposed.gpus, count),
    row('util', t('whatIf.m.utilisation'), current.utilisationBp, proposed.utilisationBp, (bp) => formatBasisPoints(locale, bp), (d) => signed(`${formatDecimal(locale, Math.abs(d) / 100, 1)} pp`, d)),
    row('p50', t('whatIf.m.waitP50'), current.waitP50Seconds, proposed.waitP50Seconds, formatDuration),
    row('p90', t('whatIf.m.waitP90'), current.waitP90Seconds, proposed.waitP90Seconds, formatDuration),
    row('mean', t('whatIf.m.waitMean'), current.waitMeanSeconds, proposed.waitMeanSeconds, formatDuration),
    row('bsld', t('whatIf.m.slowdown'), current.boundedSlowdownMilli, proposed.boundedSlowdownMilli, (milli) => formatDecimal(locale, milli / 1000, 2)),
    row('delayed', t('whatIf.m.delayed'), current.jobsDelayedByPowerCap, proposed.jobsDelayedByPowerCap, count),
    row('never', t('whatIf.m.neverRun'), neverRun(current), neverRun(proposed), count),
    row('it', t('whatIf.m.itEnergy'), current.itEnergyWh, proposed.itEnergyWh, energy),
    row('facility', t('whatIf.m.facilityEnergy'), current.facilityEnergyWh, proposed.facilityEnergyWh, energy),
    row('heat', t('whatIf.m.heat'), current.heatReusedWh, proposed.heatReusedWh, energy),
    row('co2e', t('whatIf.m.co2e'), current.co2eGrams, proposed.co2eGrams, (g) => formatCo2e(locale, g)),
    row('revenue', t('whatIf.m.revenue'), current.revenueCents, proposed.revenueCents, (cents) => formatEuros(locale, cents)),
  ];
  const days: string[] = [];
  for (let d = run.fromDay; d <= run.toDay; d = addDays(d, 1)) days.push(d);
  const dailyPeaks = (hourly: number[]) => days.map((_, i) => Math.max(0, ...hourly.slice(i * 24, i * 24 + 24)));
  // The sites whose power the proposal changes, or that have a cap on either machine.
  const sites = proposed.sites.flatMap((p) => {
    const c = current.sites.find((s) => s.id === p.id);
    if (!c) return [];
    const changed = p.powerCapW !== null || c.powerCapW !== null || p.hourlyPeakW.some((w, i) => w !== c.hourlyPeakW[i]);
    return changed && Math.max(...p.hourlyPeakW, ...c.hourlyPeakW) > 0 ? [{ current: c, proposed: p }] : [];
  });
  const kw = (w: number) => formatKw(locale, w);
  return (
    <>
      <p className="max-w-3xl text-sm text-slate-700" data-testid="whatif-history">
        {t('whatIf.run.history', {
          replayed: count(history.replayed),
          submitted: count(history.submitted),
          from: formatDay(locale, run.fromDay),
          to: formatDay(locale, run.toDay),
          neverStarted: count(history.neverStarted),
          unknown: count(history.unknownRuntime),
          p50: formatDuration(history.recordedWaitP50Seconds),
          p90: formatDuration(history.recordedWaitP90Seconds),
        })}{' '}
        {t('whatIf.run.elapsed', { seconds: formatDecimal(locale, result.elapsedMs / 1000, 1) })}
      </p>
      <Card title={t('whatIf.table.caption')}>
        <Table>
          <thead>
            <tr>
              <Th>{t('whatIf.table.measure')}</Th>
              <Th className="text-right">{t('whatIf.table.current')}</Th>
              <Th className="text-right">{t('whatIf.table.proposed')}</Th>
              <Th className="text-right">{t('whatIf.table.difference')}</Th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key} data-testid={`whatif-${r.key}`}>
                <th scope="row" className="px-3 py-2 text-left text-xs font-semibold text-slate-800">
                  {r.label}
                </th>
                <Td className="text-right tabular-nums">{r.current}</Td>
                <Td className="text-right tabular-nums">{r.proposed}</Td>
                <Td className="text-right tabular-nums text-slate-600">{r.difference}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Card>
      <Card title={t('whatIf.classes.caption')}>
        <Table>
          <thead>
            <tr>
              <Th>{t('whatIf.classes.class')}</Th>
              <Th className="text-right">{t('whatIf.m.gpus')}</Th>
              <Th className="text-right">{t('whatIf.m.utilisation')}</Th>
              <Th className="text-right">{t('whatIf.m.waitP50')}</Th>
              <Th className="text-right">{t('whatIf.m.waitP90')}</Th>
            </tr>
          </thead>
          <tbody>
            {proposed.classes.map((p) => {
              const c = current.classes.find((x) => x.id === p.id);
              const pair = (a: string | undefined, b: string) => (a === undefined ? b : a === b ? a : `${a} → ${b}`);
              return (
                <tr key={p.id}>
                  <th scope="row" className="whitespace-nowrap px-3 py-2 text-left text-xs font-semibold text-slate-800">
                    {`${className(p.id)} · ${siteName(p.siteId)}`}
                  </th>
                  <Td className="text-right tabular-nums">{pair(c && count(c.gpus), count(p.gpus))}</Td>
                  <Td className="text-right tabular-nums">{pair(c && formatBasisPoints(locale, c.utilisationBp), formatBasisPoints(locale, p.utilisationBp))}</Td>
                  <Td className="text-right tabular-nums">{pair(c && formatDuration(c.waitP50Seconds), formatDuration(p.waitP50Seconds))}</Td>
                  <Td className="text-right tabular-nums">{pair(c && formatDuration(c.waitP90Seconds), formatDuration(p.waitP90Seconds))}</Td>
                </tr>
              );
            })}
          </tbody>
        </Table>
      </Card>
      {sites.map(({ current: c, proposed: p }) => (
        <Card key={p.id} title={t('whatIf.power.heading', { site: siteName(p.id) })}>
          <p className="mb-2 text-sm text-slate-700">{t('whatIf.power.peak', { current: kw(c.peakFacilityPowerW), proposed: kw(p.peakFacilityPowerW) })}</p>
          <WhatIfPowerChart
            days={days}
            current={dailyPeaks(c.hourlyPeakW)}
            proposed={dailyPeaks(p.hourlyPeakW)}
            currentCapW={c.powerCapW}
            proposedCapW={p.powerCapW}
            formatDay={(day) => formatDayShort(locale, day)}
            formatKw={kw}
            formatTick={(v) => formatDecimal(locale, v, 0)}
            labels={{
              title: t('whatIf.power.label', { site: siteName(p.id) }),
              axis: 'kW',
              day: t('whatIf.power.day'),
              current: t('whatIf.table.current'),
              proposed: t('whatIf.table.proposed'),
              currentCap: c.powerCapW === null ? null : t('whatIf.power.cap', { cap: kw(c.powerCapW) }),
              proposedCap: p.powerCapW === null ? null : t('whatIf.power.cap', { cap: kw(p.powerCapW) }),
            }}
          />
        </Card>
      ))}
    </>
  );
}
