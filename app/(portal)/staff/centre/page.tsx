// The centre dashboard for staff: a range of days and filters in the address (a GET form), headline
// figures, utilisation per partition, the biggest tenants, allocations against capacity, revenue by
// tenant kind, and CSV downloads of the same figures.
import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import type { z } from 'zod';
import { Alert, Button, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatBytes, formatDay, formatDayShort, formatEuros, formatGpuHours } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import type { RouterOutputs } from '~/app/_lib/types';
import { centreRefusal, type centreInput, type CentreRefusal } from '~/server/api/routers/centre';
import { api } from '~/server/api/server-caller';
import { defaultRange, RANGE_PRESETS, rangePresets, type RangePreset } from '~/server/core/usage/percentiles';
import { decimal, fixed, hours, kg, kwh, percent } from './figures';
import { TenantBars } from './tenant-bars';
import { CentreModelCallsCard } from './model-calls-card';
import { UtilisationChart } from './utilisation-chart';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('centre.title') };
}

type Search = Record<string, string | string[] | undefined>;
type CentreDashboard = RouterOutputs['centre']['dashboard'];
type CentreStorage = RouterOutputs['centre']['storage'];

function first(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}

const inputClass =
  'block rounded-md border-0 px-3 py-2 text-sm text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-inset focus:ring-indigo-600 aria-invalid:ring-red-500';
const linkButton = 'inline-flex items-center justify-center gap-2 rounded-md bg-white px-3 py-2 text-sm font-medium text-slate-800 shadow-sm ring-1 ring-slate-300 hover:bg-slate-50';

function Figure({ label, value, hint, testId }: { label: string; value: string; hint?: string; testId: string }) {
  return (
    <div className="rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200">
      <dt className="text-xs text-slate-500">{label}</dt>
      <dd className="mt-1 text-lg font-semibold tabular-nums text-slate-900" data-testid={`centre-${testId}`}>
        {value}
      </dd>
      {hint && <dd className="mt-0.5 text-xs text-slate-500">{hint}</dd>}
    </div>
  );
}

function FilterField({ id, label, error, children }: { id: string; label: string; error?: string; children: ReactNode }) {
  return (
    <div className="space-y-1 text-sm">
      <label htmlFor={id} className="block font-medium text-slate-800">
        {label}
      </label>
      {children}
      {error && (
        <p id={`${id}-error`} className="max-w-56 text-sm text-red-700">
          {error}
        </p>
      )}
    </div>
  );
}

