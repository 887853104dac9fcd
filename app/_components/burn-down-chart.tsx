// Burn-down of an allocation: what was used so far against the budget, and below it the daily use,
// each on its own labelled axis in the allocation's unit with round ticks (one scale per panel: the
// daily bars are far smaller than the budget). Rendered on the server in ChartFrames, which stretch
// to the card's width; a visually hidden table carries the same figures for screen readers.
import { niceTicks } from '~/server/core/charts/nice-ticks';
import { ChartFrame, ChartTable, dayTicks, LegendItem, PLOT, plotY } from './chart-frame';

export interface BurnDownChartProps {
  days: { day: string; amount: number }[];
  granted: number;
  /** Formats an amount in the allocation's unit. */
  format: (amount: number) => string;
  formatDay: (day: string) => string;
  /** A day on the time axis, short (no year). */
  formatAxisDay: (day: string) => string;
  /** An amount in the axes' unit (GPU-seconds → GPU-hours, cents → euros). */
  toAxisUnit: (amount: number) => number;
  formatTick: (value: number) => string;
  /** `cumulativeAxis` and `dailyAxis` name the axes with their unit, e.g. "Used so far (GPU-h)". */
  labels: { title: string; daily: string; cumulative: string; budget: string; day: string; cumulativeAxis: string; dailyAxis: string };
}

export function BurnDownChart({ days, granted, format, formatDay, formatAxisDay, toAxisUnit, formatTick, labels }: BurnDownChartProps) {
  let running = 0;
  const cumulative = days.map((d) => (running += d.amount));
  const cum = niceTicks(toAxisUnit(Math.max(granted, running)), 4);
  const daily = niceTicks(toAxisUnit(Math.max(0, ...days.map((d) => d.amount))), 2);
  const x = (i: number) => (days.length <= 1 ? PLOT / 2 : (i * PLOT) / (days.length - 1));
  const line = cumulative.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${plotY(toAxisUnit(v), cum.top).toFixed(1)}`).join(' ');
  const band = PLOT / Math.max(1, days.length);
  const budgetPos = toAxisUnit(granted) / cum.top;
  return (
    <figure>
      <div role="img" aria-label={`${labels.title}: ${format(running)} / ${format(granted)}`}>
        <ChartFrame yTicks={cum.ticks.map((t) => ({ pos: t / cum.top, label: formatTick(t) }))} yLabel={labels.cumulativeAxis} xTicks={dayTicks(days.map((d) => d.day), formatAxisDay, 'points')} height="h-48">
          <div className="absolute inset-x-0 border-t-2 border-dashed border-red-400" style={{ bottom: `${budgetPos * 100}%` }} aria-hidden />
          <span className="absolute right-1 -translate-y-full pb-0.5 text-xs text-red-700" style={{ top: `${(1 - budgetPos) * 100}%` }} aria-hidden>
            {labels.budget} {format(granted)}
          </span>
          <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full overflow-visible" aria-hidden>
            {days.length > 0 && <path d={days.length === 1 ? `${line} h1` : line} fill="none" className="stroke-indigo-700" strokeWidth={2} strokeLinecap="round" vectorEffect="non-scaling-stroke" />}
          </svg>
        </ChartFrame>
        <div className="mt-3">
          <ChartFrame yTicks={daily.ticks.map((t) => ({ pos: t / daily.top, label: formatTick(t) }))} yLabel={labels.dailyAxis} xTicks={dayTicks(days.map((d) => d.day), formatAxisDay, 'bands')} xLabel={labels.day} height="h-24">
            <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full" aria-hidden>
              {days.map((d, i) => {
                const top = plotY(toAxisUnit(d.amount), daily.top);
                return (
                  <rect key={d.day} x={i * band + Math.min(band * 0.15, 4)} y={top} width={Math.max(1, band - 2 * Math.min(band * 0.15, 4))} height={PLOT - top} className="fill-indigo-300">
                    <title>{`${formatDay(d.day)}: ${format(d.amount)}`}</title>
                  </rect>
                );
              })}
            </svg>
          </ChartFrame>
        </div>
      </div>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-600">
        <LegendItem swatch="h-0.5 w-3 bg-indigo-700">{labels.cumulative}</LegendItem>
        <LegendItem swatch="h-0.5 w-3 border-t border-dashed border-red-400">{labels.budget}</LegendItem>
        <LegendItem swatch="h-2 w-3 bg-indigo-300">{labels.daily}</LegendItem>
      </figcaption>
      <ChartTable caption={labels.title} columns={[labels.day, labels.daily, labels.cumulative]} rows={days.map((d, i) => ({ key: d.day, cells: [formatDay(d.day), format(d.amount), format(cumulative[i]!)] }))} />
    </figure>
  );
}

/** A thin bar showing used, reserved and remaining parts of a budget. */
export function BudgetBar({ granted, charged, reserved, label }: { granted: number; charged: number; reserved: number; label: string }) {
  const pct = (v: number) => `${Math.min(100, Math.max(0, granted > 0 ? (v / granted) * 100 : 0)).toFixed(1)}%`;
  return (
    <div className="flex h-2.5 w-full overflow-hidden rounded-full bg-slate-100" role="img" aria-label={label}>
      <div className="bg-indigo-600" style={{ width: pct(charged) }} />
      <div className="bg-amber-400" style={{ width: pct(reserved) }} />
    </div>
  );
}
