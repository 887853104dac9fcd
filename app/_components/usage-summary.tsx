// A usage report's headline figures, daily chart by project, cost and energy bars and grouped table:
// shared by the tenant's Usage page and the staff view of one tenant.
import { colourOf, HorizontalBars, StackedBars } from '~/app/_components/charts';
import { Card, Table, Td, Th } from '~/app/_components/ui';
import { formatDay, formatDayShort, formatCo2eKg, formatEuros, formatGpuHours, formatKwh } from '~/server/i18n/format';
import type { RouterOutputs } from '~/app/_lib/types';
import { fillDays } from '~/server/core/ledger/burn-down';
import { formatNumber, type Locale, type MessageKey, type MessageParams } from '~/server/i18n/core';

export function UsageSummary({ report, t, locale }: { report: RouterOutputs['report']['usage']; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  const groupBy = report.groupBy;
  const kwh = (wh: number) => formatKwh(locale, wh);
  const kg = (g: number) => formatCo2eKg(locale, g);
  const hours = (s: number) => formatGpuHours(locale, s);
  const groupLabel = (key: string, label: string) => (groupBy === 'kind' ? t(`jobKind.${key as 'training'}`) : label);
  const days = fillDays([], new Date(`${report.period.from}T00:00:00Z`), new Date(`${report.period.to}T00:00:00Z`)).map((d) => d.day);
  // One colour per project in every chart of the page: its place in the report's project list.
  const projectColour = new Map(report.projects.map((p, i) => [p.id, colourOf(i)]));
  const rowColour = (key: string) => (groupBy === 'project' ? projectColour.get(key) : undefined);
  const series = report.projects.map((p) => ({ id: p.id, label: p.title, colour: projectColour.get(p.id)!, values: new Map(report.series.filter((s) => s.projectId === p.id).map((s) => [s.day, s.gpuSeconds])) }));
  return (
    <>
      <dl className="grid grid-cols-2 gap-4 sm:grid-cols-4">
        {(
          [
            ['usage.gpuHours', hours(report.totals.gpuSeconds)],
            ['usage.jobs', formatNumber(locale, report.totals.jobs)],
            ['usage.avgWait', report.totals.avgWaitSeconds === null ? '—' : `${formatNumber(locale, Math.round(report.totals.avgWaitSeconds / 60))} min`],
            ['usage.cost', formatEuros(locale, report.totals.costCents)],
            ['usage.itEnergy', kwh(report.totals.energyWh)],
            ['usage.facilityEnergy', kwh(report.totals.facilityEnergyWh)],
            ['usage.heatReused', kwh(report.totals.heatReusedWh)],
            ['usage.co2e', kg(report.totals.co2eGrams)],
          ] as const
        ).map(([key, value]) => (
          <div key={key} className="rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200">
            <dt className="text-xs text-slate-500">{t(key)}</dt>
            <dd className="mt-1 text-xl font-semibold tabular-nums" data-testid={`usage-${key}`}>
              {value}
            </dd>
          </div>
        ))}
      </dl>
      <Card title={t('usage.overTime')}>
        {report.series.length === 0 ? <p className="text-sm text-slate-600">{t('usage.nothing')}</p> : <StackedBars days={days} series={series} format={hours} formatDay={(d) => formatDay(locale, d)} formatAxisDay={(d) => formatDayShort(locale, d)} title={t('usage.overTime')} yLabel={t('usage.gpuHours')} xLabel={t('usage.chartDay')} toAxisUnit={(s) => s / 3600} formatTick={(v) => formatNumber(locale, v)} />}
      </Card>
      <div className="grid gap-6 lg:grid-cols-2">
        <Card title={t('usage.costBy', { group: t(`usage.by.${groupBy}`) })}>
          <HorizontalBars rows={report.groups.map((g) => ({ label: groupLabel(g.key, g.label), value: g.costCents, colour: rowColour(g.key) }))} format={(v) => formatEuros(locale, v)} title={t('usage.costBy', { group: t(`usage.by.${groupBy}`) })} />
        </Card>
        <Card title={t('usage.energyBy', { group: t(`usage.by.${groupBy}`) })}>
          <HorizontalBars
            rows={report.groups.map((g) => ({ label: groupLabel(g.key, g.label), value: g.facilityEnergyWh, overlay: g.heatReusedWh, colour: rowColour(g.key) }))}
            format={kwh}
            title={t('usage.energyBy', { group: t(`usage.by.${groupBy}`) })}
            overlayLabel={t('usage.energyLegend')}
          />
        </Card>
      </div>
      <Card title={t('usage.byGroup', { group: t(`usage.by.${groupBy}`) })}>
        <Table>
          <thead>
            <tr>
              <Th>{t(`usage.by.${groupBy}`)}</Th>
              <Th className="text-right">{t('usage.gpuHours')}</Th>
              <Th className="text-right">{t('usage.jobs')}</Th>
              <Th className="text-right">{t('usage.avgWait')}</Th>
              <Th className="text-right">{t('usage.cost')}</Th>
              <Th className="text-right">{t('usage.itEnergy')}</Th>
              <Th className="text-right">{t('usage.facilityEnergy')}</Th>
              <Th className="text-right">{t('usage.heatReused')}</Th>
              <Th className="text-right">{t('usage.co2e')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {report.groups.map((g) => (
              <tr key={g.key} data-testid="usage-group">
                <Td>{groupLabel(g.key, g.label)}</Td>
                <Td className="text-right tabular-nums">{hours(g.gpuSeconds)}</Td>
                <Td className="text-right tabular-nums">{formatNumber(locale, g.jobs)}</Td>
                <Td className="text-right tabular-nums">{g.avgWaitSeconds === null ? '—' : `${formatNumber(locale, Math.round(g.avgWaitSeconds / 60))} min`}</Td>
                <Td className="text-right tabular-nums">{formatEuros(locale, g.costCents)}</Td>
                <Td className="text-right tabular-nums">{kwh(g.energyWh)}</Td>
                <Td className="text-right tabular-nums">{kwh(g.facilityEnergyWh)}</Td>
                <Td className="text-right tabular-nums">{kwh(g.heatReusedWh)}</Td>
                <Td className="text-right tabular-nums">{kg(g.co2eGrams)}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Card>
    </>
  );
}
