// Utilisation per partition and day: one line per partition, with axes and a legend.
// Rendered on the server in a ChartFrame (labels in HTML, the plot stretched to the card's width);
// lines differ by colour and by dash pattern, and a visually hidden table carries the same figures.

import { ChartFrame, ChartTable, dayTicks, PLOT, plotY } from '~/app/_components/chart-frame';
import { niceTicks } from '~/server/core/charts/nice-ticks';

export interface UtilisationSeries {
  id: string;
  name: string;
  /** Average over the range, already formatted. */
  average: string;
  points: { day: string; utilisation: number }[];
}

export interface UtilisationChartProps {
  series: UtilisationSeries[];
  formatDay: (day: string) => string;
  /** A day on the time axis, short (no year). */
  formatAxisDay: (day: string) => string;
  formatPercent: (fraction: number) => string;
  labels: { title: string; description: string; day: string; axis: string; empty: string };
}

export const SERIES_STYLES = [
  { stroke: 'stroke-indigo-600', swatch: 'bg-indigo-600', dash: undefined },
  { stroke: 'stroke-emerald-600', swatch: 'bg-emerald-600', dash: '8 4' },
  { stroke: 'stroke-amber-500', swatch: 'bg-amber-500', dash: '2 3' },
  { stroke: 'stroke-rose-600', swatch: 'bg-rose-600', dash: '10 3 2 3' },
  { stroke: 'stroke-sky-600', swatch: 'bg-sky-600', dash: '4 4' },
  { stroke: 'stroke-violet-600', swatch: 'bg-violet-600', dash: '12 6' },
] as const;

export function UtilisationChart({ series, formatDay, formatAxisDay, formatPercent, labels }: UtilisationChartProps) {
  const days = series[0]?.points.map((p) => p.day) ?? [];
  if (series.length === 0 || days.length === 0) return <p className="text-sm text-slate-500">{labels.empty}</p>;
  // 0 to 100 % at least; above only if a day was (which the rollups should never show).
  const peak = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.utilisation)));
  const { top, ticks } = niceTicks(peak, 5);
  const x = (i: number) => (days.length <= 1 ? PLOT / 2 : (i * PLOT) / (days.length - 1));
  return (
    <figure>
      <div role="img" aria-label={`${labels.title}. ${labels.description}`}>
        <ChartFrame yTicks={ticks.map((t) => ({ pos: t / top, label: formatPercent(t) }))} yLabel={labels.axis} xTicks={dayTicks(days, formatAxisDay, 'points')} xLabel={labels.day} height="h-64">
          <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full overflow-visible" aria-hidden>
            {series.map((s, si) => {
              const style = SERIES_STYLES[si % SERIES_STYLES.length]!;
              const d = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${plotY(p.utilisation, top).toFixed(1)}`).join(' ');
              return <path key={s.id} d={s.points.length === 1 ? `${d} h1` : d} fill="none" className={style.stroke} strokeWidth={2} strokeDasharray={style.dash} strokeLinejoin="round" strokeLinecap="round" vectorEffect="non-scaling-stroke" />;
            })}
          </svg>
        </ChartFrame>
      </div>
      <figcaption className="mt-2 flex flex-wrap gap-4 text-xs text-slate-700">
        {series.map((s, si) => {
          const style = SERIES_STYLES[si % SERIES_STYLES.length]!;
          return (
            <span key={s.id} className="flex items-center gap-1.5">
              <svg width="24" height="8" aria-hidden>
                <line x1="0" x2="24" y1="4" y2="4" className={style.stroke} strokeWidth={2} strokeDasharray={style.dash} />
              </svg>
              <span>
                <span className="font-medium">{s.id}</span> {s.name} · {s.average}
              </span>
            </span>
          );
        })}
      </figcaption>
      <ChartTable caption={labels.title} columns={[labels.day, ...series.map((s) => s.id)]} rows={days.map((day, i) => ({ key: day, cells: [formatDay(day), ...series.map((s) => formatPercent(s.points[i]!.utilisation))] }))} />
    </figure>
  );
}