export default async function CentrePage({ searchParams }: { searchParams: Promise<Search> }) {
  await requireStaff();
  const { t, locale } = await getT();
  const params = await searchParams;
  const today = new Date().toISOString().slice(0, 10);
  const fallback = defaultRange(today);
  const input = {
    from: first(params.from) ?? fallback.from,
    to: first(params.to) ?? fallback.to,
    partition: first(params.partition),
    tenantKind: first(params.tenantKind),
  };
  const caller = await api();
  const partitions = await caller.centre.partitions();
  let data: CentreDashboard | undefined;
  let storage: CentreStorage | undefined;
  let modelCalls: RouterOutputs['centre']['modelCalls'] | undefined;
  let decisionTimes: RouterOutputs['centre']['decisionTimes'] | undefined;
  let refusal: CentreRefusal | undefined;
  try {
    // Validated by the procedure; a refusal is shown beside the field it is about.
    [data, storage, modelCalls, decisionTimes] = await Promise.all([
      caller.centre.dashboard(input as z.input<typeof centreInput>),
      caller.centre.storage(input as z.input<typeof centreInput>),
      caller.centre.modelCalls(input as z.input<typeof centreInput>),
      caller.centre.decisionTimes(input as z.input<typeof centreInput>),
    ]);
  } catch (error) {
    refusal = centreRefusal(error, locale);
    if (!refusal) throw error;
  }
  const fieldError = (name: string) => refusal?.fieldErrors[name];
  const query = new URLSearchParams(Object.entries(input).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const csvHref = `/api/centre/csv?${query.toString()}`;
  const tenantsCsvHref = `/api/centre/csv?${new URLSearchParams([...query, ['table', 'tenants']]).toString()}`;
  const fmtDay = (day: string) => formatDay(locale, day);
  const kindLabel = (kind: 'academic' | 'company') => t(`centre.kind.${kind}`);
  const presets = rangePresets(today);
  const presetLabel: Record<RangePreset, string> = { last30Days: t('centre.filter.reset'), thisMonth: t('centre.preset.thisMonth'), lastMonth: t('centre.preset.lastMonth'), last90Days: t('centre.preset.last90Days') };
  // A preset keeps the partition and tenant kind chosen.
  const presetHref = (preset: RangePreset) => `/staff/centre?${new URLSearchParams(Object.entries({ ...input, ...presets[preset] }).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString()}`;

  return (
    <div className="space-y-6">
      <PageHeader
        title={t('centre.title')}
        subtitle={data ? t('centre.range', { from: fmtDay(data.range.from), to: fmtDay(data.range.to), days: data.range.days }) : t('centre.subtitle')}
        actions={
          data && (
            <div className="flex flex-wrap gap-2">
              <a href={csvHref} download className={linkButton} data-testid="centre-csv">
                {t('centre.download')}
              </a>
              <a href={tenantsCsvHref} download className={linkButton}>
                {t('centre.downloadTenants')}
              </a>
            </div>
          )
        }
      />

      <form method="get" className="flex flex-wrap items-start gap-4" aria-label={t('centre.filter.label')}>
        <FilterField id="centre-from" label={t('centre.filter.from')} error={fieldError('from')}>
          <input id="centre-from" type="date" name="from" defaultValue={input.from} required className={inputClass} aria-invalid={fieldError('from') ? true : undefined} aria-describedby={fieldError('from') ? 'centre-from-error' : undefined} />
        </FilterField>
        <FilterField id="centre-to" label={t('centre.filter.to')} error={fieldError('to')}>
          <input id="centre-to" type="date" name="to" defaultValue={input.to} required className={inputClass} aria-invalid={fieldError('to') ? true : undefined} aria-describedby={fieldError('to') ? 'centre-to-error' : undefined} />
        </FilterField>
        <FilterField id="centre-partition" label={t('centre.filter.partition')} error={fieldError('partition')}>
          <select id="centre-partition" name="partition" defaultValue={input.partition ?? ''} className={`${inputClass} w-56`} aria-invalid={fieldError('partition') ? true : undefined} aria-describedby={fieldError('partition') ? 'centre-partition-error' : undefined}>
            <option value="">{t('common.all')}</option>
            {partitions.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id} · {p.name}
              </option>
            ))}
          </select>
        </FilterField>
        <FilterField id="centre-kind" label={t('centre.filter.tenantKind')} error={fieldError('tenantKind')}>
          <select id="centre-kind" name="tenantKind" defaultValue={input.tenantKind ?? ''} className={`${inputClass} w-44`} aria-invalid={fieldError('tenantKind') ? true : undefined} aria-describedby={fieldError('tenantKind') ? 'centre-kind-error' : undefined}>
            <option value="">{t('common.all')}</option>
            <option value="academic">{kindLabel('academic')}</option>
            <option value="company">{kindLabel('company')}</option>
          </select>
        </FilterField>
        <div className="flex gap-2 pt-6">
          <Button type="submit" variant="secondary">
            {t('centre.filter.apply')}
          </Button>
        </div>
      </form>
      <nav aria-label={t('centre.preset.label')} className="-mt-2 flex flex-wrap items-center gap-x-4 gap-y-1 text-sm">
        <span className="text-slate-600">{t('centre.preset.label')}:</span>
        {RANGE_PRESETS.map((preset) => {
          const current = presets[preset].from === input.from && presets[preset].to === input.to;
          return (
            <a key={preset} href={presetHref(preset)} aria-current={current ? 'page' : undefined} className={current ? 'font-semibold text-slate-900' : 'text-indigo-700 hover:underline'} data-testid={`centre-preset-${preset}`}>
              {presetLabel[preset]}
            </a>
          );
        })}
      </nav>

      {refusal && (
        <Alert tone="error" title={t('centre.refused')}>
          {refusal.message}
        </Alert>
      )}

      {data && <Dashboard data={data} decisionTimes={decisionTimes} t={t} locale={locale} fmtDay={fmtDay} kindLabel={kindLabel} />}
      {storage && <StorageCard storage={storage} t={t} locale={locale} kindLabel={kindLabel} />}
      {modelCalls && <CentreModelCallsCard calls={modelCalls} t={t} locale={locale} kindLabel={kindLabel} />}
    </div>
  );
}

