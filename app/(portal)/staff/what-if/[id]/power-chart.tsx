// A site's daily peak facility power over the replayed period, current machine and proposal, with
// the caps as dashed lines: the house ChartFrame, and a visually hidden table with the figures.
import { ChartFrame, ChartTable, dayTicks, LegendItem, PLOT, plotY } from '~/app/_components/chart-frame';
import { niceTicks } from '~/server/core/charts/nice-ticks';

export interface WhatIfPowerChartProps {
  days: string[];
  /** Daily peak facility power in W, index-aligned with `days`. */
  current: number[];
  proposed: number[];
  currentCapW: number | null;
  proposedCapW: number | null;
  formatDay: (day: string) => string;
  formatKw: (w: number) => string;
  formatTick: (kw: number) => string;
  labels: { title: string; axis: string; day: string; current: string; proposed: string; currentCap: string | null; proposedCap: string | null };
}

export function WhatIfPowerChart({ days, current, proposed, currentCapW, proposedCapW, formatDay, formatKw, formatTick, labels }: WhatIfPowerChartProps) {
  const peak = Math.max(0, ...current, ...proposed, currentCapW ?? 0, proposedCapW ?? 0);
  const { top, ticks } = niceTicks(peak / 1000, 4);
  const x = (i: number) => (days.length > 1 ? (i / (days.length - 1)) * PLOT : PLOT / 2);
  const path = (values: number[]) => values.map((w, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${plotY(w / 1000, top).toFixed(1)}`).join(' ');
  const capLine = (capW: number | null, className: string) => (capW === null || top <= 0 ? null : <div className={`absolute inset-x-0 border-t-2 border-dashed ${className}`} style={{ bottom: `${((capW / 1000 / top) * 100).toFixed(2)}%` }} aria-hidden />);
  return (
    <figure>
      <div role="img" aria-label={labels.title}>
        <ChartFrame yTicks={ticks.map((t) => ({ pos: t / top, label: formatTick(t) }))} yLabel={labels.axis} xTicks={dayTicks(days, formatDay, 'points')} xLabel={labels.day} height="h-48">
          {currentCapW !== proposedCapW && capLine(currentCapW, 'border-slate-400')}
          {capLine(proposedCapW, 'border-red-400')}
          <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full overflow-visible" aria-hidden>
            <path d={path(current)} fill="none" className="stroke-slate-500" strokeWidth={2} strokeDasharray="6 3" strokeLinejoin="round" vectorEffect="non-scaling-stroke" />
            <path d={path(proposed)} fill="none" className="stroke-indigo-600" strokeWidth={2} strokeLinejoin="round" vectorEffect="non-scaling-stroke" />
          </svg>
        </ChartFrame>
      </div>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-600">
        <LegendItem swatch="h-0.5 w-3 border-t-2 border-dashed border-slate-500">{labels.current}</LegendItem>
        <LegendItem swatch="h-0.5 w-3 bg-indigo-600">{labels.proposed}</LegendItem>
        {labels.currentCap && currentCapW !== proposedCapW && <LegendItem swatch="h-0.5 w-3 border-t-2 border-dashed border-slate-400">{labels.currentCap}</LegendItem>}
        {labels.proposedCap && <LegendItem swatch="h-0.5 w-3 border-t-2 border-dashed border-red-400">{labels.proposedCap}</LegendItem>}
      </figcaption>
      <ChartTable caption={labels.title} columns={[labels.day, labels.current, labels.proposed]} rows={days.map((day, i) => ({ key: day, cells: [formatDay(day), formatKw(current[i] ?? 0), formatKw(proposed[i] ?? 0)] }))} />
    </figure>
  );
}
