// TCO per delivered GPU-hour for staff: per partition, the cost broken down (capital, maintenance,
// energy net of heat reused, overhead) at the utilisation the centre dashboard measured over the last
// 30 or 90 days and at a what-if utilisation (GET parameters, so a plain form and the address carry
// them), beside the tariffs with their break-even utilisation, and cost against utilisation as a chart.
import type { Metadata } from 'next';
import { Alert, Button, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import type { RouterOutputs } from '~/app/_lib/types';
import { api } from '~/server/api/server-caller';
import { formatBasisPoints, formatCount, formatDay, formatDecimal, formatEuros } from '~/server/i18n/format';
import { CostChart } from './cost-chart';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('tco.title') };
}

type Search = Record<string, string | string[] | undefined>;
type TcoReport = RouterOutputs['staff']['tco'];
type TcoClass = TcoReport['classes'][number];
type T = Awaited<ReturnType<typeof getT>>['t'];
type L = Awaited<ReturnType<typeof getT>>['locale'];

const PERIODS = ['last30Days', 'last90Days'] as const;

const inputClass =
  'block rounded-md border-0 px-3 py-2 text-sm text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-inset focus:ring-indigo-600 aria-invalid:ring-red-500';

function first(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}

/** whatIfOf reads the what-if field: a number from 1 to 100 (a decimal comma accepted), else invalid. */
function whatIfOf(raw: string | undefined): { value?: number; invalid: boolean } {
  if (raw === undefined) return { invalid: false };
  const value = Number(raw.replace(',', '.'));
  return Number.isFinite(value) && value >= 1 && value <= 100 ? { value, invalid: false } : { invalid: true };
}

export default async function TcoPage({ searchParams }: { searchParams: Promise<Search> }) {
  await requireStaff();
  const { t, locale } = await getT();
  const params = await searchParams;
  const periodParam = first(params.period);
  const period = PERIODS.find((p) => p === periodParam) ?? 'last30Days';
  const whatIfRaw = first(params.whatIf);
  const whatIf = whatIfOf(whatIfRaw);
  const report = await (await api()).staff.tco({ period, whatIfPercent: whatIf.value });
  const fmtDay = (day: string) => formatDay(locale, day);

  return (
    <div className="space-y-6">
      <PageHeader title={t('tco.title')} subtitle={t('tco.subtitle')} />

      <form method="get" className="flex flex-wrap items-start gap-4" aria-label={t('tco.form.label')}>
        <div className="space-y-1 text-sm">
          <label htmlFor="tco-period" className="block font-medium text-slate-800">
            {t('tco.form.period')}
          </label>
          <select id="tco-period" name="period" defaultValue={period} className={`${inputClass} w-48`}>
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                {t(`tco.form.${p}`)}
              </option>
            ))}
          </select>
        </div>
        <div className="space-y-1 text-sm">
          <label htmlFor="tco-what-if" className="block font-medium text-slate-800">
            {t('tco.form.whatIf')}
          </label>
          <input
            id="tco-what-if"
            type="number"
            name="whatIf"
            min={1}
            max={100}
            step="any"
            inputMode="decimal"
            defaultValue={whatIfRaw ?? ''}
            className={`${inputClass} w-40`}
            aria-invalid={whatIf.invalid ? true : undefined}
            aria-describedby={whatIf.invalid ? 'tco-what-if-error tco-what-if-hint' : 'tco-what-if-hint'}
          />
          <p id="tco-what-if-hint" className="text-xs text-slate-500">
            {t('tco.form.whatIfHint')}
          </p>
          {whatIf.invalid && (
            <p id="tco-what-if-error" className="text-sm text-red-700">
              {t('tco.form.whatIfInvalid')}
            </p>
          )}
        </div>
        <div className="pt-6">
          <Button type="submit" variant="secondary">
            {t('tco.form.apply')}
          </Button>
        </div>
      </form>

      <p className="text-sm text-slate-600" data-testid="tco-range">
        {t('tco.range', { from: fmtDay(report.range.from), to: fmtDay(report.range.to), days: report.range.days })}
      </p>

      {report.classes.map((rc) => (
        <ClassCard key={rc.id} rc={rc} whatIfBp={report.whatIfBp} t={t} locale={locale} />
      ))}

      <p className="text-xs text-slate-500">{t('tco.note')}</p>
    </div>
  );
}

function ClassCard({ rc, whatIfBp, t, locale }: { rc: TcoClass; whatIfBp: number | null; t: T; locale: L }) {
  const bp = (value: number) => formatBasisPoints(locale, value);
  const euros = (cents: number) => formatEuros(locale, cents);
  const perHour = (cents: number) => t('tco.perGpuHour', { value: euros(cents) });
  const heading = t('tco.class.heading', { id: rc.id, name: rc.name });
  return (
    <Card title={heading}>
      <div className="space-y-4" data-testid={`tco-class-${rc.id}`}>
        <p className="text-sm text-slate-600">{t('tco.class.summary', { site: rc.siteName, gpus: formatCount(locale, rc.gpus), utilisation: bp(rc.measured.utilisationBp) })}</p>
        {rc.costs === null ? (
          <Alert tone="warning" title={t('tco.class.missing')}>
            {t('tco.class.missingFields', { fields: rc.missing.join(', ') })}
          </Alert>
        ) : (
          <Costs rc={rc} costs={rc.costs} whatIfBp={whatIfBp} t={t} bp={bp} euros={euros} perHour={perHour} mwh={(wh) => formatDecimal(locale, wh / 1_000_000, 1)} />
        )}
      </div>
    </Card>
  );
}