/** Storage per tenant (issue #27): what its workspaces hold now, what its allocations grant, its TB-months in the range; the centre's total. */
function StorageCard({ storage, t, locale, kindLabel }: { storage: CentreStorage; t: T; locale: L; kindLabel: (kind: 'academic' | 'company') => string }) {
  const bytes = (b: number) => formatBytes(locale, b);
  const share = (used: number, grantedGb: number) => (grantedGb > 0 ? percent(locale, used / (grantedGb * 1_000_000_000)) : '—');
  const tbMonths = (milli: number) => fixed(locale, milli / 1000, 3);
  return (
    <Card title={t('centre.storage.title')}>
      {storage.tenants.length === 0 ? (
        <p className="text-sm text-slate-500">{t('centre.storage.empty')}</p>
      ) : (
        <div className="space-y-6">
          <TenantBars
            fill="bg-sky-600"
            rows={storage.tenants.slice(0, 10).map((r) => ({ id: r.orgId, name: `${r.name} (${kindLabel(r.kind)})`, value: r.usedBytes, label: bytes(r.usedBytes) }))}
            toAxisUnit={(b) => b / 1e12}
            formatTick={(v) => decimal(locale, v, 2)}
            labels={{ title: t('centre.storage.chart'), tenant: t('centre.chart.tenant'), value: t('centre.storage.used'), empty: t('centre.chart.empty'), axis: t('centre.storage.axisTb') }}
          />
          <Table>
            <thead>
              <tr>
                <Th>{t('centre.chart.tenant')}</Th>
                <Th className="text-right">{t('centre.storage.used')}</Th>
                <Th className="text-right">{t('centre.storage.granted')}</Th>
                <Th className="text-right">{t('centre.allocations.usedShare')}</Th>
                <Th className="text-right">{t('centre.storage.tbMonths')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {[...storage.tenants.map((r) => ({ key: r.orgId, label: `${r.name} (${kindLabel(r.kind)})`, ...r })), { key: '_total', label: t('centre.storage.total'), ...storage.totals }].map((r) => (
                <tr key={r.key} className={r.key === '_total' ? 'font-semibold' : undefined} data-testid={r.key === '_total' ? 'centre-storage-total' : 'centre-storage-tenant'}>
                  <Td>{r.label}</Td>
                  <Td className="text-right tabular-nums">{bytes(r.usedBytes)}</Td>
                  <Td className="text-right tabular-nums">{bytes(r.grantedGb * 1_000_000_000)}</Td>
                  <Td className="text-right tabular-nums">{share(r.usedBytes, r.grantedGb)}</Td>
                  <Td className="text-right tabular-nums">{tbMonths(r.milliTbMonths)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        </div>
      )}
      <p className="mt-3 text-xs text-slate-500">{t('centre.storage.note')}</p>
    </Card>
  );
}

type T = Awaited<ReturnType<typeof getT>>['t'];
type L = Awaited<ReturnType<typeof getT>>['locale'];

function Dashboard({ data, decisionTimes, t, locale, fmtDay, kindLabel }: { data: CentreDashboard; decisionTimes?: RouterOutputs['centre']['decisionTimes']; t: T; locale: L; fmtDay: (day: string) => string; kindLabel: (kind: 'academic' | 'company') => string }) {
  const { totals, wait } = data;
  const waitValue = (seconds: number | null) => (seconds === null ? '—' : t('centre.unit.hours', { value: hours(locale, seconds) }));
  const perGpuHour = (value: number | null) => (value === null ? '—' : t('centre.unit.kwhPerGpuHour', { value: decimal(locale, value, 3) }));
  const pct = (fraction: number) => percent(locale, fraction);
  const pueValue = (value: number | null) => (value === null ? '—' : fixed(locale, value, 2));
  const averages = data.partitions.map((p) => t('centre.chart.average', { partition: p.id, value: pct(p.utilisation) }));

  return (
    <>
      <dl className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <Figure testId="gpu-hours" label={t('centre.figure.gpuHours')} value={formatGpuHours(locale, totals.gpuSeconds)} hint={t('centre.figure.jobsHint', { jobs: totals.jobs })} />
        <Figure testId="utilisation" label={t('centre.figure.utilisation')} value={pct(data.utilisation.utilisation)} hint={t('centre.figure.capacityHint', { capacity: formatGpuHours(locale, data.utilisation.capacityGpuSeconds) })} />
        <Figure testId="wait-p50" label={t('centre.figure.waitP50')} value={waitValue(wait.p50Seconds)} hint={t('centre.figure.waitHint', { jobs: wait.startedJobs })} />
        <Figure testId="wait-p90" label={t('centre.figure.waitP90')} value={waitValue(wait.p90Seconds)} hint={wait.meanSeconds === null ? undefined : t('centre.figure.waitMean', { value: waitValue(wait.meanSeconds) })} />
        <Figure testId="it-energy" label={t('centre.figure.itEnergy')} value={t('centre.unit.kwh', { value: kwh(locale, totals.energyWh) })} />
        <Figure testId="facility-energy" label={t('centre.figure.facilityEnergy')} value={t('centre.unit.kwh', { value: kwh(locale, totals.facilityEnergyWh) })} hint={perGpuHour(totals.facilityKwhPerGpuHour)} />
        <Figure testId="heat-reused" label={t('centre.figure.heatReused')} value={t('centre.unit.kwh', { value: kwh(locale, totals.heatReusedWh) })} />
        <Figure testId="co2e" label={t('centre.figure.co2e')} value={t('centre.unit.kgCo2e', { value: kg(locale, totals.co2eGrams) })} />
        <Figure testId="kwh-per-gpu-hour" label={t('centre.figure.kwhPerGpuHour')} value={perGpuHour(totals.itKwhPerGpuHour)} />
        <Figure testId="pue" label={t('centre.figure.pue')} value={pueValue(totals.pue)} hint={t('centre.figure.pueHint')} />
        {data.byKind.map((k) => (
          <Figure key={k.kind} testId={`cost-${k.kind}`} label={t(k.meaning === 'revenue' ? 'centre.figure.revenue' : 'centre.figure.grantValue')} value={formatEuros(locale, k.costCents)} hint={formatGpuHours(locale, k.gpuSeconds)} />
        ))}
      </dl>

      <Card title={t('centre.chart.utilisation')}>
        <UtilisationChart
          series={data.partitions.map((p) => ({ id: p.id, name: p.name, average: pct(p.utilisation), points: p.days.map((d) => ({ day: d.day, utilisation: d.utilisation })) }))}
          formatDay={fmtDay}
          formatAxisDay={(day) => formatDayShort(locale, day)}
          formatPercent={pct}
          labels={{
            title: t('centre.chart.utilisation'),
            description: t('centre.chart.utilisationDescription', { from: fmtDay(data.range.from), to: fmtDay(data.range.to), averages: averages.join('; ') }),
            day: t('centre.chart.day'),
            axis: t('centre.chart.axisUtilisation'),
            empty: t('centre.chart.empty'),
          }}
        />
        <p className="mt-3 text-xs text-slate-500">{t('centre.note.approximation')}</p>
      </Card>

      <div className="grid gap-6 xl:grid-cols-2">
        <Card title={t('centre.chart.topGpuHours')}>
          <TenantBars
            rows={data.topByGpuHours.map((r) => ({ id: r.orgId, name: `${r.name} (${kindLabel(r.kind)})`, value: r.gpuSeconds, label: formatGpuHours(locale, r.gpuSeconds) }))}
            toAxisUnit={(gpuSeconds) => gpuSeconds / 3600}
            formatTick={(v) => decimal(locale, v, 2)}
            labels={{ title: t('centre.chart.topGpuHours'), tenant: t('centre.chart.tenant'), value: t('centre.figure.gpuHours'), empty: t('centre.chart.empty'), axis: t('centre.chart.axisGpuHours') }}
          />
        </Card>
        <Card title={t('centre.chart.topFacilityEnergy')}>
          <TenantBars
            fill="bg-emerald-600"
            rows={data.topByFacilityEnergy.map((r) => ({ id: r.orgId, name: `${r.name} (${kindLabel(r.kind)})`, value: r.facilityEnergyWh, label: t('centre.unit.kwh', { value: kwh(locale, r.facilityEnergyWh) }) }))}
            toAxisUnit={(wh) => wh / 1000}
            formatTick={(v) => decimal(locale, v, 2)}
            labels={{ title: t('centre.chart.topFacilityEnergy'), tenant: t('centre.chart.tenant'), value: t('centre.figure.facilityEnergy'), empty: t('centre.chart.empty'), axis: t('centre.chart.axisFacilityKwh') }}
          />
        </Card>
      </div>

      <Card title={t('centre.sites.title')}>
        {data.sites.length === 0 ? (
          <p className="text-sm text-slate-500">{t('centre.sites.empty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('centre.sites.site')}</Th>
                {/* The unit keeps its case in the capitalised header: kWh, not KWH. */}
                <Th className="text-right">
                  {t('centre.sites.itEnergy')} <span className="normal-case">({t('centre.sites.unitKwh')})</span>
                </Th>
                <Th className="text-right">
                  {t('centre.sites.facilityEnergy')} <span className="normal-case">({t('centre.sites.unitKwh')})</span>
                </Th>
                <Th className="text-right">{t('centre.sites.pue')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {[...data.sites.map((s) => ({ key: s.id, label: s.name, energyWh: s.energyWh, facilityEnergyWh: s.facilityEnergyWh, pue: s.pue })), { key: 'centre', label: t('centre.sites.total'), energyWh: totals.energyWh, facilityEnergyWh: totals.facilityEnergyWh, pue: totals.pue }].map((s) => (
                <tr key={s.key} className={s.key === 'centre' ? 'font-semibold' : undefined} data-testid={`centre-site-${s.key}`}>
                  <Td>{s.label}</Td>
                  <Td className="text-right tabular-nums">
                    <span data-testid="site-it-kwh">{fixed(locale, s.energyWh / 1000, 1)}</span>
                  </Td>
                  <Td className="text-right tabular-nums">
                    <span data-testid="site-facility-kwh">{fixed(locale, s.facilityEnergyWh / 1000, 1)}</span>
                  </Td>
                  <Td className="text-right tabular-nums">
                    <span data-testid="site-pue">{pueValue(s.pue)}</span>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>

      <Card title={t('centre.allocations.title')}>
        {data.allocations.rows.length === 0 ? (
          <p className="text-sm text-slate-500">{t('centre.allocations.empty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('centre.allocations.partition')}</Th>
                <Th className="text-right">{t('centre.allocations.count')}</Th>
                <Th className="text-right">{t('centre.allocations.granted')}</Th>
                <Th className="text-right">{t('centre.allocations.charged')}</Th>
                <Th className="text-right">{t('centre.allocations.usedShare')}</Th>
                <Th className="text-right">{t('centre.allocations.grantedInRange')}</Th>
                <Th className="text-right">{t('centre.allocations.capacity')}</Th>
                <Th className="text-right">{t('centre.allocations.oversubscription')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {[...data.allocations.rows.map((r) => ({ key: r.partition, label: `${r.partition} · ${r.name}`, ...r })), { key: '_total', label: t('centre.allocations.total'), ...data.allocations.total }].map((r) => (
                <tr key={r.key} className={r.key === '_total' ? 'font-semibold' : undefined}>
                  <Td>{r.label}</Td>
                  <Td className="text-right tabular-nums">{r.allocations}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, r.grantedGpuSeconds)}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, r.chargedGpuSeconds)}</Td>
                  <Td className="text-right tabular-nums">{r.grantedGpuSeconds > 0 ? pct(r.chargedGpuSeconds / r.grantedGpuSeconds) : '—'}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, r.grantedInRangeGpuSeconds)}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, r.capacityGpuSeconds)}</Td>
                  <Td className={r.oversubscription > 1 ? 'text-right text-red-700 tabular-nums' : 'text-right tabular-nums'}>{pct(r.oversubscription)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <p className="mt-3 text-xs text-slate-500">{t('centre.allocations.note')}</p>
      </Card>

      {decisionTimes && (
        <Card title={t('centre.decisions.title')}>
          <Table>
            <thead>
              <tr>
                <Th>{t('centre.decisions.mode')}</Th>
                <Th className="text-right">{t('centre.decisions.target')}</Th>
                <Th className="text-right">{t('centre.decisions.decided')}</Th>
                <Th className="text-right">{t('centre.decisions.median')}</Th>
                <Th>{t('centre.decisions.withinTarget')}</Th>
                <Th className="text-right">{t('centre.decisions.waiting')}</Th>
                <Th className="text-right">{t('centre.decisions.overdue')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {decisionTimes.map((m) => {
                const share = m.decided > 0 ? m.withinTarget / m.decided : null;
                return (
                  <tr key={m.accessModeId} data-testid={`centre-decisions-${m.accessModeId}`}>
                    <Td>{m.name}</Td>
                    <Td className="text-right tabular-nums">{t('centre.decisions.days', { days: m.targetDays })}</Td>
                    <Td className="text-right tabular-nums">{m.decided}</Td>
                    <Td className={m.medianWorkingDays !== null && m.medianWorkingDays > m.targetDays ? 'text-right text-red-700 tabular-nums' : 'text-right tabular-nums'}>
                      {m.medianWorkingDays === null ? '—' : t('centre.decisions.days', { days: m.medianWorkingDays })}
                    </Td>
                    <Td>
                      {share === null ? (
                        '—'
                      ) : (
                        <span className="flex items-center gap-2">
                          <span className="h-2 w-24 overflow-hidden rounded-full bg-slate-100" aria-hidden="true">
                            <span className={share < 0.9 ? 'block h-full bg-amber-500' : 'block h-full bg-emerald-600'} style={{ width: `${Math.round(share * 100)}%` }} />
                          </span>
                          <span className="tabular-nums">{t('centre.decisions.share', { within: m.withinTarget, decided: m.decided, share: pct(share) })}</span>
                        </span>
                      )}
                    </Td>
                    <Td className="text-right tabular-nums">{m.waiting}</Td>
                    <Td className={m.overdue > 0 ? 'text-right font-semibold text-red-700 tabular-nums' : 'text-right tabular-nums'}>{m.overdue}</Td>
                  </tr>
                );
              })}
            </tbody>
          </Table>
          <p className="mt-3 text-xs text-slate-500">{t('centre.decisions.note')}</p>
        </Card>
      )}

      <Card title={t('centre.revenue.title')}>
        <Table>
          <thead>
            <tr>
              <Th>{t('centre.revenue.kind')}</Th>
              <Th>{t('centre.revenue.meaning')}</Th>
              <Th className="text-right">{t('centre.revenue.amount')}</Th>
              <Th className="text-right">{t('centre.figure.gpuHours')}</Th>
              <Th className="text-right">{t('centre.revenue.jobs')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {data.byKind.map((k) => (
              <tr key={k.kind} data-testid={`centre-revenue-${k.kind}`}>
                <Td>{kindLabel(k.kind)}</Td>
                <Td className="text-slate-600">{t(k.meaning === 'revenue' ? 'centre.revenue.revenue' : 'centre.revenue.grantValue')}</Td>
                <Td className="text-right tabular-nums">{formatEuros(locale, k.costCents)}</Td>
                <Td className="text-right tabular-nums">{formatGpuHours(locale, k.gpuSeconds)}</Td>
                <Td className="text-right tabular-nums">{k.jobs}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Card>
    </>
  );
}
