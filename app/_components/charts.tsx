// Small charts rendered on the server, each with a visually hidden table for screen readers.
import { niceTicks } from '~/server/core/charts/nice-ticks';
import { ChartFrame, dayTicks, PLOT } from './chart-frame';

const PALETTE = ['#4f46e5', '#0891b2', '#16a34a', '#ca8a04', '#dc2626', '#9333ea', '#db2777', '#0d9488', '#65a30d', '#ea580c'];

/** The bars' colour when the rows are not projects (one colour: a colour means a project on a page). */
const SINGLE_COLOUR = '#64748b';

/** colourOf picks a stable colour for the n-th series (a page gives each project its place once and uses it in every chart). */
export function colourOf(index: number): string {
  return PALETTE[index % PALETTE.length]!;
}

export interface StackedSeries {
  id: string;
  label: string;
  /** The series' colour, the same in every chart of the page (colourOf its place in the page's list). */
  colour: string;
  values: Map<string, number>;
}

/**
 * StackedBars draws one bar per day, stacked by series (e.g. GPU-hours per project), on a value
 * axis with round ticks in the axis's unit (`toAxisUnit`), labelled with it (`yLabel`).
 */
export function StackedBars({ days, series, format, formatDay, formatAxisDay, title, yLabel, xLabel, toAxisUnit, formatTick }: { days: string[]; series: StackedSeries[]; format: (v: number) => string; formatDay: (d: string) => string; formatAxisDay: (d: string) => string; title: string; yLabel: string; xLabel: string; toAxisUnit: (v: number) => number; formatTick: (v: number) => string }) {
  const totals = days.map((d) => series.reduce((s, x) => s + (x.values.get(d) ?? 0), 0));
  const { top, ticks } = niceTicks(Math.max(0, ...totals.map(toAxisUnit)), 4);
  const band = PLOT / Math.max(1, days.length);
  const gap = Math.min(band * 0.2, 8);
  const h = (v: number) => (toAxisUnit(v) / top) * PLOT;
  return (
    <figure>
      <div role="img" aria-label={title}>
        <ChartFrame yTicks={ticks.map((t) => ({ pos: t / top, label: formatTick(t) }))} yLabel={yLabel} xTicks={dayTicks(days, formatAxisDay, 'bands')} xLabel={xLabel} height="h-52">
          <svg viewBox={`0 0 ${PLOT} ${PLOT}`} preserveAspectRatio="none" className="absolute inset-0 h-full w-full" aria-hidden>
            {days.map((d, i) => {
              let base = PLOT;
              return (
                <g key={d}>
                  {series.map((s) => {
                    const v = s.values.get(d) ?? 0;
                    if (v <= 0) return null;
                    const height = h(v);
                    base -= height;
                    return (
                      <rect key={s.id} x={i * band + gap / 2} y={base} width={band - gap} height={height} fill={s.colour}>
                        <title>{`${formatDay(d)} · ${s.label}: ${format(v)}`}</title>
                      </rect>
                    );
                  })}
                </g>
              );
            })}
          </svg>
        </ChartFrame>
      </div>
      <figcaption className="mt-2 flex flex-wrap gap-3 text-xs text-slate-600">
        {series.map((s) => (
          <span key={s.id} className="flex items-center gap-1">
            <span className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: s.colour }} aria-hidden /> {s.label}
          </span>
        ))}
      </figcaption>
      {/* In a clipped box: a table grows to its content and would widen the page on a phone. */}
      <div className="sr-only">
        <table>
          <caption>{title}</caption>
          <tbody>
            {days.map((d, i) => (
              <tr key={d}>
                <th scope="row">{formatDay(d)}</th>
                <td>{format(totals[i]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

/**
 * HorizontalBars draws labelled bars, optionally with a second, overlaid value (e.g. heat reused
 * within facility energy). A row's colour is its project's when the rows are projects, else one colour for all.
 */
export function HorizontalBars({ rows, format, title, overlayLabel }: { rows: { label: string; value: number; overlay?: number; colour?: string }[]; format: (v: number) => string; title: string; overlayLabel?: string }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <figure aria-label={title}>
      <ul className="space-y-2">
        {rows.map((r, i) => (
          <li key={`${r.label}-${i}`} className="grid grid-cols-[1fr_auto] items-center gap-x-2 gap-y-1 text-sm sm:grid-cols-[10rem_1fr_7rem] sm:gap-3">
            {/* On a phone the name has a line of its own and wraps; beside the bar it is cut to fit. */}
            <span className="col-span-2 break-words sm:col-span-1 sm:truncate" title={r.label}>
              {r.label}
            </span>
            <span className="relative h-4 rounded bg-slate-100" aria-hidden>
              <span className="absolute inset-y-0 left-0 rounded" style={{ width: `${(r.value / max) * 100}%`, background: r.colour ?? SINGLE_COLOUR }} />
              {r.overlay !== undefined && <span className="absolute inset-y-1 left-0 rounded bg-white/60" style={{ width: `${(r.overlay / max) * 100}%` }} />}
            </span>
            <span className="text-right tabular-nums">{format(r.value)}</span>
          </li>
        ))}
      </ul>
      {overlayLabel && <figcaption className="mt-2 text-xs text-slate-500">{overlayLabel}</figcaption>}
    </figure>
  );
}