function Costs({ rc, costs, whatIfBp, t, bp, euros, perHour, mwh }: { rc: TcoClass; costs: NonNullable<TcoClass['costs']>; whatIfBp: number | null; t: T; bp: (v: number) => string; euros: (c: number) => string; perHour: (c: number) => string; mwh: (wh: number) => string }) {
  const columns = [{ key: 'measured', label: t('tco.breakdown.atMeasured', { utilisation: bp(costs.atMeasured.utilisationBp) }), at: costs.atMeasured }, ...(costs.atWhatIf && whatIfBp !== null ? [{ key: 'whatIf', label: t('tco.breakdown.atWhatIf', { utilisation: bp(whatIfBp) }), at: costs.atWhatIf }] : [])];
  const parts = ['capital', 'maintenance', 'energy', 'overhead', 'total'] as const;
  const cell = (at: (typeof columns)[number]['at'], part: (typeof parts)[number]) => (at.perGpuHour ? perHour(at.perGpuHour[`${part}Cents`]) : t('tco.breakdown.nothingDelivered'));
  const tariffLabel = (kind: 'academic' | 'company') => t(`tco.tariffs.${kind}`);
  const yearly = costs.atMeasured.yearly;
  const curveFirst = costs.curve[0]!;
  const curveLast = costs.curve.at(-1)!;
  const tariffOf = (kind: 'academic' | 'company') => costs.tariffs.find((x) => x.kind === kind)!.centsPerGpuHour;
  return (
    <div className="grid grid-cols-1 gap-6 xl:grid-cols-2">
      <div className="space-y-4">
        <Table>
          <caption className="sr-only">{t('tco.breakdown.caption')}</caption>
          <thead>
            <tr>
              <Th>{t('tco.breakdown.part')}</Th>
              {columns.map((c) => (
                <Th key={c.key} className="text-right">
                  {c.label}
                </Th>
              ))}
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {parts.map((part) => (
              <tr key={part} className={part === 'total' ? 'font-semibold' : undefined}>
                <th scope="row" className="px-3 py-2 text-left text-sm font-[inherit] text-slate-800">
                  {t(`tco.breakdown.${part}`)}
                </th>
                {columns.map((c) => (
                  <Td key={c.key} className="text-right tabular-nums">
                    <span data-testid={`tco-${rc.id}-${c.key}-${part}`}>{cell(c.at, part)}</span>
                  </Td>
                ))}
              </tr>
            ))}
          </tbody>
        </Table>

        <Table>
          <caption className="sr-only">{t('tco.tariffs.caption')}</caption>
          <thead>
            <tr>
              <Th>{t('tco.tariffs.kind')}</Th>
              <Th className="text-right">{t('tco.tariffs.price')}</Th>
              <Th className="text-right">{t('tco.tariffs.breakEven')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {costs.tariffs.map((tariff) => (
              <tr key={tariff.kind}>
                <Td>{tariffLabel(tariff.kind)}</Td>
                <Td className="text-right tabular-nums">{perHour(tariff.centsPerGpuHour)}</Td>
                <Td className="text-right tabular-nums">
                  <span data-testid={`tco-${rc.id}-break-even-${tariff.kind}`}>{tariff.breakEvenBp === null ? t('tco.tariffs.never') : bp(tariff.breakEvenBp)}</span>
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>

        <p className="text-xs text-slate-500">
          {t('tco.yearly', {
            total: euros(yearly.totalCents),
            electricity: euros(yearly.electricityCents),
            mwh: mwh(yearly.facilityEnergyWh),
            heat: euros(yearly.heatCreditCents),
            overhead: euros(yearly.overheadCents),
          })}
        </p>
      </div>

      <CostChart
        curve={costs.curve}
        tariffs={costs.tariffs.map((x) => ({ kind: x.kind, label: tariffLabel(x.kind), centsPerGpuHour: x.centsPerGpuHour }))}
        markers={[{ label: t('tco.chart.measured'), utilisationBp: costs.atMeasured.utilisationBp }, ...(whatIfBp !== null ? [{ label: t('tco.chart.whatIf'), utilisationBp: whatIfBp }] : [])]}
        formatEuros={perHour}
        formatTick={(value) => euros(Math.round(value * 100))}
        formatBp={bp}
        labels={{
          title: t('tco.chart.title', { id: rc.id }),
          description: t('tco.chart.description', { first: perHour(curveFirst.totalCents), last: perHour(curveLast.totalCents), academic: perHour(tariffOf('academic')), company: perHour(tariffOf('company')) }),
          axisCost: t('tco.chart.axisCost'),
          axisUtilisation: t('tco.chart.axisUtilisation'),
          cost: t('tco.chart.cost'),
          clipped: t('tco.chart.clipped'),
        }}
      />
    </div>
  );
}
