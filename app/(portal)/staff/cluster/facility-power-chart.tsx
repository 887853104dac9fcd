// One site's facility power (IT × PUE) over the last day, with its cap as a dashed line: a ChartFrame
// (labels in HTML, the plot stretched to the card's width) with kW and UTC time ticks; a visually
// hidden table carries the figures hour by hour for screen readers.
import { ChartFrame, ChartTable, LegendItem, PLOT, plotY } from '~/app/_components/chart-frame';
import { niceTicks } from '~/server/core/charts/nice-ticks';
import { timeTicks } from '~/server/core/charts/time-ticks';

export interface FacilityPowerChartProps {
  points: { at: Date; facilityW: number }[];
  capW: number | null;
  formatKw: (w: number) => string;
  /** A tick on the kW axis (a number without the unit). */
  formatTick: (kw: number) => string;
  formatClock: (at: Date) => string;
  /** `title` is the chart's accessible name (site, peak and cap); `line` and `cap` the legend's entries. */
  labels: { title: string; axis: string; time: string; line: string; cap: string | null };
}

export function FacilityPowerChart({ points, capW, formatKw, formatTick, formatClock, labels }: FacilityPowerChartProps) {
  const t0 = points[0]!.at.getTime();
  const t1 = points[points.length - 1]!.at.getTime();
  const span = Math.max(1, t1 - t0);
  const x = (t: number) => ((t - t0) / span) * PLOT;
  const peakW = Math.max(0, ...points.map((p) => p.facilityW));
  const { top, ticks } = niceTicks(Math.max(peakW, capW ?? 0) / 1000, 4);
  const line = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.at.getTime()).toFixed(1)},${plotY(p.facilityW / 1000, top).toFixed(1)}`).join(' ');
  const capPos = capW === null ? null : capW / 1000 / top;
  // For the table: the last sample at or before each round hour (at most about 24 rows).
  const rows = timeTicks(t0, t1, 24).flatMap((tick) => {
    const p = points.findLast((q) => q.at.getTime() <= tick);
    return p ? [{ key: String(tick), cells: [formatClock(new Date(tick)), formatKw(p.facilityW)] }] : [];
  });
  return (
    <figure>
      <div role="img" aria-label={labels.title}>
        <ChartFrame
          yTicks={ticks.map((t) => ({ pos: t / top, label: formatTick(t) }))}
          yLabel={labels.axis}
          xTicks={timeTicks(t0, t1, 6).map((t, i) => ({ pos: (t - t0) / span, label: formatClock(new Date(t)), wideOnly: i % 2 === 1 }))}
          xLabel={labels.time}
          height="h-48"
        >
          {capPos !== null && <div className="absolute inset-x-0 border-t-2 border-dashed border-red-400" style={{ bottom: `${capPos * 100}%` }} aria-hidden />}
          <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full overflow-visible" aria-hidden>
            <path d={`${line} L${PLOT},${PLOT} L0,${PLOT} Z`} className="fill-indigo-100" />
            <path d={line} fill="none" className="stroke-indigo-600" strokeWidth={2} strokeLinejoin="round" vectorEffect="non-scaling-stroke" />
          </svg>
        </ChartFrame>
      </div>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-600">
        <LegendItem swatch="h-0.5 w-3 bg-indigo-600">{labels.line}</LegendItem>
        {labels.cap && <LegendItem swatch="h-0.5 w-3 border-t-2 border-dashed border-red-400">{labels.cap}</LegendItem>}
      </figcaption>
      <ChartTable caption={labels.title} columns={[labels.time, labels.axis]} rows={rows} />
    </figure>
  );
}
